package attacks

import (
	"fmt"
	"math"
	"slices"

	"github.com/mcmcaudit/mcmcaudit/stats"
	"gonum.org/v1/gonum/mathext"
)

// Rule is a decision rule on a score: predict D′ (positive) when
// Orientation·(score − Threshold) > 0.
type Rule struct {
	Threshold   float64 `json:"threshold"`
	Orientation int     `json:"orientation"` // +1: score above the threshold means D′; −1: below
}

// Positive applies the rule to a score.
func (r Rule) Positive(score float64) bool {
	return float64(r.Orientation)*(score-r.Threshold) > 0
}

// Selection is the outcome of choosing a rule on a training set.
type Selection struct {
	Rule   Rule
	Counts stats.Counts
	// Epsilon is the value of the selection criterion on the training
	// counts: the region bound (Heller eq. 12) for ChooseRule, the GDP μ
	// lower bound for ChooseRuleGDP.
	Epsilon float64
}

// objective is the criterion a rule is chosen to maximise, as a function of
// the two error rates (a for false positives, b for false negatives). At
// the Clopper–Pearson upper bounds of the rates it is the confidence
// bound; at the observed rates it is the plug-in value, which is never
// smaller because both objectives are non-increasing in each rate and the
// upper bounds are at least the observed rates.
type objective func(a, b, delta float64) float64

// regionObjective is Heller & Fetaya (2023) eq. 11; at the Clopper–Pearson
// upper bounds it is their eq. 12 (stats.RegionBound).
func regionObjective(a, b, delta float64) float64 {
	e, _ := stats.EpsilonFromRates(a, b, delta)
	return e
}

// gdpObjective is gdpMu; delta plays no part.
func gdpObjective(a, b, _ float64) float64 { return gdpMu(a, b) }

// gdpMu is max(0, Φ⁻¹(1−a) − Φ⁻¹(b)): the μ of the Gaussian trade-off curve
// G_μ(a) = Φ(Φ⁻¹(1−a) − μ) of Dong, Roth & Su (2019, Def. 2.7) that passes
// through the error rates (a, b); it is non-increasing in a and b, and
// equals stats.GDPMuLowerBound's μ at the Clopper–Pearson upper bounds.
func gdpMu(a, b float64) float64 {
	mu := -mathext.NormalQuantile(a) - mathext.NormalQuantile(b)
	if !(mu > 0) {
		return 0
	}
	return mu
}

// cpTable holds the one-sided Clopper–Pearson upper bounds
// U(k) = Beta⁻¹(1−a; k+1, n−k) (Clopper & Pearson 1934) of a rate with k
// errors among n runs, at tail level a (α/2, as in stats.RegionBound),
// each computed on first use: the Beta quantile is the expensive part of
// the search, and an audit's release points share n and a, so the table
// outlives one call.
type cpTable struct {
	n int
	a float64
	u []float64 // NaN until computed
}

// prepare makes t the table of (n, a), keeping its values when it already is.
func (t *cpTable) prepare(n int, a float64) {
	if t.n == n && t.a == a && len(t.u) == n+1 {
		return
	}
	t.n, t.a = n, a
	if cap(t.u) < n+1 {
		t.u = make([]float64, n+1)
	}
	t.u = t.u[:n+1]
	for i := range t.u {
		t.u[i] = math.NaN()
	}
}

// at returns U(k).
func (t *cpTable) at(k int32) float64 {
	if u := t.u[k]; u == u {
		return u
	}
	u, err := stats.ClopperPearsonUpperTail(int(k), t.n, t.a)
	if err != nil {
		panic(err) // counts and the tail level are in range by construction
	}
	t.u[k] = u
	return u
}

// ChooseRule picks the threshold and orientation that maximise the region
// bound (Heller & Fetaya 2023, eq. 12) computed from the counts on
// (scores, labels): every split between consecutive distinct scores is a
// candidate, in both orientations, and every candidate is accounted for
// (the search is exact, with no cap). It is meant for training runs only
// (A1, or the threshold-selection split): choosing a threshold on the runs
// that are then counted would invalidate the bound.
//
// Among candidates with equal bounds the one with the larger plug-in value
// (eq. 11 at the observed rates, rounded up to float32) wins, then the one
// with the smaller candidate index (split k in orientation +1 is 2k, in
// orientation −1 it is 2k+1). How the search finds the optimum without
// evaluating every candidate's bound is derived in
// docs/derivations/threshold-search.md.
func ChooseRule(scores []float64, labels []bool, delta, confidence float64) (Selection, error) {
	var sp splits
	if err := sp.reset(scores, labels, delta, confidence); err != nil {
		return Selection{}, err
	}
	return sp.best(regionObjective), nil
}

