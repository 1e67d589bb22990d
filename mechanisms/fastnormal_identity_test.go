package mechanisms

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// normSlowRef is normSlow as it was before its wedge test gained the
// squeeze (zigWedge): the exponential computed on every wedge draw. The
// streams must not change, so the tests below hold the generator to it.
func (f *fastNormal) normSlowRef(j int32, i uint64) float64 {
	for {
		x := float64(j) * zigW[i]
		if i == 0 {
			for {
				xt := -math.Log(f.uniform()) / zigR
				y := -math.Log(f.uniform())
				if y+y >= xt*xt {
					if j > 0 {
						return zigR + xt
					}
					return -zigR - xt
				}
			}
		}
		if zigF[i]+f.uniform()*(zigF[i-1]-zigF[i]) < math.Exp(-0.5*x*x) {
			return x
		}
		u := f.next()
		j, i = int32(u>>32), u&127
		aj := uint32(j)
		if j < 0 {
			aj = uint32(-j)
		}
		if aj < zigK[i] {
			return float64(j) * zigW[i]
		}
	}
}

// normRef is norm with normSlowRef.
func (f *fastNormal) normRef() float64 {
	u := f.next()
	j := int32(u >> 32)
	i := u & 127
	if uint32(j+j>>31^j>>31) < zigK[i] {
		return float64(j) * zigW[i]
	}
	return f.normSlowRef(j, i)
}

// checkNormStreams draws n normals from each of seeds generators, by norm
// and by fill (in buffers of assorted lengths), and fails unless every
// value has the bits normRef gives from the same state and the states
// agree afterwards (the same number of words consumed).
func checkNormStreams(t *testing.T, seeds, n int) {
	t.Helper()
	buf := make([]float64, 1000)
	for seed := range seeds {
		f := newFastNormal(TrialRNG(uint64(seed), dataset.SideD, seed, 0))
		ref := f
		for k := 0; k < n/2; k++ {
			got, want := f.norm(), ref.normRef()
			if math.Float64bits(got) != math.Float64bits(want) || f != ref {
				t.Fatalf("seed %d, draw %d: norm %v, reference %v (states %v, %v)", seed, k, got, want, f, ref)
			}
		}
		lengths := rand.New(rand.NewPCG(uint64(seed), 7))
		for k := 0; k < n/2; {
			z := buf[:1+lengths.IntN(len(buf))]
			f.fill(z)
			for l := range z {
				if want := ref.normRef(); math.Float64bits(z[l]) != math.Float64bits(want) {
					t.Fatalf("seed %d, fill value %d: %v, reference %v", seed, k+l, z[l], want)
				}
			}
			if f != ref {
				t.Fatalf("seed %d: states differ after a fill of %d", seed, len(z))
			}
			k += len(z)
		}
	}
}

// TestFastNormalMatchesReference: 10⁷ draws from 20 seeds are bit for bit
// the reference's (≈ 2.7·10⁵ of them through the wedges; the slow build
// checks 2·10⁸).
func TestFastNormalMatchesReference(t *testing.T) {
	checkNormStreams(t, 20, 500_000)
}

// wedgeJs returns values of j that reach wedge i: both ends of the range
// |j| ∈ [zigK[i], 2³¹], their neighbours, and random ones, with both signs.
func wedgeJs(i int, rng *rand.Rand) []int32 {
	lo := int64(zigK[i])
	var js []int32
	add := func(a int64) {
		if a >= lo && a <= 1<<31 {
			js = append(js, int32(-a))
			if a < 1<<31 {
				js = append(js, int32(a))
			}
		}
	}
	for _, a := range []int64{lo, lo + 1, lo + 2, 1<<31 - 2, 1<<31 - 1, 1 << 31} {
		add(a)
	}
	for range 200 {
		add(lo + rng.Int64N(1<<31-lo+1))
	}
	return js
}

// TestZigWedgeBoundary puts points on and beside the wedge test's boundary
// y = math.Exp(−x²/2) and on and beside the squeeze's two lines, for every
// wedge, and requires zigWedge, wherever it is sure, to decide as the bare
// comparison does (where it is not, normSlow makes that comparison). It
// also takes y from the generator's own expression with the uniform set
// next to the value that reaches the boundary. Points beside the lower
// line are decided by the squeeze, so a share of the points must be.
func TestZigWedgeBoundary(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	undecided, total := 0, 0
	for i := 1; i < 128; i++ {
		q := zigSq[i]
		for _, j := range wedgeJs(i, rng) {
			x := float64(j) * zigW[i]
			e := math.Exp(-0.5 * x * x)
			tt := q.m * (x * x)
			var ys []float64
			for _, c := range []float64{e, q.lo + tt, q.hi + tt, zigF[i], zigF[i-1]} {
				y := c
				for range 4 {
					y = math.Nextafter(y, 0)
				}
				for range 9 {
					ys = append(ys, y)
					y = math.Nextafter(y, 2)
				}
			}
			// The generator's y = zigF[i] + u·(zigF[i−1] − zigF[i]) with its
			// uniforms u = (k + 0.5)·2⁻⁵³ around the one that gives e.
			u0 := (e - zigF[i]) / (zigF[i-1] - zigF[i])
			k0 := math.Floor(u0*(1<<53) - 0.5)
			for dk := -3.0; dk <= 3; dk++ {
				if u := (k0 + dk + 0.5) * (1.0 / (1 << 53)); u > 0 && u < 1 {
					ys = append(ys, zigF[i]+u*(zigF[i-1]-zigF[i]))
				}
			}
			total += len(ys)
			for _, y := range ys {
				below, sure := zigWedge(uint64(i), x, y)
				if want := y < e; sure && below != want {
					t.Fatalf("wedge %d, j = %d, x = %v, y = %v: squeeze says %v, exp says %v", i, j, x, y, below, want)
				}
				if !sure {
					undecided++
				} else if math.Abs(y-e) <= 4*(math.Nextafter(e, 2)-e) {
					// The lines keep δ away from e: within a few ulps of it
					// the comparison is always left to math.Exp.
					t.Fatalf("wedge %d, x = %v: y = %v decided by the squeeze, %v from exp", i, x, y, y-e)
				}
			}
		}
	}
	// Both outcomes occur: the points beside the lines and at the wedge's
	// ends are mostly decided by the squeeze.
	if undecided == 0 || undecided > total*3/4 {
		t.Errorf("%d of %d points left undecided by the squeeze", undecided, total)
	}
}

