package mechanisms

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"unsafe"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// Emit receives the k-th release of a run. theta is only valid during the
// call: copy what must be kept.
type Emit func(k int, theta []float64) error

// Info summarises one run: work done and the counters of the samplers that
// have an accept/reject step or clipping. Every counter is an integer, so
// that sums over runs do not depend on the order they are added in (the
// worker count, the shard layout, a resumption).
type Info struct {
	Iterations   int `json:"iterations"`
	Proposals    int `json:"proposals,omitempty"`
	Accepted     int `json:"accepted,omitempty"`
	ClippedGrads int `json:"clipped_grads,omitempty"`
	GradEvals    int `json:"grad_evals,omitempty"`
	ClippedLLRs  int `json:"clipped_llrs,omitempty"`
	LLREvals     int `json:"llr_evals,omitempty"`
	Projections  int `json:"projections,omitempty"`
	// VarianceCheckFailures counts Barker-test iterations whose minibatch
	// variance exceeded the noise budget.
	VarianceCheckFailures int `json:"variance_check_failures,omitempty"`
	// Correct, for a mechanism that measures its own releases on a held-out
	// test set, counts per release point the test records classified
	// correctly (the engine turns it into the test accuracy).
	Correct []int64 `json:"correct,omitempty"`
	// Counters holds further integer counters a mechanism reports under
	// names of its own (a program's info, say); integers, so that sums over
	// trials never depend on their order.
	Counters map[string]int64 `json:"counters,omitempty"`
	// Runs counts the runs summed into this Info when it is a per-release
	// snapshot (a sampler's own snapshot has Runs = 1); 0 otherwise.
	Runs int `json:"runs,omitempty"`
	// PerRelease[k] holds the cumulative counters of the run at its k-th
	// release (Iterations is then the release's iteration), so that a
	// report can give the acceptance rate and the clipped fractions of the
	// iterations between two releases. Samplers of this package fill it;
	// it is empty for a mechanism that does not. Sums over runs add it
	// entry by entry.
	PerRelease []Snapshot `json:"per_release,omitempty"`
}

// Snapshot holds the counters of Info at one release point: those of one
// run (Runs = 1) or their sum over runs. It has no per-release or named
// counters, and no pointers, so that recording one per release costs a
// run one small allocation the garbage collector never scans.
type Snapshot struct {
	Iterations            int `json:"iterations"`
	Proposals             int `json:"proposals,omitempty"`
	Accepted              int `json:"accepted,omitempty"`
	ClippedGrads          int `json:"clipped_grads,omitempty"`
	GradEvals             int `json:"grad_evals,omitempty"`
	ClippedLLRs           int `json:"clipped_llrs,omitempty"`
	LLREvals              int `json:"llr_evals,omitempty"`
	Projections           int `json:"projections,omitempty"`
	VarianceCheckFailures int `json:"variance_check_failures,omitempty"`
	Runs                  int `json:"runs,omitempty"`
}

// Add accumulates another snapshot, saturating like Info.Add.
func (s *Snapshot) Add(o Snapshot) {
	// The common case, every count of both below 2⁶² (none negative), has
	// no sum that can overflow: add without the per-field checks (the
	// engine adds one snapshot per release of every trial).
	if uint(s.Iterations|o.Iterations|s.Proposals|o.Proposals|s.Accepted|o.Accepted|
		s.ClippedGrads|o.ClippedGrads|s.GradEvals|o.GradEvals|s.ClippedLLRs|o.ClippedLLRs|
		s.LLREvals|o.LLREvals|s.Projections|o.Projections|
		s.VarianceCheckFailures|o.VarianceCheckFailures|s.Runs|o.Runs) < 1<<62 {
		s.Iterations += o.Iterations
		s.Proposals += o.Proposals
		s.Accepted += o.Accepted
		s.ClippedGrads += o.ClippedGrads
		s.GradEvals += o.GradEvals
		s.ClippedLLRs += o.ClippedLLRs
		s.LLREvals += o.LLREvals
		s.Projections += o.Projections
		s.VarianceCheckFailures += o.VarianceCheckFailures
		s.Runs += o.Runs
		return
	}
	s.Iterations = satAdd(s.Iterations, o.Iterations)
	s.Proposals = satAdd(s.Proposals, o.Proposals)
	s.Accepted = satAdd(s.Accepted, o.Accepted)
	s.ClippedGrads = satAdd(s.ClippedGrads, o.ClippedGrads)
	s.GradEvals = satAdd(s.GradEvals, o.GradEvals)
	s.ClippedLLRs = satAdd(s.ClippedLLRs, o.ClippedLLRs)
	s.LLREvals = satAdd(s.LLREvals, o.LLREvals)
	s.Projections = satAdd(s.Projections, o.Projections)
	s.VarianceCheckFailures = satAdd(s.VarianceCheckFailures, o.VarianceCheckFailures)
	s.Runs = satAdd(s.Runs, o.Runs)
}

