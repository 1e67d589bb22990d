package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/report"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// twoSums releases the sum of the records plus N(0, 1) noise twice, with
// fresh noise each time: each release alone is exactly 1-GDP on datasets
// whose sums differ by 1 (Dong, Roth & Su 2019, Thm 2.7).
type twoSums struct{}

func (twoSums) Dim() int { return 1 }

func (twoSums) Points(*dataset.Dataset) ([]mechanisms.ReleasePoint, error) {
	return []mechanisms.ReleasePoint{{Iteration: 1, Label: "first sum"}, {Iteration: 2, Label: "second sum"}}, nil
}

func (twoSums) Run(_ context.Context, t mechanisms.Trial, d *dataset.Dataset, emit mechanisms.Emit) (mechanisms.Info, error) {
	s := 0.0
	for _, r := range d.Records {
		s += r.X[0]
	}
	for k := range 2 {
		if err := emit(k, []float64{s + t.RNG.NormFloat64()}); err != nil {
			return mechanisms.Info{}, err
		}
	}
	return mechanisms.Info{}, nil
}

// refutedBelowTheLine audits a 1-GDP mechanism against the claim 0.8-GDP:
// the claim's ε at δ = 1e-5 (3.39) lies above every ε_lb (about 2), yet
// the whole-profile test refutes the claim at a pair of large δ, where
// the GDP rule's (mid-threshold) error rates are too small for 0.8-GDP (a
// whole-profile claim may be tested with any estimator's rule).
func refutedBelowTheLine(t *testing.T) *audit.Report {
	t.Helper()
	d := &dataset.Dataset{Name: "D", Records: []dataset.Record{{X: []float64{0.5}}, {X: []float64{-1}}}}
	pair, err := dataset.Neighbour(d, dataset.ReplaceOne, 0, dataset.Record{X: []float64{1.5}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := audit.Run(context.Background(), audit.Target{Name: "two sums", Mechanism: twoSums{}, Pair: pair},
		audit.Options{Trials: 20000, Seed: 1, Delta: 1e-5, Claims: []audit.Claim{audit.GDPClaim(0.8)}}, audit.Execution{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A claim refuted at a pair other than the table's δ, while every ε_lb
// lies below the claim's ε at δ: the table row, the verdict, the JSON, the
// HTML page and the plot all name the refuted pair, say why (the
// whole-profile test) and quote the same error counts and rates.
//
// Reference values (scipy 1.10): the Clopper–Pearson upper bounds at
// one-sided level 0.025 are beta.ppf(0.975, k+1, n−k) = 0.24421528152178
// for FP 1167/5024 and 0.39873325474588 for FN 1916/4976; the 0.8-GDP
// profile δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Dong, Roth & Su 2019,
// Cor. 2.13); maximizing 1 − δ(ε) − min(FPR + e^ε FNR, FNR + e^ε FPR) with
// minimize_scalar (bounded, xatol 1e-10) gives ε = 0.23424574560, margin
// 0.05858475266 and δ(ε) = 0.23400485046; brentq of δ(ε) = 1e-5 gives the
// claim's ε at δ, 3.38693318616.
func TestRefutedBelowTheLine(t *testing.T) {
	r := refutedBelowTheLine(t)
	k := r.ClaimTests[0].Point
	if k < 0 || k != r.Headline {
		t.Fatalf("claim tested at release %d, headline %d: want both at one release", k, r.Headline)
	}
	pr := r.Points[k]
	cr := pr.Claims[0]
	ref := r.ClaimTests[0].Refutation
	if ref == nil || !ref.Refuted || r.Verdict != audit.VerdictViolation {
		t.Fatalf("claim not refuted: %+v", ref)
	}
	if lb := pr.Region().Epsilon; !(lb < float64(cr.EpsilonAtDelta)) {
		t.Fatalf("ε_lb %g not below the claim's ε at δ %g: not the case under test", lb, float64(cr.EpsilonAtDelta))
	}
	near := func(what string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol {
			t.Errorf("%s = %.12g, want %.12g ± %g", what, got, want, tol)
		}
	}
	near("claim's ε at δ", float64(cr.EpsilonAtDelta), 3.38693318616, 1e-8)
	if c := ref.Counts; c == nil || *c != (stats.Counts{FP: 1167, Negatives: 5024, FN: 1916, Positives: 4976}) {
		t.Fatalf("refutation counts %+v, want FP 1167/5024, FN 1916/4976 (the references below are for these)", c)
	}
	near("FPR upper bound", ref.FPR, 0.24421528152178, 1e-10)
	near("FNR upper bound", ref.FNR, 0.39873325474588, 1e-10)
	near("refuted ε", ref.Epsilon, 0.23424574560, 1e-6)
	near("refuted δ", ref.Delta, 0.23400485046, 1e-6)
	near("margin", ref.Margin, 0.05858475266, 1e-9)
	if ref.Delta == r.Delta {
		t.Fatal("refuted at the table's δ: not the case under test")
	}

	pairRow := fmt.Sprintf("REFUTED at (%.4g, %.3g)", ref.Epsilon, ref.Delta)
	if pairRow != "REFUTED at (0.2342, 0.234)" {
		t.Fatalf("pair cell %q", pairRow)
	}
	pair := "(ε, δ) = (0.2342, 0.234)"
	counts := "FP 1167/5024, FN 1916/4976"
	rates := "FPR ≤ 0.2442, FNR ≤ 0.3987"
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }

	// Text: the row names the pair; the verdict the pair, why, the counts
	// and the rates.
	var text bytes.Buffer
	if err := report.WriteTable(&text, r); err != nil {
		t.Fatal(err)
	}
	row := ""
	for _, l := range strings.Split(text.String(), "\n") {
		if strings.Contains(l, pr.Point.Label+" *") {
			row = l
		}
	}
	if !strings.Contains(row, pairRow) {
		t.Errorf("the headline row lacks %q:\n%s", pairRow, row)
	}
	_, verdict, _ := strings.Cut(text.String(), "verdict: VIOLATION")
	verdict = flat(verdict)
	for _, want := range []string{pair + " refuted", "a pair other than the claim's ε at δ = 1e-05", "whole-profile test", counts, rates, "at confidence 0.95"} {
		if !strings.Contains(verdict, want) {
			t.Errorf("the text verdict lacks %q:\n%s", want, verdict)
		}
	}

	// JSON: the refutation with its pair, rule, counts, rates and reason.
	var js bytes.Buffer
	if err := audit.WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		ClaimTests []struct {
			Refutation struct {
				Refuted    bool    `json:"refuted"`
				Epsilon    float64 `json:"epsilon"`
				Delta      float64 `json:"delta"`
				FPR        float64 `json:"fpr_upper"`
				FNR        float64 `json:"fnr_upper"`
				Attack     string  `json:"attack"`
				Estimator  string  `json:"estimator"`
				Confidence float64 `json:"confidence"`
				Counts     struct {
					FP, Negatives, FN, Positives int
				} `json:"counts"`
				Reason string `json:"reason"`
			} `json:"refutation"`
		} `json:"claim_tests"`
		Violations []string `json:"violations"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	jr := doc.ClaimTests[0].Refutation
	if !jr.Refuted || jr.Epsilon != ref.Epsilon || jr.Delta != ref.Delta || jr.FPR != ref.FPR || jr.FNR != ref.FNR ||
		jr.Counts.FP != 1167 || jr.Counts.FN != 1916 || jr.Attack != "threshold" || jr.Confidence != r.ClaimConfidence {
		t.Errorf("JSON refutation %+v", jr)
	}
	for _, want := range []string{"whole-profile test", counts, rates} {
		if !strings.Contains(jr.Reason, want) {
			t.Errorf("JSON reason lacks %q: %s", want, jr.Reason)
		}
	}
	if len(doc.Violations) != 1 || !strings.Contains(doc.Violations[0], pair) || !strings.Contains(doc.Violations[0], counts) {
		t.Errorf("JSON violations %q", doc.Violations)
	}

	// HTML: the row's cell names the pair and the counts, the verdict
	// banner the pair, why and the same counts and rates.
	var page bytes.Buffer
	if err := report.WriteHTML(&page, r, audit.Versions{}, nil); err != nil {
		t.Fatal(err)
	}
	h := html.UnescapeString(page.String())
	if !strings.Contains(h, pairRow+": rule errors "+counts+" ("+rates+")") {
		t.Errorf("the HTML table lacks the refuted pair with its counts")
	}
	banner := regexp.MustCompile(`(?s)<div class="verdict[^"]*"[^>]*>(.*?)</div>`).FindStringSubmatch(h)
	if banner == nil {
		t.Fatal("no verdict banner in the HTML page")
	}
	for _, want := range []string{"VIOLATION", pair, "whole-profile test", counts, rates} {
		if !strings.Contains(flat(banner[1]), want) {
			t.Errorf("the HTML verdict lacks %q: %s", want, banner[1])
		}
	}

	// Plot: the legend of the SVG (text runs carry their text as
	// aria-label) names the refuted pair, why, and the same counts and
	// rates; a ringed cross marks the pair's ε.
	var svg bytes.Buffer
	if err := report.WritePlot(&svg, "svg", r); err != nil {
		t.Fatal(err)
	}
	var legend []string
	for _, m := range regexp.MustCompile(`<g class="text" aria-label="([^"]*)"`).FindAllStringSubmatch(svg.String(), -1) {
		legend = append(legend, html.UnescapeString(m[1]))
	}
	all := flat(strings.Join(legend, " "))
	for _, want := range []string{"REFUTED by the whole-profile test", pr.Point.Label + " " + pair, counts, rates} {
		if !strings.Contains(all, want) {
			t.Errorf("the plot's legend lacks %q:\n%s", want, all)
		}
	}
}

// Display names keep six significant digits; other numbers are untouched.
func TestDisplayName(t *testing.T) {
	for in, want := range map[string]string{
		"SGLD(eta=0.0016899675500270416, batch=1, cyclic) on linreg(d=1, alpha=2, beta=1)": "SGLD(eta=0.00168997, batch=1, cyclic) on linreg(d=1, alpha=2, beta=1)",
		"ULA(gamma=1.2345678901234e-05)":    "ULA(gamma=1.23457e-05)",
		"DP-Barker(b=10, C=0.5, step=0.25)": "DP-Barker(b=10, C=0.5, step=0.25)",
		"x=123456.789012":                   "x=123457",
	} {
		if got := report.DisplayName(in); got != want {
			t.Errorf("DisplayName(%q) = %q, want %q", in, got, want)
		}
	}
}
