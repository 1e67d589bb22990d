package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// An audit that leaves the region bound out rests its headline on the
// first estimator listed: the table's ε_lb legend, the headline line and
// the HTML page then name that estimator and the assumption its ε rests
// on, and none calls the column the region bound.
func TestHeadlineOnAnotherEstimator(t *testing.T) {
	r := fakeReport("gdp only", 2, false, 2, nil)
	for k := range r.Points {
		b := stats.Estimate{Estimator: stats.EstimatorGDP, Epsilon: 1.5 + float64(k), Mu: 0.5, Confidence: 0.95,
			Delta: 1e-5, Assumption: stats.GDPAssumption}
		r.Points[k].Estimates = []audit.PointEstimate{{Estimator: "gdp", Bound: b}}
	}
	r.Epsilon = r.Points[r.Headline].Estimates[0].Bound
	var b bytes.Buffer
	if err := WriteTable(&b, r); err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(b.String()), " ")
	for _, want := range []string{
		"ε_lb: the gdp estimator's ε (" + stats.EstimatorGDP + ")",
		"it assumes " + stats.GDPAssumption,
		"leaves the region bound out",
		"ε_lb = 2.5000 at iteration 20 [" + stats.EstimatorGDP,
		"; assumes " + stats.GDPAssumption + "]",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(flat, "ε_lb: Clopper-Pearson region bound") {
		t.Errorf("the table calls the gdp estimator's ε the region bound:\n%s", b.String())
	}
	b.Reset()
	if err := WriteHTML(&b, r, audit.Versions{}, nil); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"ε_lb: the gdp estimator", "assumes a Gaussian (μ-GDP) trade-off curve"} {
		if !strings.Contains(page, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	if strings.Contains(page, "ε_lb is the Clopper–Pearson region bound") {
		t.Error("the HTML page calls the gdp estimator's ε the region bound")
	}
}
