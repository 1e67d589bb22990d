package attacks

import (
	"cmp"
	"encoding/json"
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

// objective is what a rule is chosen to maximise: bound is the
// confidence-bounded criterion at counts (fp, fn), plugin the same formula
// at the observed rates, which must never be smaller than bound (it prunes
// the search).
type objective struct {
	bound  func(c *cpCache, fp, fn int) float64
	plugin func(fpr, fnr, delta float64) float64
}

var regionObjective = objective{
	bound: func(c *cpCache, fp, fn int) float64 { return c.region(fp, fn) },
	plugin: func(fpr, fnr, delta float64) float64 {
		e, _ := stats.EpsilonFromRates(fpr, fnr, delta)
		return e
	},
}

// gdpMu is max(0, Φ⁻¹(1−a) − Φ⁻¹(b)) (MATH.md §2), decreasing in a and b.
func gdpMu(a, b float64) float64 {
	mu := -mathext.NormalQuantile(a) - mathext.NormalQuantile(b)
	if !(mu > 0) {
		return 0
	}
	return mu
}

var gdpObjective = objective{
	bound: func(c *cpCache, fp, fn int) float64 {
		return gdpMu(c.upper(c.fpr, fp, c.neg), c.upper(c.fnr, fn, c.pos))
	},
	plugin: func(fpr, fnr, _ float64) float64 { return gdpMu(fpr, fnr) },
}

// cpCache memoises the one-sided Clopper–Pearson upper bounds of the two
// error rates (each at tail level α/2, as in stats.RegionBound) by count.
type cpCache struct {
	neg, pos          int
	delta, confidence float64
	fpr, fnr          map[int]float64
}

func (c *cpCache) upper(memo map[int]float64, k, n int) float64 {
	if u, ok := memo[k]; ok {
		return u
	}
	u, err := stats.ClopperPearsonUpperTail(k, n, (1-c.confidence)/2)
	if err != nil {
		panic(err) // counts are in range by construction
	}
	memo[k] = u
	return u
}

// region is stats.RegionBound's ε for these counts.
func (c *cpCache) region(fp, fn int) float64 {
	e, _ := stats.EpsilonFromRates(c.upper(c.fpr, fp, c.neg), c.upper(c.fnr, fn, c.pos), c.delta)
	return e
}

// maxRegionEvals caps the exact evaluations of ChooseRule. Reaching it can
// only cost power (a slightly worse threshold), never validity: the rule is
// chosen on training runs and its errors are counted on fresh ones.
const maxRegionEvals = 4096

// ChooseRule picks the threshold and orientation that maximise the region
// bound (Heller eq. 12) computed from the counts on (scores, labels): every
// split between consecutive distinct scores is a candidate, in both
// orientations. It is meant for training runs only (A1, or the
// threshold-selection split): choosing a threshold on the runs that are then
// counted would invalidate the bound.
//
// The region bound never exceeds the plug-in bound of eq. 11 at the same
// counts (the Clopper–Pearson upper bounds are at least the observed rates),
// so candidates are examined in decreasing order of the plug-in value and
// the search stops when no remaining candidate can beat the best bound:
// exact, and usually after a handful of Beta quantiles (at most
// maxRegionEvals candidates are examined).
func ChooseRule(scores []float64, labels []bool, delta, confidence float64) (Selection, error) {
	sp, err := newSplits(scores, labels, delta, confidence)
	if err != nil {
		return Selection{}, err
	}
	return sp.best(regionObjective), nil
}

// ChooseRuleGDP is ChooseRule for the GDP estimator: it maximises the μ
// lower bound max(0, Φ⁻¹(1 − FPR_ub) − Φ⁻¹(FNR_ub)) on the training counts
// (the threshold that is best for the region bound sits at an extreme where
// μ_lb is loose, so each estimator gets its own rule).
func ChooseRuleGDP(scores []float64, labels []bool, confidence float64) (Selection, error) {
	sp, err := newSplits(scores, labels, 0, confidence)
	if err != nil {
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
// callers that choose rules for many release points in turn (an audit of
// 10⁶ runs would otherwise allocate tens of megabytes per point).
type Chooser struct{ sp splits }

// ChooseRules is the package-level ChooseRules, reusing c's memory.
func (c *Chooser) ChooseRules(scores []float64, labels []bool, delta, confidence float64) (region, gdp Selection, err error) {
	if err := c.sp.reset(scores, labels, delta, confidence); err != nil {
		return Selection{}, Selection{}, err
	}
	return c.sp.best(regionObjective), c.sp.best(gdpObjective), nil
}

// splits holds the candidate thresholds of a scored training set: after
// sorting, group g (0..m−1) holds equal scores; split k (0..m) puts the
// threshold after the first k groups, with negBelow[k] negatives and
// posBelow[k] positives below it.
type splits struct {
	neg, pos int
	// end[k] is the number of sorted scores below split k; the threshold
	// is computed from the scores when a rule is returned.
	end                []int32
	scores             []float64
	negBelow, posBelow []int32
	cache              *cpCache
	delta              float64
	// working memory, reused by reset and best
	idx, order []int32
	vals       []float32
}

// threshold returns the threshold of split k: midway between the last
// score below it and the first above (±Inf at the ends).
func (sp *splits) threshold(k int) float64 {
	e := int(sp.end[k])
	switch {
	case e == 0:
		return math.Inf(-1)
	case e == len(sp.idx):
		return math.Inf(1)
	}
	lo, hi := sp.scores[sp.idx[e-1]], sp.scores[sp.idx[e]]
	return lo + (hi-lo)/2
}

// roundUp32 returns the smallest float32 ≥ x, so that a float32 plug-in
// value still bounds the region bound from above.
func roundUp32(x float64) float32 {
	f := float32(x)
	if float64(f) < x {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f
}

func newSplits(scores []float64, labels []bool, delta, confidence float64) (*splits, error) {
	sp := &splits{}
	return sp, sp.reset(scores, labels, delta, confidence)
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
	neg, pos := 0, 0
	for i, l := range labels {
		if math.IsNaN(scores[i]) {
			return fmt.Errorf("attacks: score %d is NaN", i)
		}
		if l {
			pos++
		} else {
			neg++
		}
	}
	if neg == 0 || pos == 0 {
		return fmt.Errorf("attacks: training set needs runs on both D and D′ (has %d and %d)", neg, pos)
	}
	idx := sp.idx[:0]
	for i := 0; i < n; i++ {
		idx = append(idx, int32(i))
	}
	sp.idx = idx
	slices.SortFunc(idx, func(a, b int32) int { return cmp.Compare(scores[a], scores[b]) })
	sp.neg, sp.pos, sp.delta = neg, pos, delta
	sp.cache = &cpCache{neg: neg, pos: pos, delta: delta, confidence: confidence, fpr: map[int]float64{}, fnr: map[int]float64{}}
	sp.scores = scores
	sp.end, sp.negBelow, sp.posBelow = sp.end[:0], sp.negBelow[:0], sp.posBelow[:0]
	sp.end = append(sp.end, 0)
	sp.negBelow = append(sp.negBelow, 0)
	sp.posBelow = append(sp.posBelow, 0)
	var nb, pb int32
	for i := 0; i < n; {
		j := i
		for j < n && scores[idx[j]] == scores[idx[i]] {
			if labels[idx[j]] {
				pb++
			} else {
				nb++
			}
			j++
		}
		sp.end = append(sp.end, int32(j))
		sp.negBelow = append(sp.negBelow, nb)
		sp.posBelow = append(sp.posBelow, pb)
		i = j
	}
	return nil
}

// counts returns the error counts of candidate c: split c/2 with
// orientation +1 (positives predicted above the threshold) for even c, −1
// for odd c.
func (sp *splits) counts(c int) (fp, fn int) {
	k := c / 2
	nb, pb := int(sp.negBelow[k]), int(sp.posBelow[k])
	if c%2 == 0 {
		return sp.neg - nb, pb
	}
	return nb, sp.pos - pb
}

// best runs the branch-and-bound search for one objective.
func (sp *splits) best(obj objective) Selection {
	m := 2 * len(sp.end)
	if cap(sp.vals) < m {
		sp.vals, sp.order = make([]float32, m), make([]int32, m)
	}
	vals, order := sp.vals[:m], sp.order[:m]
	for c := 0; c < m; c++ {
		fp, fn := sp.counts(c)
		vals[c] = roundUp32(obj.plugin(float64(fp)/float64(sp.neg), float64(fn)/float64(sp.pos), sp.delta))
		order[c] = int32(c)
	}
	// Decreasing plug-in value; ties by candidate index, so the result is
	// the same on every run.
	slices.SortFunc(order, func(a, b int32) int {
		if c := cmp.Compare(vals[b], vals[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	bestC, bestV := int(order[0]), -1.0
	for k, c := range order {
		if float64(vals[c]) <= bestV || k == maxRegionEvals {
			break
		}
		fp, fn := sp.counts(int(c))
		if v := obj.bound(sp.cache, fp, fn); v > bestV {
			bestC, bestV = int(c), v
		}
	}
	fp, fn := sp.counts(bestC)
	orient := 1
	if bestC%2 == 1 {
		orient = -1
	}
	return Selection{Rule: Rule{sp.threshold(bestC / 2), orient},
		Counts:  stats.Counts{FP: fp, Negatives: sp.neg, FN: fn, Positives: sp.pos},
		Epsilon: math.Max(bestV, 0)}
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
