package bounds

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/audit/scenario"
	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/internal/cli"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/report"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// Row is one guarantee in "audit bounds --json".
type Row struct {
	Source     string             `json:"source"`
	Variant    string             `json:"variant,omitempty"`
	Release    string             `json:"release"`
	Applies    bool               `json:"applies"`
	Reason     string             `json:"reason,omitempty"`
	Epsilon    *stats.JSONFloat   `json:"epsilon,omitempty"`
	Delta      float64            `json:"delta"`
	Iterations int                `json:"iterations"`
	Checks     []closedform.Check `json:"checks"`
	Note       string             `json:"note,omitempty"`
}

// RequiredTVRow is Bertazzi et al. Prop. 3.4 / A.4 for one theorem: the
// theorem makes the release (ε, δ)-DP while the posteriors are not
// (ε, δ′)-DP with δ′ > δ, so on D or on D′ the release's law is farther
// than TV from the posterior.
type RequiredTVRow struct {
	Theorem        string  `json:"theorem"`
	Epsilon        float64 `json:"epsilon"`
	Delta          float64 `json:"delta"`
	DeltaPosterior float64 `json:"delta_posterior"`
	TV             float64 `json:"tv"`
}

// requiredTV evaluates Prop. 3.4 for every applicable upper bound with a
// finite ε (Prop. 3.2 itself excluded: it is built from the distance),
// where the posteriors' profile is known (tr not nil) and exceeds δ at that ε.
func requiredTV(rows []Row, tr *mechanisms.Transfer, delta float64) []RequiredTVRow {
	out := []RequiredTVRow{}
	if tr == nil {
		return out
	}
	for _, r := range rows {
		if !r.Applies || r.Epsilon == nil || r.Source == closedform.Prop32Source {
			continue
		}
		eps := float64(*r.Epsilon)
		if math.IsInf(eps, 0) || math.IsNaN(eps) {
			continue
		}
		dp := tr.Posterior.Lower(eps)
		if tv := closedform.RequiredTV(eps, dp, delta); tv > 0 {
			name := r.Source
			if r.Variant != "" {
				name += " [" + r.Variant + "]"
			}
			out = append(out, RequiredTVRow{Theorem: name, Epsilon: eps, Delta: delta, DeltaPosterior: dp, TV: tv})
		}
	}
	return out
}

// LowerBoundRow is a theoretical lower bound on the release's ε in
// "audit bounds --json": Bertazzi et al. Prop. 3.3 / A.3, from the
// posteriors' exact profile and the release's distance to them.
type LowerBoundRow struct {
	Source     string  `json:"source"`
	Release    string  `json:"release"`
	Applies    bool    `json:"applies"`
	Reason     string  `json:"reason,omitempty"`
	Iterations int     `json:"iterations"`
	Delta      float64 `json:"delta"`
	// Epsilon: the release is not (ε′, δ)-DP for any ε′ < Epsilon; absent
	// when the proposition proves nothing (Reason says why).
	Epsilon    *stats.JSONFloat   `json:"epsilon,omitempty"`
	BetaD      float64            `json:"beta_d,omitempty"`
	BetaDPrime float64            `json:"beta_dprime,omitempty"`
	Checks     []closedform.Check `json:"checks,omitempty"`
	Note       string             `json:"note,omitempty"`
}

const prop33Source = "Bertazzi et al. 2025, Prop. 3.3 / A.3 (lower bound from convergence)"

