package mechanisms

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// exactDot returns Σ a_j·b_j rounded once, from an exact sum in big.Float
// (products of doubles are exact in 106 bits; 2000 bits hold the sum).
func exactDot(a, b []float64) (sum, abs float64) {
	s := new(big.Float).SetPrec(2000)
	for j := range a {
		p := new(big.Float).SetPrec(2000).SetFloat64(a[j])
		p.Mul(p, new(big.Float).SetFloat64(b[j]))
		s.Add(s, p)
		abs += math.Abs(a[j] * b[j])
	}
	v, _ := s.Float64()
	return v, abs
}

func randVec(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64() * math.Exp(4*rng.Float64()-2)
	}
	return v
}

// TestDotLanesError checks dotLanes and dotRows against the exactly
// rounded dot product: the error stays within the bound of the doc
// comment, (⌈n/8⌉ + 3)·u·Σ|w_j·x_j| (plus u·|Σ| for the final rounding of
// the reference).
func TestDotLanesError(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, n := range []int{1, 3, 7, 8, 9, 15, 16, 17, 31, 64, 65, 100, 257} {
		for rep := 0; rep < 20; rep++ {
			rows := 1 + rep%10
			x := randVec(rng, n)
			ld := n + rep%3
			w := randVec(rng, rows*ld)
			out := make([]float64, rows)
			dotRows(x, w, ld, out)
			for c := 0; c < rows; c++ {
				row := w[c*ld : c*ld+n]
				want, abs := exactDot(row, x)
				u := 0x1p-53
				bound := float64((n+7)/8+3)*u*abs + u*math.Abs(want)
				if got := dotLanes(x, row); math.Abs(got-want) > bound {
					t.Fatalf("n=%d: dotLanes %v, exact %v, error %g > bound %g", n, got, want, math.Abs(got-want), bound)
				}
				if out[c] != dotLanes(x, row) {
					t.Fatalf("n=%d rows=%d: dotRows[%d] = %v, dotLanes %v", n, rows, c, out[c], dotLanes(x, row))
				}
			}
		}
	}
}

// TestSumOuterExact checks sumOuter entry by entry against the same
// sum of fused multiply–adds written out directly, and its error against
// the exactly rounded sum (each fma rounds once: ≤ nr·u·Σ|terms| + u·|Σ|).
func TestSumOuterExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, d := range []int{1, 5, 16, 17, 33, 64, 70} {
		for _, k := range []int{1, 2, 3, 10} {
			for _, nr := range []int{1, 2, 29, 32} {
				ldg, lds := k+1, d+2
				g := randVec(rng, nr*ldg)
				xs := make([]*float64, nr)
				recs := make([][]float64, nr)
				for r := range xs {
					recs[r] = randVec(rng, d)
					xs[r] = &recs[r][0]
				}
				s := randVec(rng, k*lds)
				s0 := append([]float64(nil), s...)
				sumOuter(s, lds, g, ldg, k, d, xs)
				for c := 0; c < k; c++ {
					for j := 0; j < d; j++ {
						want := s0[c*lds+j]
						a, b := []float64{want}, []float64{1}
						for r := 0; r < nr; r++ {
							want = math.FMA(g[r*ldg+c], recs[r][j], want)
							a, b = append(a, g[r*ldg+c]), append(b, recs[r][j])
						}
						if got := s[c*lds+j]; got != want {
							t.Fatalf("d=%d k=%d nr=%d: s[%d][%d] = %v, want %v", d, k, nr, c, j, got, want)
						}
						ex, abs := exactDot(a, b)
						if e := math.Abs(want - ex); e > float64(nr+1)*0x1p-53*abs {
							t.Fatalf("d=%d k=%d nr=%d: error %g", d, k, nr, e)
						}
					}
					if c*lds+d < len(s) && s[c*lds+d] != s0[c*lds+d] {
						t.Fatalf("sumOuter wrote past column d")
					}
				}
			}
		}
	}
}
