package audit

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// gaussTarget is the Gaussian mechanism on a sum query with D and D′
// differing in one record by shift: exactly μ-GDP with μ = shift/σ, σ = 1
// (Dong, Roth & Su 2019, Thm 2.7).
func gaussTarget(t testing.TB, shift float64) Target {
	d := &dataset.Dataset{Name: "three records", Records: []dataset.Record{{X: []float64{0.3}}, {X: []float64{-0.2}}, {X: []float64{0}}}}
	pair, err := dataset.Neighbour(d, dataset.ReplaceOne, 2, dataset.Record{X: []float64{shift}})
	if err != nil {
		t.Fatal(err)
	}
	return Target{Name: "gauss-known-mu", Pair: pair, Mechanism: &mechanisms.Chain{
		Model: mechanisms.NewLinReg1D(1, 1), Sampler: &mechanisms.GaussianQuery{Sigma: 1},
		Release: mechanisms.ReleaseSpec{Mode: mechanisms.ReleaseFinal}}}
}

// gaussOptions audits with the named attacks at δ = 1e-5 and 95%.
func gaussOptions(seed uint64, trials int, names ...string) Options {
	o := Options{Trials: trials, Seed: seed, Delta: 1e-5, Confidence: 0.95}
	for _, n := range names {
		a, err := attacks.ByName(n)
		if err != nil {
			panic(err)
		}
		o.Attacks = append(o.Attacks, a)
	}
	return o
}