// TestZigSqueezeEncloses checks the squeeze's premise on every wedge: at
// both ends of its range and on a grid of 4097 values of |j| between,
// fl(lo + m·s) < math.Exp(−s/2) < fl(hi + m·s) with room of at least
// δ/2 on each side (the construction promises δ less 2⁻⁴⁵), and the lines
// are close enough to leave at most 1% of wedge draws to math.Exp (the
// squeeze must decide most of them; the band between the lines has height
// hi − lo in a wedge of height zigF[i−1] − zigF[i], and the design figure,
// weighted by how often each wedge is reached, is ≈ 0.7%).
func TestZigSqueezeEncloses(t *testing.T) {
	var band, wsum float64
	for i := 1; i < 128; i++ {
		q := zigSq[i]
		lo := float64(zigK[i])
		const steps = 4096
		for k := 0; k <= steps; k++ {
			a := math.Round(lo + (float64(1<<31)-lo)*float64(k)/steps)
			for _, x := range []float64{a * zigW[i], -a * zigW[i]} {
				s := x * x
				e := math.Exp(-0.5 * x * x)
				if l, h := q.lo+q.m*s, q.hi+q.m*s; e-l < zigSqueezeMargin/2 || h-e < zigSqueezeMargin/2 {
					t.Fatalf("wedge %d, x = %v: lines %v, %v around exp %v", i, x, l, h, e)
				}
			}
		}
		// The magnitudes zigSq's error bound assumes: |m·s| and c at most 1.
		sB := float64(1<<31) * zigW[i] * (float64(1<<31) * zigW[i])
		if c := q.hi - zigSqueezeMargin; math.Abs(q.m)*sB > 0.5 || c > 1 || q.lo < 0 {
			t.Errorf("wedge %d: m·sB = %v, c = %v, lo = %v", i, q.m*sB, c, q.lo)
		}
		w := 1 - float64(zigK[i])/(1<<31) // the share of layer i's draws that reach its wedge
		band += w * (q.hi - q.lo) / (zigF[i-1] - zigF[i])
		wsum += w
	}
	if band /= wsum; band > 0.01 {
		t.Errorf("the squeeze leaves %.3g of wedge draws to math.Exp", band)
	}
	t.Logf("the squeeze leaves %.3g%% of wedge draws to math.Exp", 100*band)
}

// expRef returns exp(t) to 200 bits by its Taylor series in math/big (t in
// [−6, 0], summed until a term falls below 2⁻²⁰⁸, far below the sum's
// least bit, which is above 2⁻⁶⁰).
func expRef(t float64) *big.Float {
	const prec = 200
	bt := new(big.Float).SetPrec(prec).SetFloat64(t)
	sum := new(big.Float).SetPrec(prec).SetInt64(1)
	term := new(big.Float).SetPrec(prec).SetInt64(1)
	for n := int64(1); term.Sign() != 0 && term.MantExp(nil) > -prec-8; n++ {
		term.Mul(term, bt)
		term.Quo(term, new(big.Float).SetPrec(prec).SetInt64(n))
		sum.Add(sum, term)
	}
	return sum
}

// TestZigMathExpAccuracy checks the bound on math.Exp that zigSq's margin
// relies on, |math.Exp(t) − e^t| < 2⁻⁵⁰ on the wedges' arguments t =
// −s/2 ∈ [−zigR²/2, 0], against a 200-bit Taylor series, and reports the
// largest error in ulps (Go documents < 1 ulp for its portable code; the
// amd64 assembly is undocumented).
func TestZigMathExpAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	n := 3000
	if testing.Short() {
		n = 300
	}
	var worst float64
	for k := 0; k < n; k++ {
		x := rng.Float64() * zigR
		arg := -0.5 * x * x
		got := math.Exp(arg)
		ref := expRef(arg)
		want, _ := ref.Float64()
		diff, _ := new(big.Float).Sub(new(big.Float).SetFloat64(got), ref).Float64()
		if math.Abs(diff) >= 0x1p-50 {
			t.Fatalf("math.Exp(%v) = %v, reference %v", arg, got, want)
		}
		worst = max(worst, math.Abs(diff)/(math.Nextafter(want, 2)-want))
	}
	t.Logf("largest error of math.Exp on [−zigR²/2, 0]: %.3f ulp", worst)
}