// Snapshot returns the counters of i at a release point: its integer
// counters, with Runs = 1 and Iterations the release's iteration.
func (i *Info) Snapshot(iteration int) Snapshot {
	return Snapshot{
		Iterations: iteration, Proposals: i.Proposals, Accepted: i.Accepted,
		ClippedGrads: i.ClippedGrads, GradEvals: i.GradEvals,
		ClippedLLRs: i.ClippedLLRs, LLREvals: i.LLREvals,
		Projections: i.Projections, VarianceCheckFailures: i.VarianceCheckFailures,
		Runs: 1,
	}
}

// AcceptanceRate returns Accepted/Proposals, or NaN without proposals.
func (i Info) AcceptanceRate() float64 {
	if i.Proposals == 0 {
		return math.NaN()
	}
	return float64(i.Accepted) / float64(i.Proposals)
}

// Add accumulates another run's counters; a total beyond the int range
// saturates rather than wrapping to a negative count.
func (i *Info) Add(o Info) {
	i.addTotals(&o)
	if len(o.PerRelease) > len(i.PerRelease) {
		// A run that recorded no snapshot (a part written before they
		// existed, a foreign mechanism) adds nothing to them; each entry's
		// Runs says how many runs it sums.
		i.PerRelease = append(i.PerRelease, make([]Snapshot, len(o.PerRelease)-len(i.PerRelease))...)
	}
	for k := range o.PerRelease {
		i.PerRelease[k].Add(o.PerRelease[k])
	}
}

// addTotals is Add without the per-release snapshots.
func (i *Info) addTotals(o *Info) {
	i.Iterations = satAdd(i.Iterations, o.Iterations)
	i.Proposals = satAdd(i.Proposals, o.Proposals)
	i.Accepted = satAdd(i.Accepted, o.Accepted)
	i.ClippedGrads = satAdd(i.ClippedGrads, o.ClippedGrads)
	i.GradEvals = satAdd(i.GradEvals, o.GradEvals)
	i.ClippedLLRs = satAdd(i.ClippedLLRs, o.ClippedLLRs)
	i.LLREvals = satAdd(i.LLREvals, o.LLREvals)
	i.Projections = satAdd(i.Projections, o.Projections)
	i.VarianceCheckFailures = satAdd(i.VarianceCheckFailures, o.VarianceCheckFailures)
	if len(o.Correct) > 0 {
		if len(i.Correct) < len(o.Correct) {
			i.Correct = append(i.Correct, make([]int64, len(o.Correct)-len(i.Correct))...)
		}
		for k, c := range o.Correct {
			i.Correct[k] += c
		}
	}
	for k, v := range o.Counters {
		if i.Counters == nil {
			i.Counters = map[string]int64{}
		}
		i.Counters[k] += v
	}
	i.Runs = satAdd(i.Runs, o.Runs)
}