// ChooseRuleGDP is ChooseRule for the GDP estimator: it maximises the μ
// lower bound max(0, Φ⁻¹(1 − FPR_ub) − Φ⁻¹(FNR_ub)) on the training counts
// (the threshold that is best for the region bound sits at an extreme where
// μ_lb is loose, so each estimator gets its own rule).
func ChooseRuleGDP(scores []float64, labels []bool, confidence float64) (Selection, error) {
	var sp splits
	if err := sp.reset(scores, labels, 0, confidence); err != nil {
		return Selection{}, err
	}
	return sp.best(gdpObjective), nil
}

// ChooseRules returns both selections, sorting the scores once.
func ChooseRules(scores []float64, labels []bool, delta, confidence float64) (region, gdp Selection, err error) {
	var ch Chooser
	return ch.ChooseRules(scores, labels, delta, confidence)
}

// Chooser is ChooseRules with working memory kept between calls, for
// callers that choose rules for many release points in turn: sort buffers
// and the tabulated Clopper–Pearson bounds are reused (the latter as long
// as the numbers of runs per side and the confidence stay the same).
type Chooser struct{ sp splits }

// ChooseRules is the package-level ChooseRules, reusing c's memory.
func (c *Chooser) ChooseRules(scores []float64, labels []bool, delta, confidence float64) (region, gdp Selection, err error) {
	if err := c.sp.reset(scores, labels, delta, confidence); err != nil {
		return Selection{}, Selection{}, err
	}
	return c.sp.best(regionObjective), c.sp.best(gdpObjective), nil
}

// splits holds the candidate thresholds of a scored training set: after
// sorting, group g (0..G−1) holds the runs with the g-th smallest distinct
// score; split k (0..G) puts the threshold after the first k groups, with
// nb[k] negatives and pb[k] positives below it. Candidate c is split c/2 in
// orientation +1 (positives predicted above) when c is even, −1 when odd.
//
// The Pareto front (ffp[i], ffn[i]), i = 0..P−1, lists the error-count
// pairs that no other candidate beats in both counts, with ffp strictly
// increasing and ffn strictly decreasing; both objectives are
// non-increasing in each count, so the optimum is on it.
type splits struct {
	neg, pos int
	delta    float64
	gscore   []float64
	nb, pb   []int32
	ffp, ffn []int32
	tabs     [2]cpTable
	fpT, fnT *cpTable
	// working memory
	kneg, kpos, tmp []uint64
	heap            []span
	tied            []int32
}

// span is a range [i, j] of the front with an upper bound of the objective
// over it.
type span struct {
	ub   float64
	i, j int32
}

// reset prepares the splits of a new scored set, keeping the memory.
func (sp *splits) reset(scores []float64, labels []bool, delta, confidence float64) error {
	if err := stats.CheckDelta(delta); err != nil {
		return err
	}
	if err := stats.CheckConfidence(confidence); err != nil {
		return err
	}
	n := len(scores)
	if n != len(labels) {
		return fmt.Errorf("attacks: %d scores but %d labels", n, len(labels))
	}
	if n > math.MaxInt32 {
		return fmt.Errorf("attacks: at most %d scored runs, got %d", math.MaxInt32, n)
	}
	kneg, kpos := sp.kneg[:0], sp.kpos[:0]
	for i, l := range labels {
		s := scores[i]
		if math.IsNaN(s) {
			return fmt.Errorf("attacks: score %d is NaN", i)
		}
		if l {
			kpos = append(kpos, sortKey(s))
		} else {
			kneg = append(kneg, sortKey(s))
		}
	}
	sp.kneg, sp.kpos = kneg, kpos
	neg, pos := len(kneg), len(kpos)
	if neg == 0 || pos == 0 {
		return fmt.Errorf("attacks: training set needs runs on both D and D′ (has %d and %d)", neg, pos)
	}
	sp.tmp = radixSort(kneg, sp.tmp)
	sp.tmp = radixSort(kpos, sp.tmp)
	sp.neg, sp.pos, sp.delta = neg, pos, delta

	// Merge the two sorted lists into groups of equal scores.
	sp.gscore, sp.nb, sp.pb = sp.gscore[:0], append(sp.nb[:0], 0), append(sp.pb[:0], 0)
	var i, j int
	for i < neg || j < pos {
		var key uint64
		switch {
		case i == neg:
			key = kpos[j]
		case j == pos:
			key = kneg[i]
		default:
			key = min(kneg[i], kpos[j])
		}
		for i < neg && kneg[i] == key {
			i++
		}
		for j < pos && kpos[j] == key {
			j++
		}
		sp.gscore = append(sp.gscore, fromSortKey(key))
		sp.nb = append(sp.nb, int32(i))
		sp.pb = append(sp.pb, int32(j))
	}
	sp.buildFront()

	a := (1 - confidence) / 2
	sp.fpT, sp.fnT = &sp.tabs[0], &sp.tabs[1]
	sp.fpT.prepare(neg, a)
	if pos == neg {
		sp.fnT = sp.fpT // one table serves both rates
	} else {
		sp.fnT.prepare(pos, a)
	}
	return nil
}

