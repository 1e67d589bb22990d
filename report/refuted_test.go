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

// refutedBelowTheLine audits a 1-GDP mechanism against the claim 0.68-GDP:
// the claim's ε at δ = 1e-5 (2.82) lies above every ε_lb (about 2.03), yet
// the whole-profile test refutes the claim at a pair of larger δ, where
// the region rule's error rates are too small for 0.68-GDP.
func refutedBelowTheLine(t *testing.T) *audit.Report {
	t.Helper()
	d := &dataset.Dataset{Name: "D", Records: []dataset.Record{{X: []float64{0.5}}, {X: []float64{-1}}}}
	pair, err := dataset.Neighbour(d, dataset.ReplaceOne, 0, dataset.Record{X: []float64{1.5}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := audit.Run(context.Background(), audit.Target{Name: "two sums", Mechanism: twoSums{}, Pair: pair},
		audit.Options{Trials: 20000, Seed: 1, Delta: 1e-5, Claims: []audit.Claim{audit.GDPClaim(0.68)}}, audit.Execution{})
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
// Reference values (mpmath 1.3 at 50 digits): the Clopper–Pearson upper
// bounds at one-sided level 0.025, the p with I_p(k+1, n−k) = 0.975 by
// bisection, are 0.98894660637003 for FP 4953/5024 and 0.00145114465093
// for FN 2/4976; the 0.68-GDP profile δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ −
// μ/2) (Dong, Roth & Su 2019, Cor. 2.13); maximizing 1 − δ(ε) − min(FPR +
// e^ε FNR, FNR + e^ε FPR) by a grid of step 1e-3 on [0, 5] and a
// golden-section refinement gives ε = 1.79377324242, margin
// 0.000269704987258 and δ(ε) = 0.00205926941366; bisection of δ(ε) = 1e-5
// gives the claim's ε at δ, 2.81574833308.
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
	near("claim's ε at δ", float64(cr.EpsilonAtDelta), 2.81574833308, 1e-8)
	if c := ref.Counts; c == nil || *c != (stats.Counts{FP: 4953, Negatives: 5024, FN: 2, Positives: 4976}) {
		t.Fatalf("refutation counts %+v, want FP 4953/5024, FN 2/4976 (the references below are for these)", c)
	}
	near("FPR upper bound", ref.FPR, 0.98894660637003, 1e-10)
	near("FNR upper bound", ref.FNR, 0.00145114465093, 1e-10)
	near("refuted ε", ref.Epsilon, 1.79377324242, 1e-6)
	near("refuted δ", ref.Delta, 0.00205926941366, 1e-8)
	near("margin", ref.Margin, 0.000269704987258, 1e-12)
	if ref.Delta == r.Delta {
		t.Fatal("refuted at the table's δ: not the case under test")
	}

	pairRow := fmt.Sprintf("REFUTED at (%.4g, %.3g)", ref.Epsilon, ref.Delta)
	if pairRow != "REFUTED at (1.794, 0.00206)" {
		t.Fatalf("pair cell %q", pairRow)
	}
	pair := "(ε, δ) = (1.794, 0.00206)"
	counts := "FP 4953/5024, FN 2/4976"
	rates := "FPR ≤ 0.9889, FNR ≤ 0.001451"
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
		jr.Counts.FP != 4953 || jr.Counts.FN != 2 || jr.Attack != "threshold" || jr.Confidence != r.ClaimConfidence {
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
	// rates; a cross marks the pair's ε.
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
