package audit

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"golang.org/x/sync/errgroup"
)

// Trials holds the features of a contiguous range [Lo, Hi) of the audit's
// trials. To keep an audit of 10⁶ runs within a few hundred megabytes they
// are stored as float32 deviations from a reference — the features of
// trial 0, which every shard and checkpoint block recomputes — so a value
// keeps about seven significant digits of its distance from trial 0's,
// whatever its magnitude (the interim-region counterexample releases
// θ ≈ 10⁷ that differ in the fourth decimal). Attacks see the restored
// values; the representation can cost power, never validity.
type Trials struct {
	// ConfigHash is the audit's ID (Audit.ID).
	ConfigHash string `json:"config_hash"`
	// N is the audit's total number of trials.
	N  int `json:"n"`
	Lo int `json:"lo"`
	Hi int `json:"hi"`
	P  int `json:"-"`
	F  int `json:"-"`
	// Side[i−Lo] is the dataset trial i ran on.
	Side []dataset.Side `json:"-"`
	// Ref[p·F + f] is trial 0's feature f at release point p.
	Ref []float64 `json:"-"`
	// X[((i−Lo)·P + p)·F + f] is the deviation from Ref.
	X    []float32       `json:"-"`
	Info mechanisms.Info `json:"info"`
	// Correct[p] counts the test records the releases at point p classify
	// correctly, summed over the trials (integers, so that the sum is the
	// same in any order); TestSize is the test set's size (0: no metric).
	Correct  []int64 `json:"correct,omitempty"`
	TestSize int     `json:"test_size,omitempty"`
	// Hash[i−Lo] is an FNV-1a hash of the raw values trial i released
	// (every coordinate of every release point, as float64 bits), so that
	// trials that repeat one another can be found (RepeatedRuns); nil when
	// unknown, and when the audit does not look for repeats
	// (RepeatsIgnored).
	Hash []uint64 `json:"-"`
	// Probe[(i−Lo)·Probes + j] is value j of the last Probes raw values
	// trial i released (Probes = min(4, points × dimension)), kept with
	// Hash: they tell how often independent runs would repeat by chance
	// (RepeatBound). Nil with Hash, and when unknown (trials files written
	// before they were kept).
	Probe  []float64 `json:"-"`
	Probes int       `json:"-"`
}

// Row writes the features of trial i at release point p into out (length
// F) and returns it.
func (t *Trials) Row(i, p int, out []float64) []float64 {
	o := ((i-t.Lo)*t.P + p) * t.F
	for f := range out[:t.F] {
		out[f] = t.Ref[p*t.F+f] + float64(t.X[o+f])
	}
	return out[:t.F]
}

// rows writes the features of trials [lo, hi) at release point p into
// dst, row after row ((hi − lo)·F values), each as Row computes it.
func (t *Trials) rows(p, lo, hi int, dst []float64) {
	if t.F != 1 {
		for i := lo; i < hi; i++ {
			t.Row(i, p, dst[(i-lo)*t.F:])
		}
		return
	}
	ref, x, stride := t.Ref[p], t.X[(lo-t.Lo)*t.P+p:], t.P
	for i := range dst[:hi-lo] {
		dst[i] = ref + float64(x[i*stride])
	}
}

// set stores the features of trial i at release point p.
func (t *Trials) set(i, p int, feat []float64) error {
	o := ((i-t.Lo)*t.P + p) * t.F
	if err := storeDeviations(t.X[o:][:len(feat)], t.Ref[p*t.F:], feat, p); err != nil {
		return fmt.Errorf("trial %d: %w", i, err)
	}
	return nil
}

// storeDeviations writes feat − ref, the features of release point p as
// float32 deviations from the reference's, into x (length len(feat)).
func storeDeviations(x []float32, ref, feat []float64, p int) error {
	x, ref = x[:len(feat)], ref[:len(feat)]
	for f, v := range feat {
		d := v - ref[f]
		if math.Abs(d) > math.MaxFloat32 {
			return fmt.Errorf("feature %d at release %d differs from trial 0's by %g, beyond the feature store's range", f, p, d)
		}
		x[f] = float32(d)
	}
	return nil
}

