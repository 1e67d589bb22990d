package audit

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// repeatStudy is the outcome of one arm of the float32 study
// (docs/derivations/duplicate-rows.md).
type repeatStudy struct {
	seeds, withRepeats, falseAlarms, trialAlarms int
	observed, expected                           float64 // summed over seeds
	minLimit, maxLimit                           int
	caught                                       int // planted copies refused
}

func (r repeatStudy) String() string {
	return fmt.Sprintf("%d seeds: %d with chance repeats (%.3g per seed, %.3g expected), limit %d–%d, false alarms %d (files) and %d (trials); 1%% planted copies caught in %d",
		r.seeds, r.withRepeats, r.observed/float64(r.seeds), r.expected/float64(r.seeds), r.minLimit, r.maxLimit, r.falseAlarms, r.trialAlarms, r.caught)
}

// studyFloat32 runs seeds of two files of n independent one-value rows
// drawn by draw (float32 values, say), judged as `audit analyze` judges
// them (CountDuplicateRows against ExpectedDuplicateRows) and as a
// program's trials are (RepeatedRuns against the trials' bound); then
// 1% of the rows copied (within D, within D′ or from D into D′, by seed)
// must be refused.
func studyFloat32(t *testing.T, seeds, n int, draw func(*rand.Rand) float64) repeatStudy {
	t.Helper()
	r := repeatStudy{seeds: seeds, minLimit: math.MaxInt}
	rows := func(rng *rand.Rand) [][]float64 {
		out := make([][]float64, n)
		for i := range out {
			out[i] = []float64{draw(rng)}
		}
		return out
	}
	for seed := 0; seed < seeds; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), uint64(n)))
		d, dp := rows(rng), rows(rng)
		got := CountDuplicateRows(d, dp)
		b := ExpectedDuplicateRows(d, dp)
		r.observed += float64(got.Total())
		r.expected += b.Expected
		r.minLimit, r.maxLimit = min(r.minLimit, b.Limit), max(r.maxLimit, b.Limit)
		if got.Any() {
			r.withRepeats++
		}
		if b.Exceeded(got) {
			r.falseAlarms++
			t.Logf("n %d seed %d: false alarm: %v, %v", n, seed, got, b)
		}
		if got.WithinD+got.WithinDPrime > 0 {
			tr := &Trials{Lo: 0, Hi: 2 * n, Probes: 1}
			for s, rs := range [2][][]float64{d, dp} {
				for _, row := range rs {
					tr.Side = append(tr.Side, dataset.Side(s))
					tr.Probe = append(tr.Probe, row...)
				}
			}
			if tb := tr.repeatBound(); tb.Exceeded(Duplicates{WithinD: got.WithinD, WithinDPrime: got.WithinDPrime}) {
				r.trialAlarms++
			}
		}
		k := n / 100
		switch seed % 3 {
		case 0:
			plantCopies(rng, d, d, k, true)
		case 1:
			plantCopies(rng, dp, dp, k, true)
		case 2:
			plantCopies(rng, d, dp, k, false)
		}
		if ExpectedDuplicateRows(d, dp).Exceeded(CountDuplicateRows(d, dp)) {
			r.caught++
		}
	}
	return r
}

func float32Normal(rng *rand.Rand) float64 { return float64(float32(rng.NormFloat64())) }

// The float32 study, cheap version (the full one, 500 seeds per size, is
// TestFloat32StudyFull under the slow tag): independent float32 N(0, 1)
// rows, 1,000 and 10,000 per file, are never refused, by the files'
// check or the trials'; with 1% of their rows copied they always are.
func TestFloat32Study(t *testing.T) {
	for _, c := range []struct{ seeds, n int }{{24, 1000}, {6, 10000}} {
		r := studyFloat32(t, c.seeds, c.n, float32Normal)
		t.Logf("n = %d: %v", c.n, r)
		if r.falseAlarms+r.trialAlarms > 0 || r.caught != c.seeds {
			t.Errorf("n = %d: %v", c.n, r)
		}
	}
}

