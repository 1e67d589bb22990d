package mechanisms

import (
	"context"
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// recorderCases are the mechanisms that can keep their releases in a
// Recorder: a Chain of SGLD on the affine batch-1 path (cyclic and with
// replacement), on the general path (batch 5), and the exact
// counterexample sampler; with the dataset each runs on.
func recorderCases(t *testing.T) []struct {
	name string
	m    Mechanism
	d    *dataset.Dataset
} {
	t.Helper()
	d, _ := syntheticLinReg(20, []float64{0.5}, 1, 1, 1)
	chain := func(batch int, scheme IndexScheme) *Chain {
		c := &Chain{Model: NewLinReg1D(1, 1), Init: Init{FromPrior: true},
			Sampler: &SGLD{Step: StepSchedule{Eta: 1e-3}, Batch: batch, Scheme: scheme, Epochs: 4},
			Release: ReleaseSpec{Mode: ReleaseEpochs}}
		if err := c.Check(d); err != nil {
			t.Fatal(err)
		}
		return c
	}
	model := closedform.Counterexample{N: 6, Alpha: 2, Beta: 1, XH: 1.8, C: 3, Eta: 0.4 / (2 + 6*1.8*1.8)}
	ex, err := NewExactCounterexample(model, 4, ReleaseSpec{Mode: ReleaseEpochs})
	if err != nil {
		t.Fatal(err)
	}
	pair, _ := dataset.CounterexamplePair(6, 1.8, 3)
	return []struct {
		name string
		m    Mechanism
		d    *dataset.Dataset
	}{
		{"sgld-batch1-cyclic", chain(1, Cyclic), d},
		{"sgld-batch1-replacement", chain(1, WithReplacement), d},
		{"sgld-batch5", chain(5, Reshuffle), d},
		{"exact-counterexample", ex, pair.D},
	}
}

// runReleases runs trial i of m and returns its releases, as Emit saw
// them, and its Info (snapshots copied).
func runReleases(t *testing.T, m Mechanism, tr Trial, d *dataset.Dataset, emit Emit) ([]float64, Info) {
	t.Helper()
	var out []float64
	if emit == nil {
		emit = func(_ int, th []float64) error { out = append(out, th...); return nil }
	}
	info, err := m.Run(context.Background(), tr, d, emit)
	if err != nil {
		t.Fatal(err)
	}
	info.PerRelease = slices.Clone(info.PerRelease)
	return out, info
}

// TestRecorderKeepsWhatEmitWould runs every mechanism that uses a Recorder
// twice on the same trials — once with Emit, once from a TrialSource whose
// recorder stands in for the Emit passed — and checks that the recorder
// holds exactly float32(θ − ref) of every release Emit saw, that Emit is
// then never called, and that the Info is the same.
func TestRecorderKeepsWhatEmitWould(t *testing.T) {
	for _, c := range recorderCases(t) {
		src := NewTrialSource()
		var calls int
		emit := Emit(func(int, []float64) error { calls++; return nil })
		for i := 0; i < 5; i++ {
			want, wantInfo := runReleases(t, c.m, NewTrial(3, dataset.SideD, i), c.d, nil)
			ref := make([]float64, len(want))
			for k := range ref {
				ref[k] = float64(k) - 0.25 // any reference
			}
			rec := &Recorder{Out: make([]float32, len(want)), Ref: ref, F: 1, For: emit}
			src.SetRecorder(rec)
			_, gotInfo := runReleases(t, c.m, src.Trial(3, dataset.SideD, i), c.d, emit)
			if calls != 0 {
				t.Fatalf("%s trial %d: Emit called %d times beside the recorder", c.name, i, calls)
			}
			if rec.Stored() != len(want) || src.Stored() != len(want) {
				t.Fatalf("%s trial %d: %d releases stored, want %d", c.name, i, rec.Stored(), len(want))
			}
			for k, th := range want {
				if g, w := rec.Out[k], float32(th-ref[k]); g != w {
					t.Fatalf("%s trial %d release %d: stored %g, want %g", c.name, i, k, g, w)
				}
			}
			if !reflect.DeepEqual(gotInfo, wantInfo) {
				t.Fatalf("%s trial %d: Info %+v with the recorder, %+v without", c.name, i, gotInfo, wantInfo)
			}
		}
	}
}

// TestRecorderNeverBypassesAWrapper checks that a run handed an Emit other
// than the recorder's own — a wrapper that sees or changes the releases,
// even one calling the recorder's Emit — calls that Emit for every release
// and stores nothing.
func TestRecorderNeverBypassesAWrapper(t *testing.T) {
	for _, c := range recorderCases(t) {
		want, _ := runReleases(t, c.m, NewTrial(5, dataset.SideD, 1), c.d, nil)
		inner := Emit(func(int, []float64) error { return nil })
		rec := &Recorder{Out: make([]float32, len(want)), Ref: make([]float64, len(want)), F: 1, For: inner}
		src := NewTrialSource()
		src.SetRecorder(rec)
		var seen []float64
		wrapper := func(k int, th []float64) error { seen = append(seen, th...); return inner(k, th) }
		runReleases(t, c.m, src.Trial(5, dataset.SideD, 1), c.d, wrapper)
		if !slices.Equal(seen, want) || rec.Stored() != 0 {
			t.Fatalf("%s: the wrapper saw %v (want %v), the recorder kept %d", c.name, seen, want, rec.Stored())
		}
	}
}

// TestRecorderHandsBackWhatItCannotKeep checks that a release whose
// deviation from the reference is beyond float32's range, or not finite,
// goes to Emit (with its index, so that the caller can report it) and the
// others to the recorder.
func TestRecorderHandsBackWhatItCannotKeep(t *testing.T) {
	for _, c := range recorderCases(t) {
		recorderHandsBack(t, c.m, c.d)
	}
}

// recorderHandsBack is TestRecorderHandsBackWhatItCannotKeep for one
// mechanism.
func recorderHandsBack(t *testing.T, m Mechanism, d *dataset.Dataset) {
	want, _ := runReleases(t, m, NewTrial(7, dataset.SideD, 2), d, nil)
	for _, bad := range []float64{1e39, -1e39, math.Inf(1), math.NaN()} {
		var emitted []int
		emit := Emit(func(k int, _ []float64) error { emitted = append(emitted, k); return nil })
		ref := make([]float64, len(want))
		ref[2] = bad
		rec := &Recorder{Out: make([]float32, len(want)), Ref: ref, F: 1, For: emit}
		src := NewTrialSource()
		src.SetRecorder(rec)
		runReleases(t, m, src.Trial(7, dataset.SideD, 2), d, emit)
		if !slices.Equal(emitted, []int{2}) || rec.Stored() != len(want)-1 {
			t.Fatalf("reference %g at release 2: emitted %v, stored %d of %d", bad, emitted, rec.Stored(), len(want))
		}
	}
}

// TestRunSumMatchesInfoAdd adds runs whose snapshots repeat in groups,
// change, lengthen and shorten, with counts near the int range, and checks
// that RunSum's total equals Info.Add applied run by run.
func TestRunSumMatchesInfoAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	snaps := func(n, base int) []Snapshot {
		s := make([]Snapshot, n)
		for k := range s {
			s[k] = Snapshot{Iterations: 10 * (k + 1), GradEvals: base + k, Accepted: base % 3, Runs: 1}
		}
		return s
	}
	for _, big := range []int{0, math.MaxInt / 7, math.MaxInt / 2} {
		var want Info
		var sum RunSum
		for r := 0; r < 400; r++ {
			var o Info
			switch g := r / 25 % 4; g {
			case 0, 1:
				o.PerRelease = snaps(5, g) // a long group of identical runs
			case 2:
				o.PerRelease = snaps(3+rng.IntN(4), rng.IntN(3)) // changes from run to run
			}
			if len(o.PerRelease) > 0 {
				o.PerRelease[0].ClippedGrads = big
			}
			o.Iterations, o.GradEvals, o.Runs = 50, 50+big, 1
			o.Correct = []int64{int64(r % 2)}
			want.Add(o)
			sum.Add(&o)
		}
		if got := sum.Info(); !reflect.DeepEqual(got, want) {
			t.Fatalf("large count %d: RunSum gives %+v, Info.Add %+v", big, got, want)
		}
	}
}

