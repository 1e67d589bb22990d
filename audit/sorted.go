package audit

import (
	"math"
	"slices"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/internal/radix"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// sortedScores holds scored runs split by label, each side's scores sorted
// as order keys (radix.FloatKey): what the descriptive figures walk, and
// what a threshold rule's errors can be counted on by binary search.
type sortedScores struct {
	pos, neg   int      // runs of each label, NaN scores included
	ps, ns     []uint64 // sorted keys of the positives' and negatives' other scores
	nanP, nanN int      // NaN scores of each label
	buf        []uint64 // storage: ps, then ns, then sort scratch
}

// fill sorts scores by label (true: positive), reusing the storage when it
// is large enough; false when a label has no run.
func (ss *sortedScores) fill(scores []float64, label []bool) bool {
	pos := 0
	for _, l := range label {
		pos += radix.Bit(l)
	}
	neg := len(label) - pos
	ss.pos, ss.neg = pos, neg
	if pos == 0 || neg == 0 {
		return false
	}
	n := len(scores)
	if len(ss.buf) < n+max(pos, neg) {
		ss.buf = make([]uint64, n+max(pos, neg))
	}
	buf := ss.buf
	// Without branches on the label: each key goes to the next slot of its
	// side, the positives' from 0, the negatives' from pos.
	var nanP, nanN, ip, in int // NaN scores: ranked last, tied with one another
	for i, s := range scores {
		b := radix.Bit(label[i])
		if s != s {
			nanP, nanN = nanP+b, nanN+1-b
			continue
		}
		buf[radix.Slot(pos, ip, in, b)] = radix.FloatKey(s)
		ip, in = ip+b, in+1-b
	}
	ss.ps, ss.ns, ss.nanP, ss.nanN = buf[:ip], buf[pos:pos+in], nanP, nanN
	tmp := radix.Sort(ss.ps, buf[n:])
	radix.Sort(ss.ns, tmp)
	return true
}

// describe returns the descriptive figures of the scores (describeScores),
// or of their negatives when highFirst is false. The figures are those of
// a walk over the groups of equal scores from the highest down (from the
// lowest up for the negatives; NaN scores last, as one group), computed
// without the walk, which cost a mispredicted branch or two per run:
//
//   - the AUROC's numerator Σ over negatives of (positives above it + half
//     those tied with it) from two sums over the negatives, of the
//     positives below each and at or below each (pairsBelow), in integers:
//     the walk's float sum adds half-integers below 2⁵³ and is exact too,
//     so the two agree to the bit;
//   - each TPR the walk reads when its false positives first exceed a
//     count c (a point of the ROC grid, or the most allowed at an FPR of 1%
//     and 0.1%) from the (c+1)-th negative of the walk, by binary search.
func (ss *sortedScores) describe(highFirst bool) Descriptive {
	ps, ns := ss.ps, ss.ns
	np, nn := len(ps), len(ns)
	pos, neg := ss.pos, ss.neg
	lt, le := pairsBelow(ps, ns)
	// twice the AUROC's numerator: a negative ranks below the positives
	// walked before it and ties with those in its group.
	twice := lt + le
	if highFirst {
		twice = 2*int64(np)*int64(nn) - lt - le
	}
	twice += int64(ss.nanN) * (2*int64(np) + int64(ss.nanP)) // the NaN group, last
	// walked is the positives the walk has passed when its false positives
	// first exceed c (all of them when they never do): those strictly
	// before the group of the (c+1)-th negative walked.
	walked := func(c int) int {
		switch {
		case c < nn && highFirst:
			return np - upTo(ps, ns[nn-1-c])
		case c < nn:
			return below(ps, ns[c])
		case c < nn+ss.nanN:
			return np
		}
		return np + ss.nanP
	}
	tpr := func(c int) float64 { return float64(walked(c)) / float64(pos) }
	grid := rocGrid(neg)
	roc := make([]ROCPoint, len(grid))
	for i, c := range grid {
		roc[i] = ROCPoint{FPR: float64(c) / float64(neg), TPR: tpr(c)}
	}
	// The TPR at an FPR of at most f is the walk's TPR after the last group
	// that keeps the false positives within maxCountAt(neg, f): the
	// positives before the group that first exceeds it.
	return Descriptive{AUROC: stats.JSONFloat(float64(twice) / 2 / (float64(pos) * float64(neg))),
		TPRAt1: stats.JSONFloat(tpr(maxCountAt(neg, 0.01))), TPRAt01: stats.JSONFloat(tpr(maxCountAt(neg, 0.001))), ROC: roc}
}

// pairsBelow returns, summed over the keys k of ns, the number of keys of
// ps below k (lt) and at or below k (le); both are sorted. It merges the
// two without a branch on which key comes next (the labels of a run are
// interleaved at random, which defeats branch prediction), as two merges
// side by side, each of half the keys from ns's first to its last: one
// merge waits at every step on the load of its next key, two overlap
// those waits. Keys of ps outside that span are skipped by binary search.
func pairsBelow(ps, ns []uint64) (lt, le int64) {
	switch len(ns) {
	case 0:
		return 0, 0
	case 1:
		return mergeBelow(ps, ns, below(ps, ns[0]), 0, 1)
	}
	first, last := below(ps, ns[0]), upTo(ps, ns[len(ns)-1])
	h := below(ns, radix.MedianKey(ps[first:last], ns))
	if h == 0 || h == len(ns) {
		h = len(ns) / 2
	}
	i0, j0, e0 := first, 0, h
	i1, j1, e1 := below(ps, ns[h]), h, len(ns)
	var lt0, lt1 int64
	var tied int
	for j0 < e0 && j1 < e1 {
		var b0, b1, t0, t1 int
		lt0, b0, t0 = belowStep(ps, i0, ns[j0], lt0)
		lt1, b1, t1 = belowStep(ps, i1, ns[j1], lt1)
		i0, j0, i1, j1 = i0+b0, j0+1-b0, i1+b1, j1+1-b1
		tied += t0 + t1
	}
	lt2, le2 := mergeBelow(ps, ns, i0, j0, e0)
	lt3, le3 := mergeBelow(ps, ns, i1, j1, e1)
	lt = lt0 + lt1 + lt2 + lt3
	return lt, lt0 + lt1 + int64(tied) + le2 + le3
}

// mergeBelow is pairsBelow for the keys ns[j:end], with i the keys of ps
// below ns[j].
func mergeBelow(ps, ns []uint64, i, j, end int) (lt, le int64) {
	var tied int
	for j < end {
		var b, t int
		lt, b, t = belowStep(ps, i, ns[j], lt)
		i, j = i+b, j+1-b
		tied += t
	}
	return lt, lt + int64(tied)
}

// belowStep is one step of the merge, with i keys of ps taken and k the
// next key of ns: it takes the key of ps (b = 1) when it is below k, else
// k (b = 0), adding to lt the keys of ps below k. On equal keys k is taken
// first, and a key of ps equal to it (rare, so the branch is predicted)
// counts its run of equal keys as tied. No key is math.MaxUint64
// (radix.FloatKey of a number), which stands for the end of ps.
func belowStep(ps []uint64, i int, k uint64, lt int64) (int64, int, int) {
	p := uint64(math.MaxUint64)
	if i < len(ps) {
		p = ps[i]
	}
	tied := 0
	if p == k {
		r := i + 1
		for r < len(ps) && ps[r] == k {
			r++
		}
		tied = r - i
	}
	b := radix.Bit(p < k)
	return lt + int64(i&^-b), b, tied
}

// count returns the errors of rule r on the scores, as attacks.Tally
// counts them run by run: a run is predicted positive when
// o·(s − t) > 0, which for a score s that is not NaN is s > t (o = +1) or
// s < t (o = −1) — a difference of two floats is zero only when they are
// equal, and keeps its sign — and a NaN score is never predicted positive.
// So the runs predicted positive are those whose keys lie above (below)
// the threshold's key, found by binary search. ok is false for a NaN
// threshold, which the caller counts run by run.
func (ss *sortedScores) count(r attacks.Rule) (c stats.Counts, ok bool) {
	if math.IsNaN(r.Threshold) || (r.Orientation != 1 && r.Orientation != -1) {
		return c, false
	}
	kt := radix.FloatKey(r.Threshold)
	var predP, predN int // positives and negatives predicted positive
	if r.Orientation == 1 {
		predP, predN = len(ss.ps)-upTo(ss.ps, kt), len(ss.ns)-upTo(ss.ns, kt)
	} else {
		predP, predN = below(ss.ps, kt), below(ss.ns, kt)
	}
	return stats.Counts{FP: predN, Negatives: ss.neg, FN: ss.pos - predP, Positives: ss.pos}, true
}

// upTo is the number of keys ≤ k in sorted keys.
func upTo(keys []uint64, k uint64) int {
	if k == math.MaxUint64 {
		return len(keys)
	}
	i, _ := slices.BinarySearch(keys, k+1)
	return i
}

// below is the number of keys < k in sorted keys.
func below(keys []uint64, k uint64) int {
	i, _ := slices.BinarySearch(keys, k)
	return i
}

// storeSorter sorts runs by the store's one feature without a float64
// pass: the store holds trial i's value at point p as Ref[p] + float64(x)
// for a float32 x, which never decreases as x grows (float addition is
// monotone), so sorting the 32-bit keys of the x (radix.Sort32: three
// passes over half the bytes) and mapping them in order yields the sorted
// 64-bit keys of the values, ties included, exactly as sorting those
// would. Reading one point's values touches every cache line of the store
// (a trial's points are adjacent); gather reads the keys of two points in
// one pass, for the point analysed after this one.
type storeSorter struct {
	ahead [4]gathered // keys gathered ahead of their point's analysis
	one   gathered    // keys of a point gathered when needed
	tmp32 []uint32
}

// gathered holds the 32-bit keys of the values of trials [lo, hi) at
// point p, the positives' (pos of them) first: valid until used; ok false
// when a value is NaN.
type gathered struct {
	p, lo, hi, pos int
	k32            []uint32
	valid, ok      bool
}

// gather reads trials [lo, hi) once and fills dst[j] with the keys of
// point ps[j] (label[i−lo] set: a positive).
func gather(t *Trials, ps []int, lo, hi int, label []bool, dst []*gathered) {
	n := hi - lo
	pos := 0
	for _, l := range label[:n] {
		pos += radix.Bit(l)
	}
	var k32 [2][]uint32
	for j, g := range dst {
		if cap(g.k32) < n {
			g.k32 = make([]uint32, n)
		}
		g.p, g.lo, g.hi, g.pos, g.k32, g.valid, g.ok = ps[j], lo, hi, pos, g.k32[:n], true, true
		k32[j] = g.k32
	}
	x, stride := t.X[(lo-t.Lo)*t.P:], t.P
	label = label[:n]
	// Without branches: the NaNs are or-ed into a mask, each key goes to
	// the next slot of its side.
	var ip, in, nan int
	if len(ps) == 1 {
		x, out := x[ps[0]:], k32[0][:n]
		for i, l := range label {
			v := x[i*stride]
			nan |= radix.Bit(v != v)
			b := radix.Bit(l)
			out[radix.Slot(pos, ip, in, b)] = radix.Float32Key(v)
			ip, in = ip+b, in+1-b
		}
		dst[0].ok = nan == 0
		return
	}
	p0, p1, out0, out1 := ps[0], ps[1], k32[0][:n], k32[1][:n]
	for i, l := range label {
		row := x[i*stride:]
		v0, v1 := row[p0], row[p1]
		nan |= radix.Bit(v0 != v0) | radix.Bit(v1 != v1)<<1
		b := radix.Bit(l)
		at := radix.Slot(pos, ip, in, b)
		out0[at], out1[at] = radix.Float32Key(v0), radix.Float32Key(v1)
		ip, in = ip+b, in+1-b
	}
	dst[0].ok, dst[1].ok = nan&1 == 0, nan&2 == 0
}

// prefetch gathers the selection and evaluation runs' keys of points p
// and q in one pass each, for sort to use.
func (s *storeSorter) prefetch(t *Trials, p, q int, rs runSets, n int) {
	if t.F != 1 {
		return
	}
	gather(t, []int{p, q}, rs.selLo, rs.selHi, rs.sel.Label, []*gathered{&s.ahead[0], &s.ahead[1]})
	gather(t, []int{p, q}, rs.evalLo, n, rs.eval.Label, []*gathered{&s.ahead[2], &s.ahead[3]})
}

// sort fills out (len ≥ hi − lo, returned as its two parts) with the sort
// keys (radix.FloatKey) of the values of trials [lo, hi) at point p, the
// positives' (label[i−lo] set) first and the negatives' after, each side
// sorted. ok is false when a value is NaN or Ref[p] is not finite (the
// caller then sorts the float64 scores).
func (s *storeSorter) sort(t *Trials, p, lo, hi int, label []bool, out []uint64) (kpos, kneg []uint64, ok bool) {
	ref := t.Ref[p]
	if math.IsNaN(ref) || math.IsInf(ref, 0) || t.F != 1 {
		return nil, nil, false
	}
	var g *gathered
	for i := range s.ahead {
		if a := &s.ahead[i]; a.valid && a.p == p && a.lo == lo && a.hi == hi {
			g = a
		}
	}
	if g == nil {
		g = &s.one
		gather(t, []int{p}, lo, hi, label, []*gathered{g})
	}
	g.valid = false
	if !g.ok {
		return nil, nil, false
	}
	k32, pos := g.k32, g.pos
	s.tmp32 = radix.Sort32(k32[:pos], s.tmp32)
	s.tmp32 = radix.Sort32(k32[pos:], s.tmp32)
	out = out[:len(k32)]
	for i, k := range k32 {
		out[i] = radix.FloatKey(ref + float64(radix.Key32Float(k)))
	}
	return out[:pos], out[pos:], true
}

// fillStore is fill for the values of trials [lo, hi) at point p read from
// the store by s (storeSorter); false when s cannot (fill is then needed)
// or a label has no run.
func (ss *sortedScores) fillStore(t *Trials, p, lo, hi int, label []bool, s *storeSorter) bool {
	n := hi - lo
	if len(ss.buf) < n {
		ss.buf = make([]uint64, n+n/2+1)
	}
	ps, ns, ok := s.sort(t, p, lo, hi, label, ss.buf)
	if !ok || len(ps) == 0 || len(ns) == 0 {
		return false
	}
	ss.pos, ss.neg, ss.ps, ss.ns, ss.nanP, ss.nanN = len(ps), len(ns), ps, ns, 0, 0
	return true
}
