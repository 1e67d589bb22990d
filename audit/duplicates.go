package audit

import (
	"fmt"
	"math"
)

// Duplicates counts runs that repeat an earlier run exactly: the same
// value, bit for bit, at every coordinate of every release point.
// Independent runs repeat only by chance, as often as the values'
// resolution makes likely (float32 values often, float64 values almost
// never: RepeatBound); repeats beyond that are evidence of copied rows or
// of runs that shared a seed (docs/derivations/duplicate-rows.md).
type Duplicates struct {
	// WithinD counts the runs on D that repeat an earlier run on D;
	// WithinDPrime the same on D′.
	WithinD      int `json:"within_d"`
	WithinDPrime int `json:"within_dprime"`
	// Across counts the runs on D′ that repeat a run on D (precomputed
	// samples only: simulated trials are compared within a side).
	Across int `json:"across"`
}

// Any reports whether some run repeats another.
func (d Duplicates) Any() bool { return d.WithinD+d.WithinDPrime+d.Across > 0 }

// String gives the counts in words.
func (d Duplicates) String() string {
	s := fmt.Sprintf("%d %s on D and %d on D′ repeat an earlier run on the same dataset", d.WithinD, runs(d.WithinD), d.WithinDPrime)
	if d.Across > 0 {
		s += fmt.Sprintf(", and %d %s on D′ %s a run on D", d.Across, runs(d.Across), repeat(d.Across))
	}
	return s
}

func runs(n int) string {
	if n == 1 {
		return "run"
	}
	return "runs"
}

func repeat(n int) string {
	if n == 1 {
		return "repeats"
	}
	return "repeat"
}

// RepeatPolicy says what an audit does with runs that repeat an earlier
// run on the same dataset.
type RepeatPolicy uint8

const (
	// RepeatsIgnored (the zero value) does not look for them: for the
	// built-in samplers, which draw every number from the trial's seed
	// (tested), and whose single-draw releases have about 39 bits of
	// resolution (the ziggurat), so that 10⁷ trials legitimately repeat
	// a few dozen times (docs/derivations/duplicate-rows.md).
	RepeatsIgnored RepeatPolicy = iota
	// RepeatsNoted counts them and, when there are any, states the
	// counts in the report (Report.Duplicates and a note).
	RepeatsNoted
	// RepeatsRefused makes Analyze refuse the trials with a
	// *RepeatedRunsError when they repeat more often than independent
	// runs would at the values' resolution (RepeatBound), and note the
	// repeats otherwise: for a mechanism whose output is continuous, such
	// as a program sampler given a fresh seed per trial.
	RepeatsRefused
)

// RepeatedRunsError reports trials that repeat an earlier trial on the
// same dataset more often than independent runs would, when
// Options.Repeats is RepeatsRefused.
type RepeatedRunsError struct {
	Duplicates Duplicates
	// Bound is what independent runs would repeat, and the limit.
	Bound RepeatBound
	// Mechanism names the mechanism that produced them.
	Mechanism string
}

func (e *RepeatedRunsError) Error() string {
	return fmt.Sprintf("audit: %s: %s (%d in all), where %s, although every trial gets its own seed: the sampler likely ignores its seed (docs/protocol.md, field seed), and the bounds need independent runs; if its output is discrete, or coarser than its values show, set sampler.program.allow_repeated_releases",
		e.Mechanism, e.Duplicates, e.Duplicates.Total(), e.Bound)
}

// fnv1a64 constants (FNV-1a, 64 bits).
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// hashFloats folds the bits of xs into the FNV-1a state h.
func hashFloats(h uint64, xs []float64) uint64 {
	for _, x := range xs {
		b := math.Float64bits(x)
		for k := 0; k < 64; k += 8 {
			h ^= (b >> k) & 0xff
			h *= fnvPrime
		}
	}
	return h
}

// rowIndex finds rows equal to an earlier one: one entry per distinct row,
// keyed by its hash, with the rare rows whose hash collides with a
// different row's kept aside (a collision is confirmed by comparing the
// rows themselves).
type rowIndex struct {
	first map[uint64]int
	more  map[uint64][]int
	equal func(i, j int) bool
}

func newRowIndex(n int, equal func(i, j int) bool) *rowIndex {
	return &rowIndex{first: make(map[uint64]int, n), equal: equal}
}

// find returns the index of an earlier row equal to row i of hash h, or −1.
func (x *rowIndex) find(h uint64, i int) int {
	j, ok := x.first[h]
	if !ok {
		return -1
	}
	if x.equal(j, i) {
		return j
	}
	for _, j := range x.more[h] {
		if x.equal(j, i) {
			return j
		}
	}
	return -1
}

// add records row i of hash h as a new distinct row.
func (x *rowIndex) add(h uint64, i int) {
	if _, ok := x.first[h]; !ok {
		x.first[h] = i
		return
	}
	if x.more == nil {
		x.more = make(map[uint64][]int)
	}
	x.more[h] = append(x.more[h], i)
}

