package report_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"strconv"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/report"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// twoSumsReport audits twoSums (each release 1-GDP) against claims.
func twoSumsReport(t *testing.T, claims ...audit.Claim) *audit.Report {
	t.Helper()
	d := &dataset.Dataset{Name: "D", Records: []dataset.Record{{X: []float64{0.5}}, {X: []float64{-1}}}}
	pair, err := dataset.Neighbour(d, dataset.ReplaceOne, 0, dataset.Record{X: []float64{1.5}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := audit.Run(context.Background(), audit.Target{Name: "two sums", Mechanism: twoSums{}, Pair: pair},
		audit.Options{Trials: 4000, Seed: 2, Delta: 1e-5, Claims: claims}, audit.Execution{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// renders returns the text, HTML and CSV reports.
func renders(t *testing.T, r *audit.Report) (string, string, [][]string) {
	t.Helper()
	var txt, page, c bytes.Buffer
	if err := report.WriteTable(&txt, r); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteHTML(&page, r, audit.Versions{}, nil); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteCSV(&c, r); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&c).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return txt.String(), page.String(), rows
}

// The text report states the headline's tightness after the headline and
// per release in the upper-bound cell; the HTML page the line and a
// column; the CSV a tightness column whose values are each release's ε_lb over its tightest claim's ε
// at δ, in full precision.
func TestTightnessInEveryFormat(t *testing.T) {
	r := twoSumsReport(t, audit.PureClaim(9, 1e-5), audit.GDPClaim(2))
	tt := r.Tightness
	if tt == nil || tt.Mu == nil {
		t.Fatalf("tightness %+v: want ε and μ", tt)
	}
	txt, page, rows := renders(t, r)
	line := report.TightnessLine(r)
	f := stats.FormatFloat
	for _, want := range []string{"ε_lb/ε_ub = " + f(float64(tt.Epsilon)), "of claimed 2-GDP", "μ_lb/μ = " + f(float64(*tt.Mu)),
		"μ " + f(2) + " of claimed 2-GDP"} {
		if !strings.Contains(line, want) {
			t.Errorf("tightness line %q does not say %q", line, want)
		}
	}
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	head := strings.Index(flat(txt), flat(report.Headline(r)))
	at := strings.Index(flat(txt), flat(line))
	if head < 0 || at < head {
		t.Errorf("text report: tightness line at %d, headline at %d; want the line after the headline:\n%s", at, head, txt)
	}
	if !strings.Contains(flat(txt), flat(report.TightnessCellLegend)) {
		t.Errorf("text report has no tightness legend:\n%s", txt)
	}
	// The ratio follows the tightest claim's ε at δ in the upper-bound
	// cell, the other claim's after it.
	for _, pr := range r.Points {
		v, ok := pr.EpsilonTightness()
		i, _ := pr.TightestClaim()
		cell := f(float64(pr.Claims[i].EpsilonAtDelta)) + " (" + strconv.FormatFloat(v, 'g', 3, 64) + ")"
		if !ok || !strings.Contains(txt, cell) {
			t.Errorf("release %s: cell %q not in the text report:\n%s", pr.Point.Label, cell, txt)
		}
	}
	if !strings.Contains(page, `<span class="w">ε_lb/ε_ub</span></th>`) || !strings.Contains(page, `<p class="tightness">`+strings.ReplaceAll(line, "&", "&amp;")) {
		t.Error("HTML page has no tightness column or line")
	}
	col := -1
	for i, h := range rows[0] {
		if h == "tightness" {
			col = i
		}
	}
	if col < 0 || len(rows) != len(r.Points)+1 {
		t.Fatalf("CSV header %v: no tightness column", rows[0])
	}
	for k, pr := range r.Points {
		v, _ := pr.EpsilonTightness()
		got, err := strconv.ParseFloat(rows[k+1][col], 64)
		if err != nil || got != v {
			t.Errorf("CSV release %d: tightness %q, want %v", k, rows[k+1][col], v)
		}
	}
}

// A claim that certifies nothing at δ is said to, with a tightness of 0.
func TestTightnessOfABoundThatCertifiesNothing(t *testing.T) {
	r := twoSumsReport(t, audit.PureClaim(1, 0.01))
	line := report.TightnessLine(r)
	if !strings.Contains(line, "ε_lb/ε_ub = 0 (claimed (1, 0.01)-DP: the bound certifies nothing at δ = 1e-05)") || strings.Contains(line, "μ") {
		t.Errorf("tightness line %q", line)
	}
}

// A report without claims has no tightness anywhere: no line, no cell, no
// column.
func TestNoTightnessWithoutClaims(t *testing.T) {
	r := twoSumsReport(t)
	txt, page, rows := renders(t, r)
	if report.TightnessLine(r) != "" || strings.Contains(txt, "tightness") || strings.Contains(txt, "ε_lb/ε_ub") {
		t.Errorf("text report without claims mentions tightness:\n%s", txt)
	}
	if strings.Contains(page, "tightness") || strings.Contains(page, report.TightnessHeader) {
		t.Error("HTML page without claims mentions tightness")
	}
	for _, h := range rows[0] {
		if h == "tightness" {
			t.Error("CSV without claims has a tightness column")
		}
	}
}
