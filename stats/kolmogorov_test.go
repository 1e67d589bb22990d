package stats

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/internal/numeric"
	"gonum.org/v1/gonum/stat/distuv"
)

func TestKSStatistic(t *testing.T) {
	// scipy.stats.kstest(xs, 'norm', method='exact'): statistic
	// 0.19093987465324047, p-value 0.8832544529552133.
	xs := []float64{0.3, -1.2, 2.5, 0.05, -0.7, 1.1, -0.2, 0.9}
	d := KSStatistic(xs, numeric.NormCDF)
	if math.Abs(d-0.19093987465324047) > 1e-14 {
		t.Errorf("D = %.17g", d)
	}
	if xs[0] != 0.3 || xs[1] != -1.2 {
		t.Error("KSStatistic sorted its argument")
	}
	p, err := KSPValue(len(xs), d)
	if err != nil || math.Abs(p-0.8832544529552133) > 1e-12 {
		t.Errorf("p = %.17g (%v)", p, err)
	}
}

func TestKSPValue(t *testing.T) {
	// References: the exact distribution, by scipy 1.10's
	// _ksstats._kolmogn_Pomeranz (Pomeranz's recursion, a method
	// independent of the Durbin matrix used here) where p > 0.03, and by
	// 2·scipy.special.smirnov(n, d) (the exact one-sided law, doubled as
	// here) in the tail; the asymptotic branch (n > 1000) is held to 3%
	// of the exact value by scipy's _kolmogn_DMTW (the Durbin matrix in
	// scipy's own implementation; its Pomeranz recursion loses accuracy
	// at these n).
	for _, c := range []struct {
		n      int
		d, p   float64
		relTol float64
	}{
		{1, 0.7, 0.6, 0},
		{5, 0.3, 0.664, 0},
		{20, 0.1, 0.976255094592155, 0},
		{20, 0.25, 0.13762569836717486, 0},
		{100, 0.05, 0.9532159710635725, 0},
		{100, 0.12, 0.10330374901819938904, 0},
		{500, 0.03, 0.74731662218084229964, 0},
		{1000, 0.02, 0.8108971310702104147, 0},
		{1000, 0.045, 0.03378302868228902269, 0},
		{1000, 0.06, 0.001428597887952891, 0},
		{200, 0.16, 6.117093237574977e-05, 1e-9},
		{50, 0.4, 9.86356336441006e-08, 1e-9},
		{3000, 0.05, 5.874684341454393e-07, 1e-9},
		{10, 0.6, 0.0005681672000000003, 1e-9},
		{2000, 0.02, 0.39531337200310863981, 0.03},
		{5000, 0.015, 0.20846142165967083406, 0.03},
		{20000, 0.009, 0.077852893245696747125, 0.03},
	} {
		p, err := KSPValue(c.n, c.d)
		if err != nil {
			t.Fatal(err)
		}
		if c.relTol == 0 {
			if math.Abs(p-c.p) > 1e-10 {
				t.Errorf("n = %d, d = %g: p = %.15g, reference %.15g", c.n, c.d, p, c.p)
			}
		} else if math.Abs(p/c.p-1) > c.relTol {
			t.Errorf("n = %d, d = %g: p = %.6g, reference %.6g (rel. error %.3g)", c.n, c.d, p, c.p, p/c.p-1)
		}
	}
	// Edges: D_n ≥ 1/(2n) surely; D_n = 1 has probability 0.
	if p, _ := KSPValue(10, 0.04); p != 1 {
		t.Errorf("d < 1/(2n): p = %g", p)
	}
	if p, _ := KSPValue(10, 1); p != 0 {
		t.Errorf("d = 1: p = %g", p)
	}
	for _, c := range []struct {
		n int
		d float64
	}{{0, 0.1}, {10, -0.1}, {10, 1.5}, {10, math.NaN()}} {
		if _, err := KSPValue(c.n, c.d); err == nil {
			t.Errorf("n = %d, d = %g: no error", c.n, c.d)
		}
	}
	// The limit law on both sides of λ = 1 (where the series switch) is
	// continuous: scipy.stats.kstwobign.sf(1) = 0.26999967167735456.
	if q := kolmogorovQ(1); math.Abs(q-0.26999967167735456) > 1e-14 {
		t.Errorf("Q(1) = %.17g", q)
	}
	if a, b := kolmogorovQ(math.Nextafter(1, 0)), kolmogorovQ(1); math.Abs(a-b) > 1e-13 {
		t.Errorf("Q jumps at 1: %.17g vs %.17g", a, b)
	}
}