// RunSum adds up the Info of many runs, like Info.Add applied to each in
// turn, but with the per-release snapshots deferred: consecutive runs
// whose snapshots are identical — every run of a sampler without an
// accept/reject step or clipping, most runs of one with them — are
// counted and added once, multiplied by their number. Every counter is an
// integer, so the sum equals Info.Add's whatever the grouping. The zero
// value is an empty sum.
type RunSum struct {
	info Info       // the totals, with the snapshots flushed so far
	pend []Snapshot // the snapshots of the current group of runs
	mult int        // the number of runs in the group (0: none)
}

// Add adds one run's Info; o is read, not kept.
func (s *RunSum) Add(o *Info) {
	s.info.addTotals(o)
	per := o.PerRelease
	if len(per) == 0 {
		return
	}
	if s.mult > 0 && sameSnapshots(per, s.pend) {
		s.mult++
		return
	}
	s.flush()
	s.pend = append(s.pend[:0], per...)
	s.mult = 1
}

// Info returns the sum of the runs added so far.
func (s *RunSum) Info() Info {
	s.flush()
	return s.info
}

// flush adds the current group, mult times its snapshots, to the sum.
func (s *RunSum) flush() {
	if s.mult == 0 {
		return
	}
	if n := len(s.pend) - len(s.info.PerRelease); n > 0 {
		s.info.PerRelease = append(s.info.PerRelease, make([]Snapshot, n)...)
	}
	for k := range s.pend {
		s.info.PerRelease[k].addTimes(s.pend[k], s.mult)
	}
	s.mult = 0
}

// sameSnapshots reports whether a and b hold the same snapshots. A
// Snapshot is ten ints with no padding, so equal bytes are equal values;
// one memory comparison of the whole slices is several times faster than
// comparing them field by field.
func sameSnapshots(a, b []Snapshot) bool {
	if len(a) != len(b) {
		return false
	}
	n := len(a) * int(unsafe.Sizeof(Snapshot{}))
	return bytes.Equal(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(a))), n),
		unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b))), n))
}

// addTimes adds m (≥ 1) copies of o, saturating like Add.
func (s *Snapshot) addTimes(o Snapshot, m int) {
	s.Iterations = satAdd(s.Iterations, scaleCount(o.Iterations, m))
	s.Proposals = satAdd(s.Proposals, scaleCount(o.Proposals, m))
	s.Accepted = satAdd(s.Accepted, scaleCount(o.Accepted, m))
	s.ClippedGrads = satAdd(s.ClippedGrads, scaleCount(o.ClippedGrads, m))
	s.GradEvals = satAdd(s.GradEvals, scaleCount(o.GradEvals, m))
	s.ClippedLLRs = satAdd(s.ClippedLLRs, scaleCount(o.ClippedLLRs, m))
	s.LLREvals = satAdd(s.LLREvals, scaleCount(o.LLREvals, m))
	s.Projections = satAdd(s.Projections, scaleCount(o.Projections, m))
	s.VarianceCheckFailures = satAdd(s.VarianceCheckFailures, scaleCount(o.VarianceCheckFailures, m))
	s.Runs = satAdd(s.Runs, scaleCount(o.Runs, m))
}

// Totals returns the counters without the per-release snapshots.
func (i Info) Totals() Info {
	i.PerRelease = nil
	return i
}

// DivergedError reports a chain whose state became NaN or infinite.
type DivergedError struct {
	Iteration int
	Theta     []float64
}

func (e *DivergedError) Error() string {
	return fmt.Sprintf("chain diverged at iteration %d (state %v): reduce the step size", e.Iteration, e.Theta)
}

// finite reports whether every coordinate is finite.
func finite(theta []float64) bool {
	for _, t := range theta {
		if t-t != 0 { // NaN or ±Inf
			return false
		}
	}
	return true
}

