package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/audit"
)

// TightnessHeader heads the per-release column of the tightness: the
// release's ε_lb over the tightest claim covering it.
const TightnessHeader = "ε_lb/ε_ub"

// TightnessLegend explains that column.
const TightnessLegend = "ε_lb/ε_ub: how much of the claimed bound the audit proves — the release's ε_lb over the " +
	"smallest ε at δ among the claims covering it (0 where that ε is +Inf: the bound certifies nothing at δ)."

// TightnessLine states how much of the claimed bound the headline proves
// (Report.Tightness): ε_lb/ε_ub with the claim it is measured against,
// μ_lb/μ where a claim is μ-GDP, and ε_lb over the exact ε where the
// report has it; empty when no claim covers the headline's release.
func TightnessLine(r *audit.Report) string {
	t := r.Tightness
	if t == nil {
		return ""
	}
	eps := fmt.Sprintf("ε_lb/ε_ub = %s (ε_ub %s at δ = %g of %s)", f4(float64(t.Epsilon)), f4(t.EpsilonUB), r.Delta, t.EpsilonClaim)
	if math.IsInf(t.EpsilonUB, 1) {
		eps = fmt.Sprintf("ε_lb/ε_ub = 0 (%s: the bound certifies nothing at δ = %g)", t.EpsilonClaim, r.Delta)
	}
	parts := []string{eps}
	if t.Mu != nil {
		parts = append(parts, fmt.Sprintf("μ_lb/μ = %s (μ_lb %s, μ %s of %s)", f4(float64(*t.Mu)), f4(t.MuLB), f4(t.MuUB), t.MuClaim))
	}
	if t.Exact != nil {
		parts = append(parts, fmt.Sprintf("ε_lb/exact ε = %s", f4(float64(*t.Exact))))
	}
	return "tightness: " + strings.Join(parts, "; ")
}

// TightnessCellLegend explains the figure in parentheses in the text
// table's upper-bound column.
const TightnessCellLegend = "In parentheses after the smallest ε at δ among the claims covering a release: ε_lb/ε_ub, " +
	"how much of that bound the audit proves (0 where it is +Inf: the bound certifies nothing at δ)."

// tightnessCell is release pr's ε_lb over the tightest claim covering it,
// to three significant digits ("n/a" when no claim covers it).
func tightnessCell(pr *audit.PointResult) string {
	v, ok := pr.EpsilonTightness()
	if !ok {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
