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
// (see GaussianEpsilonTitle); eps_lb is.
func WriteCSV(w io.Writer, r *audit.Report) error {
	if r.OneRun != nil {
		return writeOneRunCSV(w, r)
	}
	cw := csv.NewWriter(w)
	head := []string{"point", "iteration", "label", "attack", "fp", "negatives", "fn", "positives",
		"fpr_upper", "fnr_upper", "eps_lb", "gdp_attack", "gdp_fp", "gdp_fn", "mu_lb", "eps_if_gaussian", "ceiling", "confidence", "delta", "headline",
		"exact_eps", "test_accuracy"}
	for _, name := range r.Claims {
		head = append(head, "claim_eps_at_delta:"+name, "claim_refuted:"+name)
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
		c := pr.Region().Counts
		row := []string{strconv.Itoa(k), strconv.Itoa(pr.Point.Iteration), pr.Point.Label, pr.Attacks[bestAttack(pr, "region")].Attack,
			strconv.Itoa(c.FP), strconv.Itoa(c.Negatives), strconv.Itoa(c.FN), strconv.Itoa(c.Positives),
			g(pr.Region().FPR), g(pr.Region().FNR), g(pr.Region().Epsilon),
			pr.Attacks[bestAttack(pr, "gdp")].Attack, strconv.Itoa(pr.GDP().Counts.FP), strconv.Itoa(pr.GDP().Counts.FN),
			g(pr.GDP().Mu), g(pr.GDP().Epsilon), g(pr.Ceiling.Epsilon),
			g(pr.Region().Confidence), g(pr.Region().Delta), strconv.FormatBool(k == r.Headline), "", ""}
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
			ref := r.ClaimTestAt(k, ci)
			row = append(row, g(float64(cr.EpsilonAtDelta)), strconv.FormatBool(ref != nil && ref.Refuted))
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