// buildFront merges the candidates of both orientations by (fp, fn) and
// keeps the pairs whose fn is below that of every pair before them.
func (sp *splits) buildFront() {
	G := int32(len(sp.gscore))
	neg, pos := int32(sp.neg), int32(sp.pos)
	sp.ffp, sp.ffn = sp.ffp[:0], sp.ffn[:0]
	// Orientation +1 in increasing fp is k = G..0; orientation −1 is k = 0..G.
	ka, kb := G, int32(0)
	minFn := int32(math.MaxInt32)
	for ka >= 0 || kb <= G {
		var fp, fn int32
		takeA := kb > G
		if ka >= 0 && kb <= G {
			fpA, fnA := neg-sp.nb[ka], sp.pb[ka]
			fpB, fnB := sp.nb[kb], pos-sp.pb[kb]
			takeA = fpA < fpB || (fpA == fpB && fnA <= fnB)
		}
		if takeA {
			fp, fn = neg-sp.nb[ka], sp.pb[ka]
			ka--
		} else {
			fp, fn = sp.nb[kb], pos-sp.pb[kb]
			kb++
		}
		if fn < minFn {
			sp.ffp, sp.ffn = append(sp.ffp, fp), append(sp.ffn, fn)
			minFn = fn
		}
	}
}

// counts returns the error counts of candidate c.
func (sp *splits) counts(c int) (fp, fn int) {
	k := c / 2
	nb, pb := int(sp.nb[k]), int(sp.pb[k])
	if c%2 == 0 {
		return sp.neg - nb, pb
	}
	return nb, sp.pos - pb
}

// threshold returns the threshold of split k for orientation o: midway
// between the last score below it and the first above (±Inf at the ends).
// When the midpoint does not fall strictly between them (adjacent floats,
// infinite scores, overflow) it is the score on the side that Rule.Positive
// puts below for o = +1 (the lower one) or above for o = −1 (the upper
// one), so that the rule reproduces the split's counts.
func (sp *splits) threshold(k, o int) float64 {
	switch k {
	case 0:
		return math.Inf(-1)
	case len(sp.gscore):
		return math.Inf(1)
	}
	lo, hi := sp.gscore[k-1], sp.gscore[k]
	t := lo + (hi-lo)/2
	if lo < t && t < hi {
		return t
	}
	if o > 0 {
		return lo
	}
	return hi
}

// bound is the objective at the Clopper–Pearson upper bounds of (fp, fn).
func (sp *splits) bound(obj objective, fp, fn int32) float64 {
	return obj(sp.fpT.at(fp), sp.fnT.at(fn), sp.delta)
}

// plugin is the float32-rounded-up plug-in value of (fp, fn), the first key
// of the tie-break.
func (sp *splits) plugin(obj objective, fp, fn int) float32 {
	return roundUp32(obj(float64(fp)/float64(sp.neg), float64(fn)/float64(sp.pos), sp.delta))
}