// Sampler is an MCMC algorithm under audit.
type Sampler interface {
	// Name identifies the algorithm and its main settings.
	Name() string
	// Check validates the sampler's settings for this model and dataset;
	// errors name the field and its allowed range.
	Check(m Model, d *dataset.Dataset) error
	// Iterations is the number of updates of one run on d.
	Iterations(d *dataset.Dataset) int
	// IterationsPerEpoch is the number of updates in one pass over d
	// (1 for full-data samplers).
	IterationsPerEpoch(d *dataset.Dataset) int
	// Run performs one run starting from theta (updated in place), drawing
	// all randomness from rng, and calls emit(k, θ) after iteration at[k]
	// for every k (at is ascending, and read-only: concurrent runs share
	// it). A non-finite state ends the run with a *DivergedError.
	Run(m Model, d *dataset.Dataset, theta []float64, rng *rand.Rand, at []int, emit Emit) (Info, error)
}

// Init chooses a chain's starting point.
type Init struct {
	// FromPrior draws θ₀ from the prior (the model must be a PriorSampler).
	FromPrior bool `yaml:"from_prior" json:"from_prior"`
	// Theta is the fixed starting point when FromPrior is false
	// (zeros when empty).
	Theta []float64 `yaml:"theta,omitempty" json:"theta,omitempty"`
}

// releaser walks the ascending list of release iterations during a run
// and keeps a snapshot of the run's counters at each release.
type releaser struct {
	at    []int
	next  int
	emit  Emit
	snaps []Snapshot
	rec   *Recorder // keeps the releases it can in place of emit
	src   *TrialSource
	// path, under the path threat model, is the run's log-likelihood
	// ratio, released in place of the state.
	path *PathLR
}

// newReleaser returns the releaser of a run releasing at at; its snapshots
// go into the source's buffer, and its releases to the source's recorder
// when it has one (src may be nil: a slice of its own, and emit).
func newReleaser(at []int, emit Emit, src *TrialSource) releaser {
	r := releaser{at: at, emit: emit}
	if src != nil && len(at) > 0 {
		r.snaps = src.snapshots(len(at)) // written in full release by release
		r.rec = src.rec.standsFor(emit)
	}
	r.src = src
	return r
}

// bufferedSampler is implemented by the samplers of this package that can
// record a run's per-release snapshots into a buffer the caller reuses
// (Chain.Run, for the trials of a TrialSource).
type bufferedSampler interface {
	runInto(m Model, d *dataset.Dataset, theta []float64, rng *rand.Rand, at []int, emit Emit, src *TrialSource) (Info, error)
}

// due reports whether iteration it must be released.
func (r *releaser) due(it int) bool { return r.next < len(r.at) && r.at[r.next] == it }

// release emits theta for the current release point and advances. It
// records a snapshot of the counters in info (Iterations set to the
// release's iteration, Runs to 1) and attaches the snapshots to
// info.PerRelease, so that the Info the sampler returns carries them.
func (r *releaser) release(theta []float64, info *Info) error {
	k := r.next
	r.next++
	if r.snaps == nil {
		r.snaps = make([]Snapshot, len(r.at))
	}
	// Field by field, in place: building the struct and copying it costs
	// the interim-region audit a tenth of its CPU (20 releases a trial).
	s := &r.snaps[k]
	s.Iterations, s.Proposals, s.Accepted = r.at[k], info.Proposals, info.Accepted
	s.ClippedGrads, s.GradEvals = info.ClippedGrads, info.GradEvals
	s.ClippedLLRs, s.LLREvals = info.ClippedLLRs, info.LLREvals
	s.Projections, s.VarianceCheckFailures = info.Projections, info.VarianceCheckFailures
	s.Runs = 1
	info.PerRelease = r.snaps[:k+1] // the releases made so far
	if r.path != nil {
		theta = r.path.release()
	}
	if r.rec != nil && r.rec.put(k, theta) {
		return nil
	}
	if r.emit == nil {
		return nil
	}
	return r.emit(k, theta)
}

