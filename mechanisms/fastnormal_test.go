package mechanisms

import (
	"math"
	"sort"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/internal/numeric"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// The ziggurat draws a standard normal: checked against Φ with a
// Kolmogorov–Smirnov statistic on 10⁶ draws (the 0.1% critical value is
// 1.95/sqrt(n)), its first four moments (SEs from the normal's moments),
// and the frequency of the tail beyond the ziggurat's base |x| > r, which
// is produced by a separate branch.
func TestFastNormalDistribution(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	const n = 1_000_000
	f := newFastNormal(TrialRNG(9, dataset.SideD, 0, 0))
	xs := make([]float64, n)
	var m1, m2, m3, m4 float64
	tail := 0
	for i := range xs {
		x := f.norm()
		xs[i] = x
		m1 += x
		m2 += x * x
		m3 += x * x * x
		m4 += x * x * x * x
		if math.Abs(x) > zigR {
			tail++
		}
	}
	m1, m2, m3, m4 = m1/n, m2/n, m3/n, m4/n
	// SEs: sqrt(Var(x^k)/n) with E[x^2k] = (2k−1)!!: 1, sqrt(2), sqrt(15), sqrt(96).
	for _, c := range []struct {
		name      string
		got, want float64
		sd        float64
	}{{"mean", m1, 0, 1}, {"E[x²]", m2, 1, math.Sqrt(2)}, {"E[x³]", m3, 0, math.Sqrt(15)}, {"E[x⁴]", m4, 3, math.Sqrt(96)}} {
		if z := (c.got - c.want) / (c.sd / math.Sqrt(n)); math.Abs(z) > 4.5 {
			t.Errorf("%s = %.5f, want %g (%.1f SE)", c.name, c.got, c.want, z)
		}
	}
	sort.Float64s(xs)
	var d float64
	for i, x := range xs {
		p := numeric.NormCDF(x)
		d = math.Max(d, math.Max(math.Abs(p-float64(i)/n), math.Abs(p-float64(i+1)/n)))
	}
	if crit := 1.95 / math.Sqrt(n); d > crit {
		t.Errorf("KS distance %.5f > %.5f", d, crit)
	}
	pTail := 2 * numeric.NormCDF(-zigR)
	if z := (float64(tail)/n - pTail) / math.Sqrt(pTail*(1-pTail)/n); math.Abs(z) > 4.5 {
		t.Errorf("tail |x| > %g: frequency %g, want %g (%.1f SE)", zigR, float64(tail)/n, pTail, z)
	}
	// The layers partition the area: the base strip's area equals every other layer's.
	if zigK[1] != 0 || zigW[127] <= 0 || zigF[127] >= zigF[1] {
		t.Error("ziggurat tables malformed")
	}
}

func BenchmarkFastNormal(b *testing.B) {
	f := newFastNormal(TrialRNG(1, dataset.SideD, 0, 0))
	var s float64
	for i := 0; i < b.N; i++ {
		s += f.norm()
	}
	if s == 42 {
		b.Log(s)
	}
}

func BenchmarkRandNormFloat64(b *testing.B) {
	r := TrialRNG(1, dataset.SideD, 0, 0)
	var s float64
	for i := 0; i < b.N; i++ {
		s += r.NormFloat64()
	}
	if s == 42 {
		b.Log(s)
	}
}
