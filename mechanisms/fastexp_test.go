package mechanisms

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ulpDiff is |a − b| in units of the last place of b.
func ulpDiff(a, b float64) float64 {
	return math.Abs(a-b) / (math.Nextafter(b, math.Inf(1)) - b)
}

// TestFastExpError checks fastExp against math.Exp (itself within 1 ulp
// of e^x) on a grid of step 1/4096 over [−745, 710], on 10⁶ uniform
// draws over [−708, 709] and 10⁶ over [−1, 0] (where softmax terms
// mostly fall): within the 2 ulp the doc comment states, exact at 0, and
// equal to math.Exp outside [−708, 709].
func TestFastExpError(t *testing.T) {
	worst := 0.0
	check := func(x float64) {
		got, want := fastExp(x), math.Exp(x)
		if x < -708 || x > 709 {
			if got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("fastExp(%v) = %v, math.Exp %v", x, got, want)
			}
			return
		}
		if d := ulpDiff(got, want); d > worst {
			worst = d
			if d > 2 {
				t.Fatalf("fastExp(%v) = %v, math.Exp %v: %.2f ulp", x, got, want, d)
			}
		}
	}
	for i := -745 * 4096; i <= 710*4096; i++ {
		check(float64(i) / 4096)
	}
	rng := rand.New(rand.NewPCG(21, 22))
	for range 1_000_000 {
		check(-708 + 1417*rng.Float64())
		check(-rng.Float64())
	}
	for _, x := range []float64{math.Inf(-1), math.Inf(1), math.NaN(), -709, 710, -1e-300, 0} {
		check(x)
	}
	if fastExp(0) != 1 {
		t.Errorf("fastExp(0) = %v", fastExp(0))
	}
	t.Logf("largest difference from math.Exp: %.3f ulp", worst)
}

// TestExpTable checks the table against 2^(i/64) from math.Exp2 (within
// 1 ulp: the table is rounded from 200-bit values).
func TestExpTable(t *testing.T) {
	for i, v := range expTab {
		if d := ulpDiff(v, math.Exp2(float64(i)/64)); d > 1 {
			t.Errorf("expTab[%d] = %v, 2^(%d/64) = %v", i, v, i, math.Exp2(float64(i)/64))
		}
	}
}

// TestSoftmaxResidualUsesFastExp checks that the exponentials written out
// in softmaxResidual are fastExp's, bit for bit, including logits far
// below the maximum (math.Exp's range) and an infinite one.
func TestSoftmaxResidualUsesFastExp(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for rep := 0; rep < 2000; rep++ {
		k := 2 + rep%12
		f := make([]float64, k)
		for i := range f {
			f[i] = rng.NormFloat64() * math.Exp(6*rng.Float64())
		}
		if rep%50 == 0 {
			f[0] = -1e4
		}
		y := rep % k
		want := append([]float64(nil), f...)
		mx := want[0]
		for _, v := range want {
			mx = math.Max(mx, v)
		}
		var s float64
		for i, v := range want {
			want[i] = fastExp(v - mx)
			s += want[i]
		}
		var rest float64
		for i := range want {
			want[i] *= 1 / s
			if i != y {
				rest += want[i]
				want[i] = -want[i]
			}
		}
		want[y] = rest
		softmaxResidual(f, y)
		for i := range f {
			if math.Float64bits(f[i]) != math.Float64bits(want[i]) {
				t.Fatalf("rep %d: g[%d] = %v, want %v", rep, i, f[i], want[i])
			}
		}
	}
}
