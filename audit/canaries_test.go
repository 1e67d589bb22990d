package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/mcmcaudit/mcmcaudit/closedform"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// perCanaryGauss releases one Gaussian coordinate per canary, shifted by
// mu when the canary is in the data (a canary is a record with Y = 1 and
// its index in X[0]): exactly mu-GDP per canary, and data-blind at mu = 0.
// With points > 1 it releases that many independent draws.
type perCanaryGauss struct {
	m, points int
	mu        float64
}

func (g perCanaryGauss) Dim() int { return g.m }

func (g perCanaryGauss) Points(*dataset.Dataset) ([]mechanisms.ReleasePoint, error) {
	var pts []mechanisms.ReleasePoint
	for k := range max(g.points, 1) {
		pts = append(pts, mechanisms.ReleasePoint{Iteration: k + 1, Label: "draw " + string(rune('a'+k))})
	}
	return pts, nil
}

func (g perCanaryGauss) Run(_ context.Context, t mechanisms.Trial, d *dataset.Dataset, emit mechanisms.Emit) (mechanisms.Info, error) {
	theta := make([]float64, g.m)
	for k := range max(g.points, 1) {
		for i := range theta {
			theta[i] = t.RNG.NormFloat64()
		}
		for _, r := range d.Records {
			if r.Y == 1 {
				theta[int(r.X[0])] += g.mu
			}
		}
		if err := emit(k, theta); err != nil {
			return mechanisms.Info{}, err
		}
	}
	return mechanisms.Info{Iterations: 1}, nil
}

// canaryTarget is the target of perCanaryGauss with m canaries.
func canaryTarget(m int, mu float64, points int) Target {
	d := &dataset.Dataset{Name: "base", Records: []dataset.Record{{X: []float64{-1}}, {X: []float64{-2}}}}
	t := Target{Name: "per-canary Gaussian", Mechanism: perCanaryGauss{m: m, mu: mu, points: points}, Pair: dataset.Pair{D: d}}
	for i := range m {
		t.Canaries = append(t.Canaries, dataset.Record{X: []float64{float64(i)}, Y: 1})
	}
	return t
}

