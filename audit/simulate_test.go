package audit

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// The accuracy the engine sums per release point (each worker scoring the
// whole test set as products through its own Scorer) is the count of
// PredictClass record by record, over every trial run again here (on the
// side the trial records): softmax SGLD on 200 digits, 150 held-out
// digits, 40 trials on 2 workers.
func TestAccuracyCountsMatchPredictClass(t *testing.T) {
	all, err := dataset.ReadCSVFile("../testdata/digits.csv.gz", dataset.DigitsOptions())
	if err != nil {
		t.Fatal(err)
	}
	d := &dataset.Dataset{Name: "digits-200", Records: all.Records[:200]}
	test := &dataset.Dataset{Name: "digits-test-150", Records: all.Records[200:350]}
	pair, err := dataset.Neighbour(d, dataset.ReplaceOne, 0, all.Records[400])
	if err != nil {
		t.Fatal(err)
	}
	m := mechanisms.Softmax{Features: 64, Classes: 10, Alpha: 1}
	target := Target{Name: "digits-accuracy", Pair: pair, Accuracy: &Accuracy{Model: m, Test: test},
		Mechanism: &mechanisms.Chain{Model: m, Init: mechanisms.Init{FromPrior: true},
			Sampler: &mechanisms.SGLD{Step: mechanisms.StepSchedule{Eta: 0.01}, Batch: 16, Scheme: mechanisms.Reshuffle, Epochs: 3},
			Release: mechanisms.ReleaseSpec{Mode: mechanisms.ReleaseEpochs}}}
	const trials = 40
	a, err := New(target, Options{Trials: trials, Seed: 3, Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	a = withWorkers(t, a, 2)
	tr, err := a.Simulate(context.Background(), 0, trials)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]int64, len(a.Points()))
	for i := 0; i < trials; i++ {
		side := a.side(i)
		if tr.Side[i] != side {
			t.Errorf("trial %d recorded on %s, drawn on %s", i, tr.Side[i], side)
		}
		data := pair.D
		if side == dataset.SideDPrime {
			data = pair.DPrime
		}
		_, err := target.Mechanism.Run(context.Background(), mechanisms.NewTrial(3, side, i), data, func(k int, theta []float64) error {
			for _, r := range test.Records {
				if mechanisms.PredictClass(m, theta, r.X) == int(r.Y) {
					want[k]++
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if tr.TestSize != test.Len() || len(tr.Correct) != len(want) {
		t.Fatalf("test size %d, %d counts; want %d and %d", tr.TestSize, len(tr.Correct), test.Len(), len(want))
	}
	for k := range want {
		if tr.Correct[k] != want[k] {
			t.Errorf("release %d: %d correct, PredictClass counts %d", k, tr.Correct[k], want[k])
		}
	}
	if want[len(want)-1] <= int64(trials*test.Len()/10) {
		t.Errorf("final accuracy %d/%d is chance level: the comparison says little", want[len(want)-1], trials*test.Len())
	}
}

// simulateAllocs returns the allocations of Simulate over n trials of
// batch-1 cyclic SGLD on a 10-record counterexample pair with 20 per-epoch
// releases (sgld-interim's shape) on one worker.
func simulateAllocs(t *testing.T, n int) float64 {
	pair, err := dataset.CounterexamplePair(10, 1.8, 25)
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Target{Name: "interim", Pair: pair, Mechanism: &mechanisms.Chain{
		Model:   mechanisms.NewLinReg1D(2, 1),
		Sampler: &mechanisms.SGLD{Step: mechanisms.StepSchedule{Eta: 0.0017}, Batch: 1, Scheme: mechanisms.Cyclic, Epochs: 20},
		Init:    mechanisms.Init{FromPrior: true}, Release: mechanisms.ReleaseSpec{Mode: mechanisms.ReleaseEpochs}}},
		Options{Trials: n, Seed: 1, Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	return testing.AllocsPerRun(3, func() {
		if _, err := a.Simulate(context.Background(), 0, n); err != nil {
			t.Fatal(err)
		}
	})
}

// A trial allocates only its random streams (two generators for the
// trial, one for its side), its state and the snapshots of its counters at
// the releases (one slice): the release schedule, labels,
// feature buffer, emit function, normal generator and visiting order are
// not rebuilt per trial (42 allocations a trial when they were). Counted
// as the difference between 400 and 200 trials over 200.
func TestSimulateAllocationsPerTrial(t *testing.T) {
	per := (simulateAllocs(t, 400) - simulateAllocs(t, 200)) / 200
	t.Logf("%.2f allocations per trial", per)
	if per > 9 {
		t.Errorf("%.2f allocations per trial, want ≤ 9", per)
	}
}

// A test set the classifier cannot score is an error naming the field,
// not a silent miscount; an empty one reports no accuracy, as before.
func TestAccuracyTestSetChecked(t *testing.T) {
	d := &dataset.Dataset{Name: "two", Records: []dataset.Record{{X: []float64{0.1, 0.2}, Y: 0}, {X: []float64{-0.3, 0.4}, Y: 1}}}
	pair, err := dataset.Neighbour(d, dataset.ReplaceOne, 0, dataset.Record{X: []float64{1, 1}, Y: 1})
	if err != nil {
		t.Fatal(err)
	}
	m := mechanisms.Softmax{Features: 2, Classes: 2, Alpha: 1}
	target := func(test *dataset.Dataset) Target {
		return Target{Name: "accuracy-check", Pair: pair, Accuracy: &Accuracy{Model: m, Test: test},
			Mechanism: &mechanisms.Chain{Model: m, Init: mechanisms.Init{FromPrior: true},
				Sampler: &mechanisms.SGLD{Step: mechanisms.StepSchedule{Eta: 0.01}, Batch: 1, Scheme: mechanisms.Cyclic, Epochs: 1},
				Release: mechanisms.ReleaseSpec{Mode: mechanisms.ReleaseFinal}}}
	}
	bad := &dataset.Dataset{Name: "bad-labels", Records: []dataset.Record{{X: []float64{0, 0}, Y: 2}}}
	a, err := New(target(bad), Options{Trials: 20, Seed: 1, Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Simulate(context.Background(), 0, 20); err == nil || !strings.Contains(err.Error(), "Target.Accuracy.Test") || !strings.Contains(err.Error(), "[0, 2)") {
		t.Errorf("label 2 of 2 classes: error %v", err)
	}
	a, err = New(target(&dataset.Dataset{Name: "empty"}), Options{Trials: 20, Seed: 1, Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := a.Simulate(context.Background(), 0, 20)
	if err != nil || tr.TestSize != 0 {
		t.Errorf("empty test set: %v, test size %v", err, tr)
	}
}

// A feature that differs from trial 0's by more than float32 can hold, or
// that is not finite, stops the simulation with an error naming the trial,
// the release and the value — never a store of ±Inf or NaN that an attack
// would read as data. Both the short path of the release function (θ as the
// feature) and a feature map go through the check.
func TestFeatureBeyondStoreRangeRefused(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want string
	}{
		{1e39, "trial 7 (on D′): feature 0 at release 0 differs from trial 0's by 1e+39, beyond the feature store's range"},
		{-1e39, "differs from trial 0's by -1e+39"},
		{math.NaN(), `trial 7 (on D′): feature of release "final" is not finite (NaN)`},
		{math.Inf(1), "is not finite (+Inf)"},
	} {
		m := constMech{value: func(i int) float64 {
			if i == 7 {
				return c.x
			}
			return float64(i)
		}}
		for _, f := range []attacks.FeatureMap{attacks.Theta{D: 1}, attacks.Coords{Idx: []int{0}}} {
			o := Options{Trials: 40, Seed: 3, Assignment: AssignBalanced, Features: f}
			_, err := Run(context.Background(), Target{Name: "big", Mechanism: m}, o, Execution{Workers: 2})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("x = %g, features %T: error %v, want it to contain %q", c.x, f, err, c.want)
			}
		}
	}
}

// Simulate run in blocks (one reused block store, copied into the result)
// gives the trials it gives at once, byte for byte as a trials file, for
// the whole audit and for a range of it, with and without the hashes and
// probe values of repeat detection, and with blocks that do not divide the
// range.
func TestSimulateInBlocks(t *testing.T) {
	for _, repeats := range []RepeatPolicy{RepeatsIgnored, RepeatsNoted} {
		o := gaussOptions(11, 600, "threshold")
		o.ID, o.Repeats = "test-config", repeats
		a, err := New(gaussTarget(t, 1), o)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range [][2]int{{0, 600}, {150, 560}} {
			want, err := a.simulate(context.Background(), r[0], r[1], nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range []int{97, 200} {
				got, err := a.simulateInBlocks(context.Background(), r[0], r[1], nil, b)
				if err != nil {
					t.Fatal(err)
				}
				if got.Lo != r[0] || got.Hi != r[1] || (repeats != RepeatsIgnored) != (got.Hash != nil && got.Probe != nil) {
					t.Fatalf("repeats %v, range %v, blocks of %d: trials [%d, %d), hashes %v", repeats, r, b, got.Lo, got.Hi, got.Hash != nil)
				}
				if !bytes.Equal(partBytes(t, got), partBytes(t, want)) {
					t.Errorf("repeats %v, range %v, blocks of %d: the trials differ from a run at once", repeats, r, b)
				}
			}
		}
	}
}
