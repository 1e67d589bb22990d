package stats

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// relClose reports whether got agrees with want to rel relative error
// (absolute when want is 0).
func relClose(got, want, rel float64) bool {
	if want == 0 {
		return math.Abs(got) <= rel
	}
	return math.Abs(got-want) <= rel*math.Abs(want)
}

// 8 significant digits is the floor asked of every value; the references below carry 10+
// digits and most checks hold far tighter than this.
const sig8 = 5e-9

// Clopper–Pearson references: docs/derivations/references.md §1 (scipy), and bisection on
// mpmath.betainc at 40 digits for the others (k, n, tail level a).
func TestClopperPearsonReferences(t *testing.T) {
	cases := []struct {
		k, n         int
		a            float64
		upper, lower float64
	}{
		{0, 250, 0.05, 0.01191141971, 0},
		{0, 250, 0.025, 0.01464718864, 0},
		{3, 500, 0.025, 0.017433673725913516, 0.0012390575435407507},
		{7, 500, 0.025, 0.028631616183336057, 0.0056467610703244292},
		{10, 1000, 0.025, 0.018313243055112452, 0.0048055106910493072},
		{400, 1000, 0.025, 0.4311215540441069, 0.36946898754891245},
		{5, 500, 0.025, 0.02318138807, 0.003254721407},
		{250, 500, 0.025, 0.5447144307, 0.4552855693},
		{499, 500, 0.025, 0.99994936566599258, 0.98890752310103121},
		{1, 2, 0.1, 0.9486832980505138, 0.051316701949486203},
		// n = 1 edge cases.
		{0, 1, 0.025, 0.975, 0},
		{1, 1, 0.025, 1, 0.025},
	}
	for _, c := range cases {
		up, err := ClopperPearsonUpper(c.k, c.n, 1-c.a)
		if err != nil || !relClose(up, c.upper, sig8) {
			t.Errorf("ClopperPearsonUpper(%d, %d, %g) = %.12g, %v; want %.12g", c.k, c.n, 1-c.a, up, err, c.upper)
		}
		lo, err := ClopperPearsonLower(c.k, c.n, 1-c.a)
		if err != nil || !relClose(lo, c.lower, sig8) {
			t.Errorf("ClopperPearsonLower(%d, %d, %g) = %.12g, %v; want %.12g", c.k, c.n, 1-c.a, lo, err, c.lower)
		}
		iv, err := ClopperPearson(c.k, c.n, 1-2*c.a)
		if err != nil || !relClose(iv.Lo, lo, 1e-12) || !relClose(iv.Hi, up, 1e-12) {
			t.Errorf("ClopperPearson(%d, %d, %g) = %+v, %v; want [%g, %g]", c.k, c.n, 1-2*c.a, iv, err, lo, up)
		}
	}
}

// At k = 0 and k = n the bounds are closed form: 1 − a^{1/n}, 1, 0, a^{1/n}.
func TestClopperPearsonEdgesExact(t *testing.T) {
	for _, n := range []int{1, 2, 7, 500, 100000} {
		for _, a := range []float64{0.001, 0.025, 0.3} {
			up0, _ := ClopperPearsonUpper(0, n, 1-a)
			// 1 − a^{1/n} by pow loses ~|log10 u| digits to cancellation, hence 1e-10.
			if want := 1 - math.Pow(a, 1/float64(n)); !relClose(up0, want, 1e-10) {
				t.Errorf("upper(0,%d,a=%g) = %.17g, want %.17g", n, a, up0, want)
			}
			// The closed form must agree with the Beta quantile it replaces.
			if q := (distuv.Beta{Alpha: 1, Beta: float64(n)}).Quantile(1 - a); !relClose(up0, q, 1e-9) {
				t.Errorf("upper(0,%d,a=%g) = %.17g, Beta quantile %.17g", n, a, up0, q)
			}
			upN, _ := ClopperPearsonUpper(n, n, 1-a)
			lo0, _ := ClopperPearsonLower(0, n, 1-a)
			loN, _ := ClopperPearsonLower(n, n, 1-a)
			if upN != 1 || lo0 != 0 || !relClose(loN, math.Pow(a, 1/float64(n)), 1e-12) {
				t.Errorf("n=%d a=%g: upper(n)=%g lower(0)=%g lower(n)=%g", n, a, upN, lo0, loN)
			}
		}
	}
}

