package audit

import (
	"fmt"
	"math"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/internal/numeric"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// Claim is an upper bound on the privacy of the mechanism, to be tested
// against the audit's error counts.
type Claim struct {
	// Name describes the claim, e.g. "claimed (1, 1e-05)-DP".
	Name string
	// At returns the claim's privacy profile δ(ε) for the release at point
	// k (a theorem's bound depends on the number of iterations), with the ε
	// values where the profile jumps (knots); ok is false when the claim
	// says nothing about that release.
	At func(k int) (profile func(eps float64) float64, knots []float64, ok bool)
	// Spec describes the claim as data (nil for a claim only Go code can
	// express): a design whose claims all have one can be serialized
	// (Design.MarshalJSON).
	Spec *ClaimSpec
}

// ClaimSpec is a claim as data: Kind "pure" is PureClaim(Epsilon, Delta),
// Kind "gdp" is GDPClaim(Mu), Kind "theorem" a theorem's claim
// (TheoremClaims) named Name, with one profile per release point in Points
// (the accountant and its numbers, closedform.ProfileSpec; null where the
// theorem does not cover the point).
type ClaimSpec struct {
	Kind    string                    `json:"kind"`
	Epsilon float64                   `json:"epsilon,omitempty"`
	Delta   float64                   `json:"delta,omitempty"`
	Mu      float64                   `json:"mu,omitempty"`
	Name    string                    `json:"name,omitempty"`
	Points  []*closedform.ProfileSpec `json:"points,omitempty"`
}

// Claim returns the claim the spec describes. A theorem's profiles are
// rebuilt here, once, so that a spec that does not describe one is refused
// before any analysis.
func (s ClaimSpec) Claim() (Claim, error) {
	switch s.Kind {
	case "pure":
		return PureClaim(s.Epsilon, s.Delta), nil
	case "gdp":
		return GDPClaim(s.Mu), nil
	case "theorem":
		return s.theoremClaim()
	}
	return Claim{}, fmt.Errorf("claim kind: must be pure, gdp or theorem, got %q", s.Kind)
}

// theoremClaim rebuilds a theorem's claim from its spec.
func (s ClaimSpec) theoremClaim() (Claim, error) {
	if s.Name == "" || len(s.Points) == 0 {
		return Claim{}, fmt.Errorf("claim %q: a theorem's claim needs a name and one profile per release point", s.Name)
	}
	profs := make([]func(float64) float64, len(s.Points))
	for k, p := range s.Points {
		if p == nil {
			continue
		}
		f, err := p.Profile()
		if err != nil {
			return Claim{}, fmt.Errorf("claim %q: points[%d]: %w", s.Name, k, err)
		}
		profs[k] = f
	}
	spec := s
	return Claim{
		Name: s.Name,
		At: func(k int) (func(float64) float64, []float64, bool) {
			if k < 0 || k >= len(profs) || profs[k] == nil {
				return nil, nil, false
			}
			return profs[k], nil, true
		},
		Spec: &spec,
	}, nil
}

// PureClaim is the claim "(ε₀, δ₀)-DP" for every release. Its profile is
// δ₀ for ε ≥ ε₀ and 1 (no statement) below: the (ε₀, δ₀) region is exactly
// the set of error rates the two inequalities at ε₀ allow.
func PureClaim(eps0, delta0 float64) Claim {
	prof := func(eps float64) float64 {
		if eps >= eps0 {
			return delta0
		}
		return 1
	}
	return Claim{
		Name: fmt.Sprintf("claimed (%g, %g)-DP", eps0, delta0),
		At: func(int) (func(float64) float64, []float64, bool) {
			return prof, []float64{eps0}, true
		},
		Spec: &ClaimSpec{Kind: "pure", Epsilon: eps0, Delta: delta0},
	}
}

// GDPClaim is the claim "μ-GDP" for every release: the profile of
// stats.GDPDelta.
func GDPClaim(mu float64) Claim {
	prof := func(eps float64) float64 { return stats.GDPDelta(mu, eps) }
	return Claim{
		Name: fmt.Sprintf("claimed %g-GDP", mu),
		At: func(int) (func(float64) float64, []float64, bool) {
			return prof, nil, true
		},
		Spec: &ClaimSpec{Kind: "gdp", Mu: mu},
	}
}

// GuaranteeClaim wraps a theoretical guarantee (computed per release point
// by guarantees) as a claim; release points where it does not apply are
// not covered.
func GuaranteeClaim(name string, at func(k int) (closedform.Guarantee, bool)) Claim {
	return Claim{
		Name: name,
		At: func(k int) (func(float64) float64, []float64, bool) {
			g, ok := at(k)
			if !ok || !g.Applies || g.Profile == nil {
				return nil, nil, false
			}
			return g.Profile, nil, true
		},
	}
}

// Refutation is the outcome of testing a claim's profile against
// confidence-bounded error rates.
type Refutation struct {
	Refuted bool `json:"refuted"`
	// Epsilon and Delta are the claimed pair (ε, δ(ε)) that the rates
	// violate most clearly (largest Margin); when not refuted, the pair
	// closest to being violated.
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// Margin is 1 − δ(ε) − FPR_ub − e^ε·FNR_ub for the violated inequality
	// (or its mirror image): positive means refuted.
	Margin    float64         `json:"margin"`
	Direction stats.Direction `json:"direction"`
	// FPR and FNR are the upper confidence bounds tested.
	FPR float64 `json:"fpr_upper"`
	FNR float64 `json:"fnr_upper"`
	// Attack and Estimator name the attack and the estimator whose rule
	// was tested (chosen on selection runs), Counts are that rule's errors
	// on the evaluation runs and Confidence the confidence of FPR and FNR
	// (set by an audit; empty for Refute on bare rates).
	Attack     string        `json:"attack,omitempty"`
	Estimator  string        `json:"estimator,omitempty"`
	Counts     *stats.Counts `json:"counts,omitempty"`
	Confidence float64       `json:"confidence,omitempty"`
	// Reason says in words why the pair is refuted (the whole-profile
	// test); empty when not refuted.
	Reason string `json:"reason,omitempty"`
}

// Explain returns why the rates refute the claimed pair: the inequality
// of Heller & Fetaya eq. 10 that the pair (ε, δ(ε)) of the claimed profile
// cannot meet, with its numbers; empty when not refuted.
func (r Refutation) Explain() string {
	if !r.Refuted {
		return ""
	}
	a, b, an, bn := r.FPR, r.FNR, "FPR", "FNR"
	if r.Direction == stats.DirFPR {
		a, b, an, bn = r.FNR, r.FPR, "FNR", "FPR"
	}
	rates := fmt.Sprintf("FPR ≤ %.4g, FNR ≤ %.4g", r.FPR, r.FNR)
	if r.Counts != nil {
		rule := "the " + r.Attack + " attack"
		if r.Estimator != "" {
			rule += " under the " + r.Estimator + " estimator's rule"
		}
		rates = fmt.Sprintf("%s errs %s on the evaluation runs: %s at confidence %.4g",
			rule, r.CountsText(), rates, r.Confidence)
	}
	return fmt.Sprintf("whole-profile test: the claimed profile gives δ(%.4g) = %.3g, and %s; then %s + e^ε·%s ≤ %.4g < 1 − δ = %.4g, which no (%.4g, %.3g)-DP mechanism allows (Heller & Fetaya eq. 10)",
		r.Epsilon, r.Delta, rates, an, bn, a+math.Exp(r.Epsilon)*b, 1-r.Delta, r.Epsilon, r.Delta)
}

// CountsText returns the tested rule's evaluation errors as
// "FP 1167/5024, FN 1916/4976" (empty without counts).
func (r Refutation) CountsText() string {
	if r.Counts == nil {
		return ""
	}
	return fmt.Sprintf("FP %d/%d, FN %d/%d", r.Counts.FP, r.Counts.Negatives, r.Counts.FN, r.Counts.Positives)
}

// Pair returns the refuted pair as "(ε, δ) = (0.2214, 0.119)".
func (r Refutation) Pair() string {
	return fmt.Sprintf("(ε, δ) = (%.4g, %.3g)", r.Epsilon, r.Delta)
}

// refuteTolerance guards against calling rounding noise a violation.
const refuteTolerance = 1e-12

// Refute tests the claim "the mechanism is (ε, δ(ε))-DP for every ε ≥ 0"
// against upper confidence bounds on the two error rates: an (ε, δ)-DP
// mechanism admits no test with FPR + e^ε·FNR < 1 − δ nor FNR + e^ε·FPR <
// 1 − δ (Heller & Fetaya eq. 10; Kairouz et al. 2015), and true rates below
// their upper bounds only make the left-hand sides smaller. So if, for some
// ε, FPR_ub + e^ε·FNR_ub < 1 − δ(ε) (or the mirror), the claim is false —
// with the confidence of the bounds, whatever the claim's shape: no
// Gaussian assumption is involved.
//
// The search runs over ε in [0, ln(1/min rate)] (beyond it e^ε·rate ≥ 1 and
// no violation is possible): a grid of 2048 points, the knots of the
// profile, then a golden-section refinement around the best grid point. A
// violation reported is exact at the reported ε; the search can only miss
// one that lives between grid points and escapes the refinement.
func Refute(fprUB, fnrUB float64, profile func(float64) float64, knots []float64) Refutation {
	return refute(fprUB, fnrUB, profile, knots, 2048, 80)
}

// refute is Refute with a grid of grid+1 points and iters golden-section
// steps.
func refute(fprUB, fnrUB float64, profile func(float64) float64, knots []float64, grid, iters int) Refutation {
	best := Refutation{Margin: math.Inf(-1)}
	eval := func(eps float64) {
		if !(eps >= 0) || math.IsInf(eps, 0) {
			return
		}
		d := profile(eps)
		e := math.Exp(eps)
		if m := 1 - d - fprUB - e*fnrUB; m > best.Margin {
			best = Refutation{Epsilon: eps, Delta: d, Margin: m, Direction: stats.DirFNR}
		}
		if m := 1 - d - fnrUB - e*fprUB; m > best.Margin {
			best = Refutation{Epsilon: eps, Delta: d, Margin: m, Direction: stats.DirFPR}
		}
	}
	emax := math.Log(1 / math.Min(fprUB, fnrUB))
	if math.IsInf(emax, 1) || emax > 800 {
		emax = 800
	}
	step := emax / float64(grid)
	bestK := 0
	for k := 0; k <= grid; k++ {
		before := best.Margin
		eval(float64(k) * step)
		if best.Margin > before {
			bestK = k
		}
	}
	// Golden-section refinement on the bracket around the best grid point.
	lo, hi := math.Max(0, float64(bestK-1)*step), math.Min(emax, float64(bestK+1)*step)
	margin := func(eps float64) float64 {
		d := profile(eps)
		e := math.Exp(eps)
		return 1 - d - math.Min(fprUB+e*fnrUB, fnrUB+e*fprUB)
	}
	x, _ := numeric.GoldenMax(margin, lo, hi, iters, 1e-12)
	eval(x)
	for _, k := range knots {
		eval(k)
		eval(math.Nextafter(k, math.Inf(1)))
	}
	best.Refuted = best.Margin > refuteTolerance
	best.FPR, best.FNR = fprUB, fnrUB
	return best
}

// EpsilonAt returns the smallest ε with profile(ε) ≤ δ (+Inf when the claim
// certifies nothing at this δ).
func EpsilonAt(profile func(float64) float64, delta float64) float64 {
	if delta > 0 {
		e, err := closedform.InvertProfile(profile, delta)
		if err != nil {
			return math.Inf(1)
		}
		return e
	}
	// δ = 0: the smallest ε where the profile vanishes, by doubling and
	// bisection.
	if profile(0) == 0 {
		return 0
	}
	hi := 1.0
	for profile(hi) > 0 {
		if hi *= 2; hi > 1e12 {
			return math.Inf(1)
		}
	}
	lo := 0.0
	for i := 0; i < 200 && hi-lo > 1e-12*hi; i++ {
		mid := (lo + hi) / 2
		if profile(mid) > 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// TheoremClaims returns the theoretical guarantees a mechanism declares
// (mechanisms.Guarantor) as claims, computed per release point for the
// iterations before it: for every variant of the theorems that apply (the
// printed constants, a conservative reading), the tightest guarantee —
// smallest ε at δ at the last release point. It is an error when no
// theorem applies (a *FieldError naming Theorems).
func TheoremClaims(m mechanisms.Mechanism, pair dataset.Pair, points []mechanisms.ReleasePoint, delta float64) ([]Claim, error) {
	per := make([][]closedform.Guarantee, len(points))
	for k, pt := range points {
		per[k] = mechanisms.Guarantees(m, pair, pt)
	}
	last := per[len(per)-1]
	if delta <= 0 {
		delta = 1e-5 // the ranking needs a δ > 0; any fixed one will do
	}
	best := map[string]int{}
	var order []string
	var reasons []string
	for i, g := range last {
		if !g.Applies {
			reasons = append(reasons, g.Source+": "+g.Reason)
			continue
		}
		j, seen := best[g.Variant]
		if !seen {
			order = append(order, g.Variant)
			best[g.Variant] = i
			continue
		}
		ei, _ := g.Epsilon(delta)
		ej, _ := last[j].Epsilon(delta)
		if ei < ej {
			best[g.Variant] = i
		}
	}
	if len(order) == 0 {
		return nil, fieldErr("Theorems", "no theorem applies to %s: %s", mechanisms.NameOf(m), strings.Join(reasons, "; "))
	}
	var out []Claim
	for _, v := range order {
		label := mechanisms.GuaranteeLabel(last[best[v]])
		at := func(k int) (closedform.Guarantee, bool) {
			for _, g := range per[k] {
				if mechanisms.GuaranteeLabel(g) == label {
					return g, true
				}
			}
			return closedform.Guarantee{}, false
		}
		c := GuaranteeClaim(label, at)
		c.Spec = theoremSpec(label, len(points), at)
		out = append(out, c)
	}
	return out, nil
}

// theoremSpec returns the spec of a theorem's claim over n release points,
// or nil when a point's profile is only Go code.
func theoremSpec(name string, n int, at func(k int) (closedform.Guarantee, bool)) *ClaimSpec {
	s := &ClaimSpec{Kind: "theorem", Name: name, Points: make([]*closedform.ProfileSpec, n)}
	for k := range s.Points {
		g, ok := at(k)
		if !ok || !g.Applies || g.Profile == nil {
			continue
		}
		if g.Spec == nil {
			return nil
		}
		s.Points[k] = g.Spec
	}
	return s
}
