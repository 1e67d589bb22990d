package mechanisms

import (
	"math"
	"testing"
)

// TestSnapshotAddSaturates checks Snapshot.Add field by field against
// satAdd, on counts where the fast path applies (all below 2⁶²), at its
// edge, beyond it (sums that overflow saturate at MaxInt) and with a
// negative count (which takes the checked path).
func TestSnapshotAddSaturates(t *testing.T) {
	fields := func(s *Snapshot) []*int {
		return []*int{&s.Iterations, &s.Proposals, &s.Accepted, &s.ClippedGrads, &s.GradEvals,
			&s.ClippedLLRs, &s.LLREvals, &s.Projections, &s.VarianceCheckFailures, &s.Runs}
	}
	cases := []struct{ a, b int }{
		{3, 4}, {1<<62 - 1, 1<<62 - 1}, {1 << 62, 1 << 62}, {math.MaxInt, 1},
		{math.MaxInt - 5, 3}, {-7, 2}, {math.MinInt, -1}, {0, 0},
	}
	for _, c := range cases {
		for f := 0; f < 10; f++ {
			var s, o Snapshot
			*fields(&s)[f], *fields(&o)[f] = c.a, c.b
			*fields(&s)[(f+1)%10], *fields(&o)[(f+1)%10] = 11, 12
			s.Add(o)
			if got, want := *fields(&s)[f], satAdd(c.a, c.b); got != want {
				t.Errorf("field %d: %d + %d = %d, want %d", f, c.a, c.b, got, want)
			}
			if got := *fields(&s)[(f+1)%10]; got != 23 {
				t.Errorf("field %d: 11 + 12 = %d beside %d + %d", (f+1)%10, got, c.a, c.b)
			}
		}
	}
}
