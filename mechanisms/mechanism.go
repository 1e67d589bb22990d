package mechanisms

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// Mechanism is what the audit engine runs: given a trial and a dataset, run
// once and emit every release. The built-in samplers become mechanisms
// through Chain; a user's own sampler implements the three methods
// directly. The output must depend only on (t.Seed or t.RNG, d, the
// mechanism's configuration): never on time, goroutine scheduling or
// global state, so that results do not depend on the worker count, the
// shard layout or a resumption.
//
// Optional interfaces refine it: Checker (validate a dataset before any
// run), Namer (a name for reports) and Guarantor (theoretical upper bounds
// the audit can test).
type Mechanism interface {
	// Dim is the length of every released vector.
	Dim() int
	// Points returns the release points of a run on d, in the order Run
	// emits them.
	Points(d *dataset.Dataset) ([]ReleasePoint, error)
	// Run performs one run on d and calls emit(k, θ) for every release
	// point k in order. Runs are called concurrently from several
	// goroutines (one trial each); ctx is cancelled when the audit stops.
	Run(ctx context.Context, t Trial, d *dataset.Dataset, emit Emit) (Info, error)
}

// Trial identifies one run of an audit and carries its randomness.
type Trial struct {
	// Index is the trial's index in the audit, from 0.
	Index int
	// Side is the dataset the trial runs on (D or D′).
	Side dataset.Side
	// Seed is a 64-bit seed derived from (audit seed, side, index) only,
	// for mechanisms that seed a generator of their own (a program in
	// another language, say).
	Seed uint64
	// RNG is the trial's random source, seeded from the same tuple; Go
	// mechanisms draw every random number from it.
	RNG *rand.Rand

	// source, when the trial comes from a TrialSource, lends the run
	// buffers that the source's next trial reuses.
	source *TrialSource
}

// Random streams of a trial: the sampler's, the engine's side coin, the
// canary crafting's models, and the seed handed to foreign mechanisms.
const (
	StreamSampler uint64 = 0
	StreamSide    uint64 = 1
	StreamCanary  uint64 = 2
	StreamSeed    uint64 = 3
)

// NewTrial returns trial i on side s of an audit seeded with seed: its RNG
// is TrialRNG(seed, s, i, StreamSampler) and its Seed the first draw of
// TrialRNG(seed, s, i, StreamSeed).
func NewTrial(seed uint64, s dataset.Side, i int) Trial {
	return Trial{Index: i, Side: s, Seed: TrialDraw(seed, s, i, StreamSeed), RNG: TrialRNG(seed, s, i, StreamSampler)}
}

// Checker is implemented by mechanisms that can validate a dataset before
// any run; errors name the field and its allowed range.
type Checker interface {
	Check(d *dataset.Dataset) error
}

// Namer is implemented by mechanisms with a name for reports.
type Namer interface {
	Name() string
}

// NameOf returns the mechanism's name, or its Go type without one.
func NameOf(m Mechanism) string {
	if n, ok := m.(Namer); ok {
		return n.Name()
	}
	return fmt.Sprintf("%T", m)
}

// Chain is a complete mechanism built from the parts of this package: a
// model, a sampler, a starting point and a release schedule. Use it by
// pointer: it caches each dataset's release iterations for its runs.
type Chain struct {
	Model   Model
	Sampler Sampler
	Init    Init
	Release ReleaseSpec
	// Path, when set, is the path threat model: every run releases, at
	// each release point, the log-likelihood ratio of its path (PathSpec)
	// in place of the state, a vector of one value.
	Path *PathSpec

	// schedules lists the release iterations of the runs resolved so far
	// (copy on write; the most recent maxSchedules), so that a run does
	// not rebuild (and label) its release points: they depend only on the
	// release spec and on the sampler's run and epoch lengths on the
	// dataset, which D and D′ may not share.
	schedules atomic.Pointer[[]*schedule]
}

// maxSchedules bounds the release schedules a Chain keeps.
const maxSchedules = 8

// scheduleKey is what a run's release iterations depend on, short of the
// contents of Release.At (compared on every hit).
type scheduleKey struct {
	total, perEpoch int
	mode            ReleaseMode
	every, atLen    int
}