// roundUp32 returns the smallest float32 ≥ x.
func roundUp32(x float64) float32 {
	f := float32(x)
	if float64(f) < x {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f
}

// best returns the candidate that maximises obj at the Clopper–Pearson
// bounds, ties broken as ChooseRule says.
func (sp *splits) best(obj objective) Selection {
	bestV := sp.searchFront(obj)
	c := 0
	if bestV > 0 {
		c = sp.pickTied(obj, bestV)
	} else {
		c = sp.pickPlugin(obj)
	}
	fp, fn := sp.counts(c)
	o := 1
	if c%2 == 1 {
		o = -1
	}
	return Selection{Rule: Rule{sp.threshold(c/2, o), o},
		Counts:  stats.Counts{FP: fp, Negatives: sp.neg, FN: fn, Positives: sp.pos},
		Epsilon: bestV}
}

// searchFront is a best-first branch and bound over ranges of the front:
// on [i, j] no pair has fewer false positives than pair i nor fewer false
// negatives than pair j, so obj at (U(ffp[i]), U(ffn[j])) bounds the range
// (and is exact when i = j), and the plug-in value at the same counts
// bounds that without a Beta quantile. A range is split in halves until it
// is a single pair or provably worse than the best pair found; ranges that
// could tie with the best are kept, so on return sp.tied lists every front
// pair whose value equals the returned maximum (none when it is 0).
func (sp *splits) searchFront(obj objective) float64 {
	fneg, fpos := float64(sp.neg), float64(sp.pos)
	bestV := 0.0
	sp.tied = sp.tied[:0]
	h := sp.heap[:0]
	consider := func(i, j int32) {
		fp, fn := sp.ffp[i], sp.ffn[j]
		if p := obj(float64(fp)/fneg, float64(fn)/fpos, sp.delta); !(p > 0) || p < bestV {
			return
		}
		ub := sp.bound(obj, fp, fn)
		if !(ub > 0) || ub < bestV {
			return
		}
		if i == j {
			if ub > bestV {
				bestV, sp.tied = ub, sp.tied[:0]
			}
			sp.tied = append(sp.tied, i)
			return
		}
		h = heapPush(h, span{ub, i, j})
	}
	consider(0, int32(len(sp.ffp)-1))
	for len(h) > 0 && h[0].ub >= bestV {
		var s span
		h, s = heapPop(h)
		mid := s.i + (s.j-s.i)/2
		consider(s.i, mid)
		consider(mid+1, s.j)
	}
	sp.heap = h
	return bestV
}

// pickPlugin handles a maximum of 0, which every candidate attains: the
// winner is the candidate with the largest plug-in value, then the
// smallest index. The plug-in value is monotone in the counts, so its
// maximum is on the front.
func (sp *splits) pickPlugin(obj objective) int {
	vmax := float32(math.Inf(-1))
	for i := range sp.ffp {
		vmax = max(vmax, sp.plugin(obj, int(sp.ffp[i]), int(sp.ffn[i])))
	}
	m := 2 * len(sp.nb)
	for c := 0; c < m; c++ {
		if fp, fn := sp.counts(c); sp.plugin(obj, fp, fn) == vmax {
			return c
		}
	}
	// Not reached while the plug-in value is monotone in floating point;
	// if rounding ever broke that, the full scan below is still right.
	bestC, bestP := 0, float32(math.Inf(-1))
	for c := 0; c < m; c++ {
		if fp, fn := sp.counts(c); sp.plugin(obj, fp, fn) > bestP {
			bestC, bestP = c, sp.plugin(obj, fp, fn)
		}
	}
	return bestC
}

// pickTied returns, among all candidates whose bound equals bestV > 0, the
// one with the largest plug-in value, then the smallest index. Each such
// candidate's counts dominate a tied front pair q and, the objective being
// monotone, lie in the box [q.fp, q.fp+d1] × [q.fn, q.fn+d2], where d1 (d2)
// is how far the false-positive (false-negative) count can grow from q
// before the bound drops below bestV (usually 0: the box is q alone).
func (sp *splits) pickTied(obj objective, bestV float64) int {
	bestC, bestP := -1, float32(0)
	for _, q := range sp.tied {
		f1, n1 := sp.ffp[q], sp.ffn[q]
		f2, n2 := f1, n1
		for f2 < int32(sp.neg) && sp.bound(obj, f2+1, n1) >= bestV {
			f2++
		}
		for n2 < int32(sp.pos) && sp.bound(obj, f1, n2+1) >= bestV {
			n2++
		}
		try := func(c int) {
			fp, fn := sp.counts(c)
			if sp.bound(obj, int32(fp), int32(fn)) != bestV {
				return
			}
			p := sp.plugin(obj, fp, fn)
			if bestC < 0 || p > bestP || (p == bestP && c < bestC) {
				bestC, bestP = c, p
			}
		}
		neg, pos := int32(sp.neg), int32(sp.pos)
		// Orientation +1: fp = neg − nb[k], fn = pb[k].
		lo, hi := overlap(sp.nb, neg-f2, neg-f1, sp.pb, n1, n2)
		for k := lo; k < hi; k++ {
			try(2 * k)
		}
		// Orientation −1: fp = nb[k], fn = pos − pb[k].
		lo, hi = overlap(sp.nb, f1, f2, sp.pb, pos-n2, pos-n1)
		for k := lo; k < hi; k++ {
			try(2*k + 1)
		}
	}
	if bestC < 0 {
		// Not reached while the tables and the objective are monotone in
		// floating point; if rounding ever broke that, scan every candidate.
		bestV := math.Inf(-1)
		for c := 0; c < 2*len(sp.nb); c++ {
			fp, fn := sp.counts(c)
			v, p := sp.bound(obj, int32(fp), int32(fn)), sp.plugin(obj, fp, fn)
			if v > bestV || (v == bestV && p > bestP) {
				bestC, bestV, bestP = c, v, p
			}
		}
	}
	return bestC
}

// overlap returns the range [lo, hi) of k with a[k] in [alo, ahi] and
// b[k] in [blo, bhi], for non-decreasing a and b.
func overlap(a []int32, alo, ahi int32, b []int32, blo, bhi int32) (lo, hi int) {
	la, _ := slices.BinarySearch(a, alo)
	ha, _ := slices.BinarySearch(a, ahi+1)
	lb, _ := slices.BinarySearch(b, blo)
	hb, _ := slices.BinarySearch(b, bhi+1)
	return max(la, lb), min(ha, hb)
}

// heapPush and heapPop keep h a binary max-heap by ub.
func heapPush(h []span, s span) []span {
	h = append(h, s)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p].ub >= h[i].ub {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	return h
}

func heapPop(h []span) ([]span, span) {
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && h[l].ub > h[m].ub {
			m = l
		}
		if r < n && h[r].ub > h[m].ub {
			m = r
		}
		if m == i {
			break
		}
		h[m], h[i] = h[i], h[m]
		i = m
	}
	return h, top
}