// Jeffreys references: scipy.stats.beta.ppf(a/2 and 1−a/2, k+½, n−k+½),
// with Lo = 0 at k = 0 and Hi = 1 at k = n by convention.
func TestJeffreys(t *testing.T) {
	cases := []struct {
		k, n   int
		conf   float64
		lo, hi float64
	}{
		{5, 500, 0.95, 0.003825684478743141, 0.021778768381494066},
		{0, 10, 0.95, 0, 0.21719626750921053},
		{10, 10, 0.95, 0.7828037324907895, 1},
		{1, 1, 0.9, 0.22851981380632877, 1},
		{37, 120, 0.99, 0.2087366304516856, 0.4228065772375562},
	}
	for _, c := range cases {
		iv, err := Jeffreys(c.k, c.n, c.conf)
		if err != nil || !relClose(iv.Lo, c.lo, 1e-9) || !relClose(iv.Hi, c.hi, 1e-9) {
			t.Errorf("Jeffreys(%d,%d,%g) = %+v, %v; want [%.12g, %.12g]", c.k, c.n, c.conf, iv, err, c.lo, c.hi)
		}
	}
}

// Region bound references: docs/derivations/references.md §2 (scipy, δ = 1e-5, 95%, α/2 per rate).
func TestRegionBoundReferences(t *testing.T) {
	cases := []struct {
		c    Counts
		want float64
		dir  Direction
	}{
		{Counts{FP: 0, Negatives: 250, FN: 0, Positives: 250}, 4.208741197, DirFNR},
		{Counts{FP: 0, Negatives: 500, FN: 0, Positives: 500}, 4.905584136, DirFNR},
		{Counts{FP: 3, Negatives: 500, FN: 7, Positives: 500}, 4.02029188, DirFPR},
		{Counts{FP: 10, Negatives: 1000, FN: 400, Positives: 1000}, 3.436024743, DirFPR},
	}
	for _, c := range cases {
		e, err := RegionBound(c.c, 1e-5, 0.95)
		if err != nil || !relClose(e.Epsilon, c.want, sig8) {
			t.Errorf("RegionBound(%+v) = %.12g, %v; want %.12g", c.c, e.Epsilon, err, c.want)
			continue
		}
		if e.Direction != c.dir || e.Kind != LowerBound || e.Confidence != 0.95 || e.Delta != 1e-5 || e.Counts != c.c {
			t.Errorf("RegionBound(%+v) provenance wrong: %+v", c.c, e)
		}
	}
	// Reproduce the 3/500, 7/500 value by hand from the CP bounds above.
	fpr, fnr := 0.017433673725913516, 0.028631616183336057
	want := math.Log((1 - 1e-5 - fnr) / fpr) // the larger of the two terms
	if other := math.Log((1 - 1e-5 - fpr) / fnr); other >= want {
		t.Fatalf("reference direction wrong: %g ≥ %g", other, want)
	}
	e, _ := RegionBound(Counts{3, 500, 7, 500}, 1e-5, 0.95)
	if !relClose(e.Epsilon, want, 1e-12) {
		t.Errorf("region 3/500,7/500 = %.15g, by hand %.15g", e.Epsilon, want)
	}
}

// The ceiling is the region bound at zero errors: ln((1−δ−u)/u),
// u = 1 − (α/2)^{1/n}.
func TestCeiling(t *testing.T) {
	e, err := Ceiling(500, 500, 1e-5, 0.95)
	if err != nil || !relClose(e.Epsilon, 4.905584136, sig8) || e.Kind != CeilingKind {
		t.Fatalf("Ceiling(500,500) = %+v, %v", e, err)
	}
	u1 := 1 - math.Pow(0.025, 1.0/200)
	u2 := 1 - math.Pow(0.025, 1.0/800)
	want := math.Log((1 - 1e-5 - u1) / u2)
	if e, _ := Ceiling(200, 800, 1e-5, 0.95); !relClose(e.Epsilon, want, 1e-12) {
		t.Errorf("Ceiling(200,800) = %.15g, want %.15g", e.Epsilon, want)
	}
	// No count can beat the ceiling.
	for fp := 0; fp <= 20; fp++ {
		for fn := 0; fn <= 20; fn++ {
			r, _ := RegionBound(Counts{fp, 200, fn, 800}, 1e-5, 0.95)
			if r.Epsilon > want*(1+1e-15) {
				t.Fatalf("region bound %g above ceiling %g at fp=%d fn=%d", r.Epsilon, want, fp, fn)
			}
		}
	}
	// n = 1 per side: u = 0.975, numerator 1 − δ − 0.975 > 0 but ratio < 1.
	if e, _ := Ceiling(1, 1, 1e-5, 0.95); e.Epsilon != 0 || e.Direction != DirNone {
		t.Errorf("Ceiling(1,1) = %+v, want 0", e)
	}
}

