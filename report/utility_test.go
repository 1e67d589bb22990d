package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// utilityReport is a two-release report whose headline release barely
// moves (acceptance 0.002) and whose second release moves.
func utilityReport() *audit.Report {
	f := func(x float64) *float64 { return &x }
	fit := func(side string, me, sd float64) audit.PosteriorFit {
		return audit.PosteriorFit{Side: side, Draws: 100, Coords: []int{0, 1}, MeanError: []float64{me, -me / 2}, SDRatio: []float64{sd, sd * 1.5},
			VarianceRatio: sd * sd, MeanChi2: 3, MeanPValue: 0.25, KS: 0.1, KSPValue: 0.0123}
	}
	pt := func(it int, u *audit.Utility) audit.PointResult {
		return audit.PointResult{Point: mechanisms.ReleasePoint{Iteration: it, Label: "iteration " + string(rune('0'+it))},
			Attacks: []audit.AttackResult{{Attack: "threshold"}}, Utility: u}
	}
	r := &audit.Report{Name: "u", Headline: 0, Epsilon: stats.Estimate{}, Points: []audit.PointResult{
		pt(2, &audit.Utility{Iterations: 2, AcceptanceRate: f(0.002), ClippedGradFraction: f(0.25), Posterior: []audit.PosteriorFit{fit("D", 7.5, 0.2), fit("D′", 3, 0.3)},
			BarelyMoves: true, Why: []string{"acceptance rate 0.002 < 0.01"}}),
		pt(4, &audit.Utility{Iterations: 2, AcceptanceRate: f(0.6), ClippedGradFraction: f(0.125), Posterior: []audit.PosteriorFit{fit("D", 0.1, 0.9), fit("D′", -0.05, 1.1)}}),
	}, Warnings: []string{"the release the headline rests on barely moves: its ε lower bound means little", "the chain barely moves at 1 of 2 releases"}}
	return r
}

