package main

import (
	"math"
	"testing"
)

// The memory limit is the estimate plus the slack, never below the floor,
// and saturates instead of overflowing.
func TestMemoryLimit(t *testing.T) {
	for _, c := range []struct{ est, want int64 }{
		{0, memFloor},
		{memFloor - memSlack, memFloor},
		{memFloor - memSlack + 1, memFloor + 1},
		{145 << 20, 145<<20 + memSlack},
		{math.MaxInt64 - memSlack, math.MaxInt64},
		{math.MaxInt64, math.MaxInt64},
		{-1, math.MaxInt64},
	} {
		if got := memoryLimit(c.est); got != c.want {
			t.Errorf("memoryLimit(%d) = %d, want %d", c.est, got, c.want)
		}
	}
}
