package audit

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/stats"
)

// gaussScenario is the Gaussian mechanism on a sum query with D and D′
// differing in one record by shift: exactly μ-GDP with μ = shift/sigma.
func gaussScenario(seed uint64, trials int, shift float64, attacks string) string {
	return fmt.Sprintf(`
name: gauss-known-mu
seed: %d
model: {linreg: {dim: 1, alpha: 1, beta: 1}}
data:
  records: [{x: [0.3], y: 0}, {x: [-0.2], y: 0}, {x: [0], y: 0}]
neighbour: {adjacency: replace-one, index: 2, record: {x: [%g], y: 0}}
sampler: {gaussian_query: {sigma: 1}}
audit:
  trials: %d
  split: {train: 0.5, eval: 0.5}
  attacks: %s
  delta: 1.0e-5
  confidence: 0.95
`, seed, shift, trials, attacks)
}

func runScenario(t *testing.T, yml string, workers int) *Report {
	t.Helper()
	c, err := ParseConfig([]byte(yml))
	if err != nil {
		t.Fatal(err)
	}
	return runConfig(t, c, workers)
}

// runConfig builds, simulates and analyses a scenario.
func runConfig(t *testing.T, c *Config, workers int) *Report {
	t.Helper()
	p, err := Build(c)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Simulate(context.Background(), p, 0, c.Audit.Trials, workers, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Analyze(p, tr)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Null test: with D′ = D no attack can beat chance, and the audit must
// report ε_lb = 0 in at least 95% of 100 audits (different seeds) at 95%
// confidence. All four attacks compete on the training runs, so the
// selection machinery is exercised under the null too.
func TestNullAuditsReportZero(t *testing.T) {
	positive := 0
	for s := 0; s < 100; s++ {
		r := runScenario(t, gaussScenario(uint64(1000+s), 400, 0, "[threshold, linear, logistic, qda]"), 2)
		if r.Epsilon.Epsilon > 0 {
			positive++
		}
		for _, pr := range r.Points {
			if pr.GDP.Mu > 0 && pr.Region.Epsilon == 0 && pr.GDP.Epsilon < 0 {
				t.Fatal("negative ε")
			}
		}
	}
	t.Logf("null audits with ε_lb > 0: %d of 100", positive)
	if positive > 5 {
		t.Errorf("ε_lb > 0 in %d of 100 null audits (allowed: 5)", positive)
	}
}

// Known-ε validity: for a mechanism that is exactly 1-GDP, the region
// bound must not exceed the true ε(δ) = 4.377178096 (MATH.md §2), nor μ_lb
// the true μ = 1, in more than 5 of 100 audits.
func TestKnownMuNeverOverstated(t *testing.T) {
	trueEps, _ := stats.GDPEpsilon(1, 1e-5)
	overEps, overMu := 0, 0
	for s := 0; s < 100; s++ {
		r := runScenario(t, gaussScenario(uint64(5000+s), 4000, 1, "[threshold]"), 2)
		if r.Epsilon.Epsilon > trueEps {
			overEps++
		}
		if r.Points[0].GDP.Mu > 1 {
			overMu++
		}
	}
	t.Logf("over the truth: region bound %d/100, μ_lb %d/100", overEps, overMu)
	if overEps > 5 || overMu > 5 {
		t.Errorf("overstated: region bound in %d, μ_lb in %d of 100 audits", overEps, overMu)
	}
}

// Known-ε power: with 10⁵ evaluation runs per side the GDP estimator gets
// within 0.8 of the true ε(δ) for μ = 1, δ = 1e-5, and the rigorous region
// bound is reported beside it (positive, below the truth).
func TestKnownMuPower(t *testing.T) {
	if testing.Short() {
		t.Skip("400,000 runs")
	}
	trueEps, _ := stats.GDPEpsilon(1, 1e-5)
	r := runScenario(t, gaussScenario(77, 400000, 1, "[threshold]"), 0)
	pr := r.Points[0]
	t.Logf("μ_lb = %.4f → ε = %.4f (true %.4f); region bound %.4f; eval %d/%d",
		pr.GDP.Mu, pr.GDP.Epsilon, trueEps, pr.Region.Epsilon, pr.Region.Counts.Negatives, pr.Region.Counts.Positives)
	if pr.Region.Counts.Negatives < 99000 || pr.Region.Counts.Positives < 99000 {
		t.Fatalf("evaluation runs per side: %d, %d", pr.Region.Counts.Negatives, pr.Region.Counts.Positives)
	}
	if pr.GDP.Epsilon < 0.8*trueEps || pr.GDP.Epsilon > trueEps {
		t.Errorf("GDP ε = %.4f, want in [%.4f, %.4f]", pr.GDP.Epsilon, 0.8*trueEps, trueEps)
	}
	if !(pr.Region.Epsilon > 0 && pr.Region.Epsilon <= trueEps) {
		t.Errorf("region bound %.4f not in (0, %.4f]", pr.Region.Epsilon, trueEps)
	}
}

// Refute against a GDP profile must agree with the trade-off function:
// (a, b) is inconsistent with μ-GDP iff b < G_μ(a) or a < G_μ(b) (Dong,
// Roth & Su 2019, Prop. 2.12: the (ε, δ(ε)) family and G_μ describe the
// same region). Checked away from the boundary on random rates.
func TestRefuteMatchesGDPTradeoff(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, mu := range []float64{0.3, 1, 2.5} {
		claim := GDPClaim(mu)
		prof, knots, _ := claim.At(0)
		checked := 0
		for i := 0; i < 3000; i++ {
			a := math.Pow(10, -4*rng.Float64())
			b := math.Pow(10, -4*rng.Float64())
			ga, gb := stats.GDPTradeoff(mu, a), stats.GDPTradeoff(mu, b)
			inside := b >= ga && a >= gb
			// Skip points within 1% of the boundary (grid resolution).
			if math.Abs(b-ga) < 0.01*ga || math.Abs(a-gb) < 0.01*gb {
				continue
			}
			checked++
			ref := Refute(a, b, prof, knots)
			if ref.Refuted == inside {
				t.Fatalf("μ=%g (FPR, FNR) = (%g, %g): refuted=%v but trade-off says inside=%v (G(a)=%g, G(b)=%g)",
					mu, a, b, ref.Refuted, inside, ga, gb)
			}
			if ref.Refuted {
				// The reported pair really is violated.
				if lhs := math.Min(a+math.Exp(ref.Epsilon)*b, b+math.Exp(ref.Epsilon)*a); lhs >= 1-stats.GDPDelta(mu, ref.Epsilon) {
					t.Fatalf("reported (%g, %g) is not violated", ref.Epsilon, ref.Delta)
				}
			}
		}
		if checked < 1000 {
			t.Fatalf("only %d points checked", checked)
		}
	}
}

// For an (ε₀, δ₀) claim, refutation is exactly "region bound at δ₀ > ε₀".
func TestRefutePureClaim(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for i := 0; i < 2000; i++ {
		a, b := math.Pow(10, -3*rng.Float64()), math.Pow(10, -3*rng.Float64())
		eps0, d0 := 4*rng.Float64(), []float64{0, 1e-5, 0.01}[i%3]
		prof, knots, _ := PureClaim(eps0, d0).At(0)
		lb, _ := stats.EpsilonFromRates(a, b, d0)
		if math.Abs(lb-eps0) < 1e-9 {
			continue
		}
		if got := Refute(a, b, prof, knots).Refuted; got != (lb > eps0) {
			t.Fatalf("rates (%g, %g), claim (%g, %g): refuted=%v, region bound %g", a, b, eps0, d0, got, lb)
		}
	}
}

func TestWorkersDoNotChangeResults(t *testing.T) {
	c, _ := DefaultConfig()
	c.Audit.Trials = 600
	p, err := Build(c)
	if err != nil {
		t.Fatal(err)
	}
	t1, err := Simulate(context.Background(), p, 0, 600, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	t3, err := Simulate(context.Background(), p, 0, 600, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range t1.X {
		if math.Float32bits(t1.X[i]) != math.Float32bits(t3.X[i]) {
			t.Fatalf("feature %d differs between 1 and 3 workers", i)
		}
	}
	// A shard is the same as the corresponding slice of the full run.
	sh, err := Simulate(context.Background(), p, 200, 350, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 200; i < 350; i++ {
		for k := range p.Points {
			a, b := t1.Row(i, k, make([]float64, 1)), sh.Row(i, k, make([]float64, 1))
			if a[0] != b[0] || t1.Side[i] != sh.Side[i-200] {
				t.Fatalf("trial %d differs in a shard", i)
			}
		}
	}
}

func TestConfigErrors(t *testing.T) {
	base := gaussScenario(1, 400, 1, "[threshold]")
	cases := []struct{ yml, want string }{
		{base + "bogus: 1\n", "field bogus not found"},
		{gaussScenario(1, 10, 1, "[threshold]"), "audit.trials: must be in [20,"},
		{gaussScenario(1, 400, 1, "[magic]"), "audit.attacks: must be one of"},
		{"name: x\n", "model: must set exactly one of"},
	}
	for _, c := range cases {
		cfg, err := ParseConfig([]byte(c.yml))
		if err == nil {
			_, err = Build(cfg)
		}
		if err == nil || !contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// A library user who leaves the selections at their zero value gets the
// training-run selection — the procedure whose α the analysis assumes — and
// never a Bonferroni-style maximum over points judged at the undivided α
// (the bug: the zero value took the Bonferroni branch with mP = 1).
func TestZeroValueSelectionsAreTrainingSelection(t *testing.T) {
	c, err := ParseConfig([]byte(`
name: zero-selection
seed: 7
model: {linreg: {dim: 1, alpha: 1, beta: 1}}
data: {counterexample: {n: 6, xh: 1, c: 3}}
sampler: {sgld: {step: {eta: 0.05}, batch: 1, scheme: cyclic, epochs: 6}}
init: {from_prior: true}
release: {mode: epochs}
audit: {trials: 2000, split: {train: 0.5, eval: 0.5}, delta: 1.0e-5, confidence: 0.95}
`))
	if err != nil {
		t.Fatal(err)
	}
	explicit := runConfig(t, c, 2)
	c.Audit.PointSelection, c.Audit.AttackSelection = "", ""
	zero := runConfig(t, c, 2)
	if zero.Headline < 0 || zero.Headline != explicit.Headline {
		t.Fatalf("zero-value point selection: headline %d, explicit training selection %d", zero.Headline, explicit.Headline)
	}
	if zero.TestConfidence != c.Audit.Confidence {
		t.Fatalf("test confidence %g, want %g", zero.TestConfidence, c.Audit.Confidence)
	}
	if zero.Epsilon != explicit.Epsilon {
		t.Fatalf("headline ε %+v differs from the explicit training selection's %+v", zero.Epsilon, explicit.Epsilon)
	}
}
