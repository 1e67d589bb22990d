package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// BoundRatio on the cases the reports state in words.
func TestBoundRatio(t *testing.T) {
	for _, c := range []struct{ lb, ub, want float64 }{
		{1, 4, 0.25},
		{0, 4, 0},                                // the audit proves nothing
		{2, math.Inf(1), 0},                      // the bound certifies nothing at δ
		{0, math.Inf(1), 0},                      // both
		{1, 0, math.Inf(1)},                      // a bound of 0 exceeded outright
		{0, 0, 0},                                // nothing proved of a bound of 0
		{math.Inf(1), math.Inf(1), 0},            // a certified-nothing bound wins
		{3, 1.5, 2},                              // a lower bound above the claim (a refuted claim)
		{1e-300, 1e300, 1e-300 / 1e300},          // no rounding trick
		{math.NaN(), 1, math.NaN()},              // NaN in, NaN out
		{1, math.NaN(), math.NaN()},              // idem
		{-0.5, 2, 0},                             // a negative bound proves nothing
		{math.SmallestNonzeroFloat64, 1, 5e-324}, // still positive
	} {
		got := BoundRatio(c.lb, c.ub)
		if got != c.want && !(math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("BoundRatio(%g, %g) = %g, want %g", c.lb, c.ub, got, c.want)
		}
	}
}

