package mechanisms

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// laneDot is the summation order dotLanes documents, written out on its
// own: eight fused multiply–add lanes, reduced pairwise, then the tail.
func laneDot(a, b []float64) float64 {
	var s [8]float64
	n8 := len(a) / 8 * 8
	for j := 0; j < n8; j++ {
		s[j%8] = math.FMA(a[j], b[j], s[j%8])
	}
	t := ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]))
	for j := n8; j < len(a); j++ {
		t = math.FMA(a[j], b[j], t)
	}
	return t
}

// TestSoftmaxBatchGradBitsOfGatheredBlock checks that the minibatch
// gradient, computed on the records' own feature slices, has exactly the
// bits of the documented order of operations (logits by laneDot, the sum
// of outer products one fused multiply–add per record in record order),
// and agrees to 1e-12 relative with the same sum computed on a gathered
// block X by the two products gemm(X·Wᵀ) and gemm(Gᵀ·X), as it was
// before — with and without clipping, over several blocks.
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
		exact := make([]float64, len(theta))
		wantClipped := 0
		wts, bias := theta[:k*d], theta[k*d:]
		for r0 := 0; r0 < len(batch); r0 += rows {
			idx := batch[r0:min(r0+rows, len(batch))]
			nb := len(idx)
			x, g := make([]float64, nb*d), make([]float64, nb*k)
			gather(x, recs, idx, d)
			gemm(false, true, nb, k, d, x, d, wts, d, 0, g, k)
			addRow(g, nb, bias)
			ge := make([]float64, nb*k)
			for r := 0; r < nb; r++ {
				for c := 0; c < k; c++ {
					ge[r*k+c] = laneDot(x[r*d:(r+1)*d], wts[c*d:(c+1)*d]) + bias[c]
				}
			}
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
				ger := ge[r*k : (r+1)*k]
				softmaxResidual(ger, classOf(recs[i].Y, k))
				if clip > 0 {
					xr := x[r*d : (r+1)*d]
					if nn := math.Sqrt(dot(ger, ger) * (dot(xr, xr) + 1)); nn > clip {
						for c := range ger {
							ger[c] *= clip / nn
						}
					}
				}
				for c, v := range ger {
					exact[k*d+c] += v
					for j := 0; j < d; j++ {
						exact[c*d+j] = math.FMA(v, x[r*d+j], exact[c*d+j])
					}
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
			if math.Float64bits(got[j]) != math.Float64bits(exact[j]) {
				t.Fatalf("clip %g: coordinate %d is %v, want %v (bits differ)", clip, j, got[j], exact[j])
			}
			if math.Abs(got[j]-want[j]) > 1e-12*(1+math.Abs(want[j])) {
				t.Fatalf("clip %g: coordinate %d is %v, gemm gives %v", clip, j, got[j], want[j])
			}
		}
	}
}