// staged1D returns a buffer for the state at each release point of a
// one-dimensional run, lent by the trial source when there is one. The
// batch-1 SGLD loops keep their releases there and make them all when
// the run ends (flush1D): a call per release inside the loop makes the
// compiler save and restore the loop's registers around it, which cost
// the interim-region audit (a release every 10 steps) a tenth of its time.
func (r *releaser) staged1D() []float64 {
	if r.src == nil {
		return make([]float64, len(r.at))
	}
	if cap(r.src.staged) < len(r.at) {
		r.src.staged = make([]float64, len(r.at))
	}
	return r.src.staged[:len(r.at)]
}

// stage1D keeps th as the state of release made and returns the number
// of releases kept and the iteration of the next (−1 when none is left).
// It is small enough to inline into the loops.
func (r *releaser) stage1D(staged []float64, made int, th float64) (int, int) {
	staged[made] = th
	made++
	if made < len(staged) {
		return made, r.at[made]
	}
	return made, -1
}

// finish1D ends a one-dimensional run at state th after total
// iterations: the staged releases (flush1D), then θ and the count of
// gradient evaluations (one record per iteration).
func (r *releaser) finish1D(theta, staged []float64, info *Info, th float64, total int) error {
	if err := r.flush1D(theta, staged, info); err != nil {
		return err
	}
	theta[0] = th
	info.GradEvals = total
	return nil
}

// flush1D makes the releases of staged, in order, as release would have
// during the run: θ[0] set to each state, info's gradient evaluations to
// its iteration (one record per iteration), the other counters being
// those of the whole run (the batch-1 loops move none of them).
func (r *releaser) flush1D(theta, staged []float64, info *Info) error {
	staged = r.record1D(staged, info)
	for _, th := range staged {
		theta[0] = th
		info.GradEvals = r.at[r.next]
		if err := r.release(theta, info); err != nil {
			return err
		}
	}
	return nil
}

// record1D is flush1D's common case, the engine's: a recorder of one
// feature keeps the staged states, and their snapshots are written, in
// one loop with no call per release. It stops at the first state the
// recorder cannot keep and returns the states left to flush1D's general
// path (none, as a rule): the same snapshots and stores, in the same
// order, as release would make.
func (r *releaser) record1D(staged []float64, info *Info) []float64 {
	rec, k0 := r.rec, r.next
	if rec == nil || rec.F != 1 || r.snaps == nil || k0+len(staged) > len(rec.Out) || k0+len(staged) > len(rec.Ref) {
		return staged
	}
	out, ref, at := rec.Out[k0:k0+len(staged)], rec.Ref[k0:k0+len(staged)], r.at[k0:k0+len(staged)]
	snaps := r.snaps[k0 : k0+len(staged)]
	snap := info.Snapshot(0)
	n := 0
	for j, th := range staged {
		d := th - ref[j]
		if !(math.Abs(d) <= math.MaxFloat32) { // NaN too: release says why
			break
		}
		snap.Iterations, snap.GradEvals = at[j], at[j] // one record per iteration
		snaps[j] = snap
		out[j] = float32(d)
		n++
	}
	if n > 0 {
		r.next += n
		rec.stored += n
		info.GradEvals = at[n-1]
		info.PerRelease = r.snaps[:r.next]
	}
	return staged[n:]
}

// diverged1D ends a one-dimensional run whose state th became non-finite
// at iteration t: the releases made before it first (an error of theirs
// comes first, as it would have during the run), then the DivergedError.
func (r *releaser) diverged1D(theta, staged []float64, info *Info, t int, th float64) error {
	if err := r.flush1D(theta, staged, info); err != nil {
		return err
	}
	return &DivergedError{Iteration: t, Theta: []float64{th}}
}

// release1D makes the current release of a one-dimensional run at state
// th (written into theta[0]) and returns the next release iteration.
func (r *releaser) release1D(theta []float64, th float64, info *Info) (int, error) {
	theta[0] = th
	if err := r.release(theta, info); err != nil {
		return 0, err
	}
	return r.nextAt(), nil
}

// nextAt returns the next release iteration, or -1 when none is left.
func (r *releaser) nextAt() int {
	if r.next < len(r.at) {
		return r.at[r.next]
	}
	return -1
}
