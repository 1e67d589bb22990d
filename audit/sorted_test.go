package audit

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/attacks"
)

// Counting a rule on the sorted scores by binary search gives the counts
// of attacks.Tally run by run, and describing them low-first gives the
// figures of the negated scores, on scores with ties, NaNs, ±0 and ±Inf and
// thresholds at scores, between them, at ±0 and at ±Inf.
func TestSortedScoresAgreeRunByRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 13))
	special := []float64{math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), math.NaN()}
	for trial := range 200 {
		n := 1 + rng.IntN(3000)
		scores := make([]float64, n)
		label := make([]bool, n)
		for i := range scores {
			switch r := rng.IntN(20); {
			case r == 0:
				scores[i] = special[rng.IntN(len(special))]
			case r < 8:
				scores[i] = float64(rng.IntN(9)-4) / 2 // ties
			default:
				scores[i] = rng.NormFloat64()
			}
			label[i] = rng.IntN(3) == 0
		}
		label[0], label[n-1] = true, false // both labels present
		var ss sortedScores
		if !ss.fill(scores, label) {
			t.Fatal("fill refused two labels")
		}
		thresholds := append([]float64{scores[rng.IntN(n)], rng.NormFloat64(), 0.25, math.Copysign(0, -1)}, special...)
		for _, thr := range thresholds {
			for _, o := range []int{1, -1} {
				r := attacks.Rule{Threshold: thr, Orientation: o}
				got, ok := ss.count(r)
				if math.IsNaN(thr) { // left to the run-by-run count
					if ok {
						t.Fatal("a NaN threshold was counted by binary search")
					}
					continue
				}
				want := countScores(scores, label, []attacks.Rule{r}, nil)[0]
				if !ok || got != want {
					t.Fatalf("trial %d, rule %+v: sorted counts %+v (ok %v), run by run %+v", trial, r, got, ok, want)
				}
			}
		}
		neg := make([]float64, n)
		for i, s := range scores {
			neg[i] = -s
		}
		if got, want := ss.describe(false), describeScores(neg, label); !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d: low-first walk %+v, negated scores %+v", trial, got, want)
		}
		if got, want := ss.describe(true), describeScores(scores, label); !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d: high-first walk %+v, describeScores %+v", trial, got, want)
		}
	}
}
