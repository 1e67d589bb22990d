package audit

import (
	"context"
	"math"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/synthetic"
)

// StoreBytes is the size of the store a simulation really fills: the
// float32 features, the sides and, when repeats are looked for, the
// hashes and probe values; MemoryBytes adds the analysis of one release
// point per worker; both saturate instead of overflowing.
func TestStoreBytesMatchesTheStore(t *testing.T) {
	g, _ := mechanisms.NewGauss([]float64{0, 0}, 3, []float64{1, 0.3, 0.3, 1})
	d, _ := synthetic.Gauss(20, []float64{0.5, -0.5}, []float64{1, 0.3, 0.3, 1}, 3)
	pair, _ := dataset.Neighbour(d, dataset.ReplaceOne, 0, dataset.Record{X: []float64{3, 3}})
	ch := &mechanisms.Chain{Model: g, Sampler: &mechanisms.DPPenalty{Iters: 30, ProposalSD: []float64{0.2}, ClipLLR: 3, Tau: 0.5},
		Init: mechanisms.Init{Theta: []float64{0, 0}}, Release: mechanisms.ReleaseSpec{Mode: mechanisms.ReleaseTrajectory, Every: 10}}
	for _, rep := range []RepeatPolicy{RepeatsIgnored, RepeatsNoted} {
		a, err := New(Target{Name: "memory", Mechanism: ch, Pair: pair}, Options{Trials: 40, Seed: 4, Delta: 1e-5, Repeats: rep})
		if err != nil {
			t.Fatal(err)
		}
		a = withWorkers(t, a, 2)
		tr, err := a.Simulate(context.Background(), 0, 40)
		if err != nil {
			t.Fatal(err)
		}
		held := 4*len(tr.X) + len(tr.Side) + 8*len(tr.Hash) + 8*len(tr.Probe)
		if got := a.StoreBytes(40); got != int64(held) {
			t.Errorf("repeats %d: StoreBytes(40) = %d, the store holds %d bytes", rep, got, held)
		}
		if rep != RepeatsIgnored && len(tr.Hash) == 0 {
			t.Errorf("repeats %d: no hashes kept", rep)
		}
		work := int64(40 * analysisBytesPerValue * tr.F * min(2, tr.P))
		if got := a.MemoryBytes(40); got != int64(held)+work {
			t.Errorf("repeats %d: MemoryBytes(40) = %d, want %d + %d", rep, got, held, work)
		}
		if a.StoreBytes(0) != 0 || a.MemoryBytes(-1) != 0 {
			t.Errorf("no trials: %d and %d bytes", a.StoreBytes(0), a.MemoryBytes(-1))
		}
		if got := a.MemoryBytes(math.MaxInt); got != math.MaxInt64 {
			t.Errorf("MemoryBytes(MaxInt) = %d, want saturation", got)
		}
	}
}
