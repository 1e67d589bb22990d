package audit

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"runtime"
	"runtime/debug"
	"strconv"

	"github.com/mcmcaudit/mcmcaudit/stats"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// Versions records what produced a report.
type Versions struct {
	Go     string `json:"go"`
	Module string `json:"module"`
	// Revision is the VCS revision the binary was built from, when known.
	Revision string `json:"revision,omitempty"`
}

// CurrentVersions reads the build information of the running binary.
func CurrentVersions() Versions {
	v := Versions{Go: runtime.Version(), Module: "(devel)"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v.Module = bi.Main.Path + " " + bi.Main.Version
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				v.Revision = s.Value
			}
		}
	}
	return v
}

// Document is the JSON written by "audit run --json": the scenario, what
// produced the result, and the result.
type Document struct {
	Versions Versions `json:"versions"`
	Config   *Config  `json:"config"`
	Report   *Report  `json:"report"`
}

// WriteJSON writes the document as indented JSON.
func WriteJSON(w io.Writer, d Document) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}

func f4(x float64) string { return stats.FormatFloat(x) }

func counts(k, n int) string { return fmt.Sprintf("%d/%d", k, n) }

// upperBound formats the claims' ε at δ for one point.
func upperBound(pr PointResult) (string, string) {
	if len(pr.Claims) == 0 {
		return "", ""
	}
	ub, verdict := "", ""
	for i, c := range pr.Claims {
		if i > 0 {
			ub += "; "
			verdict += "; "
		}
		if !c.Covered {
			ub += "n/a"
			verdict += "n/a"
			continue
		}
		ub += f4(float64(c.EpsilonAtDelta))
		switch {
		case c.Refutation != nil && c.Refutation.Refuted:
			verdict += "REFUTED"
		default:
			verdict += "ok"
		}
	}
	return ub, verdict
}

// WriteTable prints the human report: what was audited, the per-point
// table and the headline with its provenance.
func WriteTable(w io.Writer, p *Plan, r *Report) error {
	c := p.Config
	fmt.Fprintf(w, "scenario   %s (config %.12s)\n", c.Name, r.ConfigHash)
	fmt.Fprintf(w, "mechanism  %s on %s\n", p.Sampler.Name(), p.Model.Name())
	nd := fmt.Sprintf("D = %s (%d records), D′ = %s, %s", p.Pair.D.Name, p.Pair.D.Len(), p.Pair.DPrime.Name, p.Pair.Adjacency)
	if p.Pair.Note != "" {
		nd += ": " + p.Pair.Note
	}
	fmt.Fprintf(w, "datasets   %s\n", nd)
	fmt.Fprintf(w, "runs       %d (seed %d): %d train, %d threshold-selection, %d evaluation (%d on D, %d on D′)\n",
		r.Trials, r.Seed, r.TrainRuns, r.SelectRuns, r.EvalRuns, r.EvalNegatives, r.EvalPositives)
	fmt.Fprintf(w, "features   %v; attacks %v\n", p.FeatureNames, c.Audit.Attacks)
	fmt.Fprintf(w, "statistics δ = %g, confidence %g; %s\n", r.Delta, r.Confidence, r.Multiplicity)
	if acc := r.Info.AcceptanceRate(); !math.IsNaN(acc) {
		fmt.Fprintf(w, "sampler    acceptance rate %.4f", acc)
		if r.Info.ClippedLLRs > 0 || r.Info.ClippedGrads > 0 {
			fmt.Fprintf(w, ", clipped llrs %d, clipped gradients %d", r.Info.ClippedLLRs, r.Info.ClippedGrads)
		}
		fmt.Fprintln(w)
	} else if r.Info.ClippedGrads > 0 {
		fmt.Fprintf(w, "sampler    clipped gradients: %d of %d\n", r.Info.ClippedGrads, r.Info.GradEvals)
	}
	fmt.Fprintln(w)

	header := []any{"release", "attack", "FP/neg", "FN/pos", "ε_lb", "μ_lb", "ε(μ_lb)†", "ceiling"}
	exact := len(r.Points) > 0 && r.Points[0].Exact != nil
	if exact {
		header = append(header, "exact ε")
	}
	acc := len(r.Points) > 0 && r.Points[0].TestAccuracy != nil
	if acc {
		header = append(header, "test acc.")
	}
	if len(p.Claims) > 0 {
		header = append(header, "upper bound", "claim")
	}
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithRowAutoWrap(tw.WrapNone))
	t.Header(header...)
	for k, pr := range r.Points {
		label := pr.Point.Label
		if k == r.Headline {
			label += " *"
		}
		row := []any{label, pr.Attacks[pr.Best].Attack,
			counts(pr.Region.Counts.FP, pr.Region.Counts.Negatives), counts(pr.Region.Counts.FN, pr.Region.Counts.Positives),
			f4(pr.Region.Epsilon), f4(pr.GDP.Mu), f4(pr.GDP.Epsilon), f4(pr.Ceiling.Epsilon)}
		if exact {
			row = append(row, f4(float64(*pr.Exact)))
		}
		if acc {
			row = append(row, fmt.Sprintf("%.4f", *pr.TestAccuracy))
		}
		if len(p.Claims) > 0 {
			ub, v := upperBound(pr)
			row = append(row, ub, v)
		}
		if err := t.Append(row...); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintln(w, "ε_lb: Clopper-Pearson region bound (Heller-Fetaya eq. 12) on the evaluation runs, at the test confidence;")
	fmt.Fprintln(w, "μ_lb: GDP lower bound, with its own threshold chosen on training runs; † ε(μ_lb) assumes a Gaussian trade-off")
	fmt.Fprintln(w, "curve, μ_lb itself is rigorous. ceiling: the largest ε_lb these run counts allow.")
	if acc {
		fmt.Fprintf(w, "test acc.: mean accuracy of the released models on %d held-out records, over all %d runs.\n", p.TestSet.Len(), r.Trials)
	}
	if exact {
		fmt.Fprintln(w, "exact ε: the true ε at δ of each release, from the closed form of the counterexample (the privacy profile of")
		fmt.Fprintln(w, "Gaussian vs n-component mixture): every valid lower bound lies below it.")
	}
	if r.Headline >= 0 && len(r.Points) > 1 {
		fmt.Fprintln(w, "* the release point chosen on training runs, on which the headline and verdict rest.")
	}
	if len(p.Claims) > 0 {
		names := ""
		for i, cl := range p.Claims {
			if i > 0 {
				names += "; "
			}
			names += cl.Name
		}
		fmt.Fprintf(w, "upper bound: the claim's ε at δ = %g (%s).\n", r.Delta, names)
	}
	fmt.Fprintln(w)
	where := "over all release points (Bonferroni)"
	if r.Headline >= 0 {
		where = "at " + r.Points[r.Headline].Point.Label
	}
	e := r.Epsilon
	fmt.Fprintf(w, "ε_lb = %s %s  [%s; confidence %.6g; δ = %g; %d evaluation runs: FP %d/%d, FN %d/%d]\n",
		f4(e.Epsilon), where, e.Estimator, e.Confidence, e.Delta, r.EvalRuns,
		e.Counts.FP, e.Counts.Negatives, e.Counts.FN, e.Counts.Positives)
	switch r.Verdict {
	case VerdictViolation:
		fmt.Fprintf(w, "verdict: VIOLATION\n")
		for _, v := range r.Violations {
			fmt.Fprintf(w, "  %s\n", v)
		}
	case VerdictNotRefuted:
		fmt.Fprintf(w, "verdict: not refuted — the audit found no evidence against the claim (this does not prove the claim)\n")
	default:
		fmt.Fprintf(w, "verdict: no claim tested (add a claim section, or --claim-epsilon/--claim-delta/--claim-gdp)\n")
	}
	return nil
}

