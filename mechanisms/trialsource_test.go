package mechanisms

import (
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// TestTrialSourceMatchesNewTrial checks that a reused TrialSource gives
// every trial the same seed and the same random stream as NewTrial, in
// any order of trials and sides, and that TrialDraw is the first draw of
// TrialRNG — so that reports do not depend on which of them the engine
// uses.
func TestTrialSourceMatchesNewTrial(t *testing.T) {
	src := NewTrialSource()
	for _, seed := range []uint64{0, 48, 1 << 63} {
		for _, i := range []int{0, 1, 7, 1_000_003, 5} {
			for _, side := range []dataset.Side{dataset.SideDPrime, dataset.SideD} {
				want := NewTrial(seed, side, i)
				got := src.Trial(seed, side, i)
				if got.Index != want.Index || got.Side != want.Side || got.Seed != want.Seed {
					t.Fatalf("seed %d trial %d side %v: got (%d, %v, %d), want (%d, %v, %d)", seed, i, side, got.Index, got.Side, got.Seed, want.Index, want.Side, want.Seed)
				}
				for k := 0; k < 50; k++ {
					if g, w := got.RNG.Uint64(), want.RNG.Uint64(); g != w {
						t.Fatalf("seed %d trial %d side %v: draw %d is %#x, want %#x", seed, i, side, k, g, w)
					}
				}
				if g, w := got.RNG.NormFloat64(), want.RNG.NormFloat64(); g != w {
					t.Fatalf("seed %d trial %d side %v: normal %g, want %g", seed, i, side, g, w)
				}
				for _, stream := range []uint64{StreamSampler, StreamSide, StreamCanary, StreamSeed} {
					if g, w := TrialDraw(seed, side, i, stream), TrialRNG(seed, side, i, stream).Uint64(); g != w {
						t.Fatalf("TrialDraw(%d, %v, %d, %d) = %#x, want %#x", seed, side, i, stream, g, w)
					}
				}
			}
		}
	}
}

// TestTrialSourceAllocatesNothing checks that making a trial from a
// TrialSource, and drawing a side coin, allocates nothing.
func TestTrialSourceAllocatesNothing(t *testing.T) {
	src := NewTrialSource()
	i := 0
	var sink uint64
	allocs := testing.AllocsPerRun(100, func() {
		tr := src.Trial(48, dataset.SideDPrime, i)
		sink += tr.RNG.Uint64() + TrialDraw(48, dataset.SideD, i, StreamSide)
		i++
	})
	if allocs != 0 {
		t.Errorf("%g allocations per trial, want 0", allocs)
	}
	_ = sink
}