// SideOf returns the dataset of trial i: for random assignment a fair coin
// from the trial's own stream, for balanced assignment the parity of i (for
// given sides, see Options.Sides).
func SideOf(seed uint64, i int, a Assignment) dataset.Side {
	if a == AssignBalanced {
		return dataset.Side(i & 1)
	}
	return dataset.Side(mechanisms.TrialDraw(seed, dataset.SideD, i, mechanisms.StreamSide) >> 63)
}

// side returns the dataset of trial i of this audit.
func (a *Audit) side(i int) dataset.Side {
	if a.opts.Canaries != nil {
		return dataset.SideD
	}
	if a.opts.Assignment == AssignGiven {
		return a.opts.Sides[i]
	}
	return SideOf(a.opts.Seed, i, a.opts.Assignment)
}

// errNoMechanism refuses to make trials for an audit of a design.
var errNoMechanism = fmt.Errorf("audit: an audit made from a design analyses trials; it cannot make them")

// Workers resolves a worker count: 0 means one per CPU.
func Workers(w int) int {
	if w <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return w
}

// Progress receives the number of trials completed so far (possibly from
// several goroutines; implementations must be safe for that).
type Progress func(done int)

// Simulate runs trials [lo, hi) on a bounded pool of workers. The result
// depends only on the target and the options, never on the worker count:
// trial i always gets the random streams of mechanisms.NewTrial(seed,
// side, i) (from its worker's TrialSource, reseeded in place) and writes
// only its own slots. Cancelling ctx stops the workers promptly; the error then
// wraps ctx.Err().
//
// Before any run, the estimated work of the range is checked against
// Execution.MaxWork (a *FieldError naming MaxWork beyond it).
func (a *Audit) Simulate(ctx context.Context, lo, hi int) (*Trials, error) {
	if lo < 0 || hi > a.opts.Trials || lo > hi {
		return nil, fmt.Errorf("audit: trial range [%d, %d) outside [0, %d)", lo, hi, a.opts.Trials)
	}
	if err := a.CheckWork(lo, hi, false); err != nil {
		return nil, err
	}
	return a.simulateInBlocks(ctx, lo, hi, a.exec.Progress, a.simBlock())
}

// simBlock is the number of trials simulateInBlocks runs at a time: a
// block store of about 1 MiB, at least 1024 trials (each block reruns trial
// 0 for its reference).
func (a *Audit) simBlock() int {
	return max(1024, (1<<20)/max(1, 4*len(a.points)*len(a.features)))
}

// simulateInBlocks is Simulate run in blocks of b trials (simBlock), each
// written into one reused block store, which stays in the cache while the
// workers write it, then copied into the result: written straight into a
// large store, each trial's releases missed the cache (fig1-exact's 10⁶
// trials took 0.85 s of CPU that way, 0.62 s in blocks, as the checkpointed
// path runs them). A canary design's runs, few and each costly, and a
// range of under two blocks are run at once.
func (a *Audit) simulateInBlocks(ctx context.Context, lo, hi int, progress Progress, b int) (*Trials, error) {
	if a.canaries != nil || hi-lo < 2*b {
		return a.simulate(ctx, lo, hi, progress, nil)
	}
	m := Merger{lo: lo, hi: hi}
	var block *Trials
	for blo := lo; blo < hi; blo += b {
		bhi := min(blo+b, hi)
		t, err := a.simulate(ctx, blo, bhi, progressFrom(progress, blo-lo), block)
		if err != nil {
			return nil, err
		}
		if err := m.Add(t, blockName(blo, bhi)); err != nil {
			return nil, err
		}
		block = t // copied into m: its store serves the next block
	}
	return m.Trials()
}

