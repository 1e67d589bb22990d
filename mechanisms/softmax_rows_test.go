package mechanisms

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// TestSoftmaxBatchGradBitsOfGatheredBlock checks that the minibatch
// gradient, computed row by row on the records' own feature slices, has
// exactly the bits of the same sum computed the way it was before, on a
// gathered block X with the two products gemm(X·Wᵀ) and gemm(Gᵀ·X) — so
// that reports did not change — with and without clipping, over several
// blocks.
func TestSoftmaxBatchGradBitsOfGatheredBlock(t *testing.T) {
	const k, d, n = 10, 64, 300
	rng := rand.New(rand.NewPCG(3, 4))
	recs := make([]dataset.Record, n)
	for i := range recs {
		x := make([]float64, d)
		for j := range x {
			x[j] = rng.Float64()
		}
		recs[i] = dataset.Record{X: x, Y: float64(rng.IntN(k))}
	}
	m := Softmax{Classes: k, Features: d}
	theta := make([]float64, k*d+k)
	for j := range theta {
		theta[j] = rng.NormFloat64()
	}
	batch := rng.Perm(n)[:70]
	for _, clip := range []float64{0, 2} {
		rows := 32
		got := make([]float64, len(theta))
		gotClipped := m.NewGradBatch(rows).SumGradLogLik(theta, recs, batch, clip, got)

		// The reference: gather each block, then the two products.
		want := make([]float64, len(theta))
		wantClipped := 0
		wts, bias := theta[:k*d], theta[k*d:]
		for r0 := 0; r0 < len(batch); r0 += rows {
			idx := batch[r0:min(r0+rows, len(batch))]
			nb := len(idx)
			x, g := make([]float64, nb*d), make([]float64, nb*k)
			gather(x, recs, idx, d)
			gemm(false, true, nb, k, d, x, d, wts, d, 0, g, k)
			addRow(g, nb, bias)
			for r, i := range idx {
				gr := g[r*k : (r+1)*k]
				softmaxResidual(gr, classOf(recs[i].Y, k))
				if clip > 0 {
					xr := x[r*d : (r+1)*d]
					if nn := math.Sqrt(dot(gr, gr) * (dot(xr, xr) + 1)); nn > clip {
						for c := range gr {
							gr[c] *= clip / nn
						}
						wantClipped++
					}
				}
				for c, v := range gr {
					want[k*d+c] += v
				}
			}
			gemm(true, false, k, d, nb, g, k, x, d, 1, want[:k*d], d)
		}
		if gotClipped != wantClipped {
			t.Errorf("clip %g: %d clipped, want %d", clip, gotClipped, wantClipped)
		}
		if clip > 0 && wantClipped == 0 {
			t.Errorf("clip %g clips nothing: the clipping branch is not exercised", clip)
		}
		for j := range got {
			if math.Float64bits(got[j]) != math.Float64bits(want[j]) {
				t.Fatalf("clip %g: coordinate %d is %v, want %v (bits differ)", clip, j, got[j], want[j])
			}
		}
	}
}
