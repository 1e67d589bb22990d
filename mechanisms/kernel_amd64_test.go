package mechanisms

import (
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