// CountDuplicateRows counts the rows of d (runs on D) and of dprime (runs
// on D′) that repeat an earlier row of the same file bit for bit, and the
// rows of dprime that repeat a row of d. It keeps one hash per distinct row
// and compares the rows whose hashes agree, so a hash collision never
// counts.
func CountDuplicateRows(d, dprime [][]float64) Duplicates {
	var out Duplicates
	xd := newRowIndex(len(d), func(i, j int) bool { return sameBits(d[i], d[j]) })
	for i, r := range d {
		h := hashFloats(fnvOffset, r)
		if xd.find(h, i) >= 0 {
			out.WithinD++
		} else {
			xd.add(h, i)
		}
	}
	// Rows of D′ against the distinct rows of D: index i of D′ is looked
	// up as row i of the combined list d ++ dprime.
	row := func(i int) []float64 {
		if i < len(d) {
			return d[i]
		}
		return dprime[i-len(d)]
	}
	xd.equal = func(i, j int) bool { return sameBits(row(i), row(j)) }
	xp := newRowIndex(len(dprime), func(i, j int) bool { return sameBits(row(i), row(j)) })
	for i, r := range dprime {
		h := hashFloats(fnvOffset, r)
		if xd.find(h, len(d)+i) >= 0 {
			out.Across++
		}
		if xp.find(h, len(d)+i) >= 0 {
			out.WithinDPrime++
		} else {
			xp.add(h, len(d)+i)
		}
	}
	return out
}

// sameBits reports whether a and b hold the same float64 values bit for bit.
func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if math.Float64bits(a[k]) != math.Float64bits(b[k]) {
			return false
		}
	}
	return true
}

// RepeatedRuns counts the trials that repeat an earlier trial on the same
// dataset: the same hash of their releases (Trials.Hash, the raw values
// the mechanism emitted) and the same stored features. It returns false
// when the trials carry no hashes (built by hand, or merged from a part
// without them).
func (t *Trials) RepeatedRuns() (Duplicates, bool) {
	var out Duplicates
	m := t.Hi - t.Lo
	if len(t.Hash) != m || len(t.Side) != m {
		return out, false
	}
	w := t.P * t.F
	equal := func(i, j int) bool {
		a, b := t.X[i*w:(i+1)*w], t.X[j*w:(j+1)*w]
		for k := range a {
			if math.Float32bits(a[k]) != math.Float32bits(b[k]) {
				return false
			}
		}
		return true
	}
	var idx [2]*rowIndex
	for s := range idx {
		idx[s] = newRowIndex(0, equal)
	}
	for i, h := range t.Hash {
		x := idx[t.Side[i]&1]
		if x.find(h, i) < 0 {
			x.add(h, i)
		} else if t.Side[i] == 0 {
			out.WithinD++
		} else {
			out.WithinDPrime++
		}
	}
	return out, true
}

// checkRepeats counts the trials that repeat an earlier one on the same
// dataset, with what independent runs would repeat, and refuses them under
// RepeatsRefused when they exceed that; nil when none repeats, when the
// trials carry no hashes, or under RepeatsIgnored.
func (a *Audit) checkRepeats(t *Trials) (*repeats, error) {
	if a.opts.Repeats == RepeatsIgnored {
		return nil, nil
	}
	d, ok := t.RepeatedRuns()
	if !ok || !d.Any() {
		return nil, nil
	}
	b := t.repeatBound()
	if a.opts.Repeats == RepeatsRefused && b.Exceeded(d) {
		return nil, &RepeatedRunsError{Duplicates: d, Bound: b, Mechanism: a.design.Mechanism}
	}
	return &repeats{d, b}, nil
}

// repeats are counted repeats and what independent runs would repeat.
type repeats struct {
	d Duplicates
	b RepeatBound
}

// noteRepeats states repeated runs in the report.
func (r *Report) noteRepeats(rp *repeats) {
	if rp == nil {
		return
	}
	r.Duplicates, r.RepeatBound = &rp.d, &rp.b
	r.Notes = append(r.Notes[:len(r.Notes):len(r.Notes)], RepeatNote(rp.d, rp.b))
}

// RepeatNote is the report's note on repeated runs d, with b what
// independent runs would repeat.
func RepeatNote(d Duplicates, b RepeatBound) string {
	verdict := "within that: chance repeats"
	if b.Exceeded(d) {
		verdict = "more than that: likely copied runs or runs that shared a seed, unless the output is discrete or coarser than its values show"
	}
	return fmt.Sprintf("Repeated runs: %s. The bounds assume independent runs, and %s: the %d repeats are %s (docs/derivations/duplicate-rows.md).",
		d, b, d.Total(), verdict)
}

// Total is the number of repeats counted: within each dataset and across.
func (d Duplicates) Total() int { return d.WithinD + d.WithinDPrime + d.Across }
