package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// Prop. 3.3's theoretical bound is shown beside ε_lb in the table, the
// HTML, the CSV and the plot, labelled as a theorem's and not the audit's,
// with "—" at a point where it proves nothing; a report without it has no
// such column.
func TestConvergenceColumn(t *testing.T) {
	r := fakeReport("conv", 2, false, 1, nil)
	eps := stats.JSONFloat(2.3725205)
	r.Points[0].Convergence = &audit.ConvergenceBound{Source: audit.ConvergenceSource, BetaD: 0.7, BetaDPrime: 0.74, Reason: "proves nothing"}
	r.Points[1].Convergence = &audit.ConvergenceBound{Source: audit.ConvergenceSource, Epsilon: &eps, BetaD: 0.005, BetaDPrime: 0.0052}

	var b bytes.Buffer
	if err := WriteTable(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, ConvergenceColumn) || !strings.Contains(out, "not an empirical one") || !strings.Contains(out, "Prop. 3.3") {
		t.Errorf("table lacks the labelled column:\n%s", out)
	}
	var rows []string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "iteration 10 ") || strings.Contains(line, "iteration 20 ") {
			rows = append(rows, line)
		}
	}
	if len(rows) < 2 || !strings.Contains(rows[0], "—") || !strings.Contains(rows[1], "2.3725") {
		t.Errorf("rows %q", rows)
	}

	b.Reset()
	if err := WriteCSV(&b, r); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	if recs[1][col["eps_convergence_lb"]] != "" || recs[2][col["eps_convergence_lb"]] != "2.3725205" || recs[2][col["convergence_beta_dprime"]] != "0.0052" {
		t.Errorf("CSV %v", recs)
	}

	b.Reset()
	if err := WriteHTML(&b, r, audit.Versions{}, nil); err != nil {
		t.Fatal(err)
	}
	if page := b.String(); !strings.Contains(page, "<td>2.3725</td>") || !strings.Contains(page, "<td>—</td>") || !strings.Contains(page, "not an empirical one") {
		t.Errorf("HTML lacks the column or its note")
	}

	b.Reset()
	if err := WritePlot(&b, "svg", r); err != nil {
		t.Fatal(err)
	}
	_, _, runs := svgTexts(t, b.Bytes())
	var legend string
	for _, tr := range runs {
		legend += tr.text + " "
	}
	if !strings.Contains(legend, "theoretical lower bound from") {
		t.Errorf("plot legend lacks the curve: %s", legend)
	}

	plain := fakeReport("plain", 2, false, 1, nil)
	b.Reset()
	if err := WriteTable(&b, plain); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), ConvergenceColumn) {
		t.Errorf("a report without the bound shows its column")
	}
}

// Where Prop. 3.3 proves nothing at any release (the default
// counterexample's chain stays far from its posterior), the column of "—"
// is folded into one legend line with the reason, so the table keeps its
// width; the CSV keeps its columns.
func TestConvergenceColumnFoldedWhenEmpty(t *testing.T) {
	r := fakeReport("conv", 2, false, 1, nil)
	for k := range r.Points {
		r.Points[k].Convergence = &audit.ConvergenceBound{Source: audit.ConvergenceSource, BetaD: 0.2, BetaDPrime: 0.21, Reason: "β too large"}
	}
	var b bytes.Buffer
	if err := WriteTable(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, ConvergenceColumn) {
		t.Errorf("a column of dashes only is shown:\n%s", out)
	}
	if !strings.Contains(out, "proves no lower bound at any release here") || !strings.Contains(out, "β too large") {
		t.Errorf("the legend does not say the bound proves nothing, and why:\n%s", out)
	}
	b.Reset()
	if err := WriteCSV(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "eps_convergence_lb") {
		t.Errorf("CSV lost its convergence columns")
	}
}