// schedule is a resolved list of release iterations, with what it was
// resolved from.
type schedule struct {
	key    scheduleKey
	specAt []int
	at     []int
}

// releaseIterations returns the ascending release iterations of a run on
// d, resolved once per (run length, epoch length, release spec) and shared
// read-only by every run.
func (c *Chain) releaseIterations(d *dataset.Dataset) ([]int, error) {
	total, perEpoch := c.Sampler.Iterations(d), c.Sampler.IterationsPerEpoch(d)
	key := scheduleKey{total, perEpoch, c.Release.Mode, c.Release.Every, len(c.Release.At)}
	if list := c.schedules.Load(); list != nil {
		for _, s := range *list {
			if s.key == key && slices.Equal(s.specAt, c.Release.At) {
				return s.at, nil
			}
		}
	}
	pts, err := c.Release.Points(total, perEpoch)
	if err != nil {
		return nil, field.Wrap(err, field.At("Release", "release"))
	}
	s := &schedule{key: key, specAt: slices.Clone(c.Release.At), at: make([]int, len(pts))}
	for i, p := range pts {
		s.at[i] = p.Iteration
	}
	for {
		old := c.schedules.Load()
		list := []*schedule{s}
		if old != nil {
			list = append(list, (*old)[:min(len(*old), maxSchedules-1)]...)
		}
		if c.schedules.CompareAndSwap(old, &list) {
			return s.at, nil
		}
	}
}

// Name implements Namer: the sampler on the model.
func (c *Chain) Name() string { return c.Sampler.Name() + " on " + c.Model.Name() }

// Dim implements Mechanism: the model's dimension, or 1 under the path
// threat model (the release is the path's log-likelihood ratio).
func (c *Chain) Dim() int {
	if c.Path != nil {
		return 1
	}
	return c.Model.Dim()
}

// Points implements Mechanism.
func (c *Chain) Points(d *dataset.Dataset) ([]ReleasePoint, error) {
	pts, err := c.Release.Points(c.Sampler.Iterations(d), c.Sampler.IterationsPerEpoch(d))
	return pts, field.Wrap(err, field.At("Release", "release"))
}

// Check implements Checker. Errors about a field are *field.Error with
// the Chain's field names (the dataset named "Data").
func (c *Chain) Check(d *dataset.Dataset) error {
	if c.Release.Mode == ReleaseEstimator {
		return field.Errorf(field.At("Release", "release").Field("Mode", "mode"), "a chain releases states: release an estimator through NewEstimator")
	}
	if d.Virtual > 0 {
		return field.Errorf(field.At("Data", "data"), "%s has %d records described analytically; sampler %s needs them materialised (use the exact counterexample sampler, or n ≤ the materialisation limit)", d.Name, d.Virtual, c.Sampler.Name())
	}
	if err := d.Validate(c.Model.DataDim()); err != nil {
		return err
	}
	if dc, ok := c.Model.(DataChecker); ok {
		if err := dc.CheckData(d); err != nil {
			return err
		}
	}
	if err := c.Sampler.Check(c.Model, d); err != nil {
		var me *modelError
		if errors.As(err, &me) {
			return field.Wrap(me.err, field.At("Model", "model"))
		}
		return field.Wrap(err, field.At("Sampler", "sampler"))
	}
	if c.Init.FromPrior {
		if _, ok := c.Model.(PriorSampler); !ok {
			return field.Errorf(field.At("Init", "init").Field("FromPrior", "from_prior"), "model %s cannot sample its prior", c.Model.Name())
		}
	} else if len(c.Init.Theta) != 0 && len(c.Init.Theta) != c.Model.Dim() {
		return field.Errorf(field.At("Init", "init").Field("Theta", "theta"), "must have %d values (the model's dimension), got %d", c.Model.Dim(), len(c.Init.Theta))
	}
	if err := c.checkPath(d); err != nil {
		return err
	}
	_, err := c.Points(d)
	return err
}

