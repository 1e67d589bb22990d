package mechanisms

import (
	"math"
	"math/rand/v2"
	"testing"
)

// residualRow draws k logits of one of the kinds the bit-identity test
// covers: 0 N(0,1); 1 N(0,30²); 2 around the kernel's range bound (the
// maximum minus 708, minus or plus a few ulp); 3 spreads up to e⁸ wide,
// where some exponentials leave the range or underflow; 4 ties among three
// values; 5 signed zeros and tiny values; 6 all equal; 7 one NaN or
// infinity among N(0,1) values.
func residualRow(rng *rand.Rand, kind, k int) []float64 {
	f := make([]float64, k)
	for i := range f {
		switch kind {
		case 0, 7:
			f[i] = rng.NormFloat64()
		case 1:
			f[i] = 30 * rng.NormFloat64()
		case 2:
			f[i] = 3 + rng.NormFloat64()
		case 3:
			f[i] = rng.NormFloat64() * math.Exp(8*rng.Float64())
		case 4:
			f[i] = []float64{-1, 0, 2}[rng.IntN(3)]
		case 5:
			f[i] = []float64{0, math.Copysign(0, -1), 5e-324, -1e-300}[rng.IntN(4)]
		case 6:
			f[i] = 0.25
		}
	}
	switch kind {
	case 2:
		// One logit at max − 708 − δ with δ a few ulp either side of 0, so
		// that x = v − max falls on, just above or just below −708.
		mx := f[0]
		for _, v := range f {
			mx = math.Max(mx, v)
		}
		v := mx - 708
		for range rng.IntN(5) {
			v = math.Nextafter(v, math.Inf(2*rng.IntN(2)-1))
		}
		f[rng.IntN(k)] = v
	case 6:
		// all equal: nothing to add
	case 7:
		f[rng.IntN(k)] = []float64{math.NaN(), math.Inf(1), math.Inf(-1)}[rng.IntN(3)]
	}
	return f
}

// sameBits reports whether a and b have the same bits, or are both NaN.
func sameBits(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
}

// TestSoftmaxResidualRowsMatchesGo checks that softmaxResidualRows (the
// AVX2 kernel, four rows a call) gives every output's bits of the portable
// softmaxResidualGo, row by row, for class counts 1 to 33, blocks with and
// without a remainder of rows, every label, and the logit kinds of
// residualRow; NaN outputs count as equal to NaN. It also checks that the
// kernel ran (rather than falling back to the Go code) on every block
// whose exponents are all in its range, and on no other block.
func TestSoftmaxResidualRowsMatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 10))
	var kernelBlocks, fallbackBlocks int
	for _, k := range []int{1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 16, 33} {
		for kind := 0; kind < 8; kind++ {
			for rep := 0; rep < 40; rep++ {
				n := 4 + rep%6
				ys := make([]int, n)
				g := make([]float64, 0, n*k)
				for r := range ys {
					ys[r] = (rep + r) % k
					g = append(g, residualRow(rng, kind, k)...)
				}
				want := append([]float64(nil), g...)
				inRange := make([]bool, n)
				for r := range ys {
					row := want[r*k : (r+1)*k]
					inRange[r] = expsInRange(row)
					softmaxResidualGo(row, ys[r])
				}
				got := append([]float64(nil), g...)
				e := make([]float64, 4*k)
				softmaxResidualRows(got, k, ys, e)
				for i := range got {
					if !sameBits(got[i], want[i]) {
						t.Fatalf("k=%d kind=%d rep=%d row %d class %d: rows %v (%#x), Go %v (%#x); logits %v",
							k, kind, rep, i/k, i%k, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]), g[i/k*k:(i/k+1)*k])
					}
				}
				if !useAVX2 {
					continue
				}
				// The kernel alone on the first block: it must run exactly
				// when all four rows are in range, and leave g alone if not.
				blk := append([]float64(nil), g[:4*k]...)
				ok := softmaxResidual4AVX(&blk[0], k, k, (*[4]int)(ys[:4]), &e[0], &expVec)
				want4 := inRange[0] && inRange[1] && inRange[2] && inRange[3]
				if ok != want4 {
					t.Fatalf("k=%d kind=%d rep=%d: kernel ran = %v, rows in range %v", k, kind, rep, ok, inRange[:4])
				}
				if ok {
					kernelBlocks++
				} else {
					fallbackBlocks++
					for i := range blk {
						if math.Float64bits(blk[i]) != math.Float64bits(g[i]) {
							t.Fatalf("k=%d kind=%d rep=%d: kernel declined but changed g[%d]", k, kind, rep, i)
						}
					}
				}
			}
		}
	}
	t.Logf("kernel ran on %d blocks, declined %d", kernelBlocks, fallbackBlocks)
	if useAVX2 && (kernelBlocks < 2000 || fallbackBlocks < 200) {
		t.Fatalf("kernel ran on %d blocks and declined %d: the cases do not exercise both paths", kernelBlocks, fallbackBlocks)
	}
}