func canaryReport(t *testing.T, tg Target, o Options, x Execution) *Report {
	t.Helper()
	r, err := Run(context.Background(), tg, o, x)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The inclusion coins are fair and fixed by the seed; the runs partition
// the canaries evenly.
func TestCanaryInclusionAndRuns(t *testing.T) {
	in := CanaryIncluded(7, 20000)
	n := 0
	for _, b := range in {
		if b {
			n++
		}
	}
	// Bin(20000, 1/2): sd 70.7; 5 sd either side.
	if math.Abs(float64(n)-10000) > 354 {
		t.Errorf("%d of 20000 canaries included", n)
	}
	if again := CanaryIncluded(7, 20000); !equalBools(in, again) {
		t.Error("the inclusion coins differ for the same seed")
	}
	if other := CanaryIncluded(8, 20000); equalBools(in, other) {
		t.Error("the inclusion coins do not depend on the seed")
	}
	c := CanaryDesign{Count: 10, Runs: 4}
	var got []int
	for j := range 4 {
		lo, hi := c.RunCanaries(j)
		for i := lo; i < hi; i++ {
			if c.RunOf(i) != j {
				t.Errorf("canary %d: RunOf %d, listed in run %d", i, c.RunOf(i), j)
			}
			got = append(got, i)
		}
		if hi-lo < 2 || hi-lo > 3 {
			t.Errorf("run %d has %d canaries, want 2 or 3", j, hi-lo)
		}
	}
	if len(got) != 10 {
		t.Errorf("the runs hold %d canaries, want 10", len(got))
	}
}

func equalBools(a, b []bool) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// guessCounts and describeScores against counts made by hand.
func TestCanaryGuessesAndDescriptive(t *testing.T) {
	scores := []float64{5, 1, 4, 4, 0, 3}
	incl := []bool{true, false, false, true, false, true}
	order := rankCanaries(scores)
	if want := []int{0, 2, 3, 5, 1, 4}; !equalInts(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	inTop := make([]int, 7)
	for i, c := range order {
		inTop[i+1] = inTop[i]
		if incl[c] {
			inTop[i+1]++
		}
	}
	// Top 2 (canaries 0, 2): one in; bottom 2 (1, 4): both out.
	if c := guessCounts(Guess{Plus: 2, Minus: 2}, inTop); c != (stats.OneRunCounts{Canaries: 6, Guesses: 4, Correct: 3}) {
		t.Errorf("counts %+v", c)
	}
	// Positives 0, 3, 5 (scores 5, 4, 3); negatives 1, 2, 4 (1, 4, 0).
	// Pairs won by the positive: 5 beats 3, 4 beats 2 and ties 1, 3 beats 2:
	// (3 + 2.5 + 2) / 9.
	d := describeScores(scores, incl)
	if math.Abs(float64(d.AUROC)-7.5/9) > 1e-15 {
		t.Errorf("AUROC %v, want %v", d.AUROC, 7.5/9)
	}
	// At FPR 0 the threshold above 4 keeps one positive of three.
	if d.TPRAt1 != stats.JSONFloat(1.0/3) || d.TPRAt01 != stats.JSONFloat(1.0/3) {
		t.Errorf("TPR %v %v, want 1/3", d.TPRAt1, d.TPRAt01)
	}
}

// The design's counts are those computed from the scores directly; a
// strong per-canary signal gives a positive bound, claims below it are
// refuted and claims above it are not.
func TestCanaryDesignBoundsAndClaims(t *testing.T) {
	tg := canaryTarget(1000, 4, 1)
	o := Options{Seed: 3, Canaries: &CanaryDesign{Count: 1000, Kind: "test"}, Claims: []Claim{PureClaim(0.5, 0), PureClaim(20, 0), GDPClaim(1)}}
	r := canaryReport(t, tg, o, Execution{Workers: 1})
	if r.Canaries == nil || len(r.Points) != 1 {
		t.Fatalf("canary design %+v, %d points", r.Canaries, len(r.Points))
	}
	p := r.Points[0]
	if len(p.Attacks) != 1 || p.Attacks[0].Attack != CanaryAttack {
		t.Fatalf("attacks %+v", p.Attacks)
	}
	for _, e := range p.Attacks[0].Estimates {
		if *e.Guess != (Guess{Plus: 50, Minus: 50}) {
			t.Errorf("%s: default guess %+v", e.Estimator, *e.Guess)
		}
	}
	// μ = 4 separates the two classes almost perfectly: every guess right.
	eps := p.EpsilonBound()
	if c := eps.Guesses; c == nil || c.Guesses != 100 || c.Correct != 100 {
		t.Errorf("counts %+v", c)
	}
	want, _ := stats.OneRunEpsilon(stats.OneRunCounts{Canaries: 1000, Guesses: 100, Correct: 100}, 0, 1-0.05)
	if eps.Epsilon != want.Epsilon || p.Ceiling.Epsilon != want.Epsilon || r.Epsilon != eps || r.Headline != 0 {
		t.Errorf("ε_lb %v ceiling %v headline %v (%d), want %v", eps.Epsilon, p.Ceiling.Epsilon, r.Epsilon, r.Headline, want.Epsilon)
	}
	if r.Verdict != VerdictViolation || !p.Claims[0].Rejected || p.Claims[1].Rejected || !p.Claims[2].Rejected || len(r.Violations) != 2 {
		t.Errorf("verdict %v, claims %+v", r.Verdict, p.Claims)
	}
	if r.ClaimConfidence != 1-0.05/3 {
		t.Errorf("claim confidence %v", r.ClaimConfidence)
	}
	if float64(p.Descriptive.AUROC) < 0.99 {
		t.Errorf("AUROC %v", p.Descriptive.AUROC)
	}
	if r.Adjacency != CanaryAdjacency {
		t.Errorf("adjacency %q", r.Adjacency)
	}
}

// A grid of guesses divides α: each pair is tested at α/G and the report
// keeps the best.
func TestCanaryGuessGrid(t *testing.T) {
	tg := canaryTarget(400, 1, 1)
	grid := []Guess{{Plus: 10}, {Plus: 20, Minus: 20}, {Minus: 60}}
	r := canaryReport(t, tg, Options{Seed: 5, Canaries: &CanaryDesign{Count: 400, Guesses: grid}}, Execution{})
	p := r.Points[0]
	if r.TestConfidence != 1-0.05/3 {
		t.Errorf("test confidence %v", r.TestConfidence)
	}
	best := -1.0
	for _, g := range grid {
		single := canaryReport(t, tg, Options{Seed: 5, Canaries: &CanaryDesign{Count: 400, Guesses: []Guess{g}}, Confidence: 1 - 0.05/3}, Execution{})
		best = math.Max(best, single.Points[0].EpsilonBound().Epsilon)
	}
	if p.EpsilonBound().Epsilon != best {
		t.Errorf("grid ε_lb %v, best single pair at α/3 %v", p.EpsilonBound().Epsilon, best)
	}
}

// Under the null — a release that ignores the data — ε_lb > 0 in at most
// 5% of seeds: over 500 seeds, the count stays within what Bin(500, 0.05)
// allows (at most 41, its 0.999 quantile).
func TestCanaryNullValidity(t *testing.T) {
	seeds := 500
	if testing.Short() {
		seeds = 100
	}
	pos, posMu := 0, 0
	for s := range seeds {
		r := canaryReport(t, canaryTarget(1000, 0, 1), Options{Seed: uint64(s), Canaries: &CanaryDesign{Count: 1000}}, Execution{Workers: 1})
		if r.Points[0].EpsilonBound().Epsilon > 0 {
			pos++
		}
		if r.Points[0].MuBound().Mu > 0 {
			posMu++
		}
	}
	lim := map[int]int{500: 41, 100: 13}[seeds]
	if pos > lim || posMu > lim {
		t.Errorf("null: ε_lb > 0 in %d, μ_lb > 0 in %d of %d seeds (limit %d)", pos, posMu, seeds, lim)
	}
	t.Logf("null: ε_lb > 0 in %d/%d, μ_lb > 0 in %d/%d", pos, seeds, posMu, seeds)
}

// priorOnly is a logistic model whose records carry no weight: ULA on it
// samples the prior whatever the data, a sampler whose output ignores the
// canaries.
type priorOnly struct{ mechanisms.Logistic }

func (priorOnly) LogLik([]float64, dataset.Record) float64 { return 0 }

func (priorOnly) GradLogLik(_ []float64, _ dataset.Record, grad []float64) { clear(grad) }

// The built-in one-run audit under the null: ULA whose output ignores the
// data, 1,000 random canaries scored by their logistic log-likelihood under
// the released θ, k+ = k- = 50. S is independent of the ranking, so v is
// exactly Bin(100, 1/2) and ε_lb > 0 has probability P[Bin(100, 1/2) ≥ 59]
// = 0.0443 (scipy.stats.binom.sf(58, 100, 0.5); 59 is the least v whose
// bound is positive at confidence 0.95). Over 500 seeds the count must stay
// at most 41, the 0.999 quantile of Bin(500, 0.05); the figure is in
// docs/derivations/one-run.md.
func TestCanaryNullBuiltinSampler(t *testing.T) {
	seeds := 500
	if testing.Short() {
		seeds = 100
	}
	pos, posMu := nullBuiltinRates(t, 0, seeds)
	lim := map[int]int{500: 41, 100: 13}[seeds]
	if pos > lim || posMu > lim {
		t.Errorf("null: ε_lb > 0 in %d, μ_lb > 0 in %d of %d seeds (limit %d)", pos, posMu, seeds, lim)
	}
	t.Logf("null, built-in ULA: ε_lb > 0 in %d/%d, μ_lb > 0 in %d/%d", pos, seeds, posMu, seeds)
}

// nullBuiltinRates runs the null audit of TestCanaryNullBuiltinSampler
// for seeds [first, first+n) and counts ε_lb > 0 and μ_lb > 0.
func nullBuiltinRates(t *testing.T, first, n int) (pos, posMu int) {
	const m = 1000
	logit := mechanisms.Logistic{D: 3, Alpha: 1}
	d := &dataset.Dataset{Name: "base", Records: []dataset.Record{{X: []float64{1, 0, 0}, Y: 1}, {X: []float64{0, 1, 0}, Y: 0}}}
	for s := first; s < first+n; s++ {
		rng := mechanisms.TrialRNG(uint64(s), dataset.SideDPrime, 0, 99)
		tg := Target{Name: "null", Pair: dataset.Pair{D: d},
			Mechanism: &mechanisms.Chain{Model: priorOnly{logit}, Sampler: &mechanisms.ULA{Gamma: 0.1, Iters: 20}}}
		for range m {
			tg.Canaries = append(tg.Canaries, dataset.Record{X: []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}, Y: float64(rng.IntN(2))})
		}
		o := Options{Seed: uint64(s), Canaries: &CanaryDesign{Count: m}, Delta: 1e-5, Features: attacks.LogLik{Model: logit, Records: tg.Canaries}}
		r := canaryReport(t, tg, o, Execution{Workers: 1})
		if r.Points[0].EpsilonBound().Epsilon > 0 {
			pos++
		}
		if r.Points[0].MuBound().Mu > 0 {
			posMu++
		}
	}
	return pos, posMu
}

// Workers, shards merged and a resumed checkpoint give the same report,
// byte for byte.
// So do they with a calibrated score, whose reference runs are trials
// after the runs.
func TestCanaryDesignReproducible(t *testing.T) {
	tg := canaryTarget(300, 1.5, 2)
	gs := []Guess{{Plus: 20, Minus: 20}, {Plus: 40}}
	checkCanaryReproducible(t, tg, Options{Seed: 9, Canaries: &CanaryDesign{Count: 300, Runs: 4, Guesses: gs}, Claims: []Claim{PureClaim(1, 1e-5)}, Delta: 1e-5})
	calibrated := &CanaryDesign{Count: 300, Runs: 4, Guesses: gs, Score: ScoreCalibrated, References: 2, ReferenceCanaries: ReferenceAll, AverageReleases: true}
	checkCanaryReproducible(t, tg, Options{Seed: 9, Canaries: calibrated, Claims: []Claim{PureClaim(1, 1e-5)}, Delta: 1e-5})
}

func checkCanaryReproducible(t *testing.T, tg Target, o Options) {
	t.Helper()
	n := o.Canaries.Trials()
	js := func(r *Report) []byte {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	want := js(canaryReport(t, tg, o, Execution{Workers: 1}))
	if got := js(canaryReport(t, tg, o, Execution{Workers: 2})); !bytes.Equal(got, want) {
		t.Error("2 workers: the report differs from 1 worker's")
	}
	a, err := New(tg, o)
	if err != nil {
		t.Fatal(err)
	}
	var parts []*Trials
	var analyst *Audit
	for i := range 3 {
		lo, hi := ShardRange(n, i, 3)
		tr, err := a.Simulate(context.Background(), lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		spec, _ := json.Marshal(a.Design())
		if err := WritePart(&b, tr, spec); err != nil {
			t.Fatal(err)
		}
		back, dspec, err := ReadPart(bytes.NewReader(b.Bytes()), int64(b.Len()))
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, back)
		if i == 0 {
			var d Design
			if err := json.Unmarshal(dspec, &d); err != nil {
				t.Fatal(err)
			}
			if analyst, err = FromDesign(d); err != nil {
				t.Fatal(err)
			}
		}
	}
	merged, err := MergeTrials(parts, []string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := analyst.Analyze(merged)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(js(r), want) {
		t.Errorf("shards merged from the design: the report differs\n%s\n%s", js(r), want)
	}

	// A checkpoint that lost its last run resumes to the same trials.
	a, _ = New(tg, o)
	dir := t.TempDir()
	full, err := a.SimulateCheckpointed(context.Background(), dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, blockName(n-1, n))); err != nil {
		t.Fatal(err)
	}
	resumed, err := a.SimulateCheckpointed(context.Background(), dir, true)
	if err != nil {
		t.Fatal(err)
	}
	r, err = a.Analyze(resumed)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(partBytes(t, resumed), partBytes(t, full)) || !bytes.Equal(js(r), want) {
		t.Error("resumed checkpoint: the trials or the report differ")
	}
}

// A canary design written before the design had estimators of its own
// lists the multi-run default (region, gdp), which it never used: read
// back, it is the canary default and analyses its trials into the report
// of today's design, byte for byte. Any other count estimator in a canary
// design is refused with the field named.
func TestCanaryDesignOldEstimators(t *testing.T) {
	a, err := New(canaryTarget(200, 1.5, 2), Options{Seed: 3, Canaries: &CanaryDesign{Count: 200, Runs: 2}, Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := a.Simulate(context.Background(), 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	want, err := a.Analyze(tr)
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, _ := json.Marshal(want)
	spec, err := json.Marshal(a.Design())
	if err != nil {
		t.Fatal(err)
	}
	cur := []byte(`"estimators":["one-run","one-run-fdp"]`)
	if !bytes.Contains(spec, cur) {
		t.Fatalf("the design does not list the canary estimators: %s", spec)
	}
	for _, c := range []struct {
		list string
		ok   bool
	}{{`["region","gdp"]`, true}, {`["one-run","one-run-fdp"]`, true}, {`["region"]`, false}, {`["gdp","region"]`, false}, {`["one-run","gdp"]`, false}} {
		var d Design
		err := json.Unmarshal(bytes.Replace(spec, cur, []byte(`"estimators":`+c.list), 1), &d)
		var b *Audit
		if err == nil {
			b, err = FromDesign(d)
		}
		if !c.ok {
			if err == nil || !strings.Contains(err.Error(), "Estimators") {
				t.Errorf("estimators %s in a canary design: %v, want an error naming Estimators", c.list, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("estimators %s: %v", c.list, err)
		}
		r, err := b.Analyze(tr)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := json.Marshal(r); !bytes.Equal(got, wantJSON) {
			t.Errorf("estimators %s: the report differs from the design's own", c.list)
		}
	}
}

// Bad designs are refused with the field named.
func TestCanaryDesignRefused(t *testing.T) {
	tg := canaryTarget(10, 1, 1)
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Canaries: &CanaryDesign{Count: 1}}, "Canaries.Count"},
		{Options{Canaries: &CanaryDesign{Count: 10, Runs: 11}}, "Canaries.Runs"},
		{Options{Canaries: &CanaryDesign{Count: 10, Guesses: []Guess{{Plus: 8, Minus: 3}}}}, "Canaries.Guesses"},
		{Options{Canaries: &CanaryDesign{Count: 10}, Trials: 30}, "Trials"},
		{Options{Canaries: &CanaryDesign{Count: 10}, Theorems: true}, "Theorems"},
		{Options{Canaries: &CanaryDesign{Count: 12}}, "Features"},
	} {
		_, err := New(tg, c.o)
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(c.want)) {
			t.Errorf("%+v: error %v, want one naming %s", c.o.Canaries, err, c.want)
		}
	}
	// A theorem's claim read back from data is refused as the theorems
	// are: the canary design has no test of it.
	gdp := closedform.GDPSpec(1)
	th, err := ClaimSpec{Kind: "theorem", Name: "T", Points: []*closedform.ProfileSpec{&gdp}}.Claim()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(tg, Options{Canaries: &CanaryDesign{Count: 10}, Claims: []Claim{th}}); err == nil || !strings.Contains(err.Error(), "Claims") {
		t.Errorf("a theorem claim in the canary design: %v, want an error naming Claims", err)
	}
	noData := tg
	noData.Pair.D = nil
	if _, err := New(noData, Options{Canaries: &CanaryDesign{Count: 10}}); err == nil {
		t.Error("a target without data accepted canaries")
	}
}

// The multi-run design's descriptive figures: for the Gaussian mechanism
// with shift 1 (releases N(0.1, 1) on D, N(1.1, 1) on D′) the threshold
// attack on θ has AUROC Φ(1/√2) = 0.760250 and TPR at FPR 1% of
// 1 − Φ(z₀.₉₉ − 1) = 0.092362 (Python's math.erfc; z₀.₉₉ = 2.326348). With
// 10,000 evaluation runs the standard errors are about 0.005 and 0.006;
// the tolerances are four times that.
func TestDescriptiveMultiRun(t *testing.T) {
	r := runGauss(t, 1, gaussOptions(21, 20000, "threshold"))
	d := r.Points[0].Descriptive
	if d == nil {
		t.Fatal("no descriptive figures")
	}
	if math.Abs(float64(d.AUROC)-0.760250) > 0.02 || math.Abs(float64(d.TPRAt1)-0.092362) > 0.025 {
		t.Errorf("AUROC %v (want 0.7603), TPR at 1%% %v (want 0.0924)", d.AUROC, d.TPRAt1)
	}
	if !(d.TPRAt01 <= d.TPRAt1) {
		t.Errorf("TPR at 0.1%% %v above TPR at 1%% %v", d.TPRAt01, d.TPRAt1)
	}
}
