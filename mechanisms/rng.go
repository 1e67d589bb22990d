package mechanisms

import (
	"math"
	"math/rand/v2"
	"unsafe"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// splitmix64 is the finaliser of Steele, Lea & Flood's SplitMix64, used to
// turn structured seed tuples into well-mixed 64-bit words.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// trialSeeds returns the two PCG seeds of (audit seed, side, trial index,
// stream), mixed through SplitMix64.
func trialSeeds(seed uint64, side dataset.Side, trial int, stream uint64) (uint64, uint64) {
	b := trialBase(seed, side, trial)
	return b, trialStream(b, stream)
}

// trialBase is the first PCG seed of trialSeeds, shared by all streams of
// a trial.
func trialBase(seed uint64, side dataset.Side, trial int) uint64 {
	a := splitmix64(seed ^ splitmix64(uint64(side)+1))
	return splitmix64(a ^ splitmix64(uint64(trial)+0x632be59bd9b4e019))
}

// trialStream is the second PCG seed of trialSeeds, given the first.
func trialStream(b, stream uint64) uint64 { return splitmix64(b ^ splitmix64(stream+0x85157af5)) }

// TrialRNG returns the random source of one trial, a PCG generator seeded
// from (audit seed, side, trial index, stream) through SplitMix64, so that a
// trial's output depends only on these numbers — never on worker count,
// shard layout or resumption. Stream separates independent uses within a
// trial (0 for the sampler).
func TrialRNG(seed uint64, side dataset.Side, trial int, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(trialSeeds(seed, side, trial, stream)))
}

// TrialDraw returns the first Uint64 of TrialRNG(seed, side, trial,
// stream) — a pure function of the tuple — without allocating a
// generator, for the streams that are read once (a trial's side coin, the
// seed handed to a foreign mechanism).
func TrialDraw(seed uint64, side dataset.Side, trial int, stream uint64) uint64 {
	var p rand.PCG
	p.Seed(trialSeeds(seed, side, trial, stream))
	return p.Uint64()
}

// TrialSource makes the trials of one goroutine without allocating: each
// Trial reseeds the source's one PCG generator in place, so the trial's
// RNG draws exactly the numbers NewTrial's would, and lends the run
// buffers of its own (a Chain's per-release snapshots, say). The RNG of a
// trial, and the Info.PerRelease of a run of it, are valid until the next
// call of Trial: add or copy them first. A TrialSource is not safe for
// concurrent use.
type TrialSource struct {
	pcg    rand.PCG
	rng    *rand.Rand
	snaps  []Snapshot
	theta  []float64
	perm   []int32
	staged []float64
	rec    *Recorder
}

// Recorder keeps a run's releases the way the audit engine stores them —
// θ's first F coordinates as float32 deviations from a reference — without
// a call of Emit per release: a TrialSource given one (SetRecorder) lends
// it to the runs of the mechanisms of this package that use it (a Chain of
// SGLD, ExactCounterexample), which hand a release to Emit only when the
// recorder cannot keep it (θ shorter than F, a deviation that is not
// finite or beyond float32's range), so that Emit's caller can report it.
// Every other mechanism calls Emit as before.
//
// A run uses the recorder only when the Emit it is handed is For itself —
// the same function value, not merely the same code — so that a
// mechanism wrapping another and passing it an Emit of its own (to see or
// change the releases) is never bypassed.
type Recorder struct {
	// Out[k·F + f] receives θ_f − Ref[k·F + f] at release k.
	Out []float32
	Ref []float64
	F   int
	// For is the Emit the recorder stands in for.
	For Emit
	// stored counts the releases kept since the source's last Trial.
	stored int
}

// Stored returns the number of releases the recorder kept during the
// current trial (reset by TrialSource.Trial).
func (r *Recorder) Stored() int { return r.stored }

// slots returns the recorder's storage of n releases of one feature
// (Out[:n], Ref[:n]), or nils when it keeps more features or fewer
// releases: a sampler's loop then keeps release k of θ₀ itself, by keep.
func (r *Recorder) slots(n int) ([]float32, []float64) {
	if r == nil || r.F != 1 || len(r.Out) < n || len(r.Ref) < n {
		return nil, nil
	}
	return r.Out[:n], r.Ref[:n]
}