// The expectation is estimated, not assumed: for float32 N(0, 1) values
// it is C(n, 2)·Σ p² with Σ p² = ∫ f²·ulp ≈ 1.37·10⁻⁸ (per dataset, plus
// n²·Σ p² across). At 10⁴ rows per file that is 2.74 repeats in all; the
// estimate (before its margin) must come within 10%, and the limit must
// be the Poisson quantile of the margined mean at 10⁻⁶. Cross-checked with
// numpy: 2·trapz(norm.pdf(x)**2 · np.spacing(x.astype(np.float32))) over
// x = geomspace(1e-12, 8) gives Σ p² = 1.3685·10⁻⁸, and 2,000 seeds of
// standard_normal(10⁴).astype(np.float32) per file repeat 2.77 times on
// average (len − len(unique) per file, plus isin across).
func TestExpectedRepeatsFloat32Normal(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	const n = 10000
	d, dp := make([][]float64, n), make([][]float64, n)
	for i := range d {
		d[i], dp[i] = []float64{float32Normal(rng)}, []float64{float32Normal(rng)}
	}
	b := ExpectedDuplicateRows(d, dp)
	// ∫ f(x)² ulp(x) dx for f the N(0, 1) density, ulp the float32
	// spacing at x, by quadrature over binades.
	sum := 0.0
	for e := -40; e < 4; e++ {
		lo, hi := math.Ldexp(1, e), math.Ldexp(1, e+1)
		ulp := math.Ldexp(1, e-23)
		// ∫_lo^hi f² dx, both signs: f² = e^{−x²}/(2π).
		sum += 2 * ulp * (math.Erf(hi) - math.Erf(lo)) * math.Sqrt(math.Pi) / 2 / (2 * math.Pi)
	}
	want := (float64(n)*(n-1) + float64(n)*n) * sum
	if got := b.Expected; math.Abs(got/want-1) > 0.1 {
		t.Errorf("expected %.4g repeats, the quadrature %.4g (Σ p² = %.4g)", got, want, sum)
	}
	if b.Bits != 24 || b.Limit != poissonLimit(repeatMargin*b.Expected, RepeatLevel) || b.Level != RepeatLevel {
		t.Errorf("bound %+v", b)
	}
}

// Poisson limits against scipy.stats.poisson (the smallest L with
// poisson.sf(L, mu) ≤ 10⁻⁶, which poisson.isf(1e-6, mu) also gives): 0 for
// a mean of 10⁻⁹ (a float64 audit: any repeat exceeds it), 3 for 0.04,
// 17 for 4.2, 151 for 100, 1,004,757 for 10⁶.
func TestPoissonLimit(t *testing.T) {
	for _, c := range []struct {
		mu   float64
		want int
	}{{0, 0}, {1e-9, 0}, {1e-6, 0}, {2e-6, 1}, {0.04, 3}, {4.2, 17}, {100, 151}, {1e6, 1004757}} {
		if got := poissonLimit(c.mu, 1e-6); got != c.want {
			t.Errorf("poissonLimit(%g) = %d, want %d", c.mu, got, c.want)
		}
	}
}

// The grid of a column: float32 values (read from a '<f4' .npy, or sent
// by a program as their exact decimal) have 24 significant bits; the same
// numbers printed as the shortest decimal that names the float32 (as
// NumPy's str of a float32 does) are recognised and put on the float32
// grid; float64 draws have 53 bits; integers are multiples of 1 however
// large, so that the spacing at 3 is 1, not 2⁻²¹.
func TestValueGrid(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	var f32, short, f64 []float64
	for i := 0; i < 200; i++ {
		x := rng.NormFloat64()
		f32 = append(f32, float64(float32(x)))
		s, _ := strconv.ParseFloat(strconv.FormatFloat(float64(float32(x)), 'g', -1, 32), 64)
		short = append(short, s)
		f64 = append(f64, x)
	}
	if g := gridOf(f32); g.bits != 24 || g.f32 {
		t.Errorf("float32: %+v", g)
	}
	if g := gridOf(short); g.bits != 24 || !g.f32 {
		t.Errorf("float32 as shortest decimals: %+v", g)
	}
	if g := gridOf(short); g.spacing(short[0]) != g.spacing(f32[0]) {
		t.Errorf("shortest decimals: spacing %g, the float32's %g", g.spacing(short[0]), g.spacing(f32[0]))
	}
	if g := gridOf(f64); g.bits < 50 || g.f32 {
		t.Errorf("float64: %+v", g)
	}
	g := gridOf([]float64{3, 1000, 7001, -12})
	if g.spacing(3) != 1 || g.spacing(7001) != 1 || g.spacing(1000) != 1 {
		t.Errorf("integers: %+v, spacing at 3 %g", g, g.spacing(3))
	}
	if g := gridOf([]float64{0, 0}); !g.zero {
		t.Errorf("zeros: %+v", g)
	}
	// Values that are not finite never loop or panic (files are checked
	// for them after the repeats are counted).
	if m, ok := newProbeColumn([]float64{math.NaN(), 1, 2}, gridOf([]float64{math.NaN(), 1, 2})).mass(math.NaN(), 2); ok || m != 0 {
		t.Errorf("mass at NaN: %g %v", m, ok)
	}
}

