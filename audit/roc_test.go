package audit

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The sampled ROC curve is the ROC of the scores by brute force: at each
// sampled FPR f, the largest TPR over thresholds (every score, and above
// them all) whose FPR is at most f; the samples include the largest
// grid FPRs ≤ 1% and ≤ 0.1%, where they equal TPRAt1 and TPRAt01; the
// FPRs increase to 1.
func TestROCSamples(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 40; trial++ {
		n := 50 + rng.IntN(3000)
		scores, label := make([]float64, n), make([]bool, n)
		for i := range scores {
			label[i] = rng.IntN(2) == 0
			scores[i] = math.Round(rng.NormFloat64()*8) / 4
			if label[i] {
				scores[i] += 1
			}
		}
		label[0], label[1] = true, false
		pos, neg := 0, 0
		for _, l := range label {
			if l {
				pos++
			} else {
				neg++
			}
		}
		d := describeScores(scores, label)
		// Brute force: every threshold s (guess positive when score ≥ s)
		// among the scores' values and above them all.
		values := map[float64]bool{math.Inf(1): true}
		for _, x := range scores {
			values[x] = true
		}
		var points []ROCPoint
		for s := range values {
			tp, fp := 0, 0
			for j, x := range scores {
				if x >= s {
					if label[j] {
						tp++
					} else {
						fp++
					}
				}
			}
			points = append(points, ROCPoint{FPR: float64(fp) / float64(neg), TPR: float64(tp) / float64(pos)})
		}
		if len(d.ROC) < 2 || d.ROC[len(d.ROC)-1].FPR != 1 || d.ROC[len(d.ROC)-1].TPR != 1 {
			t.Fatalf("trial %d: ROC %v does not end at (1, 1)", trial, d.ROC)
		}
		at1, at01 := false, false
		for i, p := range d.ROC {
			if i > 0 && !(p.FPR > d.ROC[i-1].FPR) {
				t.Fatalf("trial %d: FPRs not increasing at %d: %v", trial, i, d.ROC)
			}
			best := 0.0
			for _, c := range points {
				if c.FPR <= p.FPR {
					best = math.Max(best, c.TPR)
				}
			}
			if p.TPR != best {
				t.Fatalf("trial %d: TPR at FPR %g = %g, brute force %g", trial, p.FPR, p.TPR, best)
			}
			next := 2.0
			if i+1 < len(d.ROC) {
				next = d.ROC[i+1].FPR
			}
			if p.FPR <= 0.01 && next > 0.01 {
				at1 = true
				if p.TPR != float64(d.TPRAt1) {
					t.Errorf("trial %d: ROC at FPR %g = %g, TPRAt1 %g", trial, p.FPR, p.TPR, float64(d.TPRAt1))
				}
			}
			if p.FPR <= 0.001 && next > 0.001 {
				at01 = true
				if p.TPR != float64(d.TPRAt01) {
					t.Errorf("trial %d: ROC at FPR %g = %g, TPRAt01 %g", trial, p.FPR, p.TPR, float64(d.TPRAt01))
				}
			}
		}
		if neg >= 100 && !at1 || neg >= 1000 && !at01 {
			t.Errorf("trial %d (%d negatives): no sample at FPR 1%% (%v) or 0.1%% (%v)", trial, neg, at1, at01)
		}
	}
}