// convergenceLowerBound evaluates Prop. 3.3 for the release after iters
// iterations at δ, or says why it does not apply.
func convergenceLowerBound(plan *scenario.Plan, iters int, delta float64) (LowerBoundRow, *mechanisms.Transfer) {
	r := LowerBoundRow{Source: prop33Source, Release: fmt.Sprintf("state after %d iterations", iters),
		Iterations: iters, Delta: delta}
	t, reason := mechanisms.TransferOf(plan.Mechanism, plan.Pair, mechanisms.ReleasePoint{Iteration: iters})
	if t == nil {
		r.Reason = reason
		return r, nil
	}
	r.BetaD, r.BetaDPrime, r.Checks = t.BetaD.Value, t.BetaDPrime.Value, t.Checks
	eps, ok := t.NotDPEpsilon(delta)
	if !ok {
		r.Reason = fmt.Sprintf("proves nothing at δ = %g: the posteriors' δ′(0) − 2β is not above δ (β = max(β_D, β_D′) = %.6g)",
			delta, t.Beta())
		return r, t
	}
	r.Applies = true
	v := stats.JSONFloat(eps)
	r.Epsilon = &v
	r.Note = fmt.Sprintf("a theoretical lower bound (no sampling error): the posteriors are not (ε, δ′(ε))-DP, δ′ a lower bound on their profile (below) "+
		"and the release is within β = %.6g of them in total variation, so the release is not (ε, δ′(ε) − (1 + e^ε)β)-DP; "+
		"ε is the largest with δ′(ε) − (1 + e^ε)β > δ. D: %s; D′: %s. Posterior: %s",
		t.Beta(), t.BetaD.Method, t.BetaDPrime.Method, t.Posterior.Note)
	return r, t
}

// printLowerBound writes Prop. 3.3's lower bound, and Prop. 3.4's
// distances, under the table of upper bounds.
func printLowerBound(w io.Writer, r LowerBoundRow, required []RequiredTVRow) error {
	fmt.Fprintln(w)
	text := r.Source + ": — " + r.Reason
	if r.Applies {
		text = fmt.Sprintf("%s: ε ≥ %s at δ = %g for the %s; %s", r.Source, stats.FormatFloat(float64(*r.Epsilon)), r.Delta, r.Release, r.Note)
	}
	if err := report.WriteWrapped(w, "lower bound ", text, boundsWidth); err != nil {
		return err
	}
	for _, q := range required {
		text := fmt.Sprintf("Bertazzi et al. 2025, Prop. 3.4 / A.4: %s makes the release (%s, %g)-DP while the posteriors are not "+
			"(%s, %.4g)-DP, so on D or D′ its total variation distance to the posterior exceeds e^{−ε}/(1 + e^{−ε})·(δ′ − δ) = %.4g",
			q.Theorem, stats.FormatFloat(q.Epsilon), q.Delta, stats.FormatFloat(q.Epsilon), q.DeltaPosterior, q.TV)
		if err := report.WriteWrapped(w, "distance    ", text, boundsWidth); err != nil {
			return err
		}
	}
	return nil
}

// boundsWidth is the width "audit bounds" fits its table and notes in.
const boundsWidth = 120

