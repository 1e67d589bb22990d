package attacks

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mathext"

	"github.com/mcmcaudit/mcmcaudit/internal/radix"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// Rule is a decision rule on a score: predict D′ (positive) when
// Orientation·(score − Threshold) > 0.
type Rule struct {
	Threshold   float64 `json:"threshold"`
	Orientation int     `json:"orientation"` // +1: score above the threshold means D′; −1: below
}

// MarshalJSON implements json.Marshaler: a threshold at ±Inf (all scores
// on one side of it, as when every run released the same state) is
// written as the string "+Inf" or "-Inf" (stats.JSONFloat).
func (r Rule) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Threshold   stats.JSONFloat `json:"threshold"`
		Orientation int             `json:"orientation"`
	}{stats.JSONFloat(r.Threshold), r.Orientation})
}

// UnmarshalJSON implements json.Unmarshaler, accepting what MarshalJSON
// writes.
func (r *Rule) UnmarshalJSON(b []byte) error {
	var v struct {
		Threshold   stats.JSONFloat `json:"threshold"`
		Orientation int             `json:"orientation"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	r.Threshold, r.Orientation = float64(v.Threshold), v.Orientation
	return nil
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

// Objective is the criterion a rule is chosen to maximise, as a function of
// the two error rates (a for false positives, b for false negatives) and δ.
// At the Clopper–Pearson upper bounds of the rates it is the confidence
// bound; at the observed rates it is the plug-in value. The threshold
// search (docs/derivations/threshold-search.md) relies on an objective
// being non-increasing in each rate, so that the plug-in value is never
// smaller than the bound and the optimum lies on the Pareto front of the
// error counts; an objective that is not gives a rule that is valid (it is
// still chosen on selection runs only) but not optimal.
type Objective func(a, b, delta float64) float64

type objective = Objective

// RegionObjective is the region bound's criterion, Heller & Fetaya (2023)
// eq. 11 (eq. 12 at the Clopper–Pearson upper bounds).
func RegionObjective(a, b, delta float64) float64 { return regionObjective(a, b, delta) }

// GDPObjective is the GDP estimator's criterion, the μ of the Gaussian
// trade-off curve through (a, b) (Dong, Roth & Su 2019, Def. 2.7); δ plays
// no part.
func GDPObjective(a, b, delta float64) float64 { return gdpObjective(a, b, delta) }

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
// outlives one call. It is a map because a search needs only a few
// thousand of the n+1 entries.
type cpTable struct {
	n int
	a float64
	u map[int32]float64
}

// prepare makes t the table of (n, a), keeping its values when it already is.
func (t *cpTable) prepare(n int, a float64) {
	if t.u != nil && t.n == n && t.a == a {
		return
	}
	t.n, t.a = n, a
	if t.u == nil {
		t.u = make(map[int32]float64)
	}
	clear(t.u)
}

// at returns U(k).
func (t *cpTable) at(k int32) float64 {
	if u, ok := t.u[k]; ok {
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
type Chooser struct {
	sp    splits
	ready bool // a set is prepared
}

// ChooseRules is the package-level ChooseRules, reusing c's memory.
func (c *Chooser) ChooseRules(scores []float64, labels []bool, delta, confidence float64) (region, gdp Selection, err error) {
	if err := c.Prepare(scores, labels, delta, confidence); err != nil {
		return Selection{}, Selection{}, err
	}
	return c.Best(RegionObjective), c.Best(GDPObjective), nil
}

// Prepare sorts a scored selection set once, so that Best can then choose
// a rule for any number of objectives on it (the confidence sets the tail
// level α/2 of the Clopper–Pearson bounds each objective is evaluated at).
func (c *Chooser) Prepare(scores []float64, labels []bool, delta, confidence float64) error {
	err := c.sp.reset(scores, labels, delta, confidence)
	c.ready = err == nil
	return err
}

// Best returns the rule that maximises obj on the set last prepared, by the
// exact search ChooseRule describes; its Selection.Epsilon is obj at the
// Clopper–Pearson upper bounds of the rule's error rates. Calling it before
// a successful Prepare panics.
func (c *Chooser) Best(obj Objective) Selection {
	if !c.ready {
		panic("attacks: Chooser.Best before Prepare")
	}
	return c.sp.best(obj)
}

// splits holds the candidate thresholds of a scored training set: after
// sorting, group g (0..G−1) holds the runs with the g-th smallest distinct
// score; split k (0..G) puts the threshold after the first k groups, with
// nb[k] negatives and pb[k] positives below it. The sorted keys kneg and
// kpos are kept, so group g's score is read from them (score) rather than
// stored: one buffer less of the runs' size. Candidate c is split c/2 in
// orientation +1 (positives predicted above) when c is even, −1 when odd.
//
// The Pareto front (ffp[i], ffn[i]), i = 0..P−1, lists the error-count
// pairs that no other candidate beats in both counts, with ffp strictly
// increasing and ffn strictly decreasing; both objectives are
// non-increasing in each count, so the optimum is on it.
type splits struct {
	neg, pos int
	delta    float64
	groups   int // G
	nb, pb   []int32
	ffp, ffn []int32
	tabs     [2]cpTable
	fpT, fnT *cpTable
	// working memory
	kneg, kpos, tmp []uint64
	keys            []uint64 // the storage of kpos, then kneg
	ka, kb          []int32
	heap            []span
	tied            []int32
	tiedV           []float64
}

// span is a range [i, j] of the front with an upper bound of the objective
// over it.
type span struct {
	ub   float64
	i, j int32
}

// PrepareSorted is Prepare for a caller that has sorted the scores
// itself: kneg and kpos hold SortKey of the negatives' and the positives'
// scores (none NaN), each in increasing order. The Chooser reads them
// until the next Prepare; the caller must not change them meanwhile. An
// unsorted side is an error.
func (c *Chooser) PrepareSorted(kneg, kpos []uint64, delta, confidence float64) error {
	c.ready = false
	if err := stats.CheckDelta(delta); err != nil {
		return err
	}
	if err := stats.CheckConfidence(confidence); err != nil {
		return err
	}
	if len(kneg) == 0 || len(kpos) == 0 {
		return fmt.Errorf("attacks: training set needs runs on both D and D′ (has %d and %d)", len(kneg), len(kpos))
	}
	if len(kneg)+len(kpos) > math.MaxInt32 {
		return fmt.Errorf("attacks: at most %d scored runs, got %d", math.MaxInt32, len(kneg)+len(kpos))
	}
	if !slices.IsSorted(kneg) || !slices.IsSorted(kpos) {
		return fmt.Errorf("attacks: PrepareSorted needs each side's keys in increasing order")
	}
	if kneg[len(kneg)-1] == noKey || kpos[len(kpos)-1] == noKey {
		return fmt.Errorf("attacks: PrepareSorted got a key that is no score's (a NaN's)")
	}
	c.sp.kneg, c.sp.kpos = kneg, kpos
	c.sp.prepareSorted(len(kneg), len(kpos), delta, confidence)
	c.ready = true
	return nil
}

// SortKey maps a score other than NaN to the key PrepareSorted takes: the
// unsigned order of keys is the scores' order, and −0 and +0 share a key.
func SortKey(s float64) uint64 { return sortKey(s) }

// reset prepares the splits of a new scored set, keeping the memory.
func (sp *splits) reset(scores []float64, labels []bool, delta, confidence float64) error {
	neg, pos, err := checkScoredSet(scores, labels, delta, confidence)
	if err != nil {
		return err
	}
	if err := sp.sortKeys(scores, labels, neg, pos); err != nil {
		return err
	}
	sp.prepareSorted(neg, pos, delta, confidence)
	return nil
}

// prepareSorted finishes reset once kneg and kpos hold the sorted keys.
func (sp *splits) prepareSorted(neg, pos int, delta, confidence float64) {
	sp.neg, sp.pos, sp.delta = neg, pos, delta
	sp.mergeGroups()
	sp.buildFront()

	a := (1 - confidence) / 2
	sp.fpT, sp.fnT = &sp.tabs[0], &sp.tabs[1]
	sp.fpT.prepare(neg, a)
	if pos == neg {
		sp.fnT = sp.fpT // one table serves both rates
	} else {
		sp.fnT.prepare(pos, a)
	}
}

// checkScoredSet checks a scored training set and the levels of a rule
// choice, and returns its numbers of negatives (runs on D) and positives
// (on D′): both must be there, with one label per score.
func checkScoredSet(scores []float64, labels []bool, delta, confidence float64) (neg, pos int, err error) {
	if err := stats.CheckDelta(delta); err != nil {
		return 0, 0, err
	}
	if err := stats.CheckConfidence(confidence); err != nil {
		return 0, 0, err
	}
	n := len(scores)
	if n != len(labels) {
		return 0, 0, fmt.Errorf("attacks: %d scores but %d labels", n, len(labels))
	}
	if n > math.MaxInt32 {
		return 0, 0, fmt.Errorf("attacks: at most %d scored runs, got %d", math.MaxInt32, n)
	}
	for _, l := range labels {
		pos += radix.Bit(l)
	}
	neg = n - pos
	if neg == 0 || pos == 0 {
		return 0, 0, fmt.Errorf("attacks: training set needs runs on both D and D′ (has %d and %d)", neg, pos)
	}
	return neg, pos, nil
}

// sortKeys fills kneg and kpos with the sort keys of the negatives' and the
// positives' scores (neg and pos of them), each sorted; a NaN score is an
// error.
func (sp *splits) sortKeys(scores []float64, labels []bool, neg, pos int) error {
	// Every buffer is grown to its final size at once: growing by appends
	// would leave garbage of the runs' size behind on the first call.
	// Without branches on the label (labels are often interleaved at
	// random): one buffer holds the positives' keys, then the negatives',
	// and each key goes to the next slot of its side.
	keys := slices.Grow(sp.keys[:0], neg+pos)[:neg+pos]
	sp.keys = keys
	var in, ip int
	for i, l := range labels {
		s := scores[i]
		if math.IsNaN(s) {
			return fmt.Errorf("attacks: score %d is NaN", i)
		}
		b := radix.Bit(l)
		keys[radix.Slot(pos, ip, in, b)] = sortKey(s)
		ip, in = ip+b, in+1-b
	}
	kpos, kneg := keys[:pos:pos], keys[pos:]
	sp.kneg, sp.kpos = kneg, kpos
	if cap(sp.tmp) < max(neg, pos) {
		sp.tmp = make([]uint64, max(neg, pos))
	}
	sp.tmp = radix.Sort(kneg, sp.tmp)
	sp.tmp = radix.Sort(kpos, sp.tmp)
	return nil
}

// mergeGroups merges the sorted keys kneg and kpos into groups of equal
// scores: nb[k] and pb[k] count the negatives and positives in the first k
// groups. The merge has no branch on which side's key comes next (the
// labels are often interleaved at random, which defeats branch
// prediction), and runs as two merges side by side, of the keys below the
// median key of both sides and of the others: one merge waits at every
// step on the loads of its next keys, two overlap those waits. The second
// writes its groups after room for as many as the first can make, and is
// moved down once the first is done.
func (sp *splits) mergeGroups() {
	neg, pos, n := sp.neg, sp.pos, sp.neg+sp.pos
	kneg, kpos := sp.kneg, sp.kpos
	nb, pb := slices.Grow(sp.nb[:0], n+1)[:n+1], slices.Grow(sp.pb[:0], n+1)[:n+1]
	nb[0], pb[0] = 0, 0
	mid := radix.MedianKey(kneg, kpos)
	i1, _ := slices.BinarySearch(kneg, mid)
	j1, _ := slices.BinarySearch(kpos, mid)
	// Merge 0 takes the keys below mid, kneg[:i1] and kpos[:j1], into
	// groups 1, 2, …; merge 1 the others into groups o1, o1+1, ….
	o1 := i1 + j1 + 1
	i0, j0, g0, p0 := 0, 0, 0, uint64(noKey)
	i, j, g, p := i1, j1, o1-1, uint64(noKey)
	for (i0 < i1 || j0 < j1) && (i < neg || j < pos) {
		a, b := uint64(noKey), uint64(noKey)
		if i0 < i1 {
			a = kneg[i0]
		}
		if j0 < j1 {
			b = kpos[j0]
		}
		k := min(a, b)
		g0 += radix.Bit(k != p0)
		i0, j0 = i0+radix.Bit(a == k), j0+radix.Bit(b == k)
		nb[g0], pb[g0], p0 = int32(i0), int32(j0), k
		a, b = noKey, noKey
		if i < neg {
			a = kneg[i]
		}
		if j < pos {
			b = kpos[j]
		}
		k = min(a, b)
		g += radix.Bit(k != p)
		i, j = i+radix.Bit(a == k), j+radix.Bit(b == k)
		nb[g], pb[g], p = int32(i), int32(j), k
	}
	g0 = mergeRest(kneg[:i1], kpos[:j1], i0, j0, g0, p0, nb, pb)
	g = mergeRest(kneg, kpos, i, j, g, p, nb, pb)
	g1 := g - (o1 - 1)
	copy(nb[g0+1:], nb[o1:o1+g1])
	copy(pb[g0+1:], pb[o1:o1+g1])
	groups := g0 + g1
	sp.nb, sp.pb, sp.groups = nb[:groups+1], pb[:groups+1], groups
}

// noKey is no sort key (it would be a NaN's): it stands for a side whose
// keys are all taken, and for the key before the first.
const noKey = math.MaxUint64

// mergeRest finishes a merge of mergeGroups: kneg[i:] and kpos[j:] are
// left, g groups are written, the last of key prev; it returns the groups
// written in all. Each step takes the smallest key left, from either side
// or both: a new group unless it equals the last one's key, whose counts
// it updates otherwise.
func mergeRest(kneg, kpos []uint64, i, j, g int, prev uint64, nb, pb []int32) int {
	for i < len(kneg) || j < len(kpos) {
		a, b := uint64(noKey), uint64(noKey)
		if i < len(kneg) {
			a = kneg[i]
		}
		if j < len(kpos) {
			b = kpos[j]
		}
		k := min(a, b)
		g += radix.Bit(k != prev)
		i, j = i+radix.Bit(a == k), j+radix.Bit(b == k)
		nb[g], pb[g], prev = int32(i), int32(j), k
	}
	return g
}

// buildFront computes the front. Within orientation +1 (pairs in
// decreasing k, fp non-decreasing) the pair of split k is dominated by a
// neighbour unless the group above it holds a positive and the group below
// it a negative; within −1, unless the group above holds a negative and the
// one below a positive. The two filtered lists are merged by increasing fp,
// keeping a pair when its fn is below every fn before it (and replacing the
// last pair kept when the fp is the same).
func (sp *splits) buildFront() {
	G := sp.groups
	nb, pb := sp.nb, sp.pb
	neg, pos := int32(sp.neg), int32(sp.pos)
	// Both filters in one pass, without branches on the groups (labels are
	// often interleaved at random, which defeats branch prediction): slot
	// n of each list is always written, and kept when its condition holds.
	// negAt, posAt: group k holds a negative, a positive; negBefore,
	// posBefore: group k−1 does. The virtual groups −1 and G hold both.
	// a lists orientation +1's splits in increasing k, to be walked from
	// its end; b lists orientation −1's.
	a := slices.Grow(sp.ka[:0], G+1)[:G+1]
	b := slices.Grow(sp.kb[:0], G+1)[:G+1]
	na, nb1 := 0, 0
	negBefore, posBefore := int32(1), int32(1)
	for k := 0; k <= G; k++ {
		negAt, posAt := int32(1), int32(1)
		if k < G {
			negAt, posAt = min(1, nb[k+1]-nb[k]), min(1, pb[k+1]-pb[k])
		}
		a[na], b[nb1] = int32(k), int32(k)
		na += int(posAt & negBefore)
		nb1 += int(negAt & posBefore)
		negBefore, posBefore = negAt, posAt
	}
	a, b = a[:na], b[:nb1]
	sp.ka, sp.kb = a, b
	ffp, ffn := sp.ffp[:0], sp.ffn[:0]
	minFn := int32(math.MaxInt32)
	emit := func(fp, fn int32) {
		if fn >= minFn {
			return
		}
		if l := len(ffp) - 1; l >= 0 && ffp[l] == fp {
			ffn[l] = fn
		} else {
			ffp, ffn = append(ffp, fp), append(ffn, fn)
		}
		minFn = fn
	}
	i, j := len(a)-1, 0
	for i >= 0 || j < len(b) {
		if j == len(b) || (i >= 0 && neg-nb[a[i]] <= nb[b[j]]) {
			emit(neg-nb[a[i]], pb[a[i]])
			i--
		} else {
			emit(nb[b[j]], pos-pb[b[j]])
			j++
		}
	}
	sp.ffp, sp.ffn = ffp, ffn
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
	case sp.groups:
		return math.Inf(1)
	}
	lo, hi := sp.score(k-1), sp.score(k)
	t := lo + (hi-lo)/2
	if lo < t && t < hi {
		return t
	}
	if o > 0 {
		return lo
	}
	return hi
}

// score returns the score of group g: the smallest key not yet below it,
// among the negatives from nb[g] and the positives from pb[g] on.
func (sp *splits) score(g int) float64 {
	i, j := int(sp.nb[g]), int(sp.pb[g])
	switch {
	case i == sp.neg:
		return fromSortKey(sp.kpos[j])
	case j == sp.pos:
		return fromSortKey(sp.kneg[i])
	}
	return fromSortKey(min(sp.kneg[i], sp.kpos[j]))
}

// bound is the objective at the Clopper–Pearson upper bounds of (fp, fn).
func (sp *splits) bound(obj objective, fp, fn int32) float64 {
	return obj(sp.fpT.at(fp), sp.fnT.at(fn), sp.delta)
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
	bound := func(fp, fn int32) float64 { return sp.bound(obj, fp, fn) }
	plugin := func(fp, fn int32) float64 { return sp.pluginValue(obj, fp, fn) }
	// Only positive maxima are looked for here: a maximum of 0 is attained
	// by every candidate.
	bestV := sp.searchFront(bound, plugin, func(v float64) float64 {
		return math.Max(v, math.SmallestNonzeroFloat64)
	})
	var c int
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
	// The chosen candidate's own bound: bestV on every path (0 when bestV
	// is 0), and consistent with the counts even if a fallback ran.
	return Selection{Rule: Rule{sp.threshold(c/2, o), o},
		Counts:  stats.Counts{FP: fp, Negatives: sp.neg, FN: fn, Positives: sp.pos},
		Epsilon: math.Max(0, sp.bound(obj, int32(fp), int32(fn)))}
}

// pluginValue is obj at the observed rates (not rounded).
func (sp *splits) pluginValue(obj objective, fp, fn int32) float64 {
	return obj(float64(fp)/float64(sp.neg), float64(fn)/float64(sp.pos), sp.delta)
}

// searchFront maximises value, a function of the counts that is
// non-increasing in each, over the front by a best-first branch and bound
// over ranges: on [i, j] no pair has fewer false positives than pair i nor
// fewer false negatives than pair j, so value(ffp[i], ffn[j]) bounds the
// range (exactly when i = j), and so does pre (a cheaper upper bound of
// value, or nil). A range is split in halves until it is a single pair or
// provably below floor(best so far). floor(v) ≤ v says which values count
// as tying with a maximum v; it must be non-decreasing. It returns the
// maximum (−Inf if no pair reaches floor(−Inf)) and leaves in sp.tied
// every front pair whose value is at least floor(maximum).
func (sp *splits) searchFront(value, pre func(fp, fn int32) float64, floor func(float64) float64) float64 {
	best := math.Inf(-1)
	sp.tied, sp.tiedV = sp.tied[:0], sp.tiedV[:0]
	h := sp.heap[:0]
	consider := func(i, j int32) {
		fp, fn := sp.ffp[i], sp.ffn[j]
		lim := floor(best)
		if pre != nil && pre(fp, fn) < lim {
			return
		}
		ub := value(fp, fn)
		if ub < lim {
			return
		}
		if i < j {
			h = heapPush(h, span{ub, i, j})
			return
		}
		if ub > best {
			best = ub
			// Drop the pairs that no longer tie.
			lim, k := floor(best), 0
			for t, v := range sp.tiedV {
				if v >= lim {
					sp.tied[k], sp.tiedV[k] = sp.tied[t], v
					k++
				}
			}
			sp.tied, sp.tiedV = sp.tied[:k], sp.tiedV[:k]
		}
		sp.tied, sp.tiedV = append(sp.tied, i), append(sp.tiedV, ub)
	}
	consider(0, int32(len(sp.ffp)-1))
	for len(h) > 0 && h[0].ub >= floor(best) {
		var s span
		h, s = heapPop(h)
		mid := s.i + (s.j-s.i)/2
		consider(s.i, mid)
		consider(mid+1, s.j)
	}
	sp.heap = h
	return best
}

// grow returns the largest d in [0, limit] with ok(d), for ok true at 0
// and monotone (true up to some d, false after): an exponential search
// followed by bisection.
func grow(ok func(d int32) bool, limit int32) int32 {
	lo, step := int32(0), int32(1)
	for lo < limit {
		hi := min(lo+step, limit)
		if !ok(hi) {
			// The answer is in [lo, hi).
			for hi-lo > 1 {
				m := lo + (hi-lo)/2
				if ok(m) {
					lo = m
				} else {
					hi = m
				}
			}
			return lo
		}
		lo, step = hi, 2*step
	}
	return lo
}

// box returns the candidate ranges, per orientation, whose counts lie in
// [f1, f2] × [n1, n2]: candidates 2k for k in [lo1, hi1), 2k+1 for k in
// [lo2, hi2).
func (sp *splits) box(f1, f2, n1, n2 int32) (lo1, hi1, lo2, hi2 int) {
	neg, pos := int32(sp.neg), int32(sp.pos)
	// Orientation +1: fp = neg − nb[k], fn = pb[k].
	lo1, hi1 = overlap(sp.nb, neg-f2, neg-f1, sp.pb, n1, n2)
	// Orientation −1: fp = nb[k], fn = pos − pb[k].
	lo2, hi2 = overlap(sp.nb, f1, f2, sp.pb, pos-n2, pos-n1)
	return
}

// tiedBox returns the box of counts that can tie with front pair q under a
// value non-increasing in each count: every candidate p dominated by q
// with tie(p) lies in [q.fp, q.fp+d1] × [q.fn, q.fn+d2], where d1 (d2) is
// how far the false-positive (false-negative) count can grow from q, the
// other held, before tie fails (usually 0: the box is q alone).
func (sp *splits) tiedBox(q int32, tie func(fp, fn int32) bool) (f1, f2, n1, n2 int32) {
	f1, n1 = sp.ffp[q], sp.ffn[q]
	f2 = f1 + grow(func(d int32) bool { return tie(f1+d, n1) }, int32(sp.neg)-f1)
	n2 = n1 + grow(func(d int32) bool { return tie(f1, n1+d) }, int32(sp.pos)-n1)
	return
}

// pickPlugin handles a maximum bound of 0, which every candidate attains:
// the winner is the candidate with the largest plug-in value rounded up to
// float32, then the smallest index. The plug-in value is monotone in the
// counts, so the front holds its maximum vmax, and every candidate rounding
// to vmax is dominated by a front pair that does.
func (sp *splits) pickPlugin(obj objective) int {
	plugin := func(fp, fn int32) float64 { return sp.pluginValue(obj, fp, fn) }
	// The smallest float64 that rounds up to the same float32 as v.
	floor := func(v float64) float64 {
		if math.IsInf(v, -1) {
			return v
		}
		r := roundUp32(v)
		return math.Nextafter(float64(math.Nextafter32(r, float32(math.Inf(-1)))), math.Inf(1))
	}
	vmax := roundUp32(sp.searchFront(plugin, nil, floor))
	tie := func(fp, fn int32) bool { return roundUp32(plugin(fp, fn)) == vmax }
	bestC := -1
	for _, q := range sp.tied {
		f1, f2, n1, n2 := sp.tiedBox(q, tie)
		lo1, hi1, lo2, hi2 := sp.box(f1, f2, n1, n2)
		for k := lo1; k < hi1 && (bestC < 0 || 2*k < bestC); k++ {
			if fp, fn := sp.counts(2 * k); tie(int32(fp), int32(fn)) {
				bestC = 2 * k
				break
			}
		}
		for k := lo2; k < hi2 && (bestC < 0 || 2*k+1 < bestC); k++ {
			if fp, fn := sp.counts(2*k + 1); tie(int32(fp), int32(fn)) {
				bestC = 2*k + 1
				break
			}
		}
	}
	if bestC < 0 {
		// Not reached while the plug-in value is monotone in floating
		// point; if rounding ever broke that, a full scan is still right.
		bestP := float32(math.Inf(-1))
		for c := 0; c < 2*len(sp.nb); c++ {
			if fp, fn := sp.counts(c); roundUp32(plugin(int32(fp), int32(fn))) > bestP {
				bestC, bestP = c, roundUp32(plugin(int32(fp), int32(fn)))
			}
		}
	}
	return bestC
}

// pickTied returns, among all candidates whose bound equals bestV > 0, the
// one with the largest plug-in value rounded up to float32, then the
// smallest index. Such a candidate is dominated by a front pair whose bound
// is bestV too (the bound is monotone), and lies in that pair's tiedBox.
func (sp *splits) pickTied(obj objective, bestV float64) int {
	tie := func(fp, fn int32) bool { return sp.bound(obj, fp, fn) >= bestV }
	bestC, bestP := -1, float32(0)
	try := func(c int) {
		fp, fn := sp.counts(c)
		if sp.bound(obj, int32(fp), int32(fn)) != bestV {
			return
		}
		p := roundUp32(sp.pluginValue(obj, int32(fp), int32(fn)))
		if bestC < 0 || p > bestP || (p == bestP && c < bestC) {
			bestC, bestP = c, p
		}
	}
	for _, q := range sp.tied {
		lo1, hi1, lo2, hi2 := sp.box(sp.tiedBox(q, tie))
		for k := lo1; k < hi1; k++ {
			try(2 * k)
		}
		for k := lo2; k < hi2; k++ {
			try(2*k + 1)
		}
	}
	if bestC < 0 {
		// Not reached while the tables and the objective are monotone in
		// floating point; if rounding ever broke that, scan every candidate.
		bestV := math.Inf(-1)
		for c := 0; c < 2*len(sp.nb); c++ {
			fp, fn := sp.counts(c)
			v := sp.bound(obj, int32(fp), int32(fn))
			p := roundUp32(sp.pluginValue(obj, int32(fp), int32(fn)))
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
func sortKey(s float64) uint64 { return radix.FloatKey(s) }

// fromSortKey inverts sortKey.
func fromSortKey(k uint64) float64 {
	if k>>63 == 1 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}

// Count applies rule to scored runs and returns the error counts.
func Count(rule Rule, scores []float64, labels []bool) stats.Counts {
	var c stats.Counts
	for i, s := range scores {
		Tally(&c, rule.Positive(s), labels[i])
	}
	return c
}

// Tally adds one run to c: label is true for a run on D′, positive for the
// attack's guess that it is.
func Tally(c *stats.Counts, positive, label bool) {
	// Without branches: labels and predictions are often interleaved at
	// random, which defeats branch prediction.
	p, l := radix.Bit(positive), radix.Bit(label)
	c.Positives += l
	c.Negatives += 1 - l
	c.FN += l &^ p
	c.FP += p &^ l
}
