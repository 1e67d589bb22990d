package mechanisms

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// releaseCount runs c once on d and returns how many releases it emitted,
// checking that they come in order.
func releaseCount(t *testing.T, c *Chain, d *dataset.Dataset, seed int) int {
	t.Helper()
	n := 0
	if _, err := c.Run(context.Background(), Trial{RNG: TrialRNG(1, dataset.SideD, seed, 0)}, d, func(k int, _ []float64) error {
		if k != n {
			t.Fatalf("release %d emitted as %d", n, k)
		}
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// The cached schedule is the one Points resolves, per dataset: under
// add/remove adjacency D′ has one record more, hence another epoch length
// and run length, and each side's runs must get their own iterations,
// also when the two sides' runs interleave on several goroutines.
func TestChainScheduleCachePerDataset(t *testing.T) {
	d, _ := syntheticLinReg(9, []float64{0.5}, 1, 1, 1)
	pair, err := dataset.Neighbour(d, dataset.AddOne, 0, dataset.Record{X: []float64{3}, Y: 1})
	if err != nil {
		t.Fatal(err)
	}
	// 9 records in batches of 3 make 3 iterations an epoch, 21 a run and
	// 7 releases; D′'s 10 records make 4, 28 and 9.
	c := &Chain{Model: NewLinReg1D(1, 1), Init: Init{Theta: []float64{0}},
		Sampler: &SGLD{Step: StepSchedule{Eta: 1e-3}, Batch: 3, Scheme: Cyclic, Epochs: 7},
		Release: ReleaseSpec{Mode: ReleaseTrajectory, Every: 3}}
	want := map[*dataset.Dataset][]int{}
	for _, x := range []*dataset.Dataset{pair.D, pair.DPrime} {
		pts, err := c.Points(x)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pts {
			want[x] = append(want[x], p.Iteration)
		}
	}
	if len(want[pair.D]) != 7 || len(want[pair.DPrime]) != 9 {
		t.Fatalf("schedules %v and %v, expected 7 and 9 releases", want[pair.D], want[pair.DPrime])
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				x := pair.D
				if (i+w)&1 == 1 {
					x = pair.DPrime
				}
				got, err := c.releaseIterations(x)
				if err != nil || !slices.Equal(got, want[x]) {
					errs <- x.Name
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for name := range errs {
		t.Errorf("%s: cached release iterations differ from Points", name)
	}
	for _, x := range []*dataset.Dataset{pair.D, pair.DPrime} {
		if n := releaseCount(t, c, x, 0); n != len(want[x]) {
			t.Errorf("%s: %d releases, Points has %d", x.Name, n, len(want[x]))
		}
	}
}

// A change of the release spec between runs (snapshots edited in place,
// another mode) is seen by the next run, never served stale.
func TestChainScheduleFollowsSpec(t *testing.T) {
	d, _ := syntheticLinReg(10, []float64{0.5}, 1, 1, 1)
	c := &Chain{Model: NewLinReg1D(1, 1), Init: Init{Theta: []float64{0}},
		Sampler: &SGLD{Step: StepSchedule{Eta: 1e-3}, Batch: 1, Scheme: Cyclic, Epochs: 4},
		Release: ReleaseSpec{Mode: ReleaseSnapshots, At: []int{5, 17, 30}}}
	check := func(want []int) {
		t.Helper()
		got, err := c.releaseIterations(d)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("release iterations %v (%v), want %v", got, err, want)
		}
	}
	check([]int{5, 17, 30})
	c.Release.At[1] = 20 // same length, same key: contents compared
	check([]int{5, 20, 30})
	c.Release = ReleaseSpec{Mode: ReleaseEpochs, Every: 2}
	check([]int{20, 40})
	c.Sampler.(*SGLD).Epochs = 6
	check([]int{20, 40, 60})
	// Many specs in turn: each served right, and the cache stays bounded.
	for every := 1; every <= 3*maxSchedules; every++ {
		c.Release = ReleaseSpec{Mode: ReleaseTrajectory, Every: every}
		var want []int
		for k := every; k <= 60; k += every {
			want = append(want, k)
		}
		check(want)
	}
	if n := len(*c.schedules.Load()); n > maxSchedules {
		t.Errorf("%d schedules cached, at most %d expected", n, maxSchedules)
	}
}

// Runs build no release labels: a run with 400 per-epoch releases
// allocates its state, the slice of its counters' snapshots at the
// releases and the buffer of the states it releases when it ends (a
// TrialSource lends all three: TestTrialSourceRunAllocatesNothing), not
// one label per release as resolving ReleaseSpec.Points on every run did
// (558 allocations).
func TestChainRunAllocations(t *testing.T) {
	d, _ := syntheticLinReg(5, []float64{0.5}, 1, 1, 1)
	c := &Chain{Model: NewLinReg1D(1, 1), Init: Init{FromPrior: true},
		Sampler: &SGLD{Step: StepSchedule{Eta: 1e-3}, Batch: 1, Scheme: Cyclic, Epochs: 400},
		Release: ReleaseSpec{Mode: ReleaseEpochs}}
	if err := c.Check(d); err != nil {
		t.Fatal(err)
	}
	rng := TrialRNG(1, dataset.SideD, 0, 0)
	emit := func(int, []float64) error { return nil }
	allocs := testing.AllocsPerRun(50, func() {
		if _, err := c.Run(context.Background(), Trial{RNG: rng}, d, emit); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("%.1f allocations per run", allocs)
	if allocs > 3 {
		t.Errorf("%.1f allocations per run of 400 releases, want ≤ 3", allocs)
	}
}
