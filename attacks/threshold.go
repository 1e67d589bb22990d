package attacks

import (
	"fmt"
	"math"
	"sort"

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
	return chooseRule(scores, labels, delta, confidence, regionObjective)
}

// ChooseRuleGDP is ChooseRule for the GDP estimator: it maximises the μ
// lower bound max(0, Φ⁻¹(1 − FPR_ub) − Φ⁻¹(FNR_ub)) on the training counts
// (the threshold that is best for the region bound sits at an extreme where
// μ_lb is loose, so each estimator gets its own rule).
func ChooseRuleGDP(scores []float64, labels []bool, confidence float64) (Selection, error) {
	return chooseRule(scores, labels, 0, confidence, gdpObjective)
}

func chooseRule(scores []float64, labels []bool, delta, confidence float64, obj objective) (Selection, error) {
	if err := stats.CheckDelta(delta); err != nil {
		return Selection{}, err
	}
	if err := stats.CheckConfidence(confidence); err != nil {
		return Selection{}, err
	}
	n := len(scores)
	if n != len(labels) {
		return Selection{}, fmt.Errorf("attacks: %d scores but %d labels", n, len(labels))
	}
	neg, pos := 0, 0
	for i, l := range labels {
		if math.IsNaN(scores[i]) {
			return Selection{}, fmt.Errorf("attacks: score %d is NaN", i)
		}
		if l {
			pos++
		} else {
			neg++
		}
	}
	if neg == 0 || pos == 0 {
		return Selection{}, fmt.Errorf("attacks: training set needs runs on both D and D′ (has %d and %d)", neg, pos)
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return scores[idx[a]] < scores[idx[b]] })

	// Candidate k (0..m) puts the threshold after the k-th group of equal
	// scores: below it predicted negative under orientation +1.
	type cand struct {
		t              float64
		negBelow, posB int // negatives / positives with score below t
		point          float64
		orient         int
	}
	var cands []cand
	negB, posB := 0, 0
	add := func(t float64) {
		// Orientation +1: positives predicted above t.
		fp, fn := neg-negB, posB
		e := obj.plugin(float64(fp)/float64(neg), float64(fn)/float64(pos), delta)
		cands = append(cands, cand{t, negB, posB, e, +1})
		// Orientation −1: positives predicted below t.
		fp, fn = negB, pos-posB
		e = obj.plugin(float64(fp)/float64(neg), float64(fn)/float64(pos), delta)
		cands = append(cands, cand{t, negB, posB, e, -1})
	}
	add(math.Inf(-1))
	for i := 0; i < n; {
		j := i
		for j < n && scores[idx[j]] == scores[idx[i]] {
			if labels[idx[j]] {
				posB++
			} else {
				negB++
			}
			j++
		}
		t := math.Inf(1)
		if j < n {
			t = scores[idx[i]] + (scores[idx[j]]-scores[idx[i]])/2
		}
		add(t)
		i = j
	}
	sort.SliceStable(cands, func(a, b int) bool { return cands[a].point > cands[b].point })
	cache := &cpCache{neg: neg, pos: pos, delta: delta, confidence: confidence,
		fpr: map[int]float64{}, fnr: map[int]float64{}}
	best := Selection{Epsilon: -1}
	for k, c := range cands {
		if c.point <= best.Epsilon || k == maxRegionEvals {
			break
		}
		fp, fn := neg-c.negBelow, c.posB
		if c.orient < 0 {
			fp, fn = c.negBelow, pos-c.posB
		}
		if e := obj.bound(cache, fp, fn); e > best.Epsilon {
			best = Selection{Rule: Rule{c.t, c.orient},
				Counts: stats.Counts{FP: fp, Negatives: neg, FN: fn, Positives: pos}, Epsilon: e}
		}
	}
	if best.Epsilon < 0 { // every plug-in value is 0: any rule gives 0
		c := cands[0]
		fp, fn := neg-c.negBelow, c.posB
		if c.orient < 0 {
			fp, fn = c.negBelow, pos-c.posB
		}
		best = Selection{Rule: Rule{c.t, c.orient}, Counts: stats.Counts{FP: fp, Negatives: neg, FN: fn, Positives: pos}}
	}
	return best, nil
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