// WriteCSV writes one row per release point.
func WriteCSV(w io.Writer, p *Plan, r *Report) error {
	cw := csv.NewWriter(w)
	head := []string{"point", "iteration", "label", "attack", "fp", "negatives", "fn", "positives",
		"fpr_upper", "fnr_upper", "eps_lb", "gdp_attack", "gdp_fp", "gdp_fn", "mu_lb", "eps_gdp", "ceiling", "confidence", "delta", "headline",
		"exact_eps", "test_accuracy"}
	for _, cl := range p.Claims {
		head = append(head, "claim_eps_at_delta:"+cl.Name, "claim_refuted:"+cl.Name)
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	g := func(x float64) string {
		switch {
		case math.IsInf(x, 1):
			return "+Inf"
		case math.IsNaN(x):
			return "NaN"
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	for k, pr := range r.Points {
		c := pr.Region.Counts
		row := []string{strconv.Itoa(k), strconv.Itoa(pr.Point.Iteration), pr.Point.Label, pr.Attacks[pr.Best].Attack,
			strconv.Itoa(c.FP), strconv.Itoa(c.Negatives), strconv.Itoa(c.FN), strconv.Itoa(c.Positives),
			g(pr.Region.FPR), g(pr.Region.FNR), g(pr.Region.Epsilon),
			pr.Attacks[pr.BestGDP].Attack, strconv.Itoa(pr.GDP.Counts.FP), strconv.Itoa(pr.GDP.Counts.FN),
			g(pr.GDP.Mu), g(pr.GDP.Epsilon), g(pr.Ceiling.Epsilon),
			g(pr.Region.Confidence), g(pr.Region.Delta), strconv.FormatBool(k == r.Headline), "", ""}
		if pr.Exact != nil {
			row[len(row)-2] = g(float64(*pr.Exact))
		}
		if pr.TestAccuracy != nil {
			row[len(row)-1] = g(*pr.TestAccuracy)
		}
		for _, cr := range pr.Claims {
			if !cr.Covered {
				row = append(row, "", "")
				continue
			}
			row = append(row, g(float64(cr.EpsilonAtDelta)), strconv.FormatBool(cr.Refutation != nil && cr.Refutation.Refuted))
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
