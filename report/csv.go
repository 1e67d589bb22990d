package report

import (
	"encoding/csv"
	"io"
	"math"
	"strconv"

	"github.com/mcmcaudit/mcmcaudit/audit"
)

// WriteCSV writes one row per release point; the *_descriptive columns
// describe the region bound's attack on the evaluation runs and carry no
// guarantee. eps_if_gaussian is the ε that
// mu_lb implies if the trade-off curve is Gaussian: not a lower bound on ε
// (see GaussianEpsilonTitle); eps_lb is. With claims, tightness is the
// release's eps_lb over the smallest claim_eps_at_delta of the claims
// covering it (0 when that is +Inf; empty when no claim covers it).
func WriteCSV(w io.Writer, r *audit.Report) error {
	cw := csv.NewWriter(w)
	evEps, evMu := evidenceCSVHead(r)
	head := append([]string{"point", "iteration", "label"}, evEps...)
	head = append(append(append(head, "eps_lb"), evMu...), "mu_lb", "eps_if_gaussian", "ceiling", "confidence", "delta", "headline",
		"exact_eps", "test_accuracy")
	for _, name := range r.Claims {
		head = append(head, "claim_eps_at_delta:"+name, "claim_refuted:"+name)
	}
	if len(r.Claims) > 0 {
		head = append(head, "tightness")
	}
	head = append(head, utilityCSVHead()...)
	head = append(head, convergenceCSVHead()...)
	extra := extraEstimators(r)
	for _, name := range extra {
		head = append(head, name+"_attack", name+"_fp", name+"_fn", name+"_value", name+"_eps")
	}
	head = append(head, "auroc_descriptive", "tpr_at_fpr_1pct_descriptive", "tpr_at_fpr_0.1pct_descriptive")
	if err := cw.Write(head); err != nil {
		return err
	}
	g := csvFloat
	for k, pr := range r.Points {
		eb, mb := pr.EpsilonBound(), pr.MuBound()
		evEps, evMu := evidenceCSVRow(pr, g)
		row := append([]string{strconv.Itoa(k), strconv.Itoa(pr.Point.Iteration), pr.Point.Label}, evEps...)
		row = append(append(append(row, g(eb.Epsilon)), evMu...), g(mb.Mu), g(mb.Epsilon), g(pr.Ceiling.Epsilon),
			g(eb.Confidence), g(eb.Delta), strconv.FormatBool(k == r.Headline), "", "")
		if pr.Exact != nil {
			row[len(row)-2] = g(float64(*pr.Exact))
		}
		if pr.TestAccuracy != nil {
			row[len(row)-1] = g(*pr.TestAccuracy)
		}
		for ci, cr := range pr.Claims {
			if !cr.Covered {
				row = append(row, "", "")
				continue
			}
			row = append(row, g(float64(cr.EpsilonAtDelta)), strconv.FormatBool(claimRefutedAt(r, k, ci, cr)))
		}
		if len(r.Claims) > 0 {
			row = append(row, csvTightness(&r.Points[k]))
		}
		row = append(row, utilityCSVRow(pr, g)...)
		row = append(row, convergenceCSVRow(pr, g)...)
		for _, name := range extra {
			v, b := estimatorValue(pr, name)
			row = append(row, pr.Attacks[bestAttack(pr, name)].Attack, strconv.Itoa(b.Counts.FP), strconv.Itoa(b.Counts.FN), g(v), g(b.Epsilon))
		}
		if d := pr.Descriptive; d != nil {
			row = append(row, g(float64(d.AUROC)), g(float64(d.TPRAt1)), g(float64(d.TPRAt01)))
		} else {
			row = append(row, "", "", "")
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvFloat writes a number of a CSV report in its shortest round-trip
// form, +Inf and NaN by name.
func csvFloat(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "+Inf"
	case math.IsNaN(x):
		return "NaN"
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// csvTightness is release pr's tightness cell: its ε_lb over the
// tightest claim covering it (empty when none does).
func csvTightness(pr *audit.PointResult) string {
	v, ok := pr.EpsilonTightness()
	if !ok {
		return ""
	}
	return csvFloat(v)
}
