package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/audit"
)

// The ε that μ_lb implies holds only for a Gaussian trade-off curve (on
// randomized response it exceeds the true ε in nearly every run), so no
// output may put it among the ε bounds: the main tables of the text and
// HTML reports carry ε_lb and μ_lb but not it, it appears only in its own
// table under a heading that says it is not a lower bound, and the CSV
// names its column for the assumption.
func TestGaussianEpsilonSetApart(t *testing.T) {
	r := fakeReport("gauss-apart", 3, true, 2, map[string]float64{"claimed 9-GDP": 30})
	for k := range r.Points {
		r.Points[k].Estimates[1].Bound.Mu = 1.25 + float64(k)
		r.Points[k].Estimates[1].Bound.Epsilon = 31.5 + float64(k) // marks the column: no other cell holds these
	}
	var b bytes.Buffer
	if err := WriteTable(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	head, apart, ok := strings.Cut(out, GaussianEpsilonTitle)
	if !ok {
		t.Fatalf("no %q section:\n%s", GaussianEpsilonTitle, out)
	}
	if strings.Contains(head, "ε(μ_lb)") || strings.Contains(head, "31.5") {
		t.Errorf("the ε implied by μ_lb appears before its own section:\n%s", head)
	}
	if !strings.Contains(head, "μ_lb") || !strings.Contains(head, "1.2500") {
		t.Errorf("μ_lb missing from the main table:\n%s", head)
	}
	apart, _, _ = strings.Cut(apart, "\n\n")
	for k, pr := range r.Points {
		want := []string{pr.Point.Label, []string{"1.2500", "2.2500", "3.2500"}[k], []string{"31.5000", "32.5000", "33.5000"}[k]}
		found := false
		for _, line := range strings.Split(apart, "\n") {
			if strings.Contains(line, want[0]+" ") && strings.Contains(line, want[1]) && strings.Contains(line, want[2]) {
				found = true
			}
		}
		if !found {
			t.Errorf("no row %v in the Gaussian section:\n%s", want, apart)
		}
	}
	if !strings.Contains(GaussianEpsilonTitle, "NOT a lower bound on ε") || !strings.Contains(GaussianEpsilonTitle, "only if the trade-off curve is Gaussian") {
		t.Errorf("title %q", GaussianEpsilonTitle)
	}

	b.Reset()
	if err := WriteHTML(&b, r, audit.Versions{}, nil); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	i := strings.Index(page, "<h2>Per release")
	j := strings.Index(page, "<h2>"+GaussianEpsilonTitle)
	if i < 0 || j < i {
		t.Fatalf("HTML sections: per release at %d, Gaussian at %d", i, j)
	}
	if perRelease := page[i:j]; strings.Contains(perRelease, "31.5") || strings.Contains(perRelease, "ε(μ_lb)") {
		t.Errorf("HTML per-release table shows the ε implied by μ_lb")
	}
	if !strings.Contains(page[j:], "<td>31.5000</td>") {
		t.Errorf("HTML Gaussian table lacks the ε implied by μ_lb")
	}

	b.Reset()
	if err := WriteCSV(&b, r); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := -1
	for c, h := range rows[0] {
		if h == "eps_if_gaussian" {
			col = c
		}
	}
	if col < 0 || rows[1][col] != "31.5" {
		t.Errorf("CSV: eps_if_gaussian column %d in %v", col, rows[0])
	}
}
