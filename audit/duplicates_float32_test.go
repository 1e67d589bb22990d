package audit

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// float32Rows draws n one-value rows of float32(shift + N(0, 1)): what a
// sampler computing in float32 releases.
func float32Rows(rng *rand.Rand, n int, shift float64) [][]float64 {
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = []float64{float64(float32(shift + rng.NormFloat64()))}
	}
	return rows
}

// plantCopies overwrites k rows of dst with copies of k distinct rows of
// src; same says that src is dst, and then no copy lands on an original.
func plantCopies(rng *rand.Rand, src, dst [][]float64, k int, same bool) {
	to, from := rng.Perm(len(dst)), rng.Perm(len(src))
	for j := 0; j < k; j++ {
		o := from[j]
		if same {
			o = to[len(to)-1-j]
		}
		dst[to[j]] = append([]float64(nil), src[o]...)
	}
}

// Independent float32 runs repeat by chance: 10⁴ float32 N(0, 1) values
// per dataset hold about 1.4 repeats within the datasets (C(10⁴, 2) pairs
// × Σ p² ≈ 1.4·10⁻⁸ each, docs/derivations/duplicate-rows.md; a numpy
// cross-check: np.float32 draws of 8 seeds, len(x) − len(np.unique(x))).
// Under RepeatsRefused — a program sampler's policy — the trials of such
// rows are accepted with their repeats noted; the same rows with 1% of
// them copied over others are refused. On the original code every seed
// with a chance repeat was refused.
func TestFloat32ChanceRepeatsAccepted(t *testing.T) {
	const n = 10000
	withRepeats := 0
	for seed := uint64(1); seed <= 8; seed++ {
		rng := rand.New(rand.NewPCG(seed, 32))
		d, dp := float32Rows(rng, n, 0), float32Rows(rng, n, 0)
		a, tr := simulateSamples(t, samplesOf(d, dp, 1, 1), Options{Seed: seed, Repeats: RepeatsRefused})
		rr, ok := tr.RepeatedRuns()
		if !ok {
			t.Fatal("the trials carry no hashes")
		}
		if rr.Any() {
			withRepeats++
		}
		if _, err := a.checkRepeats(tr); err != nil {
			t.Errorf("seed %d: independent float32 rows (%v) refused: %v", seed, rr, err)
		}
		plantCopies(rng, d, d, n/100, true)
		a, tr = simulateSamples(t, samplesOf(d, dp, 1, 1), Options{Seed: seed, Repeats: RepeatsRefused})
		var re *RepeatedRunsError
		if _, err := a.checkRepeats(tr); !errors.As(err, &re) || re.Duplicates.WithinD < n/100 {
			t.Errorf("seed %d: 1%% of D's rows copied: %v", seed, err)
		}
	}
	// About 1 − e^(−1.4) ≈ 75% of the seeds repeat by chance.
	if withRepeats < 3 {
		t.Errorf("only %d of 8 seeds repeat by chance: the test shows nothing", withRepeats)
	}
}

// float32Mech releases float32(side + N(0, 1)) drawn from the trial's
// stream — a program sampler computing in float32 — or, with seedless
// set, from a stream that ignores the trial (a sampler with a fixed seed).
type float32Mech struct{ seedless bool }

func (float32Mech) Dim() int { return 1 }
func (float32Mech) Points(*dataset.Dataset) ([]mechanisms.ReleasePoint, error) {
	return []mechanisms.ReleasePoint{{Iteration: 1, Label: "final"}}, nil
}
func (m float32Mech) Run(_ context.Context, t mechanisms.Trial, _ *dataset.Dataset, emit mechanisms.Emit) (mechanisms.Info, error) {
	rng := t.RNG
	if m.seedless {
		rng = rand.New(rand.NewPCG(1234, 0))
	}
	return mechanisms.Info{}, emit(0, []float64{float64(float32(float64(t.Side) + rng.NormFloat64()))})
}

// A mechanism releasing float32 values, audited under RepeatsRefused (the
// policy of program samplers) with 20,000 trials, is not refused for any
// of six seeds, although its runs repeat by chance (the original code
// refused 5 of these 6); one that ignores its seed still is.
func TestFloat32MechanismNotRefused(t *testing.T) {
	const n = 20000
	repeated := 0
	for seed := uint64(1); seed <= 6; seed++ {
		o := Options{Trials: n, Seed: seed, Assignment: AssignBalanced, Repeats: RepeatsRefused}
		r, err := Run(context.Background(), Target{Name: "float32", Mechanism: float32Mech{}}, o, Execution{Workers: 2})
		if err != nil {
			t.Errorf("seed %d: %v", seed, err)
			continue
		}
		if r.Duplicates != nil {
			repeated++
			if len(r.Notes) == 0 || !strings.Contains(r.Notes[len(r.Notes)-1], "Repeated runs:") {
				t.Errorf("seed %d: repeats %+v without a note: %q", seed, *r.Duplicates, r.Notes)
			}
		}
	}
	if repeated < 3 {
		t.Errorf("only %d of 6 seeds repeat by chance: the test shows nothing", repeated)
	}
	o := Options{Trials: 200, Seed: 1, Assignment: AssignBalanced, Repeats: RepeatsRefused}
	_, err := Run(context.Background(), Target{Name: "fixed seed", Mechanism: float32Mech{seedless: true}}, o, Execution{Workers: 2})
	var re *RepeatedRunsError
	if !errors.As(err, &re) || re.Duplicates != (Duplicates{WithinD: 99, WithinDPrime: 99}) {
		t.Errorf("a float32 sampler ignoring its seed: %v", err)
	}
}
