package mechanisms

import (
	"context"
	"reflect"
	"slices"
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

// TestTrialSourceChainRunsMatch runs SGLD chains (the affine batch-1 fast
// path and the general one) on trials from a reused TrialSource and from
// NewTrial, alternating sides, and checks that the releases and the Info,
// per-release snapshots included, are identical: the source's snapshot
// buffer is reused, never carried from one trial into the next.
func TestTrialSourceChainRunsMatch(t *testing.T) {
	d, _ := syntheticLinReg(50, []float64{0.5}, 1, 1, 1)
	dp := d.Clone()
	dp.Records[0].X[0] = 3
	for _, batch := range []int{1, 5} {
		c := &Chain{Model: NewLinReg1D(1, 1), Init: Init{FromPrior: true},
			Sampler: &SGLD{Step: StepSchedule{Eta: 1e-3}, Batch: batch, Scheme: Cyclic, Epochs: 4},
			Release: ReleaseSpec{Mode: ReleaseEpochs}}
		if err := c.Check(d); err != nil {
			t.Fatal(err)
		}
		src := NewTrialSource()
		for i := 0; i < 6; i++ {
			side, data := dataset.Side(i&1), d
			if side == dataset.SideDPrime {
				data = dp
			}
			run := func(tr Trial) ([]float64, Info) {
				var out []float64
				info, err := c.Run(context.Background(), tr, data, func(k int, th []float64) error {
					out = append(out, th...)
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				return out, info
			}
			gotX, gotInfo := run(src.Trial(9, side, i))
			gotInfo.PerRelease = slices.Clone(gotInfo.PerRelease)
			wantX, wantInfo := run(NewTrial(9, side, i))
			if !slices.Equal(gotX, wantX) || !reflect.DeepEqual(gotInfo, wantInfo) {
				t.Fatalf("batch %d trial %d: source gives %v %+v, NewTrial %v %+v", batch, i, gotX, gotInfo, wantX, wantInfo)
			}
			if len(gotInfo.PerRelease) != 4 {
				t.Fatalf("batch %d trial %d: %d snapshots, want 4", batch, i, len(gotInfo.PerRelease))
			}
		}
	}
}

// TestTrialSourceRunAllocatesNothing checks that a batch-1 SGLD chain run
// from a reused TrialSource allocates nothing: the source lends its state,
// its visiting order, its snapshots and the buffer of its staged releases,
// with releases to an Emit and to a Recorder alike.
func TestTrialSourceRunAllocatesNothing(t *testing.T) {
	d, _ := syntheticLinReg(5, []float64{0.5}, 1, 1, 1)
	c := &Chain{Model: NewLinReg1D(1, 1), Init: Init{FromPrior: true},
		Sampler: &SGLD{Step: StepSchedule{Eta: 1e-3}, Batch: 1, Scheme: Cyclic, Epochs: 400},
		Release: ReleaseSpec{Mode: ReleaseEpochs}}
	if err := c.Check(d); err != nil {
		t.Fatal(err)
	}
	emit := Emit(func(int, []float64) error { return nil })
	for _, recorded := range []bool{false, true} {
		src := NewTrialSource()
		if recorded {
			src.SetRecorder(&Recorder{Out: make([]float32, 400), Ref: make([]float64, 400), F: 1, For: emit})
		}
		i := 0
		run := func() {
			if _, err := c.Run(context.Background(), src.Trial(1, dataset.SideD, i), d, emit); err != nil {
				t.Fatal(err)
			}
			i++
		}
		run() // the source's buffers are made on the first run
		if a := testing.AllocsPerRun(50, run); a != 0 {
			t.Errorf("recorder %v: %g allocations per run, want 0", recorded, a)
		}
		if recorded && src.Stored() != 400 {
			t.Errorf("the recorder kept %d releases, want 400", src.Stored())
		}
	}
}