// TestScaleCount checks scaleCount against exact products (math/big),
// saturated to the int range, on both signs and at the edges.
func TestScaleCount(t *testing.T) {
	vals := []int{0, 1, -1, 7, -7, 1 << 31, -(1 << 31), math.MaxInt / 3, math.MinInt / 3, math.MaxInt, math.MinInt}
	ms := []int{1, 2, 3, 1 << 20, 1 << 40, math.MaxInt}
	lo, hi := big.NewInt(math.MinInt), big.NewInt(math.MaxInt)
	for _, a := range vals {
		for _, m := range ms {
			p := new(big.Int).Mul(big.NewInt(int64(a)), big.NewInt(int64(m)))
			if p.Cmp(hi) > 0 {
				p = hi
			} else if p.Cmp(lo) < 0 {
				p = lo
			}
			if got := scaleCount(a, m); int64(got) != p.Int64() {
				t.Errorf("scaleCount(%d, %d) = %d, want %s", a, m, got, p)
			}
		}
	}
}

// TestShuffleOrderMatchesRandShuffle checks that shuffleOrder draws the
// same numbers and makes the same permutation as rand.Rand.Shuffle, so that
// the samplers' streams are those they had with Shuffle.
func TestShuffleOrderMatchesRandShuffle(t *testing.T) {
	for n := 0; n <= 40; n++ {
		for seed := uint64(0); seed < 5; seed++ {
			a := rand.New(rand.NewPCG(seed, uint64(n)))
			b := rand.New(rand.NewPCG(seed, uint64(n)))
			x, y := make([]int32, n), make([]int32, n)
			for i := range x {
				x[i], y[i] = int32(i), int32(i)
			}
			shuffleOrder(x, a)
			b.Shuffle(n, func(i, j int) { y[i], y[j] = y[j], y[i] })
			if !slices.Equal(x, y) || a.Uint64() != b.Uint64() {
				t.Fatalf("n = %d seed %d: %v, Shuffle %v (or the streams part)", n, seed, x, y)
			}
		}
	}
}