// checkPath checks the path threat model, when set, against the sampler.
func (c *Chain) checkPath(d *dataset.Dataset) error {
	if c.Path == nil {
		return nil
	}
	ps, ok := c.Sampler.(pathSampler)
	if !ok {
		return field.Errorf(field.At("Path", "threat"), "the path threat model is built for sgld, dp_hmc, dp_penalty and dp_barker; sampler %s has none", c.Sampler.Name())
	}
	if CanaryOf(c.Model) == nil {
		return field.Errorf(field.At("Path", "threat"), "the path threat model needs a gradient canary (neighbour.gradient_canary)")
	}
	return field.Wrap(ps.checkPath(c.Path, c.Model, d), field.At("Sampler", "sampler"))
}

// modelError is a sampler's objection to the model it is given (not to a
// field of its own): the chain names the field Model, not Sampler.
type modelError struct{ err error }

func modelErrorf(format string, args ...any) error {
	return &modelError{err: field.Errorf(nil, format, args...)}
}

func (e *modelError) Error() string { return "model: " + e.err.Error() }
func (e *modelError) Unwrap() error { return e.err }

// Run implements Mechanism. The starting point is drawn first from t.RNG
// (if from the prior), then the sampler consumes t.RNG.
func (c *Chain) Run(_ context.Context, t Trial, d *dataset.Dataset, emit Emit) (Info, error) {
	at, err := c.releaseIterations(d)
	if err != nil {
		return Info{}, err
	}
	// A sampler of this package keeps no reference to θ after its run, so
	// a trial source lends it the state too; a foreign one gets its own.
	b, buffered := c.Sampler.(bufferedSampler)
	buffered = buffered && t.source != nil
	var theta []float64
	if buffered {
		theta = t.state(c.Model.Dim())
		clear(theta)
	} else {
		theta = make([]float64, c.Model.Dim())
	}
	if c.Init.FromPrior {
		c.Model.(PriorSampler).SamplePrior(t.RNG, theta)
	} else {
		copy(theta, c.Init.Theta)
	}
	if c.Path != nil {
		return c.Sampler.(pathSampler).runPath(c.Model, d, theta, t.RNG, at, emit, NewPathLR(c.Path))
	}
	if buffered {
		return b.runInto(c.Model, d, theta, t.RNG, at, emit, t.source)
	}
	return c.Sampler.Run(c.Model, d, theta, t.RNG, at, emit)
}

// Guarantees implements Guarantor: the sampler's guarantees, when it
// declares any (SamplerGuarantor), for the iterations before the release
// from the chain's starting point, and before the last of them (Balle et
// al.'s Thm 1, which never applies) Bertazzi et al.'s Prop. 3.2 (i) on the
// pair (convergence.go).
func (c *Chain) Guarantees(p dataset.Pair, at ReleasePoint) []closedform.Guarantee {
	st := SettingOf(c.Model, p, at.Iteration)
	st.Init = c.Init
	gs := SamplerGuarantees(c.Sampler, st)
	last := gs[len(gs)-1]
	gs = append(append(gs[:len(gs)-1:len(gs)-1], convergenceGuarantee(c.Sampler, st), notEstimator(closedform.Prop37Source),
		notEstimator(closedform.Prop310Source)), last)
	if g, ok := c.exactPathGuarantee(at.Iteration); ok {
		gs = append(gs, g)
	}
	return gs
}

// exactPathGuarantee is, under the path threat model of the DP Barker
// test, the exact profile of the audited pair's path up to iteration it
// (closedform.MixturePathGuarantee): the theorem (an RDP bound of the
// subsampled test) is loose there, and a claim of the exact profile lets
// an audit refute a test that adds less noise than it declares. ok is
// false elsewhere (the other samplers' theorems are the exact path
// profile, or nearly).
func (c *Chain) exactPathGuarantee(it int) (closedform.Guarantee, bool) {
	b, ok := c.Sampler.(*DPBarker)
	if c.Path == nil || !ok || it < 1 {
		return closedform.Guarantee{}, false
	}
	p, q, ok := b.PathStepPair(c.Path, c.Model)
	if !ok {
		return closedform.Guarantee{}, false
	}
	g, err := closedform.MixturePathGuarantee(p, q, it)
	return g, err == nil
}

// notEstimator says why Props. 3.7 and 3.10 do not apply to a chain's
// state.
func notEstimator(source string) closedform.Guarantee {
	return uncovered(source, "the release is the chain's state, not a Monte Carlo estimator with noise (release.mode: estimator)")
}
