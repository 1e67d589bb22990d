package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
)

// OneRunLegend explains the columns of a canary design's table.
const OneRunLegend = "ε_lb: one-run bound of Steinke, Nasr & Jagielski 2023 (Thm 3.1; App. D for δ > 0) from the guesses, " +
	"at the test confidence; μ_lb: rigorous lower bound on the GDP parameter from the f-DP test of Mahloujifar, Melis & " +
	"Chaudhuri 2024 (audit with cap), with the ε it implies ONLY if the trade-off curve is Gaussian; ceiling: the ε_lb " +
	"if every guess were correct (what m and r allow). AUROC and TPR at FPR 1% / 0.1% are descriptive: no guarantee, no confidence."

// releasePoints returns the report's release points, in either design.
func releasePoints(r *audit.Report) []mechanisms.ReleasePoint {
	var out []mechanisms.ReleasePoint
	if r.OneRun != nil {
		for _, p := range r.OneRun.Points {
			out = append(out, p.Point)
		}
		return out
	}
	for _, p := range r.Points {
		out = append(out, p.Point)
	}
	return out
}

// oneRunHeader and oneRunRow are the per-point table of a canary design.
func oneRunHeader(r *audit.Report) []string {
	h := []string{"release", "guesses (k+, k-)", "correct", "ε_lb", "μ_lb", "ε(μ_lb) if Gaussian", "ceiling", "AUROC†", "TPR@1%†", "TPR@0.1%†"}
	if len(r.OneRun.Points) > 0 && r.OneRun.Points[0].TestAccuracy != nil {
		h = append(h, "test acc.")
	}
	for _, c := range r.Claims {
		h = append(h, "upper bound: "+c, "claim")
	}
	return h
}

func oneRunRow(r *audit.Report, k int, p audit.OneRunPoint) []string {
	label := p.Point.Label
	if k == r.OneRun.Headline {
		label += " *"
	}
	c := p.Epsilon.Counts
	row := []string{label, fmt.Sprintf("(%d, %d)", p.Guess.Plus, p.Guess.Minus), counts(c.Correct, c.Guesses),
		f4(p.Epsilon.Epsilon), f4(p.FDP.Mu), f4(p.FDP.Epsilon), f4(float64(p.Ceiling)),
		fmt.Sprintf("%.4f", float64(p.Descriptive.AUROC)), fmt.Sprintf("%.4f", float64(p.Descriptive.TPRAt1)),
		fmt.Sprintf("%.4f", float64(p.Descriptive.TPRAt01))}
	if p.TestAccuracy != nil {
		row = append(row, fmt.Sprintf("%.4f", *p.TestAccuracy))
	}
	for _, cl := range p.Claims {
		v := "ok"
		switch {
		case cl.Refuted:
			v = "REFUTED"
		case cl.PointwiseRefuted:
			v = pointwiseCell
		}
		row = append(row, f4(float64(cl.EpsilonAtDelta)), v)
	}
	return row
}

// pointwiseCell marks a claim that the test of a release the verdict does
// not rest on rejects on its own: no refutation (OneRunMarks).
const pointwiseCell = "rejected pointwise"

// OneRunMarks explains the marks of a canary design's table: the
// descriptive columns, the headline row and a pointwise rejection.
func OneRunMarks(r *audit.Report) string {
	s := "† descriptive."
	if r.OneRun.Headline >= 0 {
		s += " * the headline release, fixed in advance: the verdict rests on it alone."
	} else {
		s += " The verdict rests on every release, α divided among them (Bonferroni)."
	}
	for _, p := range r.OneRun.Points {
		for _, c := range p.Claims {
			if c.PointwiseRefuted && !c.Refuted {
				return s + " claim: \"" + pointwiseCell + "\" — this release's test rejects the claim on its own, at the level " +
					"of one test, not divided among the releases: not a refutation (REFUTED marks one at a release the verdict rests on)."
			}
		}
	}
	return s
}

