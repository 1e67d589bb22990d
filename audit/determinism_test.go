package audit_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// noise is a one-release Gaussian mechanism on the records' sum; global
// draws its noise from math/rand/v2's global generator (the mistake the
// determinism check is for), otherwise from the trial's RNG.
type noise struct {
	global bool
	mu     sync.Mutex
	calls  map[int]int // runs per trial index, when not nil
}

func (*noise) Dim() int { return 1 }

func (*noise) Points(*dataset.Dataset) ([]mechanisms.ReleasePoint, error) {
	return []mechanisms.ReleasePoint{{Iteration: 1, Label: "final"}}, nil
}

func (m *noise) Run(_ context.Context, t mechanisms.Trial, d *dataset.Dataset, emit mechanisms.Emit) (mechanisms.Info, error) {
	if m.calls != nil {
		m.mu.Lock()
		m.calls[t.Index]++
		m.mu.Unlock()
	}
	z := t.RNG.NormFloat64()
	if m.global {
		z = rand.NormFloat64()
	}
	for _, r := range d.Records {
		z += r.X[0]
	}
	return mechanisms.Info{}, emit(0, []float64{z})
}

func noiseTarget(t *testing.T, m mechanisms.Mechanism) audit.Target {
	t.Helper()
	d := &dataset.Dataset{Name: "D", Records: []dataset.Record{{X: []float64{0.5}}, {X: []float64{-1}}}}
	pair, err := dataset.Neighbour(d, dataset.ReplaceOne, 0, dataset.Record{X: []float64{1.5}})
	if err != nil {
		t.Fatal(err)
	}
	return audit.Target{Name: "noise", Mechanism: m, Pair: pair}
}

// A mechanism drawing from the global generator is refused by default,
// with one line naming the trial and the values that differed.
func TestDeterminismRefusesGlobalRNG(t *testing.T) {
	_, err := audit.Run(context.Background(), noiseTarget(t, &noise{global: true}),
		audit.Options{Trials: 200, Seed: 1}, audit.Execution{Workers: 2})
	if !errors.Is(err, audit.ErrNotDeterministic) {
		t.Fatalf("err = %v, want one wrapping ErrNotDeterministic", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "trial 50 (on ") || !strings.Contains(msg, `at release "final" coordinate 0`) {
		t.Errorf("error %q: want one line naming trial 50 (the first checked of 200) and the release", msg)
	}
}

// The same mechanism drawing from its trial's RNG passes, and no warning
// or counter appears; DeterminismNoted lets the global one run, with a
// warning and a count of the two checked trials; DeterminismUnchecked
// says nothing.
func TestDeterminismPolicies(t *testing.T) {
	for _, c := range []struct {
		name    string
		global  bool
		policy  audit.DeterminismPolicy
		counted int64
	}{
		{"deterministic", false, audit.DeterminismRefused, 0},
		{"global, noted", true, audit.DeterminismNoted, audit.DeterminismChecks},
		{"global, unchecked", true, audit.DeterminismUnchecked, 0},
	} {
		r, err := audit.Run(context.Background(), noiseTarget(t, &noise{global: c.global}),
			audit.Options{Trials: 200, Seed: 1}, audit.Execution{Workers: 2, Determinism: c.policy})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := r.Info.Counters[audit.DeterminismCounter]; got != c.counted {
			t.Errorf("%s: counter %s = %d, want %d", c.name, audit.DeterminismCounter, got, c.counted)
		}
		warned := false
		for _, w := range r.Warnings {
			warned = warned || strings.Contains(w, "run again to check determinism")
		}
		if warned != (c.counted > 0) {
			t.Errorf("%s: warnings %q (want a determinism warning: %v)", c.name, r.Warnings, c.counted > 0)
		}
	}
}

// Each checked trial is run twice more exactly once per audit, whatever
// the shard layout: two halves simulated apart run every trial once, the
// reference trial 0 once per half, and the two checked trials twice more.
func TestDeterminismChecksEachTrialOnce(t *testing.T) {
	const n = 100
	m := &noise{calls: map[int]int{}}
	a, err := audit.New(noiseTarget(t, m), audit.Options{Trials: n, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if a, err = a.WithExecution(audit.Execution{Workers: 2}); err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]int{{0, n / 2}, {n / 2, n}} {
		if _, err := a.Simulate(context.Background(), r[0], r[1]); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		want := 1
		switch i {
		case 0:
			want = 3 // the reference in each half, and the trial itself
		case n / 4, 3 * n / 4:
			want = 3
		}
		if m.calls[i] != want {
			t.Errorf("trial %d ran %d times, want %d", i, m.calls[i], want)
		}
	}
}

// An out-of-range policy is a field error naming Determinism.
func TestDeterminismPolicyValidated(t *testing.T) {
	err := audit.Execution{Determinism: 7}.Validate()
	if err == nil || !strings.Contains(err.Error(), "Determinism") {
		t.Errorf("err = %v, want one naming Determinism", err)
	}
}