func TestPointEstimate(t *testing.T) {
	e, err := Point(Counts{FP: 3, Negatives: 500, FN: 7, Positives: 500}, 1e-5)
	want := math.Log((1 - 1e-5 - 7.0/500) / (3.0 / 500))
	if err != nil || !relClose(e.Epsilon, want, 1e-14) || e.Kind != PointEstimate || e.Confidence != 0 {
		t.Errorf("Point = %+v, %v; want ε = %g", e, err, want)
	}
	e, _ = Point(Counts{FP: 0, Negatives: 10, FN: 0, Positives: 10}, 0)
	if !math.IsInf(e.Epsilon, 1) {
		t.Errorf("Point with zero errors = %g, want +Inf", e.Epsilon)
	}
	b, err := json.Marshal(e)
	if err != nil || !strings.Contains(string(b), `"epsilon":"+Inf"`) {
		t.Errorf("JSON of an unbounded point estimate = %s, %v", b, err)
	}
	// All errors: worse than chance gives 0, not a negative number.
	e, _ = Point(Counts{FP: 10, Negatives: 10, FN: 10, Positives: 10}, 0)
	if e.Epsilon != 0 || e.Direction != DirNone {
		t.Errorf("Point at k = n = %+v, want 0", e)
	}
}

// The eq. 11 formula at its edges: numerators ≤ 0 drop out.
func TestEpsilonFromRates(t *testing.T) {
	if e, d := EpsilonFromRates(0.5, 0.5, 0); e != 0 || d != DirNone {
		t.Errorf("chance: %g %v", e, d)
	}
	if e, d := EpsilonFromRates(1, 0.001, 0); e != 0 || d != DirNone {
		t.Errorf("FPR = 1: %g %v", e, d) // first numerator 0, second ln(0.999/1) < 0
	}
	if e, d := EpsilonFromRates(0.1, 0.2, 0.95); e != 0 || d != DirNone {
		t.Errorf("δ too large for either term: %g %v", e, d)
	}
	if e, d := EpsilonFromRates(0.01, 0.1, 0); !relClose(e, math.Log(0.9/0.01), 1e-15) || d != DirFPR {
		t.Errorf("ε = %g (%v), want ln(0.9/0.01)", e, d)
	}
	if e, d := EpsilonFromRates(0.1, 0.01, 0); !relClose(e, math.Log(0.9/0.01), 1e-15) || d != DirFNR {
		t.Errorf("ε = %g (%v), want ln(0.9/0.01)", e, d)
	}
}

