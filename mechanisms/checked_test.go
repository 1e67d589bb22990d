package mechanisms

import (
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// MulCount and addCount agree with math/big on the edges of the int range:
// the product or sum is returned exactly when it fits, refused otherwise.
func TestCheckedCounts(t *testing.T) {
	vals := []int{0, 1, 2, 3, 10, 1 << 31, 1<<32 + 1, 3037000499, 3037000500, 922337203685477581, math.MaxInt / 2, math.MaxInt - 1, math.MaxInt, -1, math.MinInt}
	maxInt := big.NewInt(math.MaxInt)
	for _, a := range vals {
		for _, b := range vals {
			ba, bb := big.NewInt(int64(a)), big.NewInt(int64(b))
			wantOK := a >= 0 && b >= 0
			p := new(big.Int).Mul(ba, bb)
			okP := wantOK && p.Cmp(maxInt) <= 0
			if got, ok := MulCount(a, b); ok != okP || (ok && int64(got) != p.Int64()) {
				t.Errorf("MulCount(%d, %d) = %d, %v; math/big says %s (fits: %v)", a, b, got, ok, p, okP)
			}
			s := new(big.Int).Add(ba, bb)
			okS := wantOK && s.Cmp(maxInt) <= 0
			if got, ok := addCount(a, b); ok != okS || (ok && int64(got) != s.Int64()) {
				t.Errorf("addCount(%d, %d) = %d, %v; math/big says %s (fits: %v)", a, b, got, ok, s, okS)
			}
		}
	}
}

// An epoch count that wrapped: 922337203685477581 epochs of 20 batches is
// 2^64 + 4 iterations, which became a run of 4 iterations (and "audit
// bounds" stated theorems for 4 iterations).
// Iterations saturates instead, and Check refuses it naming the field and
// the 2^40 limit.
func TestSGLDEpochsOverflow(t *testing.T) {
	epochs := 922337203685477581
	if wrapped := uint64(epochs) * 20; wrapped != 4 {
		t.Fatalf("the unchecked product is %d, not 4", wrapped)
	}
	d := &dataset.Dataset{Name: "d", Records: make([]dataset.Record, 20)}
	for i := range d.Records {
		d.Records[i] = dataset.Record{X: []float64{1}, Y: 1}
	}
	s := &SGLD{Step: StepSchedule{Eta: 0.01}, Batch: 1, Scheme: Cyclic, Epochs: epochs}
	if got := s.Iterations(d); got != math.MaxInt {
		t.Errorf("Iterations = %d, want saturation at MaxInt", got)
	}
	err := s.Check(NewLinReg1D(1, 1), d)
	if err == nil || !strings.Contains(err.Error(), "Epochs: a run of more than 2^40 iterations is refused (epochs × ⌈n/batch⌉ = 922337203685477581 × 20)") {
		t.Errorf("Check: %v", err)
	}
	s = &SGLD{Step: StepSchedule{Eta: 0.01}, Batch: 1, Scheme: Cyclic, Iters: MaxIterations + 1}
	if err := s.Check(NewLinReg1D(1, 1), d); err == nil || !strings.Contains(err.Error(), "Iters: must be in [1, 2^40]") {
		t.Errorf("Check: %v", err)
	}
}

// Release schedules never wrap: a stride near the int range is refused
// with the number of epochs or iterations the run has, and every point of
// a schedule that is accepted lies in [1, total] with a positive epoch.
func TestReleaseScheduleOverflow(t *testing.T) {
	for _, c := range []struct {
		spec        ReleaseSpec
		total, per  int
		want        string
		points      int
		lastEpoch   int
		lastIterate int
	}{
		{ReleaseSpec{Mode: ReleaseEpochs, Every: 4611686018427387904}, 40, 4, "release.every: must be at most the run's 10 epochs, got 4611686018427387904", 0, 0, 0},
		{ReleaseSpec{Mode: ReleaseTrajectory, Every: math.MaxInt}, 40, 4, "release.every: must be at most the run's 40 iterations, got 9223372036854775807", 0, 0, 0},
		// A total near the int range: epochs e·per must stop before
		// wrapping, and the stride is bounded by the point limit.
		{ReleaseSpec{Mode: ReleaseEpochs, Every: math.MaxInt / 3}, math.MaxInt, 2, "", 1, math.MaxInt / 3, math.MaxInt / 3 * 2},
		{ReleaseSpec{Mode: ReleaseTrajectory, Every: math.MaxInt / 2}, math.MaxInt, 1, "", 2, 0, math.MaxInt / 2 * 2},
		{ReleaseSpec{Mode: ReleaseEpochs, Every: 3}, 40, 4, "", 3, 9, 36},
	} {
		pts, err := c.spec.Points(c.total, c.per)
		if c.want != "" {
			if err == nil || yamlText(err, "release") != c.want {
				t.Errorf("%+v: error %v, want %q", c.spec, err, c.want)
			}
			continue
		}
		if err != nil || len(pts) != c.points {
			t.Errorf("%+v on %d: %d points, %v; want %d", c.spec, c.total, len(pts), err, c.points)
			continue
		}
		for _, p := range pts {
			if p.Iteration < 1 || p.Iteration > c.total || p.Epoch < 0 {
				t.Errorf("%+v: point %+v outside the run", c.spec, p)
			}
		}
		last := pts[len(pts)-1]
		if last.Epoch != c.lastEpoch || last.Iteration != c.lastIterate {
			t.Errorf("%+v: last point %+v, want epoch %d iteration %d", c.spec, last, c.lastEpoch, c.lastIterate)
		}
	}
}

// The exact sampler's epochs × n (up to 10⁶ × 2^53) is checked.
func TestExactCounterexampleOverflow(t *testing.T) {
	m := closedform.Counterexample{N: 1 << 53, Alpha: 1, Beta: 1, XH: 1e-9, C: 1, Eta: 1e-20}
	_, err := NewExactCounterexample(m, 1_000_000, ReleaseSpec{Mode: ReleaseFinal})
	if err == nil || !strings.Contains(err.Error(), "epochs: epochs × n = 1000000 × 9007199254740992 iterations overflow") {
		t.Errorf("error %v", err)
	}
}

// Counters summed over many runs saturate instead of wrapping negative.
func TestInfoAddSaturates(t *testing.T) {
	var i Info
	i.Add(Info{Iterations: math.MaxInt - 5, GradEvals: 7})
	i.Add(Info{Iterations: 10, GradEvals: 8})
	if i.Iterations != math.MaxInt || i.GradEvals != 15 {
		t.Errorf("got %+v", i)
	}
	// The per-release snapshots too.
	var s Info
	s.Add(Info{PerRelease: []Snapshot{{Iterations: 3, Accepted: math.MaxInt - 1, Runs: 1}}})
	s.Add(Info{PerRelease: []Snapshot{{Iterations: 3, Accepted: 5, Runs: 1}}})
	if p := s.PerRelease[0]; p.Accepted != math.MaxInt || p.Iterations != 6 || p.Runs != 2 {
		t.Errorf("snapshot sum %+v", p)
	}
}

// Run costs follow the per-sampler formulas of docs/derivations/
// work-limits.md, evaluated here by hand for small shapes (n = 100
// records, a 3-dimensional linear regression, 50 iterations, 2 release
// points: the releases add 2·3 units).
func TestRunCostFormulas(t *testing.T) {
	d := &dataset.Dataset{Virtual: 100}
	m := LinReg{D: 3, Alpha: 1, Beta: 1}
	rel := ReleaseSpec{Mode: ReleaseSnapshots, At: []int{10, 50}}
	for _, c := range []struct {
		s    Sampler
		want float64
	}{
		// 50 · (b·dim + dim + b) with b = 10.
		{&SGLD{Batch: 10, Scheme: Reshuffle, Iters: 50}, 50*(10*3+3+10) + 6},
		// Poisson draws one uniform per record: 50 · (10·3 + 3 + 100).
		{&SGLD{Batch: 10, Scheme: Poisson, Iters: 50}, 50*(10*3+3+100) + 6},
		// Full gradient: 50 · (100·3 + 2·3).
		{&ULA{Iters: 50}, 50*(100*3+6) + 6},
		{&DPPenalty{Iters: 50}, 50*(100*3+6) + 6},
		// L = 4: 50 · ((4+1)·100·3 + 100·3 + 2·5·3).
		{&DPHMC{Iters: 50, LeapfrogSteps: 4}, 50*(5*300+300+30) + 6},
		// Subsampled Barker: both states on b = 20 records and an index
		// each: 50 · (20·(2·3+1) + 2·3).
		{&DPBarker{Iters: 50, Batch: 20}, 50*(20*7+6) + 6},
		{&DPBarker{Iters: 50}, 50*(100*3+6) + 6},
	} {
		ch := &Chain{Model: m, Sampler: c.s, Release: rel}
		if got := RunCost(ch, d); got != c.want {
			t.Errorf("%s: RunCost = %g, want %g", c.s.Name(), got, c.want)
		}
	}
	// The Gaussian query: one pass over the records (100·3) plus dim,
	// one iteration, one release of 3.
	gq := &Chain{Model: m, Sampler: &GaussianQuery{Sigma: 1}, Release: ReleaseSpec{Mode: ReleaseFinal}}
	if got := RunCost(gq, d); got != 100*3+3+3 {
		t.Errorf("Gaussian query: RunCost = %g", got)
	}
}