// oneRunSetting describes the canary design in lines of "key value".
func oneRunSetting(r *audit.Report) []string {
	o := r.OneRun
	data := "owned by the mechanism"
	if r.D != nil {
		data = fmt.Sprintf("D = %s (%d records)", r.D.Name, r.D.Records)
	}
	return []string{
		fmt.Sprintf("design     one run (canaries, Steinke, Nasr & Jagielski 2023): %d %s canaries, %d included by the seed's coins; %d run(s) pooled, each canary in exactly one", o.Canaries, o.Kind, o.Included, o.Runs),
		fmt.Sprintf("datasets   %s plus the included canaries; adjacency: %s", data, o.Adjacency),
		fmt.Sprintf("score      each canary's log-likelihood (or the program's score) under the released θ, at every release (seed %d)", r.Seed),
		fmt.Sprintf("guesses    %s", o.GuessRule),
		fmt.Sprintf("statistics δ = %g, confidence %g; each bound at confidence %.6g; %s", r.Delta, r.Confidence, o.TestConfidence, r.Multiplicity),
	}
}

// oneRunHeadline states the headline bound with its provenance.
func oneRunHeadline(r *audit.Report) string {
	o := r.OneRun
	where := "over all release points (Bonferroni)"
	if o.Headline >= 0 {
		where = "at " + o.Points[o.Headline].Point.Label + " (the last release, fixed in advance)"
	}
	e := o.Epsilon
	return fmt.Sprintf("ε_lb = %s %s  [%s; confidence %.6g; δ = %g; one-run design, %d run(s), %d canaries, %d/%d guesses correct; adjacency %s]",
		f4(e.Epsilon), where, e.Estimator, e.Confidence, e.Delta, o.Runs, e.Counts.Canaries, e.Counts.Correct, e.Counts.Guesses, o.Adjacency)
}

// writeOneRunTable is WriteTable for a canary design.
func writeOneRunTable(w io.Writer, r *audit.Report) error {
	fmt.Fprintf(w, "scenario   %s (config %.12s)\n", ClipName(r.Name, NameRunes), r.ConfigHash)
	fmt.Fprintf(w, "mechanism  %s\n", r.Mechanism)
	for _, l := range oneRunSetting(r) {
		fmt.Fprintln(w, l)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note       %s\n", n)
	}
	fmt.Fprintln(w)
	header := oneRunHeader(r)
	t := TextTable{Header: header}
	for k, p := range r.OneRun.Points {
		t.Rows = append(t.Rows, oneRunRow(r, k, p))
	}
	if err := t.Render(w, 0); err != nil {
		return err
	}
	if err := WriteWrapped(w, "", OneRunLegend+" "+OneRunMarks(r), 110); err != nil {
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, oneRunHeadline(r))
	fmt.Fprintln(w, verdictLine(r))
	if l := r.ClaimLevel(); l != "" {
		fmt.Fprintf(w, "  level: %s\n", l)
	}
	for _, v := range r.Violations {
		fmt.Fprintf(w, "  %s\n", v)
	}
	return nil
}

// verdictLine says the verdict in words.
func verdictLine(r *audit.Report) string {
	switch r.Verdict {
	case audit.VerdictViolation:
		return "verdict: VIOLATION"
	case audit.VerdictNotRefuted:
		return "verdict: not refuted — the audit found no evidence against the claim (this does not prove the claim)"
	}
	return "verdict: no claim tested"
}

