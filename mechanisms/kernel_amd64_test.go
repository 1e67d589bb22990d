package mechanisms

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestKernelsAVX2MatchPortable checks that the AVX2 kernels give the bits
// of the portable Go code on every shape (tails of 8 and 16, odd class
// counts, short batches), so that a run does not depend on the processor.
func TestKernelsAVX2MatchPortable(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 + FMA on this processor")
	}
	defer func(v bool) { useAVX2 = v }(useAVX2)
	rng := rand.New(rand.NewPCG(13, 17))
	for _, n := range []int{8, 9, 16, 24, 63, 64, 65, 130} {
		for rows := 1; rows <= 11; rows++ {
			x, w := randVec(rng, n), randVec(rng, rows*(n+1))
			fast, slow := make([]float64, rows), make([]float64, rows)
			useAVX2 = true
			dotRows(x, w, n+1, fast)
			useAVX2 = false
			dotRows(x, w, n+1, slow)
			for c := range fast {
				if fast[c] != slow[c] {
					t.Fatalf("dotRows n=%d rows=%d [%d]: AVX2 %v, Go %v", n, rows, c, fast[c], slow[c])
				}
			}
			for _, nr := range []int{1, 3, 32} {
				g := randVec(rng, nr*rows)
				xs := make([]*float64, nr)
				for r := range xs {
					xs[r] = &randVec(rng, n)[0]
				}
				s1 := randVec(rng, rows*n)
				s2 := append([]float64(nil), s1...)
				useAVX2 = true
				sumOuter(s1, n, g, rows, rows, n, xs)
				useAVX2 = false
				sumOuter(s2, n, g, rows, rows, n, xs)
				for i := range s1 {
					if s1[i] != s2[i] {
						t.Fatalf("sumOuter n=%d k=%d nr=%d [%d]: AVX2 %v, Go %v", n, rows, nr, i, s1[i], s2[i])
					}
				}
			}
		}
	}
}

// kernelModes forces each path of the kernels in turn: AVX-512 (where the
// processor has it), AVX2, portable Go.
func kernelModes() []struct {
	name         string
	avx2, avx512 bool
} {
	modes := []struct {
		name         string
		avx2, avx512 bool
	}{{"Go", false, false}}
	if useAVX2 {
		modes = append(modes, struct {
			name         string
			avx2, avx512 bool
		}{"AVX2", true, false})
	}
	if useAVX512 {
		modes = append(modes, struct {
			name         string
			avx2, avx512 bool
		}{"AVX-512", true, true})
	}
	return modes
}