// printBounds writes the human summary of the guarantees, at most
// boundsWidth columns wide: one table row per theorem and variant (ε at δ,
// or that it does not apply), and below it, numbered, the assumptions
// checked or the reason a theorem fails, and the notes. --json has all of
// it as data.
func printBounds(w io.Writer, cfg *scenario.Config, plan *scenario.Plan, iters int, delta float64, rows []Row) error {
	head := [][2]string{
		{"scenario   ", report.ClipName(cfg.Name, report.NameRunes)},
		{"mechanism  ", fmt.Sprintf("%s, %d iterations", mechanisms.NameOf(plan.Mechanism), iters)},
		{"datasets   ", boundsDatasets(plan.Pair)},
	}
	for _, h := range head {
		if err := report.WriteWrapped(w, h[0], h[1], boundsWidth); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	var notes []string
	noteOf := map[string]int{}
	ref := func(text string) string {
		if text == "" {
			return ""
		}
		k, ok := noteOf[text]
		if !ok {
			notes = append(notes, text)
			k = len(notes)
			noteOf[text] = k
		}
		return fmt.Sprintf("[%d]", k)
	}
	t := report.TextTable{
		Header: []string{"theorem", "variant", "release", fmt.Sprintf("ε at δ = %g", delta), "applies", "notes"},
		Right:  []bool{false, false, false, true, false, false},
		Wrap:   []bool{true, true, true, false, false, true},
	}
	for _, r := range rows {
		eps, applies := "—", "no"
		if r.Epsilon != nil {
			eps, applies = stats.FormatFloat(float64(*r.Epsilon)), "yes"
		}
		refs := []string{ref(ChecksText(r))}
		if n := ref(r.Note); n != "" {
			refs = append(refs, n)
		}
		t.Rows = append(t.Rows, []string{r.Source, r.Variant, r.Release, eps, applies, strings.Join(refs, " ")})
	}
	if err := t.Render(w, boundsWidth); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for i, n := range notes {
		if err := report.WriteWrapped(w, fmt.Sprintf("[%d] ", i+1), n, boundsWidth); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	return report.WriteWrapped(w, "", "Constants that depend on the data (gradient bounds) are taken over the records of D and D′. "+
		"--json gives every check with its numbers.", boundsWidth)
}

// boundsDatasets describes the adjacent datasets the theorems are stated
// on. A program sampler may own its data (a scenario without a data
// section): there is then no pair to describe; the canary design has D
// alone.
func boundsDatasets(p dataset.Pair) string {
	if p.D != nil && p.DPrime == nil {
		// The canary design: D, to which canaries are added or not.
		return fmt.Sprintf("%s (%d records), to which the canary design adds its canaries", p.D.Name, p.D.Len())
	}
	if p.D == nil || p.DPrime == nil {
		return "owned by the mechanism (the scenario has no data section)"
	}
	return fmt.Sprintf("%s (%d records) and %s, %s", p.D.Name, p.D.Len(), p.DPrime.Name, p.Adjacency)
}

// ChecksText states the assumptions checked (with their numbers), or why
// the theorem does not apply.
func ChecksText(r Row) string {
	if !r.Applies {
		return "Does not apply: " + r.Reason
	}
	var parts []string
	for _, c := range r.Checks {
		parts = append(parts, c.Name+" ("+c.Detail+")")
	}
	if len(parts) == 0 {
		return ""
	}
	return "Assumptions: " + strings.Join(parts, "; ")
}

// Write evaluates every theorem for the scenario's sampler on its
// adjacent datasets at the release after iters iterations (0: the last
// release point) and δ = delta, with Prop. 3.3's lower bound and Prop.
// 3.4's distances, and writes the table (unless the JSON goes to stdout)
// and the JSON document to out.
func Write(e *cli.Env, cfg *scenario.Config, plan *scenario.Plan, iters int, delta float64, out cli.Output) error {
	if iters == 0 {
		pts := plan.Points()
		iters = pts[len(pts)-1].Iteration
	}
	rows, err := Rows(plan, iters, delta)
	if err != nil {
		return err
	}
	lower, tr := convergenceLowerBound(plan, iters, delta)
	required := requiredTV(rows, tr, delta)
	if !out.ToStdout() {
		if err := printBounds(e.Stdout, cfg, plan, iters, delta, rows); err != nil {
			return err
		}
		if err := printLowerBound(e.Stdout, lower, required); err != nil {
			return err
		}
	}
	return out.Write(e, func(w io.Writer) error {
		return cli.WriteJSONTo(w, map[string]any{"scenario": cfg.Name, "config_hash": plan.Hash, "guarantees": rows,
			"lower_bounds": []LowerBoundRow{lower}, "required_tv": required})
	})
}

// Rows is every theorem's verdict on the release after iters iterations:
// ε at δ where it applies, why not where it does not, with the
// assumptions checked.
//
// After the scenario's own theorems come those of the other adjacency
// (mechanisms.OtherAdjacencyGuarantees: add/remove for a replace-one
// scenario and the reverse), their Variant naming the adjacency; they are
// for comparison and are not what the scenario's pair is audited against.
func Rows(plan *scenario.Plan, iters int, delta float64) ([]Row, error) {
	at := mechanisms.ReleasePoint{Iteration: iters}
	gs := mechanisms.Guarantees(plan.Mechanism, plan.Pair, at)
	gs = append(gs, mechanisms.OtherAdjacencyGuarantees(plan.Mechanism, plan.Pair, at)...)
	var rows []Row
	for _, g := range gs {
		r := Row{Source: g.Source, Variant: g.Variant, Release: g.Release, Applies: g.Applies,
			Reason: g.Reason, Delta: delta, Iterations: iters, Checks: g.Checks, Note: g.NoteFor(delta)}
		if g.Applies {
			eps, err := g.Epsilon(delta)
			if err != nil {
				return nil, err
			}
			v := stats.JSONFloat(eps)
			r.Epsilon = &v
		}
		rows = append(rows, r)
	}
	return rows, nil
}