// writeOneRunCSV is WriteCSV for a canary design: one row per release.
func writeOneRunCSV(w io.Writer, r *audit.Report) error {
	cw := csv.NewWriter(w)
	head := []string{"point", "iteration", "label", "canaries", "runs", "guesses_plus", "guesses_minus", "guesses", "correct",
		"eps_lb", "fdp_guesses_plus", "fdp_guesses_minus", "fdp_correct", "mu_lb", "eps_if_gaussian", "ceiling", "confidence", "delta",
		"headline", "auroc_descriptive", "tpr_at_fpr_1pct_descriptive", "tpr_at_fpr_0.1pct_descriptive", "test_accuracy"}
	for _, name := range r.Claims {
		head = append(head, "claim_eps_at_delta:"+name, "claim_refuted:"+name, "claim_pointwise_refuted:"+name)
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	g := csvFloat
	o := r.OneRun
	for k, p := range o.Points {
		e, f := p.Epsilon, p.FDP
		acc := ""
		if p.TestAccuracy != nil {
			acc = g(*p.TestAccuracy)
		}
		row := []string{strconv.Itoa(k), strconv.Itoa(p.Point.Iteration), p.Point.Label, strconv.Itoa(o.Canaries), strconv.Itoa(o.Runs),
			strconv.Itoa(p.Guess.Plus), strconv.Itoa(p.Guess.Minus), strconv.Itoa(e.Counts.Guesses), strconv.Itoa(e.Counts.Correct),
			g(e.Epsilon), strconv.Itoa(p.FDPGuess.Plus), strconv.Itoa(p.FDPGuess.Minus), strconv.Itoa(f.Counts.Correct),
			g(f.Mu), g(f.Epsilon), g(float64(p.Ceiling)), g(e.Confidence), g(e.Delta), strconv.FormatBool(k == o.Headline),
			g(float64(p.Descriptive.AUROC)), g(float64(p.Descriptive.TPRAt1)), g(float64(p.Descriptive.TPRAt01)), acc}
		for _, cl := range p.Claims {
			row = append(row, g(float64(cl.EpsilonAtDelta)), strconv.FormatBool(cl.Refuted), strconv.FormatBool(cl.PointwiseRefuted))
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// oneRunSeries are the curves of a canary design's plot.
func oneRunSeries(r *audit.Report, xs []float64) []series {
	get := func(f func(audit.OneRunPoint) float64) (x, y []float64) {
		for k, p := range r.OneRun.Points {
			if v := f(p); !math.IsNaN(v) && !math.IsInf(v, 0) {
				x, y = append(x, xs[k]), append(y, v)
			}
		}
		return x, y
	}
	x, y := get(func(p audit.OneRunPoint) float64 { return p.Epsilon.Epsilon })
	out := []series{{name: fmt.Sprintf("ε_lb: one-run canary bound (Steinke et al. 2023) at confidence %.4g", r.OneRun.TestConfidence), x: x, y: y, lower: true}}
	x, y = get(func(p audit.OneRunPoint) float64 { return float64(p.Ceiling) })
	out = append(out, series{name: "ceiling: the ε_lb if every guess were correct", x: x, y: y, color: 1, dashed: true})
	for ci, name := range r.Claims {
		x, y := get(func(p audit.OneRunPoint) float64 {
			if ci >= len(p.Claims) {
				return math.NaN()
			}
			return float64(p.Claims[ci].EpsilonAtDelta)
		})
		out = append(out, series{name: "upper bound (ε at δ): " + name, x: x, y: y, color: 2 + ci, dashed: true})
	}
	return out
}

// writeOneRunHTML is WriteHTML for a canary design.
func writeOneRunHTML(w io.Writer, r *audit.Report, v audit.Versions, scenario []byte) error {
	var table, plot bytes.Buffer
	if err := WriteTable(&table, r); err != nil {
		return err
	}
	if err := WritePlot(&plot, "svg", r); err != nil {
		return err
	}
	var rows [][]string
	for k, p := range r.OneRun.Points {
		rows = append(rows, oneRunRow(r, k, p))
	}
	header := oneRunHeader(r)
	header[0] = "<" + header[0]
	verdict := verdictLine(r)
	if r.Verdict == audit.VerdictViolation {
		verdict = "VIOLATION — " + strings.Join(r.Violations, " · ")
	}
	if l := r.ClaimLevel(); l != "" {
		verdict += " Level: " + l + "."
	}
	page := HTMLPage{
		Title:     "Privacy audit (one run, canaries): " + ClipName(r.Name, TitleNameRunes),
		Subtitle:  r.Mechanism,
		Verdict:   verdict,
		Violation: r.Violated(),
		Sections: []HTMLSection{
			{"Headline", HTMLText("headline", oneRunHeadline(r)) + HTMLText("note", strings.Join(oneRunSetting(r), " · ")) + notes(r.Notes)},
			{"ε lower bound per release", HTMLPlot(plot.Bytes())},
			{"Per release", HTMLTable(header, rows, r.OneRun.Headline) + HTMLText("note", OneRunLegend+" "+OneRunMarks(r))},
			{"Report as printed", template.HTML("<pre>" + template.HTMLEscapeString(table.String()) + "</pre>")},
			{"Scenario", template.HTML("<pre>" + template.HTMLEscapeString(string(scenario)) + "</pre>")},
		},
		Footer: fmt.Sprintf("config %s · seed %d · %s · %s %s", r.ConfigHash, r.Seed, v.Go, v.Module, v.Revision),
	}
	return WriteHTMLPage(w, page)
}