// simulate is Simulate; the store's slices come from reuse when it is not
// nil and they are large enough (a checkpointed run's blocks, each copied
// out before the next: memory touched once instead of once per block).
func (a *Audit) simulate(ctx context.Context, lo, hi int, progress Progress, reuse *Trials) (*Trials, error) {
	if a.target.Mechanism == nil {
		return nil, errNoMechanism
	}
	n := a.opts.Trials
	if lo < 0 || hi > n || lo > hi {
		return nil, fmt.Errorf("audit: trial range [%d, %d) outside [0, %d)", lo, hi, n)
	}
	t := a.newTrials(lo, hi, reuse)
	test, err := a.accuracyTest(t)
	if err != nil {
		return nil, err
	}
	// The reference: trial 0's features, recomputed by every shard; zero
	// in a canary design, whose every run is costly and whose scores keep
	// seven significant digits as float32 (ranking them can lose power to
	// ties, never validity: ties are broken by canary index).
	if err := a.reference(ctx, t, test); err != nil {
		return nil, err
	}
	// A few trials run twice more, before the others: a mechanism whose
	// releases depend on anything but its trial is stopped at once.
	if err := a.checkDeterminism(ctx, t, lo, hi); err != nil {
		return nil, err
	}
	workers := Workers(a.exec.Workers)
	pool := &simPool{t: t, test: test, hi: hi, chunk: simChunk(hi-lo, workers), progress: progress, stop: new(stopFlag)}
	pool.next.Store(int64(lo))
	g, ctx := errgroup.WithContext(ctx)
	defer context.AfterFunc(ctx, func() { pool.stop.done.Store(true) })()
	if ctx.Err() != nil { // AfterFunc's call would come asynchronously
		pool.stop.done.Store(true)
	}
	for range workers {
		g.Go(func() error { return a.simWorker(ctx, pool) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return t, nil
}

// accuracyTest sets up the accuracy counts of store t: per release point
// with the target's test set (returned, prepared; nil when the target
// measures no accuracy or its test set is empty), or of the size the
// mechanism reports (ReportedTestSize).
func (a *Audit) accuracyTest(t *Trials) (*mechanisms.TestSet, error) {
	var test *mechanisms.TestSet
	if acc := a.target.Accuracy; acc != nil {
		t.Correct, t.TestSize = make([]int64, t.P), acc.Test.Len()
		if t.TestSize > 0 { // an empty test set reports no accuracy
			var err error
			if test, err = mechanisms.NewTestSet(acc.Model, acc.Test); err != nil {
				return nil, fmt.Errorf("audit: Target.Accuracy.Test: %w", err)
			}
		}
	}
	if n := a.target.ReportedTestSize; n > 0 {
		t.Correct, t.TestSize = make([]int64, t.P), n
	}
	return test, nil
}

// simPool is what the workers of one simulate call share: the store, the
// test set, the next trial to take (trials up to hi, chunk at a time), the
// count of trials done for progress, and the lock on the store's sums. The
// counters every worker writes have a cache line of their own, away from
// the fields they only read.
type simPool struct {
	t        *Trials
	test     *mechanisms.TestSet
	hi       int
	chunk    int
	progress Progress
	stop     *stopFlag
	_        [64]byte
	next     atomic.Int64
	done     atomic.Int64
	mu       sync.Mutex
	_        [64]byte
}

// stopFlag is set once a simulation's context is done: what the trial loop
// polls between trials. It has a cache line of its own: the context's own
// state, polled there before, shared a line with memory other cores write,
// and reading it cost 2.5% of fig1-exact's CPU in cache misses.
type stopFlag struct {
	_    [64]byte
	done atomic.Bool
	_    [64]byte
}

// simWorker is one worker of simulate: it takes chunks of p.chunk trials
// from the pool until none is left, runs them into the store, and adds its
// Info and accuracy counts to the store's when it stops.
func (a *Audit) simWorker(ctx context.Context, p *simPool) error {
	t := p.t
	var info mechanisms.RunSum
	correct := make([]int64, len(t.Correct))
	defer func() {
		p.mu.Lock()
		t.Info.Add(info.Info())
		for k, c := range correct {
			t.Correct[k] += c
		}
		p.mu.Unlock()
	}()
	tw := a.newTrialWorker(p.test, nil)
	tw.ref, tw.correct = t.Ref, correct
	tw.direct = tw.identity && a.opts.Repeats == RepeatsIgnored && tw.scorer == nil && len(correct) == 0
	// The common case of a state audit: the samplers that can keep
	// their releases in the store themselves, without a call per
	// release.
	var rec *mechanisms.Recorder
	if tw.direct && a.canaries == nil {
		rec = &mechanisms.Recorder{Ref: t.Ref, F: t.F, For: tw.emit}
		tw.src.SetRecorder(rec)
	}
	for {
		start := int(p.next.Add(int64(p.chunk))) - p.chunk
		if start >= p.hi {
			return nil
		}
		end := min(start+p.chunk, p.hi)
		if err := tw.runChunk(ctx, p.stop, t, start, end, rec, &info); err != nil {
			return err
		}
		d := p.done.Add(int64(end - start))
		if p.progress != nil {
			p.progress(int(d))
		}
	}
}

// simChunk returns the number of consecutive trials a worker takes at a
// time when workers share n trials: about a 32nd of each worker's share, so
// that the workers finish within a chunk of one another, and at most 1024.
// Every chunk costs two writes to counters all workers share, and the
// trials of neighbouring chunks write neighbouring bytes of the store: with
// 16-trial chunks the cores passing those cache lines back and forth cost
// testdata/fig1-exact.yaml about 5% of its CPU. The trials' results do not
// depend on the chunks: each trial is seeded by its index and writes its
// own slots.
func simChunk(n, workers int) int {
	return min(max(n/(32*max(workers, 1)), 1), 1024)
}

// runChunk runs trials [start, end) into t — their features written in
// place, by rec when the mechanism can — and adds their Info to info; it
// stops between trials once stop is set (the simulation's context done).
func (w *trialWorker) runChunk(ctx context.Context, stop *stopFlag, t *Trials, start, end int, rec *mechanisms.Recorder, info *mechanisms.RunSum) error {
	a, row := w.a, t.P*t.F
	if err := ctx.Err(); err != nil { // stop is set a little after ctx is done
		return err
	}
	for i := start; i < end; i++ {
		if stop.done.Load() {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		side := a.side(i)
		t.Side[i-t.Lo] = side
		w.out = t.X[(i-t.Lo)*row:][:row]
		if rec != nil {
			rec.Out = w.out
		}
		if err := w.run(ctx, i, side); err != nil {
			return err
		}
		ri := &w.info
		if t.Hash != nil {
			t.Hash[i-t.Lo] = w.hash
			t.keepProbes(i, w.probe)
		}
		// Correct counts reported by the mechanism itself.
		for k, c := range ri.Correct {
			if !w.reference {
				w.correct[k] += c
			}
		}
		ri.Correct = nil
		info.Add(ri)
	}
	return nil
}

// reference fills t.Ref with trial 0's features (zero in a canary design).
func (a *Audit) reference(ctx context.Context, t *Trials, test *mechanisms.TestSet) error {
	if a.canaries != nil {
		return nil
	}
	ref := a.newTrialWorker(test, func(k int, feat []float64, _ int) {
		copy(t.Ref[k*t.F:], feat)
	})
	return ref.run(ctx, 0, a.side(0))
}

// newTrials allocates the store of trials [lo, hi), taking its Side, X
// and Hash from reuse (nil: none) when they are large enough: the trials
// overwrite every entry. Ref is always its own, so that a merge's check
// of one block's reference against another's compares two computations.
func (a *Audit) newTrials(lo, hi int, reuse *Trials) *Trials {
	t := &Trials{ConfigHash: a.opts.ID, N: a.opts.Trials, Lo: lo, Hi: hi, P: len(a.points), F: len(a.features)}
	n, nx := hi-lo, (hi-lo)*t.P*t.F
	if reuse != nil && cap(reuse.Side) >= n && cap(reuse.X) >= nx {
		t.Side, t.X = reuse.Side[:n], reuse.X[:nx]
	} else {
		t.Side = make([]dataset.Side, n)
		t.X = make([]float32, nx)
		prefault(t.X)
	}
	t.Ref = make([]float64, t.P*t.F)
	if a.opts.Repeats != RepeatsIgnored {
		if reuse != nil && cap(reuse.Hash) >= n {
			t.Hash = reuse.Hash[:n]
		} else {
			t.Hash = make([]uint64, n)
		}
		t.Probes = a.probes()
		if reuse != nil && cap(reuse.Probe) >= n*t.Probes {
			t.Probe = reuse.Probe[:n*t.Probes]
		} else {
			t.Probe = make([]float64, n*t.Probes)
		}
	}
	return t
}

// probes is the number of raw values per trial kept in Trials.Probe.
func (a *Audit) probes() int { return min(repeatProbes, len(a.points)*a.design.Dim) }

// keepProbes stores trial i's probe values.
func (t *Trials) keepProbes(i int, probe []float64) {
	if t.Probes > 0 && len(t.Probe) == (t.Hi-t.Lo)*t.Probes {
		copy(t.Probe[(i-t.Lo)*t.Probes:][:t.Probes], probe)
	}
}

// replay feeds one precomputed run's releases (row, release point after
// release point, dim values each) to the worker, as a trial would emit them.
func (w *trialWorker) replay(row []float64, dim int) error {
	w.released, w.hash = 0, fnvOffset
	w.resetProbes()
	for k := range w.a.points {
		if err := w.emit(k, row[k*dim:(k+1)*dim]); err != nil {
			return err
		}
	}
	return nil
}

// trialWorker runs trials one after another on one goroutine, reusing its
// feature buffer, its test-set scorer and its emit function from trial to
// trial, so that a trial allocates only what the mechanism itself does.
type trialWorker struct {
	a      *Audit
	feat   []float64
	scorer *mechanisms.Scorer
	// src makes the worker's trials without allocating a generator.
	src *mechanisms.TrialSource
	// sink receives the features of each release (feat is reused: copy
	// it), with the number of test records the release classifies
	// correctly when the audit measures accuracy.
	sink func(k int, feat []float64, correct int)
	// out, when set, takes the place of sink without a call per release:
	// the current trial's features go into it (P·F values) as deviations
	// from ref, and the correct counts are added to correct.
	out     []float32
	ref     []float64
	correct []int64
	// reference: the current trial is a canary design's reference run,
	// whose test accuracy is not the audited run's and is not counted.
	reference bool
	// direct: release may take its short path (see there); points is the
	// number of release points.
	direct bool
	points int
	emit   mechanisms.Emit
	// identity: the features are θ itself (attacks.Theta), read in place
	// rather than copied when θ has at least as many coordinates.
	identity bool
	// released counts the current trial's releases.
	released int
	// info is the current trial's Info.
	info mechanisms.Info
	// hash is the FNV-1a hash of the current trial's raw releases.
	hash uint64
	// probe holds the current trial's last raw values (Trials.Probe) and
	// flat counts the values released so far.
	probe []float64
	flat  int
}

func (a *Audit) newTrialWorker(test *mechanisms.TestSet, sink func(k int, feat []float64, correct int)) *trialWorker {
	w := &trialWorker{a: a, feat: make([]float64, len(a.features)), sink: sink, src: mechanisms.NewTrialSource()}
	if test != nil {
		w.scorer = test.NewScorer()
	}
	_, w.identity = a.opts.Features.(attacks.Theta)
	w.points = len(a.points)
	w.emit = w.release
	if a.opts.Repeats != RepeatsIgnored {
		w.probe = make([]float64, a.probes())
	}
	return w
}

// resetProbes starts a trial's probe values (so that they never depend on
// the trial the worker ran before).
func (w *trialWorker) resetProbes() {
	w.flat = 0
	clear(w.probe)
}

// keepProbes records those of theta's values that are among the run's
// last len(w.probe) values.
func (w *trialWorker) keepProbes(theta []float64) {
	first := w.points*w.a.design.Dim - len(w.probe)
	for j, v := range theta {
		if s := w.flat + j - first; s >= 0 && s < len(w.probe) {
			w.probe[s] = v
		}
	}
	w.flat += len(theta)
}

// release is the emit function of the worker's trials. Its first branch
// is the common case of a state audit, kept short because it runs at every
// release of every trial: the features are θ's first coordinates
// (attacks.Theta), nothing is hashed or scored, and they go to out.
func (w *trialWorker) release(k int, theta []float64) error {
	if f := len(w.feat); w.direct && k == w.released+w.src.Stored() && k < w.points && len(theta) >= f {
		x, ref := w.out[k*f:][:f], w.ref[k*f:][:f]
		for j, v := range theta[:f] {
			d := v - ref[j]
			if !(math.Abs(d) <= math.MaxFloat32) { // also NaN: releaseAll says which
				return w.releaseAll(k, theta)
			}
			x[j] = float32(d)
		}
		w.released++
		return nil
	}
	return w.releaseAll(k, theta)
}

// releaseAll is release in full: any feature map, hashes, test scores,
// the sink, and the errors.
func (w *trialWorker) releaseAll(k int, theta []float64) error {
	a := w.a
	if want := w.released + w.src.Stored(); k != want || k >= len(a.points) {
		return fmt.Errorf("release %d emitted out of order (expected %d of %d)", k, want, len(a.points))
	}
	if a.opts.Repeats != RepeatsIgnored {
		w.hash = hashFloats(w.hash, theta)
		w.keepProbes(theta)
	}
	feat := w.feat
	if w.identity && len(theta) >= len(feat) {
		feat = theta[:len(feat)] // what Theta.Map would copy
	} else {
		a.opts.Features.Map(theta, feat)
	}
	for _, v := range feat {
		if v-v != 0 {
			return fmt.Errorf("feature of release %q is not finite (%g)", a.points[k].Label, v)
		}
	}
	correct := 0
	if w.scorer != nil {
		correct = w.scorer.Correct(theta)
	}
	w.released++
	if w.out == nil {
		w.sink(k, feat, correct)
		return nil
	}
	if len(w.correct) > 0 && !w.reference {
		w.correct[k] += int64(correct)
	}
	return storeDeviations(w.out[k*len(feat):], w.ref[k*len(feat):], feat, k)
}

// run runs trial i on the given side, leaving the run's Info in w.info
// (an Info is 136 bytes: returned by value it would be copied at every
// level, a few per cent of a short run's cost).
func (w *trialWorker) run(ctx context.Context, i int, side dataset.Side) error {
	a := w.a
	d := a.target.Pair.D
	if side == dataset.SideDPrime {
		d = a.target.Pair.DPrime
	}
	w.released, w.hash = 0, fnvOffset
	w.resetProbes()
	var err error
	w.reference = a.canaries != nil && i >= a.opts.Canaries.Runs
	if a.canaries != nil {
		w.info, err = w.runCanary(ctx, i)
	} else {
		w.info, err = a.target.Mechanism.Run(ctx, w.src.Trial(a.opts.Seed, side, i), d, w.emit)
	}
	if err != nil {
		return fmt.Errorf("trial %d (on %s): %w", i, side, err)
	}
	if n := w.released + w.src.Stored(); n != len(a.points) {
		return fmt.Errorf("trial %d (on %s): %d releases, expected %d", i, side, n, len(a.points))
	}
	info := &w.info
	if n := a.target.ReportedTestSize; n > 0 {
		if len(info.Correct) != len(a.points) {
			return fmt.Errorf("trial %d (on %s): the mechanism reported %d correct counts, expected one per release point (%d)", i, side, len(info.Correct), len(a.points))
		}
		for k, c := range info.Correct {
			if c < 0 || c > int64(n) {
				return fmt.Errorf("trial %d (on %s): release %q classifies %d of %d test records correctly", i, side, a.points[k].Label, c, n)
			}
		}
		return nil
	}
	info.Correct = nil
	return nil
}