// KSStatistic skips the draws whose terms cannot reach the maximum; its
// value must be the term-by-term maximum over every draw to the bit, for
// squared radii of q-dimensional normals against χ²_q (the posterior
// fit's use) at several q, on samples that follow the law, that are too
// wide or too narrow (the maximum then sits in a tail), small samples,
// and samples with ties.
func TestKSStatisticEqualsEveryTerm(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 1))
	for _, q := range []int{1, 2, 3, 5, 10} {
		chi := distuv.ChiSquared{K: float64(q)}
		for _, n := range []int{1, 2, 3, 63, 64, 65, 200, 1000, 20000} {
			for _, scale := range []float64{1, 1.05, 0.5, 3} {
				xs := make([]float64, n)
				for i := range xs {
					for a := 0; a < q; a++ {
						z := scale * rng.NormFloat64()
						xs[i] += z * z
					}
					if i%7 == 3 && i > 0 {
						xs[i] = xs[i-1] // ties
					}
				}
				evals := 0
				cdf := func(x float64) float64 { evals++; return chi.CDF(x) }
				got := KSStatistic(xs, cdf)
				s := append([]float64(nil), xs...)
				sort.Float64s(s)
				want := ksEvery(s, chi.CDF)
				if math.Float64bits(got) != math.Float64bits(want) {
					t.Errorf("q=%d n=%d scale=%g: D = %.17g, every term gives %.17g", q, n, scale, got, want)
				}
				if n == 20000 && scale == 1 && evals > n/4 {
					t.Errorf("q=%d n=%d: %d CDF evaluations, want ≤ n/4", q, n, evals)
				}
			}
		}
	}
}

// A sample holding NaN gives NaN, as the term-by-term maximum does.
func TestKSStatisticNaN(t *testing.T) {
	d := KSStatistic([]float64{0.5, math.NaN(), 1}, numeric.NormCDF)
	if !math.IsNaN(d) {
		t.Errorf("D = %g, want NaN", d)
	}
	if d := KSStatistic(nil, numeric.NormCDF); d != 0 {
		t.Errorf("empty sample: D = %g, want 0", d)
	}
}

// The radix sort of large samples gives the values sort.Float64s gives:
// negatives, zeros of both signs, infinities, ties, subnormals, values
// beyond float32's range and runs that share a float32 key.
func TestSortedCopy(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 2))
	specials := []float64{math.Inf(-1), math.Inf(1), 0, math.Copysign(0, -1), 5e-324, -5e-324, math.MaxFloat64, -math.MaxFloat64}
	for _, n := range []int{511, 512, 5000} {
		xs := make([]float64, n)
		for i := range xs {
			switch i % 5 {
			case 0:
				xs[i] = specials[rng.IntN(len(specials))]
			case 1:
				xs[i] = xs[rng.IntN(i)] // a tie
			default:
				xs[i] = rng.NormFloat64() * math.Exp(10*rng.NormFloat64())
			}
		}
		got, ok := sortedCopy(xs)
		want := append([]float64(nil), xs...)
		sort.Float64s(want)
		if !ok || len(got) != n {
			t.Fatalf("n=%d: ok %v, %d values", n, ok, len(got))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("n=%d: value %d is %g, want %g", n, i, got[i], want[i])
			}
		}
		xs[n/2] = math.NaN()
		if got, ok := sortedCopy(xs); ok || !math.IsNaN(got[0]) {
			t.Errorf("n=%d with NaN: ok %v, first %g", n, ok, got[0])
		}
	}
	// Values closer together than float32's resolution: one radix key,
	// sorted by the fallback.
	xs := make([]float64, 3000)
	for i := range xs {
		xs[i] = 1 + 1e-9*rng.Float64()
	}
	got, _ := sortedCopy(xs)
	if !sort.Float64sAreSorted(got) {
		t.Error("values within float32's resolution are not sorted")
	}
}

// smirnovUpperEveryTerm is the Birnbaum–Tingey sum with every term added
// and every log-factorial from math.Lgamma: smirnovUpper's shortcuts must
// leave its value unchanged to the bit.
func smirnovUpperEveryTerm(n int, d float64) float64 {
	nf := float64(n)
	jmax := int(math.Floor(nf * (1 - d)))
	lgn, _ := math.Lgamma(nf + 1)
	acc := math.Inf(-1)
	for j := 0; j <= jmax; j++ {
		a := 1 - d - float64(j)/nf
		if a <= 0 {
			continue
		}
		lj, _ := math.Lgamma(float64(j) + 1)
		lk, _ := math.Lgamma(nf - float64(j) + 1)
		acc = logAdd(acc, lgn-lj-lk+(nf-float64(j))*math.Log(a)+float64(j-1)*math.Log(d+float64(j)/nf))
	}
	return d * math.Exp(acc)
}

func TestSmirnovUpperEqualsEveryTerm(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 3))
	logFactTable.Store(nil) // the table grown from empty, as in a new process
	ns := []int{1, 2, 7, 50, 999, 1000, 1001, 4000, 15000, 20000, logFactMax + 3}
	for i := 0; i < 15; i++ {
		ns = append(ns, 1+rng.IntN(25000))
	}
	for _, n := range ns {
		nf := float64(n)
		// d from the tail's edge (n·d² = 2.2, p ≈ 0.02) to deep in it.
		for _, d := range []float64{math.Sqrt(2.2 / nf), 1.3 * math.Sqrt(2.2/nf), 3 / math.Sqrt(nf), 0.5, 0.9, rng.Float64()} {
			if d <= 0 || d >= 1 {
				continue
			}
			got, want := smirnovUpper(n, d), smirnovUpperEveryTerm(n, d)
			if math.Float64bits(got) != math.Float64bits(want) {
				t.Errorf("n=%d d=%.17g: %.17g, every term gives %.17g", n, d, got, want)
			}
		}
	}
}
