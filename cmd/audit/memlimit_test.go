package main

import (
	"math"
	"path/filepath"
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

// run sizes the memory limit by the audit's estimate once the audit is
// built: once, and at least the float32 store of the built-in scenario
// (20 releases, one feature); a shard, by its own trials.
func TestRunSizesMemory(t *testing.T) {
	var got []int64
	sizeMemory = func(est int64) { got = append(got, est) }
	defer func() { sizeMemory = func(int64) {} }()
	if _, stderr, code := runCLI(t, "run", "--trials", "1000", "--quiet", "--no-checkpoint", "--workers", "1"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if len(got) != 1 || got[0] < 1000*20*4 {
		t.Fatalf("estimates %v, want one of at least %d bytes", got, 1000*20*4)
	}
	whole := got[0]
	got = nil
	out := filepath.Join(t.TempDir(), "s.part")
	if _, stderr, code := runCLI(t, "run", "--trials", "1000", "--quiet", "--shard", "0/4", "--out", out); code != 0 {
		t.Fatalf("shard: exit %d: %s", code, stderr)
	}
	if len(got) != 1 || got[0] < 250*20*4 || got[0] >= whole {
		t.Errorf("shard estimates %v, want one of at least %d bytes, below the whole run's %d", got, 250*20*4, whole)
	}
}