// keep is put for one feature in the slots of slots (out, ref): inlined in
// a sampler's loop, where put costs a call per release. False, with
// nothing kept, for a deviation put would refuse.
func (r *Recorder) keep(out []float32, ref []float64, k int, v float64) bool {
	d := v - ref[k]
	if !(math.Abs(d) <= math.MaxFloat32) { // NaN too
		return false
	}
	out[k] = float32(d)
	r.stored++
	return true
}

// put keeps release k of θ, or reports false and keeps nothing. The
// common case, one feature, is small enough for the compiler to inline.
func (r *Recorder) put(k int, theta []float64) bool {
	if r.F != 1 || len(theta) == 0 || uint(k) >= uint(len(r.Out)) || uint(k) >= uint(len(r.Ref)) {
		return r.putAll(k, theta)
	}
	d := theta[0] - r.Ref[k]
	if !(math.Abs(d) <= math.MaxFloat32) { // NaN too
		return false
	}
	r.Out[k] = float32(d)
	r.stored++
	return true
}

// putAll is put for any number of features.
func (r *Recorder) putAll(k int, theta []float64) bool {
	f := r.F
	if len(theta) < f || k < 0 || (k+1)*f > len(r.Out) || (k+1)*f > len(r.Ref) {
		return false
	}
	out, ref := r.Out[k*f:][:f], r.Ref[k*f:][:f]
	for j, v := range theta[:f] {
		if d := v - ref[j]; !(math.Abs(d) <= math.MaxFloat32) {
			return false
		}
	}
	for j, v := range theta[:f] {
		out[j] = float32(v - ref[j])
	}
	r.stored++
	return true
}

// SetRecorder gives the source a recorder (nil: none) for its next trials.
func (s *TrialSource) SetRecorder(r *Recorder) { s.rec = r }

// Stored returns the number of releases of the current trial its recorder
// kept (0 without one).
func (s *TrialSource) Stored() int {
	if s.rec == nil {
		return 0
	}
	return s.rec.stored
}

// recorder returns the trial's recorder when it stands in for emit, else
// nil.
func (t *Trial) recorder(emit Emit) *Recorder {
	if t.source == nil {
		return nil
	}
	return t.source.rec.standsFor(emit)
}

// standsFor returns r when r stands in for emit (the same function value:
// a func value is a pointer to its closure, compared here), else nil.
func (r *Recorder) standsFor(emit Emit) *Recorder {
	if r == nil || r.For == nil || emit == nil ||
		*(*unsafe.Pointer)(unsafe.Pointer(&emit)) != *(*unsafe.Pointer)(unsafe.Pointer(&r.For)) {
		return nil
	}
	return r
}

// snapshots returns a buffer of n snapshots owned by the source.
func (s *TrialSource) snapshots(n int) []Snapshot {
	if cap(s.snaps) < n {
		s.snaps = make([]Snapshot, n)
	}
	return s.snaps[:n]
}

// state returns a buffer of n floats owned by the source, or a fresh
// slice for a trial without a source.
func (t *Trial) state(n int) []float64 {
	if t.source == nil {
		return make([]float64, n)
	}
	if cap(t.source.theta) < n {
		t.source.theta = make([]float64, n)
	}
	return t.source.theta[:n]
}

// NewTrialSource returns a TrialSource.
func NewTrialSource() *TrialSource {
	s := &TrialSource{}
	s.rng = rand.New(&s.pcg)
	return s
}

// Trial returns trial i on side side of an audit seeded with seed, equal
// to NewTrial(seed, side, i) but for its RNG, which is this source's
// generator reseeded with the same seeds.
func (s *TrialSource) Trial(seed uint64, side dataset.Side, i int) Trial {
	// Small enough to inline: the caller builds the Trial where it passes
	// it, instead of reloading a copy of it just written (which stalls).
	return Trial{Index: i, Side: side, Seed: s.reseed(seed, side, i), RNG: s.rng, source: s}
}

// reseed seeds the source's generator for trial i on side side and
// returns the trial's seed.
func (s *TrialSource) reseed(seed uint64, side dataset.Side, i int) uint64 {
	// The sampler's stream and the seed's share trialSeeds' first half.
	b := trialBase(seed, side, i)
	s.pcg.Seed(b, trialStream(b, StreamSampler))
	var p rand.PCG
	p.Seed(b, trialStream(b, StreamSeed))
	if s.rec != nil {
		s.rec.stored = 0
	}
	return p.Uint64()
}
