package scenario

import (
	"math"
	"sort"
	"testing"
)

// ranks returns the ranks of xs (average ranks for ties).
func ranks(xs []float64) []float64 {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	r := make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && xs[idx[j]] == xs[idx[i]] {
			j++
		}
		for k := i; k < j; k++ {
			r[idx[k]] = float64(i+j-1) / 2
		}
		i = j
	}
	return r
}

func spearman(a, b []float64) float64 {
	ra, rb := ranks(a), ranks(b)
	var ma, mb float64
	for i := range ra {
		ma += ra[i]
		mb += rb[i]
	}
	ma /= float64(len(ra))
	mb /= float64(len(rb))
	var sab, saa, sbb float64
	for i := range ra {
		sab += (ra[i] - ma) * (rb[i] - mb)
		saa += (ra[i] - ma) * (ra[i] - ma)
		sbb += (rb[i] - mb) * (rb[i] - mb)
	}
	return sab / math.Sqrt(saa*sbb)
}

// Cyclic SGLD on the counterexample at n = 10: the audit's per-epoch ε_lb
// (region bound, 95% pointwise) must stay below the exact ε(δ) of the
// closed form at every epoch — a valid lower bound can only exceed it with
// probability 5% per epoch, and the bound is far from tight here — and
// track its shape: rank correlation ≥ 0.8 over the 20 epochs and the peak
// within two epochs of the exact peak.
func TestEmpiricalCurveBelowExact(t *testing.T) {
	r := runFile(t, "../../testdata/sgld-interim.yaml", 0)
	lb := make([]float64, len(r.Points))
	ex := make([]float64, len(r.Points))
	peakLB, peakEx := 0, 0
	for k, pr := range r.Points {
		if pr.Exact == nil {
			t.Fatal("the scenario should have an exact curve")
		}
		lb[k], ex[k] = pr.Region().Epsilon, float64(*pr.Exact)
		if lb[k] > ex[k] {
			t.Errorf("%s: ε_lb %.4f above the exact ε %.4f", pr.Point.Label, lb[k], ex[k])
		}
		if lb[k] > lb[peakLB] {
			peakLB = k
		}
		if ex[k] > ex[peakEx] {
			peakEx = k
		}
	}
	rho := spearman(lb, ex)
	t.Logf("rank correlation %.3f; peak of ε_lb at %s, exact peak at %s", rho, r.Points[peakLB].Point.Label, r.Points[peakEx].Point.Label)
	if rho < 0.8 {
		t.Errorf("ε_lb does not track the exact curve: rank correlation %.3f", rho)
	}
	if d := peakLB - peakEx; d < -2 || d > 2 {
		t.Errorf("peak of ε_lb at point %d, exact peak at %d", peakLB, peakEx)
	}
	// The exact curve itself: zero before training starts, positive after.
	if ex[0] <= 0 {
		t.Errorf("exact ε at epoch 1 = %g", ex[0])
	}
}