// expsInRange reports whether every x = f_k − max f of a row satisfies
// x ≥ −708 (false for a NaN), the range of the kernel's exponential.
func expsInRange(f []float64) bool {
	mx := f[0]
	for _, v := range f[1:] {
		if v > mx {
			mx = v
		}
	}
	for _, v := range f {
		if !(v-mx >= -708) {
			return false
		}
	}
	return true
}

// TestSoftmaxResidualKernelOneRow checks the kernel with row stride 0 (four
// lanes on one row) against softmaxResidualGo, and its range bound: a
// logit exactly 708 below the maximum is computed by the kernel, one an
// ulp lower is not.
func TestSoftmaxResidualKernelOneRow(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 + FMA on this processor")
	}
	rng := rand.New(rand.NewPCG(7, 708))
	for rep := 0; rep < 3000; rep++ {
		k := 1 + rep%17
		y := rep % k
		f := residualRow(rng, rep%8, k)
		want := append([]float64(nil), f...)
		softmaxResidualGo(want, y)
		got := append([]float64(nil), f...)
		e := make([]float64, 4*k)
		ys := [4]int{y, y, y, y}
		if !softmaxResidual4AVX(&got[0], 0, k, &ys, &e[0], &expVec) {
			softmaxResidualGo(got, y)
		}
		for i := range got {
			if !sameBits(got[i], want[i]) {
				t.Fatalf("rep %d k=%d y=%d class %d: kernel %v, Go %v; logits %v", rep, k, y, i, got[i], want[i], f)
			}
		}
	}
	e := make([]float64, 12)
	ys := [4]int{1, 1, 1, 1}
	at := []float64{0.5, 0.5 - 708, 0.5}
	if at[1]-at[0] != -708 {
		t.Fatal("test logits: 0.5 − 708 is not exact")
	}
	if !softmaxResidual4AVX(&at[0], 0, 3, &ys, &e[0], &expVec) {
		t.Error("kernel declined x = −708")
	}
	below := []float64{0.5, math.Nextafter(0.5-708, -1000), 0.5}
	if softmaxResidual4AVX(&below[0], 0, 3, &ys, &e[0], &expVec) {
		t.Error("kernel ran on x < −708")
	}
}

// residualBenchRows is a digits-like block: 32 rows of 10 logits
// (N(0, 3²)) with their labels.
func residualBenchRows() ([]float64, []int) {
	const n, k = 32, 10
	rng := rand.New(rand.NewPCG(3, 10))
	g := make([]float64, n*k)
	for i := range g {
		g[i] = 3 * rng.NormFloat64()
	}
	ys := make([]int, n)
	for r := range ys {
		ys[r] = rng.IntN(k)
	}
	return g, ys
}

// BenchmarkSoftmaxResidualGo: the portable softmaxResidual, K = 10, ns per
// row.
func BenchmarkSoftmaxResidualGo(b *testing.B) {
	src, ys := residualBenchRows()
	g := make([]float64, len(src))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		copy(g, src)
		for r, y := range ys {
			softmaxResidualGo(g[r*10:(r+1)*10], y)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ys)), "ns/row")
}

// BenchmarkSoftmaxResidualRows: softmaxResidualRows on 32 rows, K = 10, ns
// per row.
func BenchmarkSoftmaxResidualRows(b *testing.B) {
	src, ys := residualBenchRows()
	g, e := make([]float64, len(src)), make([]float64, 40)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		copy(g, src)
		softmaxResidualRows(g, 10, ys, e)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ys)), "ns/row")
}

// TestSoftmaxResidualRowsBadLabel checks that a label outside [0, k)
// panics, as the Go code's index check does, instead of the kernel writing
// outside its row.
func TestSoftmaxResidualRowsBadLabel(t *testing.T) {
	for _, bad := range []int{-1, 3, 4} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("label %d of 3 classes: no panic", bad)
				}
			}()
			g := make([]float64, 4*3+8)
			softmaxResidualRows(g[:12], 3, []int{0, 1, bad, 2}, make([]float64, 12))
		}()
	}
}