// The mass at a value is estimated from the other values only, so that
// copies of it do not raise it; a value that no other value neighbours
// (all runs alike, as a sampler ignoring its seed makes them) has no
// estimate, and then nothing is expected: every repeat exceeds the bound.
func TestProbeMassIgnoresCopies(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	x := make([]float64, 2000)
	for i := range x {
		x[i] = float32Normal(rng)
	}
	c := newProbeColumn(x, gridOf(x))
	m0, ok0 := c.mass(x[0], len(x)-1)
	y := append(append([]float64(nil), x...), x[0], x[0], x[0], x[0], x[0])
	cy := newProbeColumn(y, gridOf(y))
	m1, ok1 := cy.mass(x[0], len(y)-1)
	if !ok0 || !ok1 || m1 > m0*1.01 || m0 <= 0 {
		t.Errorf("mass %g, with 5 copies %g", m0, m1)
	}
	// On a saturated grid (integers 1, 2, 3, seen 3, 5 and 4 times) the
	// values nearest 2 are all 7 at distance 1, ties on both sides.
	g := newProbeColumn([]float64{1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 3}, gridOf([]float64{1, 2, 3}))
	if count, d := g.nearest(2, repeatNeighbours); count != 7 || d != 1 {
		t.Errorf("nearest 2: %d values within %g", count, d)
	}
	if m, ok := g.mass(2, 11); !ok || m != 7.0/22 {
		t.Errorf("mass at 2: %g %v, want 7/22 (7 of 11 other runs on the 2 points at distance 1)", m, ok)
	}
	var d, dp [][]float64
	for i := 0; i < 50; i++ {
		d, dp = append(d, []float64{float64(float32(0.3))}), append(dp, []float64{float64(float32(1.3))})
	}
	// Nothing is expected within the files; across, D's density at 1.3 is
	// 50 runs at distance 1: 2⁻²³/2 per run, 50·50·6·10⁻⁸ in all.
	if b := ExpectedDuplicateRows(d, dp); b.Expected > 1e-3 || b.Limit > 1 || !b.Exceeded(Duplicates{WithinD: 49, WithinDPrime: 49}) {
		t.Errorf("runs all alike: %+v", b)
	}
}

// The probe values travel with the hashes: trials simulated whole, and
// the same trials as three parts written, read back and merged, carry the
// same probes and the same bound; a part without them makes a merge that
// expects nothing (every repeat exceeds the bound, as before the probes).
func TestRepeatProbesSurviveParts(t *testing.T) {
	const n = 60
	o := Options{Trials: n, Seed: 4, Assignment: AssignBalanced, Repeats: RepeatsRefused}
	a, err := New(Target{Name: "float32", Mechanism: float32Mech{}}, o)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := a.Simulate(context.Background(), 0, n)
	if err != nil {
		t.Fatal(err)
	}
	if whole.Probes != 1 || len(whole.Probe) != n {
		t.Fatalf("probes %d × %d", whole.Probes, len(whole.Probe))
	}
	var parts []*Trials
	for i := 0; i < 3; i++ {
		lo, hi := ShardRange(n, i, 3)
		p, err := a.Simulate(context.Background(), lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := WritePart(&b, p, nil); err != nil {
			t.Fatal(err)
		}
		back, _, err := ReadPart(bytes.NewReader(b.Bytes()), int64(b.Len()))
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, back)
	}
	merged, err := MergeTrials(parts, []string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range whole.Probe {
		if math.Float64bits(merged.Probe[i]) != math.Float64bits(whole.Probe[i]) {
			t.Fatalf("probe %d: merged %g, whole %g", i, merged.Probe[i], whole.Probe[i])
		}
	}
	if merged.repeatBound() != whole.repeatBound() || whole.repeatBound().Bits != 24 {
		t.Errorf("bounds: merged %+v, whole %+v", merged.repeatBound(), whole.repeatBound())
	}
	parts[1].Probe, parts[1].Probes = nil, 0
	old, err := MergeTrials(parts, []string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	if old.Probe != nil || old.repeatBound().Limit != 0 {
		t.Errorf("merged with a part without probes: %d probes, bound %+v", len(old.Probe), old.repeatBound())
	}
	// A header declaring more probes than the format keeps is refused.
	bad := *parts[0]
	bad.Probes = repeatProbes + 1
	bad.Probe = make([]float64, (bad.Hi-bad.Lo)*bad.Probes)
	var b bytes.Buffer
	if err := WritePart(&b, &bad, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b.Bytes(), []byte(`"release_probes":5`)) {
		t.Fatalf("header %q", b.Bytes()[:200])
	}
	if _, _, err := ReadPart(bytes.NewReader(b.Bytes()), int64(b.Len())); err == nil {
		t.Errorf("a part with %d probes per trial was read", bad.Probes)
	}
}