func runGauss(t testing.TB, shift float64, o Options) *Report {
	t.Helper()
	r, err := Run(context.Background(), gaussTarget(t, shift), o, Execution{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// cyclicTarget is cyclic batch-1 SGLD on Heller & Fetaya's counterexample
// pair at n = 6, released after every epoch: several release points.
func cyclicTarget(t testing.TB) Target {
	pair, err := dataset.CounterexamplePair(6, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	return Target{Name: "cyclic", Pair: pair, Mechanism: &mechanisms.Chain{
		Model:   mechanisms.NewLinReg1D(1, 1),
		Sampler: &mechanisms.SGLD{Step: mechanisms.StepSchedule{Eta: 0.05}, Batch: 1, Scheme: mechanisms.Cyclic, Epochs: 6},
		Init:    mechanisms.Init{FromPrior: true}, Release: mechanisms.ReleaseSpec{Mode: mechanisms.ReleaseEpochs}}}
}

// A library user who leaves the options at their zero values gets the
// documented defaults — half the runs train, 95% confidence, one attack
// and one release point chosen on training runs with all of α — and never
// a weaker procedure (the bug this guards against: a zero PointSelection
// took the Bonferroni branch, a maximum over points, at the undivided α).
func TestZeroValueOptionsAreTheDocumentedDefaults(t *testing.T) {
	zero, err := Run(context.Background(), cyclicTarget(t), Options{Trials: 2000, Seed: 7, Delta: 1e-5}, Execution{})
	if err != nil {
		t.Fatal(err)
	}
	explicit, err := Run(context.Background(), cyclicTarget(t), Options{Trials: 2000, Seed: 7, Delta: 1e-5,
		Split: Split{Train: 0.5, Eval: 0.5}, Confidence: 0.95, AttackSelection: SelectOnTraining, PointSelection: SelectOnTraining,
		Attacks: []attacks.Classifier{attacks.BestCoordinate{}}}, Execution{})
	if err != nil {
		t.Fatal(err)
	}
	if zero.Headline < 0 || zero.Headline != explicit.Headline || zero.Epsilon != explicit.Epsilon {
		t.Fatalf("zero options: headline %d ε %+v; explicit defaults: headline %d ε %+v", zero.Headline, zero.Epsilon, explicit.Headline, explicit.Epsilon)
	}
	if zero.TestConfidence != 0.95 || !strings.Contains(zero.Multiplicity, "chosen on training runs") {
		t.Fatalf("zero options: test confidence %g, multiplicity %q", zero.TestConfidence, zero.Multiplicity)
	}
	// Bonferroni, asked for explicitly, is a different procedure: every
	// point tested at α/P and no headline point.
	bonf, err := Run(context.Background(), cyclicTarget(t), Options{Trials: 2000, Seed: 7, Delta: 1e-5, PointSelection: SelectBonferroni}, Execution{})
	if err != nil {
		t.Fatal(err)
	}
	if p := len(bonf.Points); bonf.Headline != -1 || math.Abs(bonf.TestConfidence-(1-0.05/float64(p))) > 1e-15 {
		t.Fatalf("Bonferroni over %d points: headline %d, test confidence %g", p, bonf.Headline, bonf.TestConfidence)
	}
}

// Options that are neither a default nor valid are refused, naming the
// field.
func TestOptionsErrors(t *testing.T) {
	cases := []struct {
		o    Options
		want string
	}{
		{Options{}, "Trials: must be in [20,"},
		{Options{Trials: 100, Split: Split{Train: 0.7}}, "Split: train and eval must both be > 0"},
		{Options{Trials: 100, Confidence: 1}, "Confidence: must be in (0, 1)"},
		{Options{Trials: 100, Delta: 1}, "Delta: must be in [0, 1)"},
		{Options{Trials: 100, PointSelection: 7}, "PointSelection: must be"},
		{Options{Trials: 100, Assignment: AssignGiven}, "Sides: must list every trial's side"},
		{Options{Trials: 100, Sides: make([]dataset.Side, 100)}, "Sides: must list every trial's side with AssignGiven, and only then"},
	}
	for _, c := range cases {
		_, err := New(gaussTarget(t, 1), c.o)
		var fe *FieldError
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &fe) {
			t.Errorf("%+v: error %v, want a *FieldError containing %q", c.o, err, c.want)
		}
	}
}

// Null test: with D′ = D no attack can beat chance, and the audit must
// report ε_lb = 0 in at least 95% of 100 audits (different seeds) at 95%
// confidence. All four attacks compete on the training runs, so the
// selection machinery is exercised under the null too.
func TestNullAuditsReportZero(t *testing.T) {
	positive := 0
	for s := 0; s < 100; s++ {
		r := runGauss(t, 0, gaussOptions(uint64(1000+s), 400, "threshold", "linear", "logistic", "qda"))
		if r.Epsilon.Epsilon > 0 {
			positive++
		}
		for _, pr := range r.Points {
			if pr.GDP().Mu > 0 && pr.Region().Epsilon == 0 && pr.GDP().Epsilon < 0 {
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
// bound must not exceed the true ε(δ) = 4.377178096 (Dong, Roth & Su 2019,
// Cor. 2.13, inverted numerically with scipy), nor μ_lb
// the true μ = 1, in more than 5 of 100 audits.
func TestKnownMuNeverOverstated(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	trueEps, _ := stats.GDPEpsilon(1, 1e-5)
	overEps, overMu := 0, 0
	for s := 0; s < 100; s++ {
		r := runGauss(t, 1, gaussOptions(uint64(5000+s), 4000, "threshold"))
		if r.Epsilon.Epsilon > trueEps {
			overEps++
		}
		if r.Points[0].GDP().Mu > 1 {
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
	o := gaussOptions(77, 400000, "threshold")
	r := runGauss(t, 1, o)
	pr := r.Points[0]
	t.Logf("μ_lb = %.4f → ε = %.4f (true %.4f); region bound %.4f; eval %d/%d",
		pr.GDP().Mu, pr.GDP().Epsilon, trueEps, pr.Region().Epsilon, pr.Region().Counts.Negatives, pr.Region().Counts.Positives)
	if pr.Region().Counts.Negatives < 99000 || pr.Region().Counts.Positives < 99000 {
		t.Fatalf("evaluation runs per side: %d, %d", pr.Region().Counts.Negatives, pr.Region().Counts.Positives)
	}
	if pr.GDP().Epsilon < 0.8*trueEps || pr.GDP().Epsilon > trueEps {
		t.Errorf("GDP ε = %.4f, want in [%.4f, %.4f]", pr.GDP().Epsilon, 0.8*trueEps, trueEps)
	}
	if !(pr.Region().Epsilon > 0 && pr.Region().Epsilon <= trueEps) {
		t.Errorf("region bound %.4f not in (0, %.4f]", pr.Region().Epsilon, trueEps)
	}
}

// Refute against a GDP profile must agree with the trade-off function:
// (a, b) is inconsistent with μ-GDP iff b < G_μ(a) or a < G_μ(b) (Dong,
// Roth & Su 2019, Prop. 2.12: the (ε, δ(ε)) family and G_μ describe the
// same region). Checked away from the boundary on random rates.
func TestRefuteMatchesGDPTradeoff(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
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

// The worker count never changes a result, and a shard is the matching
// slice of the full run: every trial's features bit for bit.
func TestWorkersDoNotChangeResults(t *testing.T) {
	o := Options{Trials: 600, Seed: 3, Delta: 1e-5}
	var ts []*Trials
	for _, w := range []int{1, 3} {
		a, err := New(cyclicTarget(t), o)
		if err != nil {
			t.Fatal(err)
		}
		a = withWorkers(t, a, w)
		tr, err := a.Simulate(context.Background(), 0, 600)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, tr)
	}
	t1, t3 := ts[0], ts[1]
	for i := range t1.X {
		if math.Float32bits(t1.X[i]) != math.Float32bits(t3.X[i]) {
			t.Fatalf("feature %d differs between 1 and 3 workers", i)
		}
	}
	a, _ := New(cyclicTarget(t), o)
	sh, err := a.Simulate(context.Background(), 200, 350)
	if err != nil {
		t.Fatal(err)
	}
	for i := 200; i < 350; i++ {
		for k := range a.Points() {
			x, y := t1.Row(i, k, make([]float64, 1)), sh.Row(i, k, make([]float64, 1))
			if x[0] != y[0] || t1.Side[i] != sh.Side[i-200] {
				t.Fatalf("trial %d differs in a shard", i)
			}
		}
	}
	// The analysis runs points in parallel; its report is the same.
	r1, err := a.Analyze(t1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := New(cyclicTarget(t), o)
	b = withWorkers(t, b, 1)
	r2, err := b.Analyze(t1)
	if err != nil {
		t.Fatal(err)
	}
	for k := range r1.Points {
		if r1.Points[k].Region() != r2.Points[k].Region() || r1.Points[k].GDP() != r2.Points[k].GDP() {
			t.Fatalf("point %d differs between analyses with 3 and 1 workers", k)
		}
	}
}

// withWorkers returns a with w workers.
func withWorkers(t testing.TB, a *Audit, w int) *Audit {
	t.Helper()
	x := a.Execution()
	x.Workers = w
	b, err := a.WithExecution(x)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Execution settings are checked where they are set: no setter skips the
// check (a worker count out of [0, MaxWorkers], a negative or NaN work
// limit are *FieldErrors naming the field).
func TestExecutionChecked(t *testing.T) {
	a, err := New(gaussTarget(t, 1), Options{Trials: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		x    Execution
		want string
	}{
		{Execution{Workers: -1}, "Workers: must be in [0, 4096], got -1"},
		{Execution{Workers: MaxWorkers + 1}, "Workers: must be in [0, 4096], got 4097"},
		{Execution{MaxWork: -1}, "MaxWork: must be ≥ 0"},
		{Execution{MaxWork: math.NaN()}, "MaxWork: must be ≥ 0"},
	} {
		b, err := a.WithExecution(c.x)
		var fe *FieldError
		if b != nil || err == nil || !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: audit %v, error %v, want a *FieldError containing %q", c.x, b != nil, err, c.want)
		}
	}
	b, err := a.WithExecution(Execution{Workers: MaxWorkers})
	if err != nil || b.Execution().Workers != MaxWorkers || b.Execution().MaxWork != DefaultMaxWork || a.Execution().Workers != 0 {
		t.Errorf("valid execution: %v, %+v (original %+v)", err, b.Execution(), a.Execution())
	}
}
