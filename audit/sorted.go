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
// or of their negatives when highFirst is false: the groups of equal
// scores are then walked from the lowest up, which is the walk of the
// negated scores from the highest down, group for group.
func (ss *sortedScores) describe(highFirst bool) Descriptive {
	ps, ns := ss.ps, ss.ns
	var w rocWalk
	// i, j: the positives and negatives not yet walked are ps[:i] and
	// ns[:j] from the top, ps[i:] and ns[j:] from the bottom.
	if highFirst {
		for i, j := len(ps), len(ns); i > 0 || j > 0; {
			var top uint64
			switch {
			case i == 0:
				top = ns[j-1]
			case j == 0:
				top = ps[i-1]
			default:
				top = max(ps[i-1], ns[j-1])
			}
			var gp, gn int
			for i > 0 && ps[i-1] == top {
				i, gp = i-1, gp+1
			}
			for j > 0 && ns[j-1] == top {
				j, gn = j-1, gn+1
			}
			w.group(gp, gn, ss.pos, ss.neg)
		}
	} else {
		for i, j := 0, 0; i < len(ps) || j < len(ns); {
			var bottom uint64
			switch {
			case i == len(ps):
				bottom = ns[j]
			case j == len(ns):
				bottom = ps[i]
			default:
				bottom = min(ps[i], ns[j])
			}
			var gp, gn int
			for i < len(ps) && ps[i] == bottom {
				i, gp = i+1, gp+1
			}
			for j < len(ns) && ns[j] == bottom {
				j, gn = j+1, gn+1
			}
			w.group(gp, gn, ss.pos, ss.neg)
		}
	}
	if ss.nanP+ss.nanN > 0 {
		w.group(ss.nanP, ss.nanN, ss.pos, ss.neg)
	}
	return w.result(ss.pos, ss.neg)
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