// sortKey maps a non-NaN float64 to a uint64 with the same order (−0 and +0
// map to the same key, as they compare equal).
func sortKey(s float64) uint64 {
	if s == 0 {
		s = 0
	}
	b := math.Float64bits(s)
	if b>>63 == 1 {
		return ^b
	}
	return b | 1<<63
}

// fromSortKey inverts sortKey.
func fromSortKey(k uint64) float64 {
	if k>>63 == 1 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}

// radixSort sorts keys in place by a least-significant-digit radix sort on
// bytes, skipping the bytes that all keys share; tmp is scratch memory,
// returned for reuse.
func radixSort(keys, tmp []uint64) []uint64 {
	n := len(keys)
	if n < 256 {
		slices.Sort(keys)
		return tmp
	}
	var hist [8][256]int
	for _, k := range keys {
		for b := 0; b < 8; b++ {
			hist[b][byte(k>>(8*b))]++
		}
	}
	if cap(tmp) < n {
		tmp = make([]uint64, n)
	}
	src, dst := keys, tmp[:n]
	for b := 0; b < 8; b++ {
		h := &hist[b]
		if h[byte(keys[0]>>(8*b))] == n {
			continue // every key has this byte
		}
		sum := 0
		for i := range h {
			h[i], sum = sum, sum+h[i]
		}
		shift := uint(8 * b)
		for _, k := range src {
			d := byte(k >> shift)
			dst[h[d]] = k
			h[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
	}
	return tmp
}

// Count applies rule to scored runs and returns the error counts.
func Count(rule Rule, scores []float64, labels []bool) stats.Counts {
	var c stats.Counts
	for i, s := range scores {
		p := rule.Positive(s)
		if labels[i] {
			c.Positives++
			if !p {
				c.FN++
			}
		} else {
			c.Negatives++
			if p {
				c.FP++
			}
		}
	}
	return c
}