func TestInvalidInputs(t *testing.T) {
	good := Counts{FP: 1, Negatives: 10, FN: 1, Positives: 10}
	bad := []struct {
		c          Counts
		delta, cnf float64
		field      string
	}{
		{Counts{-1, 10, 0, 10}, 1e-5, 0.95, "fp"},
		{Counts{0, 10, -2, 10}, 1e-5, 0.95, "fn"},
		{Counts{11, 10, 0, 10}, 1e-5, 0.95, "fp"},
		{Counts{0, 10, 11, 10}, 1e-5, 0.95, "fn"},
		{Counts{0, 0, 0, 10}, 1e-5, 0.95, "negatives"},
		{Counts{0, 10, 0, -5}, 1e-5, 0.95, "positives"},
		{good, -1e-9, 0.95, "delta"},
		{good, 1, 0.95, "delta"},
		{good, math.NaN(), 0.95, "delta"},
		{good, 1e-5, 0, "confidence"},
		{good, 1e-5, 1, "confidence"},
		{good, 1e-5, 1.5, "confidence"},
		{good, 1e-5, math.NaN(), "confidence"},
	}
	for _, b := range bad {
		for name, f := range map[string]func() error{
			"RegionBound": func() error { _, err := RegionBound(b.c, b.delta, b.cnf); return err },
			"GDPBound":    func() error { _, err := GDPBound(b.c, b.delta, b.cnf); return err },
		} {
			err := f()
			if err == nil || !strings.HasPrefix(err.Error(), b.field+":") {
				t.Errorf("%s(%+v, δ=%g, conf=%g) error = %v; want one naming %q", name, b.c, b.delta, b.cnf, err, b.field)
			}
		}
	}
	if _, err := ClopperPearsonUpper(5, 4, 0.95); err == nil {
		t.Error("k > n accepted")
	}
	if _, err := ClopperPearsonUpper(-1, 4, 0.95); err == nil {
		t.Error("negative k accepted")
	}
	if _, err := ClopperPearsonLower(1, 0, 0.95); err == nil {
		t.Error("n = 0 accepted")
	}
	if _, err := Jeffreys(1, 4, 1); err == nil {
		t.Error("confidence 1 accepted")
	}
	if _, err := Ceiling(10, 10, 1e-5, -0.1); err == nil {
		t.Error("negative confidence accepted")
	}
	if _, err := Point(Counts{0, 10, 0, 10}, 2); err == nil {
		t.Error("δ = 2 accepted by Point")
	}
}

// Null check: with FPR = FNR = 0.5 (an attack no better than a coin) the
// region bound must be > 0 in at most α = 5% of audits. By construction the
// true rate is far below 5%; the test asserts the stated 5% with margin for
// the binomial sampling error of 10,000 audits (sd ≈ 0.22%).
func TestNullCheckRegionBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(2026, 11))
	bin := distuv.Binomial{N: 500, P: 0.5, Src: rng}
	const trials = 10000
	positive, gdpPositive := 0, 0
	for i := 0; i < trials; i++ {
		c := Counts{FP: int(bin.Rand()), Negatives: 500, FN: int(bin.Rand()), Positives: 500}
		e, err := RegionBound(c, 1e-5, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		if e.Epsilon > 0 {
			positive++
		}
		if g, _ := GDPBound(c, 1e-5, 0.95); g.Mu > 0 {
			gdpPositive++
		}
	}
	frac := float64(positive) / trials
	t.Logf("region bound > 0 in %d of %d null audits (%.3f%%)", positive, trials, 100*frac)
	if frac > 0.05 {
		t.Errorf("null audits with ε_lb > 0: %.2f%% > 5%%", 100*frac)
	}
	if g := float64(gdpPositive) / trials; g > 0.05 {
		t.Errorf("null audits with μ_lb > 0: %.2f%% > 5%%", 100*g)
	}
}

// Coverage of the one-sided CP upper bound: for p = 0.02, n = 500 the
// probability that the bound at confidence 0.975 falls below p must be
// ≤ 2.5%. Computed exactly over the binomial distribution, not simulated.
func TestClopperPearsonCoverageExact(t *testing.T) {
	for _, p := range []float64{0.002, 0.02, 0.3, 0.5} {
		bin := distuv.Binomial{N: 500, P: p}
		miss := 0.0
		for k := 0; k <= 500; k++ {
			u, _ := ClopperPearsonUpper(k, 500, 0.975)
			if u < p {
				miss += bin.Prob(float64(k))
			}
		}
		if miss > 0.025 {
			t.Errorf("p = %g: P(U < p) = %g > 0.025", p, miss)
		}
	}
}

func TestEstimateString(t *testing.T) {
	e, _ := RegionBound(Counts{0, 500, 0, 500}, 1e-5, 0.95)
	s := e.String()
	for _, want := range []string{"ε ≥ 4.9056", EstimatorRegion, "confidence 0.95", "δ = 1e-05", "FP 0/500", "FN 0/500"} {
		if !strings.Contains(s, want) {
			t.Errorf("String() = %q lacks %q", s, want)
		}
	}
	g, _ := GDPBound(Counts{3, 500, 7, 500}, 1e-5, 0.95)
	if s := g.String(); !strings.Contains(s, "μ_lb = 4.0112") || !strings.Contains(s, "assumes a Gaussian") {
		t.Errorf("GDP String() = %q", s)
	}
}