func TestUtilityTable(t *testing.T) {
	r := utilityReport()
	var b bytes.Buffer
	if err := writeUtilityTable(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"acceptance", "clipped grads", "D: |mean err|/sd", "D′: p mean / KS", "0.002", "7.5", "0.2–0.3", "0.25 / 0.012", "BARELY", "iteration 2 *"} {
		if !strings.Contains(out, want) {
			t.Errorf("utility table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "clipped llrs") {
		t.Error("a column with no value at any release is shown")
	}
	b.Reset()
	writeWarnings(&b, r)
	if w := b.String(); strings.Count(w, "WARNING: ") != 2 || !strings.Contains(w, "WARNING: the release the headline rests on barely moves") {
		t.Errorf("warnings:\n%s", w)
	}
	// No figures: no table, only the note.
	b.Reset()
	writeUtilityTable(&b, &audit.Report{Points: r.Points[:0], UtilityNote: "no theta"})
	if b.String() != "utility: no theta.\n\n" {
		t.Errorf("note only: %q", b.String())
	}
}

func TestUtilityCSVAndHTML(t *testing.T) {
	r := utilityReport()
	var b bytes.Buffer
	if err := WriteCSV(&b, r); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(recs) != 3 {
		t.Fatalf("%v, %d records", err, len(recs))
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, c := range []struct{ name, row0, row1 string }{
		{"acceptance_rate", "0.002", "0.6"},
		{"barely_moves", "true", "false"},
		{"clipped_llr_fraction", "", ""},
		{"posterior_d_max_abs_mean_error_sd", "7.5", "0.1"},
		{"posterior_dprime_max_sd_ratio", "0.44999999999999996", "1.6500000000000001"},
		{"posterior_dprime_ks_p_value", "0.0123", "0.0123"},
	} {
		i, ok := col[c.name]
		if !ok || recs[1][i] != c.row0 || recs[2][i] != c.row1 {
			t.Errorf("column %s (%v): %q, %q; want %q, %q", c.name, ok, recs[1][i], recs[2][i], c.row0, c.row1)
		}
	}
	b.Reset()
	if err := WriteHTML(&b, r, audit.Versions{}, nil); err != nil {
		t.Fatal(err)
	}
	h := b.String()
	if !strings.Contains(h, `<p class="warning">Warning: the release the headline rests on barely moves`) || !strings.Contains(h, "Utility per release") || !strings.Contains(h, "<td>BARELY</td>") {
		t.Error("HTML lacks the utility section or the warning")
	}
}

// The utility table fits 120 columns: columns with one value at every
// release are said once in the title, and a table still too wide is
// split into one table per side, each with the shared columns.
func TestUtilityTableFits120Columns(t *testing.T) {
	r := utilityReport()
	f := func(x float64) *float64 { return &x }
	r.Points[0].Utility.ClippedLLRFraction, r.Points[1].Utility.ClippedLLRFraction = f(0.0123), f(0.5)
	r.Points[0].Point.Label, r.Points[1].Point.Label = "a long release label 1", "a long release label 2"
	var b bytes.Buffer
	if err := writeUtilityTable(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for i, l := range strings.Split(out, "\n") {
		if n := runes(l); n > maxTextWidth {
			t.Errorf("line %d is %d columns wide:\n%s", i+1, n, l)
		}
	}
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "2 iterations between releases") || strings.Contains(out, "│ iterations") {
		t.Errorf("the constant iterations column is not folded into the title:\n%s", out)
	}
	// Split: with the long labels, even the shared columns with one side
	// are too wide, so there are three tables: the shared columns, D, D′.
	if got := strings.Count(out, "┌"); got != 3 {
		t.Errorf("%d tables, want three:\n%s", got, out)
	}
	// With short labels, one table per side, the shared columns in the first.
	r.Points[0].Point.Label, r.Points[1].Point.Label = "it 2", "it 4"
	b.Reset()
	if err := writeUtilityTable(&b, r); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(b.String(), "┌"); got != 2 || widest(b.String()) > maxTextWidth {
		t.Errorf("%d tables, %d columns wide; want two (one per side) within 120:\n%s", got, widest(b.String()), b.String())
	}
	for _, want := range []string{"clipped llrs", "D: |mean err|/sd", "D′: |mean err|/sd", "0.25 / 0.012"} {
		if !strings.Contains(out, want) {
			t.Errorf("the tables lack %q:\n%s", want, out)
		}
	}
	if pValue(0) != "<1e-4" || pValue(9.9e-5) != "<1e-4" || pValue(1e-4) != "0.0001" || pValue(0.0123) != "0.012" {
		t.Errorf("p-values: %q %q %q %q", pValue(0), pValue(9.9e-5), pValue(1e-4), pValue(0.0123))
	}
}

// The canary design's utility table says over what its counts are taken
// (its one run, or the runs pooled) and explains no posterior column it
// cannot have; the acceptance since the start is a column, explained,
// where a release has it.
func TestUtilityTableCanaryDesign(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	pt := func(it int, u *audit.Utility) audit.PointResult {
		return audit.PointResult{Point: mechanisms.ReleasePoint{Iteration: it, Label: "iteration " + string(rune('0'+it))}, Utility: u}
	}
	for _, c := range []struct {
		runs  int
		scope string
	}{{1, "(counts of the design's one run)"}, {4, "(counts summed over the design's 4 runs)"}} {
		r := &audit.Report{Headline: 1, Canaries: &audit.CanaryInfo{Runs: c.runs}, Points: []audit.PointResult{
			pt(1, &audit.Utility{Iterations: 1, AcceptanceRate: f(1), ProposalsSinceStart: c.runs, AcceptanceSinceStart: f(1)}),
			pt(2, &audit.Utility{Iterations: 1, AcceptanceRate: f(0), ProposalsSinceStart: 2 * c.runs, AcceptanceSinceStart: f(0.5)}),
		}}
		var b bytes.Buffer
		if err := writeUtilityTable(&b, r); err != nil {
			t.Fatal(err)
		}
		out := strings.Join(strings.Fields(b.String()), " ")
		for _, want := range []string{"Utility per release " + c.scope, "acceptance since start", "│ 0.5 ", "moves: BARELY when the acceptance is below 0.01. acceptance since start:"} {
			if !strings.Contains(out, want) {
				t.Errorf("runs %d: the table lacks %q:\n%s", c.runs, want, b.String())
			}
		}
		if strings.Contains(out, "posterior") {
			t.Errorf("runs %d: the legend explains posterior columns the canary design has not:\n%s", c.runs, b.String())
		}
	}
}