// gdpTheorem is a theorem's claim whose profile is μ-GDP at every release
// of n (a ProfileSpec of kind "gdp"), as a theorem of a Gaussian
// composition is written.
func gdpTheorem(t *testing.T, name string, mu float64, n int) Claim {
	t.Helper()
	s := ClaimSpec{Kind: "theorem", Name: name}
	for range n {
		s.Points = append(s.Points, &closedform.ProfileSpec{Kind: "gdp", Params: map[string]stats.JSONFloat{"mu": stats.JSONFloat(mu)}})
	}
	c, err := s.Claim()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The tightness is the ratio of the report's own numbers, exactly: the
// headline ε_lb over the smallest ε at δ of the claims covering its
// release (named), the headline release's μ_lb over the smallest μ of the
// μ-GDP claims (a GDP claim or a theorem's claim of kind "gdp"), and ε_lb
// over the exact ε.
func TestTightnessIsTheRatioOfTheReportsNumbers(t *testing.T) {
	tg := gaussTarget(t, 1)
	tg.Exact = []float64{4.377} // the 1-GDP profile's ε at 1e-5, about
	o := gaussOptions(21, 4000, "threshold")
	thm := gdpTheorem(t, "a Gaussian composition theorem", 1.5, 1)
	o.Claims = []Claim{PureClaim(9, 1e-5), GDPClaim(2), thm, PureClaim(6, 1e-5)}
	r, err := Run(context.Background(), tg, o, Execution{})
	if err != nil {
		t.Fatal(err)
	}
	tt := r.Tightness
	if tt == nil {
		t.Fatal("no tightness in a report with claims")
	}
	pr := r.Points[r.Headline]
	// The smallest ε at δ among 9, 2-GDP's, 1.5-GDP's and 6, from the
	// report's own column.
	best := 0
	for i, c := range pr.Claims {
		if float64(c.EpsilonAtDelta) < float64(pr.Claims[best].EpsilonAtDelta) {
			best = i
		}
	}
	ub := float64(pr.Claims[best].EpsilonAtDelta)
	if float64(tt.Epsilon) != r.Epsilon.Epsilon/ub || tt.EpsilonClaim != pr.Claims[best].Name || tt.EpsilonUB != ub {
		t.Errorf("ε tightness %v of %q (ε_ub %v), want %v/%v = %v of %q", tt.Epsilon, tt.EpsilonClaim, tt.EpsilonUB,
			r.Epsilon.Epsilon, ub, r.Epsilon.Epsilon/ub, pr.Claims[best].Name)
	}
	if !(r.Epsilon.Epsilon > 0) || !(pr.MuBound().Mu > 0) {
		t.Fatalf("ε_lb %v, μ_lb %v: the test needs positive bounds", r.Epsilon.Epsilon, pr.MuBound().Mu)
	}
	if tt.Mu == nil || float64(*tt.Mu) != pr.MuBound().Mu/1.5 || tt.MuClaim != thm.Name || tt.MuUB != 1.5 || tt.MuLB != pr.MuBound().Mu {
		t.Errorf("μ tightness %v of %q, want %v/1.5 of %q", tt.Mu, tt.MuClaim, pr.MuBound().Mu, thm.Name)
	}
	if tt.Exact == nil || float64(*tt.Exact) != r.Epsilon.Epsilon/4.377 {
		t.Errorf("exact tightness %v, want %v", tt.Exact, r.Epsilon.Epsilon/4.377)
	}
	if v, ok := pr.EpsilonTightness(); !ok || v != r.Epsilon.Epsilon/ub {
		t.Errorf("the headline release's column %v, want %v", v, r.Epsilon.Epsilon/ub)
	}
	// The JSON has the pieces under "tightness", and no more.
	var doc map[string]any
	var buf bytes.Buffer
	if err := WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	got, _ := doc["tightness"].(map[string]any)
	want := map[string]any{"epsilon": float64(tt.Epsilon), "epsilon_claim": tt.EpsilonClaim, "mu": float64(*tt.Mu),
		"mu_claim": tt.MuClaim, "exact": float64(*tt.Exact)}
	if len(got) != len(want) {
		t.Errorf("JSON tightness %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("JSON tightness[%q] = %v, want %v", k, got[k], v)
		}
	}
}

// Without a μ-GDP claim there is no μ tightness; a claim that certifies
// nothing at δ gives 0 (not a ratio of +Inf); a report without claims, or
// whose claims do not cover the headline, has no tightness and no key.
func TestTightnessAbsentAndZero(t *testing.T) {
	o := gaussOptions(21, 2000, "threshold")
	o.Claims = []Claim{PureClaim(1, 0.01)} // δ₀ above the audit's δ: no ε at δ
	r := runGauss(t, 1, o)
	if r.Tightness == nil {
		t.Fatal("no tightness")
	}
	if tt := r.Tightness; tt.Epsilon != 0 || !math.IsInf(tt.EpsilonUB, 1) || tt.Mu != nil || tt.MuClaim != "" || tt.Exact != nil {
		t.Errorf("tightness %+v: want ε 0 of an ε_ub of +Inf, no μ, no exact", *tt)
	}
	for name, claims := range map[string][]Claim{
		"no claim":          nil,
		"uncovered theorem": {uncoveredTheorem(t)},
	} {
		o.Claims = claims
		r := runGauss(t, 1, o)
		if r.Tightness != nil {
			t.Errorf("%s: tightness %+v", name, *r.Tightness)
		}
		var buf bytes.Buffer
		if err := WriteJSON(&buf, r); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(buf.Bytes(), []byte(`"tightness"`)) {
			t.Errorf("%s: the JSON has a tightness key", name)
		}
	}
}

// uncoveredTheorem is a theorem's claim that covers no release of a
// one-release audit (its only profile is for a second release).
func uncoveredTheorem(t *testing.T) Claim {
	t.Helper()
	c, err := ClaimSpec{Kind: "theorem", Name: "a theorem of later releases",
		Points: []*closedform.ProfileSpec{nil, {Kind: "gdp", Params: map[string]stats.JSONFloat{"mu": 1}}}}.Claim()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// growingSums releases the sum of the records times k+1 plus N(0, 1)
// noise at release k of three: release k is exactly (k+1)·Δ-GDP for sums
// differing by Δ (Dong, Roth & Su 2019, Thm 2.7), so the releases leak
// more and more.
type growingSums struct{}

func (growingSums) Dim() int { return 1 }

func (growingSums) Points(*dataset.Dataset) ([]mechanisms.ReleasePoint, error) {
	return []mechanisms.ReleasePoint{{Iteration: 1, Label: "×1"}, {Iteration: 2, Label: "×2"}, {Iteration: 3, Label: "×3"}}, nil
}

func (growingSums) Run(_ context.Context, t mechanisms.Trial, d *dataset.Dataset, emit mechanisms.Emit) (mechanisms.Info, error) {
	s := 0.0
	for _, r := range d.Records {
		s += r.X[0]
	}
	for k := range 3 {
		if err := emit(k, []float64{float64(k+1)*s + t.RNG.NormFloat64()}); err != nil {
			return mechanisms.Info{}, err
		}
	}
	return mechanisms.Info{}, nil
}

// Under Bonferroni over the points the tightness is at the release of the
// headline ε (the largest bound), and each release's column uses its own
// ε_lb.
func TestTightnessUnderBonferroni(t *testing.T) {
	tg := gaussTarget(t, 0.5)
	tg.Mechanism = growingSums{}
	o := gaussOptions(7, 4000, "threshold")
	o.PointSelection, o.Claims = SelectBonferroni, []Claim{GDPClaim(3)}
	r, err := Run(context.Background(), tg, o, Execution{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Headline != -1 || len(r.Points) != 3 || !(r.Epsilon.Epsilon > r.Points[0].EpsilonBound().Epsilon) {
		t.Fatalf("headline %d over %d points, ε_lb %v: the test needs Bonferroni over several, the largest bound not the first's",
			r.Headline, len(r.Points), r.Epsilon.Epsilon)
	}
	tt := r.Tightness
	if tt == nil {
		t.Fatal("no tightness")
	}
	h := tt.Release
	pr := r.Points[h]
	if pr.EpsilonBound() != r.Epsilon {
		t.Errorf("tightness at release %d, whose bound %v is not the headline's %v", h, pr.EpsilonBound(), r.Epsilon)
	}
	for k := range r.Points {
		if r.Points[k].EpsilonBound().Epsilon > r.Epsilon.Epsilon {
			t.Errorf("release %d has a larger bound than the headline", k)
		}
		v, ok := r.Points[k].EpsilonTightness()
		if want := r.Points[k].EpsilonBound().Epsilon / float64(r.Points[k].Claims[0].EpsilonAtDelta); !ok || v != want {
			t.Errorf("release %d: column %v, want %v", k, v, want)
		}
	}
	ub := float64(pr.Claims[0].EpsilonAtDelta)
	if !(pr.MuBound().Mu > 0) {
		t.Fatalf("μ_lb %v at the headline's release: the test needs a positive bound", pr.MuBound().Mu)
	}
	if float64(tt.Epsilon) != r.Epsilon.Epsilon/ub || tt.Mu == nil || float64(*tt.Mu) != pr.MuBound().Mu/3 {
		t.Errorf("tightness %+v, want ε %v, μ %v", *tt, r.Epsilon.Epsilon/ub, pr.MuBound().Mu/3)
	}
}

// The canary design states the same, with its one-run bound: ε_lb over
// the smallest ε at δ (δ = 0 here: the (20, 0) claim's 20, below the GDP
// claim's ε where its profile vanishes in floating point), μ_lb of the
// f-DP estimator over the GDP claim's μ.
func TestTightnessCanaryDesign(t *testing.T) {
	tg := canaryTarget(1000, 4, 1)
	o := Options{Seed: 3, Canaries: &CanaryDesign{Count: 1000, Kind: "test"}, Claims: []Claim{GDPClaim(5), PureClaim(20, 0)}}
	r := canaryReport(t, tg, o, Execution{Workers: 1})
	tt := r.Tightness
	if tt == nil {
		t.Fatal("no tightness")
	}
	pr := r.Points[r.Headline]
	if !(float64(pr.Claims[0].EpsilonAtDelta) > 20) {
		t.Fatalf("5-GDP at δ = 0: ε %v, want above 20", pr.Claims[0].EpsilonAtDelta)
	}
	if float64(tt.Epsilon) != r.Epsilon.Epsilon/20 || tt.EpsilonClaim != "claimed (20, 0)-DP" || r.Epsilon.Estimator != pr.EpsilonBound().Estimator {
		t.Errorf("ε tightness %v of %q, want %v/20", tt.Epsilon, tt.EpsilonClaim, r.Epsilon.Epsilon)
	}
	if mu := pr.MuBound().Mu; !(mu > 0) || tt.Mu == nil || float64(*tt.Mu) != mu/5 || tt.MuClaim != "claimed 5-GDP" {
		t.Errorf("μ tightness %v of %q, want %v/5", tt.Mu, tt.MuClaim, mu)
	}
}