// TestKernelsAVX512MatchPortable checks logitsRows, sumOuter and
// Softmax.BatchLogits on every path against the portable Go code, bit for
// bit, on random inputs of every shape the kernels split: feature counts
// around multiples of 8, 16 and 32, odd class counts, record counts
// around multiples of 4.
func TestKernelsAVX512MatchPortable(t *testing.T) {
	modes := kernelModes()
	if len(modes) < 3 {
		t.Log("no AVX-512 on this processor: only the AVX2 and Go paths are compared")
	}
	defer func(a, b bool) { useAVX2, useAVX512 = a, b }(useAVX2, useAVX512)
	set := func(i int) { useAVX2, useAVX512 = modes[i].avx2, modes[i].avx512 }
	rng := rand.New(rand.NewPCG(19, 23))
	for _, n := range []int{1, 8, 9, 16, 31, 32, 33, 63, 64, 65, 96, 130} {
		for k := 1; k <= 11; k++ {
			ldw := n + k%3
			w, bias := randVec(rng, k*ldw), randVec(rng, k)
			if k%4 == 0 {
				bias[0] = math.Copysign(0, -1)
			}
			for _, nr := range []int{1, 3, 4, 5, 8, 11, 32} {
				recs := make([][]float64, nr)
				xs := make([]*float64, nr)
				for r := range xs {
					recs[r] = randVec(rng, n)
					xs[r] = &recs[r][0]
				}
				ldo := k + 1
				var ref []float64
				for i := range modes {
					set(i)
					out := make([]float64, nr*ldo)
					logitsRows(xs, n, w, ldw, bias, out, ldo)
					if i == 0 {
						ref = out
						continue
					}
					for j := range out {
						if math.Float64bits(out[j]) != math.Float64bits(ref[j]) {
							t.Fatalf("logitsRows n=%d k=%d nr=%d [%d]: %s %v, Go %v", n, k, nr, j, modes[i].name, out[j], ref[j])
						}
					}
				}
				g := randVec(rng, nr*ldo)
				s0 := randVec(rng, k*ldw)
				var sref []float64
				for i := range modes {
					set(i)
					s := append([]float64(nil), s0...)
					sumOuter(s, ldw, g, ldo, k, n, xs)
					if i == 0 {
						sref = s
						continue
					}
					for j := range s {
						if math.Float64bits(s[j]) != math.Float64bits(sref[j]) {
							t.Fatalf("sumOuter n=%d k=%d nr=%d [%d]: %s %v, Go %v", n, k, nr, j, modes[i].name, s[j], sref[j])
						}
					}
				}
			}
		}
	}
	for _, d := range []int{3, 8, 13, 64} {
		for k := 2; k <= 7; k++ {
			m := Softmax{Features: d, Classes: k, Alpha: 1}
			theta := randVec(rng, m.Dim())
			for nrec := 1; nrec <= 9; nrec++ {
				x := randVec(rng, nrec*d)
				var ref []float64
				for i := range modes {
					set(i)
					f := make([]float64, nrec*k)
					m.BatchLogits(theta, x, nrec, f, nil)
					if i == 0 {
						ref = f
						continue
					}
					for j := range f {
						if math.Float64bits(f[j]) != math.Float64bits(ref[j]) {
							t.Fatalf("BatchLogits d=%d k=%d n=%d [%d]: %s %v, Go %v", d, k, nrec, j, modes[i].name, f[j], ref[j])
						}
					}
				}
			}
		}
	}
}

// TestSGLDUpdateAVX2MatchesPortable checks sgldUpdate's isotropic-prior
// update on the AVX2 kernel against the portable loop, bit for bit, on
// every length up to 19 (tails of the four-wide kernel), and that it
// reports a NaN or infinite coordinate wherever it arises.
func TestSGLDUpdateAVX2MatchesPortable(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 + FMA on this processor")
	}
	defer func(v bool) { useAVX2 = v }(useAVX2)
	m := Softmax{Features: 1, Classes: 2, Alpha: 0.7}
	rng := rand.New(rand.NewPCG(29, 31))
	for n := 1; n <= 19; n++ {
		for bad := -1; bad < n; bad++ {
			theta, gi, noise := randVec(rng, n), randVec(rng, n), randVec(rng, n)
			if bad >= 0 {
				gi[bad] = []float64{math.NaN(), math.Inf(1), math.Inf(-1)}[bad%3]
			}
			var got [2][]float64
			var ok [2]bool
			for p, avx := range []bool{false, true} {
				useAVX2 = avx
				th := append([]float64(nil), theta...)
				ok[p] = sgldUpdate(m, th, nil, gi, noise, 0.005, 44.9, 0.1)
				got[p] = th
			}
			if ok[0] != (bad < 0) || ok[1] != ok[0] {
				t.Fatalf("n=%d bad=%d: finite reported %v (Go), %v (AVX2)", n, bad, ok[0], ok[1])
			}
			for k := range got[0] {
				if a, b := got[0][k], got[1][k]; math.Float64bits(a) != math.Float64bits(b) && !(math.IsNaN(a) && math.IsNaN(b)) {
					t.Fatalf("n=%d bad=%d: θ[%d] = %v (Go), %v (AVX2)", n, bad, k, a, b)
				}
			}
		}
	}
}
