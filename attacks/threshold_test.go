package attacks

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/internal/radix"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// oldSplits is a transcription of the candidate search ChooseRules used
// before the exact one: scores sorted through an index closure, then (in
// best) every candidate's plug-in value rounded up to float32, candidates
// sorted by decreasing plug-in value then by index, and bounds evaluated
// in that order until the plug-in value can no longer beat the best bound
// or maxEvals candidates have been examined (4096 in the old code;
// math.MaxInt gives the uncapped search). It is kept as the reference for
// the tie-breaking, to show what the cap cost, and for the benchmarks.
type oldSplits struct {
	scores                  []float64
	idx                     []int32
	end, negBelow, posBelow []int32
	neg, pos                int
	delta, a                float64
	fpr, fnr                map[int]float64
}

func newOldSplits(scores []float64, labels []bool, delta, conf float64) *oldSplits {
	n := len(scores)
	sp := &oldSplits{scores: scores, delta: delta, a: (1 - conf) / 2, fpr: map[int]float64{}, fnr: map[int]float64{}}
	for _, l := range labels {
		if l {
			sp.pos++
		} else {
			sp.neg++
		}
	}
	sp.idx = make([]int32, n)
	for i := range sp.idx {
		sp.idx[i] = int32(i)
	}
	idx := sp.idx
	slices.SortFunc(idx, func(a, b int32) int { return cmp.Compare(scores[a], scores[b]) })
	sp.end, sp.negBelow, sp.posBelow = []int32{0}, []int32{0}, []int32{0}
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
		sp.end, sp.negBelow, sp.posBelow = append(sp.end, int32(j)), append(sp.negBelow, nb), append(sp.posBelow, pb)
		i = j
	}
	return sp
}

func (sp *oldSplits) counts(c int) (fp, fn int) {
	k := c / 2
	if c%2 == 0 {
		return sp.neg - int(sp.negBelow[k]), int(sp.posBelow[k])
	}
	return int(sp.negBelow[k]), sp.pos - int(sp.posBelow[k])
}

func (sp *oldSplits) upper(memo map[int]float64, k, n int) float64 {
	if u, ok := memo[k]; ok {
		return u
	}
	u, _ := stats.ClopperPearsonUpperTail(k, n, sp.a)
	memo[k] = u
	return u
}

func (sp *oldSplits) best(obj objective, maxEvals int) Selection {
	m := 2 * len(sp.end)
	vals, order := make([]float32, m), make([]int32, m)
	for c := range m {
		fp, fn := sp.counts(c)
		vals[c] = roundUp32(obj(float64(fp)/float64(sp.neg), float64(fn)/float64(sp.pos), sp.delta))
		order[c] = int32(c)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := cmp.Compare(vals[b], vals[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	bestC, bestV := int(order[0]), -1.0
	for k, c := range order {
		if float64(vals[c]) <= bestV || k == maxEvals {
			break
		}
		fp, fn := sp.counts(int(c))
		if v := obj(sp.upper(sp.fpr, fp, sp.neg), sp.upper(sp.fnr, fn, sp.pos), sp.delta); v > bestV {
			bestC, bestV = int(c), v
		}
	}
	fp, fn := sp.counts(bestC)
	o := 1
	if bestC%2 == 1 {
		o = -1
	}
	th := math.Inf(-1)
	switch e := int(sp.end[bestC/2]); {
	case e == len(sp.idx):
		th = math.Inf(1)
	case e > 0:
		lo, hi := sp.scores[sp.idx[e-1]], sp.scores[sp.idx[e]]
		th = lo + (hi-lo)/2
	}
	return Selection{Rule: Rule{th, o},
		Counts:  stats.Counts{FP: fp, Negatives: sp.neg, FN: fn, Positives: sp.pos},
		Epsilon: math.Max(bestV, 0)}
}

// oldChoose runs the old search for one objective.
func oldChoose(scores []float64, labels []bool, delta, conf float64, obj objective, maxEvals int) Selection {
	return newOldSplits(scores, labels, delta, conf).best(obj, maxEvals)
}

// bruteBest evaluates every candidate split (each distinct score and −Inf
// as threshold, positives at or above it, or strictly below it: together
// every split in both orientations) with stats.RegionBound and
// stats.GDPMuLowerBound directly, from counts made by sorting a copy of
// the scores — independent of the splits and tables of threshold.go.
func bruteBest(scores []float64, labels []bool, delta, conf float64) (region, gdp float64) {
	type sl struct {
		s float64
		l bool
	}
	v := make([]sl, len(scores))
	neg, pos := 0, 0
	for i, s := range scores {
		v[i] = sl{s, labels[i]}
		if labels[i] {
			pos++
		} else {
			neg++
		}
	}
	slices.SortFunc(v, func(a, b sl) int { return cmp.Compare(a.s, b.s) })
	eval := func(nb, pb int) {
		for _, c := range []stats.Counts{
			{FP: neg - nb, Negatives: neg, FN: pb, Positives: pos},
			{FP: nb, Negatives: neg, FN: pos - pb, Positives: pos},
		} {
			e, err := stats.RegionBound(c, delta, conf)
			if err != nil {
				panic(err)
			}
			region = math.Max(region, e.Epsilon)
			mu, _, _, err := stats.GDPMuLowerBound(c, conf)
			if err != nil {
				panic(err)
			}
			gdp = math.Max(gdp, mu)
		}
	}
	nb, pb := 0, 0
	eval(0, 0)
	for i := 0; i < len(v); {
		j := i
		for ; j < len(v) && v[j].s == v[i].s; j++ {
			if v[j].l {
				pb++
			} else {
				nb++
			}
		}
		eval(nb, pb)
		i = j
	}
	return region, gdp
}

// scoreSet draws a random training set of one of several shapes: rounded
// Gaussians (many ties), continuous Gaussians, all-equal scores, a tiny
// set, heavy class imbalance either way, and well-separated classes.
func scoreSet(rng *rand.Rand, shape int) ([]float64, []bool) {
	n := 2 + rng.IntN(300)
	if shape%5 == 4 {
		n = 600 + rng.IntN(2500) // above the radix sort's small-set cutoff
	}
	pPos := 0.5
	shift := 3 * rng.Float64()
	round := 0.0
	switch shape % 7 {
	case 0:
		round = 0.5
	case 1:
	case 2:
		shift, round = 0, 1e9 // all equal after rounding
	case 3:
		n = 2 + rng.IntN(5)
	case 4:
		pPos = 0.03
	case 5:
		pPos = 0.97
	case 6:
		shift = 6 + 4*rng.Float64()
		round = 0.25
	}
	scores, labels := make([]float64, n), make([]bool, n)
	for i := range scores {
		labels[i] = rng.Float64() < pPos
		scores[i] = rng.NormFloat64()
		if labels[i] {
			scores[i] += shift
		}
		if round > 0 {
			scores[i] = math.Round(scores[i]/round) * round
		}
	}
	labels[0], labels[n-1] = true, false
	if rng.IntN(2) == 0 { // the opposite orientation
		for i := range scores {
			scores[i] = -scores[i]
		}
	}
	return scores, labels
}

// Property test: on many random sets the exact search reaches the
// exhaustive maximum of both objectives, bit for bit (the bounds are the
// same floating-point computations), the reported counts are the chosen
// rule's counts on the set, and the rule is the one the uncapped old
// search chooses (same objective, same tie-breaking).
func TestChooseRulesMatchBruteForceAndOldSearch(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	rng := rand.New(rand.NewPCG(21, 22))
	var ch Chooser
	confs := []float64{0.9, 0.95, 0.99}
	deltas := []float64{0, 1e-5, 1e-3, 0.1}
	for trial := 0; trial < 700; trial++ {
		scores, labels := scoreSet(rng, trial)
		conf, delta := confs[trial%3], deltas[trial%4]
		sel, gsel, err := ch.ChooseRules(scores, labels, delta, conf)
		if err != nil {
			t.Fatal(err)
		}
		wantR, wantG := bruteBest(scores, labels, delta, conf)
		if sel.Epsilon != wantR {
			t.Fatalf("trial %d: region ε = %.17g, exhaustive %.17g", trial, sel.Epsilon, wantR)
		}
		if gsel.Epsilon != wantG {
			t.Fatalf("trial %d: GDP μ = %.17g, exhaustive %.17g", trial, gsel.Epsilon, wantG)
		}
		for _, s := range []Selection{sel, gsel} {
			if c := Count(s.Rule, scores, labels); c != s.Counts {
				t.Fatalf("trial %d: rule %+v counts %+v, reported %+v", trial, s.Rule, c, s.Counts)
			}
		}
		if e, _ := stats.RegionBound(sel.Counts, delta, conf); e.Epsilon != sel.Epsilon {
			t.Fatalf("trial %d: reported ε %g, its counts give %g", trial, sel.Epsilon, e.Epsilon)
		}
		if mu, _, _, _ := stats.GDPMuLowerBound(gsel.Counts, conf); mu != gsel.Epsilon {
			t.Fatalf("trial %d: reported μ %g, its counts give %g", trial, gsel.Epsilon, mu)
		}
		oldR := oldChoose(scores, labels, delta, conf, regionObjective, math.MaxInt)
		oldG := oldChoose(scores, labels, delta, conf, gdpObjective, math.MaxInt)
		if oldR != sel {
			t.Fatalf("trial %d: region selection %+v, old uncapped search %+v", trial, sel, oldR)
		}
		if oldG != gsel {
			t.Fatalf("trial %d: GDP selection %+v, old uncapped search %+v", trial, gsel, oldG)
		}
		// The package-level functions agree with the reused Chooser.
		if s, _ := ChooseRule(scores, labels, delta, conf); s != sel {
			t.Fatalf("trial %d: ChooseRule %+v, Chooser %+v", trial, s, sel)
		}
		if s, _ := ChooseRuleGDP(scores, labels, conf); s.Rule != gsel.Rule || s.Epsilon != gsel.Epsilon {
			t.Fatalf("trial %d: ChooseRuleGDP %+v, Chooser %+v", trial, s, gsel)
		}
	}
}

// separated draws n negatives from N(0, 1) and n positives from N(shift, 1).
func separated(n int, shift float64, seed uint64) ([]float64, []bool) {
	rng := rand.New(rand.NewPCG(seed, 3))
	scores, labels := make([]float64, 2*n), make([]bool, 2*n)
	for i := range scores {
		labels[i] = i%2 == 1
		scores[i] = rng.NormFloat64()
		if labels[i] {
			scores[i] += shift
		}
	}
	return scores, labels
}

// The case the capped search lost: well-separated classes with 10⁴ runs a
// side. Every split below the lowest positive (about 88% of the negatives
// lie there) has no false negative, so its plug-in value is +Inf, and the
// old search visited these in index order, from the lowest score up: its
// 4096 evaluations all went to splits with fn = 0 and fp ≥ 10⁴ − 4096,
// never reaching the best split with fn = 0 (the one just below the lowest
// positive). The exact search finds the exhaustive maximum.
func TestChooseRuleBeatsCappedSearch(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	scores, labels := separated(10000, 5, 7)
	const delta, conf = 1e-3, 0.95
	sel, err := ChooseRule(scores, labels, delta, conf)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := bruteBest(scores, labels, delta, conf)
	if sel.Epsilon != want {
		t.Fatalf("ε = %.17g, exhaustive %.17g", sel.Epsilon, want)
	}
	capped := oldChoose(scores, labels, delta, conf, regionObjective, 4096)
	t.Logf("exact ε = %.4f (counts %+v); capped search ε = %.4f (counts %+v)", sel.Epsilon, sel.Counts, capped.Epsilon, capped.Counts)
	// Splits 1..10 have fpr ≥ 1 − δ and plug-in value 0, so the capped
	// search's 4096 evaluations went to splits 11..4106: its best has
	// fp ≥ 10⁴ − 4106, hence ε ≤ ln((1 − δ − U(5894)) / U(0)) ≈ 6.99 with
	// U the Clopper–Pearson upper bound, while the exact search reaches
	// 7.82 (fp = 711, fn = 0).
	if capped.Counts.FP < 10000-4106 || capped.Epsilon >= sel.Epsilon-0.5 {
		t.Fatalf("capped search not worse: %+v vs %+v", capped, sel)
	}
	// Reference values from scipy.stats.beta.ppf (see
	// docs/derivations/threshold-search.md): eq. 12 at (711, 0) and
	// (5894, 0) of 10⁴ each, δ = 10⁻³, α/2 = 0.025.
	if sel.Counts.FP != 711 || sel.Counts.FN != 0 || math.Abs(sel.Epsilon-7.824736879500805) > 1e-9 {
		t.Fatalf("exact search %+v, scipy gives ε = 7.824736879500805 at (711, 0)", sel)
	}
	if math.Abs(capped.Epsilon-6.988749598211075) > 1e-9 && capped.Counts.FP == 5894 {
		t.Fatalf("capped search not worse: %+v vs %+v", capped, sel)
	}
	if unc := oldChoose(scores, labels, delta, conf, regionObjective, math.MaxInt); unc != sel {
		t.Fatalf("uncapped old search %+v, exact %+v", unc, sel)
	}
}

// Ties between distinct counts are rare with the real objectives (they
// need symmetric counts), so the tie-breaking is exercised with objectives
// that have plateaus: the region bound and μ rounded down to a grid, still
// non-increasing in each rate. Many candidates then share the maximum,
// including ones off the front, and the exact search must pick the same
// one as the uncapped old search.
func TestTieBreakingOnPlateaus(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	objs := []objective{
		func(a, b, d float64) float64 { return math.Floor(4*regionObjective(a, b, d)) / 4 },
		func(a, b, d float64) float64 { return math.Floor(2*gdpObjective(a, b, d)) / 2 },
		func(a, b, d float64) float64 { return math.Floor(regionObjective(a, b, d)) },
	}
	var sp splits
	for trial := 0; trial < 300; trial++ {
		scores, labels := scoreSet(rng, trial)
		const delta, conf = 1e-3, 0.9
		if err := sp.reset(scores, labels, delta, conf); err != nil {
			t.Fatal(err)
		}
		old := newOldSplits(scores, labels, delta, conf)
		for o, obj := range objs {
			got, want := sp.best(obj), old.best(obj, math.MaxInt)
			if got != want {
				t.Fatalf("trial %d, objective %d: %+v, old uncapped search %+v", trial, o, got, want)
			}
		}
	}
}

// The chosen rule reproduces its counts even where no threshold lies
// strictly between the two scores of a split: adjacent floats, infinite
// scores, and a gap too wide for lo + (hi−lo)/2 to stay finite. (The old
// search put such thresholds on a score or at NaN, and its rules then
// miscounted.)
func TestThresholdBetweenAwkwardScores(t *testing.T) {
	next := math.Nextafter(1, 2)
	cases := []struct {
		lo, hi float64
	}{
		{1, next},
		{math.Inf(-1), 3},
		{-3, math.Inf(1)},
		{math.Inf(-1), math.Inf(1)},
		{-math.MaxFloat64, math.MaxFloat64},
	}
	for _, c := range cases {
		for _, flip := range []bool{false, true} {
			// Three negatives at lo and three positives at hi (or the
			// reverse): the best rule separates them perfectly.
			var scores []float64
			var labels []bool
			for i := 0; i < 3; i++ {
				scores = append(scores, c.lo, c.hi)
				labels = append(labels, flip, !flip)
			}
			for _, ch := range []func() (Selection, error){
				func() (Selection, error) { return ChooseRule(scores, labels, 0, 0.5) },
				func() (Selection, error) { return ChooseRuleGDP(scores, labels, 0.5) },
			} {
				sel, err := ch()
				if err != nil {
					t.Fatal(err)
				}
				if sel.Counts.FP != 0 || sel.Counts.FN != 0 {
					t.Fatalf("%v/%v flip %v: counts %+v, want a perfect split", c.lo, c.hi, flip, sel.Counts)
				}
				if got := Count(sel.Rule, scores, labels); got != sel.Counts {
					t.Fatalf("%v/%v flip %v: rule %+v counts %+v, reported %+v", c.lo, c.hi, flip, sel.Rule, got, sel.Counts)
				}
			}
		}
	}
	// Where the midpoint exists it is used, as before.
	sel, _ := ChooseRule([]float64{1, 2, 1, 2}, []bool{false, true, false, true}, 0, 0.5)
	if sel.Rule != (Rule{1.5, 1}) {
		t.Fatalf("rule %+v, want threshold 1.5, orientation +1", sel.Rule)
	}
}

// The radix sort orders keys as slices.Sort orders the floats they encode
// (with −0 and +0 equal), on sets above and below its small-set cutoff,
// with negative, zero, infinite, subnormal and repeated values.
func TestRadixSortMatchesFloatOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	special := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), 5e-324, -5e-324,
		math.MaxFloat64, -math.MaxFloat64, 1, math.Nextafter(1, 2), -1}
	var tmp []uint64
	for _, n := range []int{1, 7, 511, 512, 513, 3000, 70000} {
		for rep := 0; rep < 3; rep++ {
			vals := make([]float64, n)
			for i := range vals {
				switch rng.IntN(4) {
				case 0:
					vals[i] = special[rng.IntN(len(special))]
				case 1:
					vals[i] = math.Round(rng.NormFloat64() * 3)
				default:
					vals[i] = rng.NormFloat64() * math.Exp(20*rng.NormFloat64())
				}
			}
			keys := make([]uint64, n)
			for i, v := range vals {
				keys[i] = sortKey(v)
			}
			tmp = radix.Sort(keys, tmp)
			slices.Sort(vals)
			for i, k := range keys {
				got := fromSortKey(k)
				if got != vals[i] || (got == 0 && math.Signbit(got)) {
					t.Fatalf("n=%d: position %d holds %v, slices.Sort has %v", n, i, got, vals[i])
				}
			}
		}
	}
}

// The front is exactly the set of non-dominated (fp, fn) pairs among all
// candidates, found here by comparing every pair with every other.
func TestFrontIsParetoSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	var sp splits
	for trial := 0; trial < 300; trial++ {
		scores, labels := scoreSet(rng, trial)
		if err := sp.reset(scores, labels, 0, 0.9); err != nil {
			t.Fatal(err)
		}
		type pair struct{ fp, fn int }
		var all []pair
		for c := 0; c < 2*len(sp.nb); c++ {
			fp, fn := sp.counts(c)
			all = append(all, pair{fp, fn})
		}
		var want []pair
		for _, p := range all {
			dominated := false
			for _, q := range all {
				if q != p && q.fp <= p.fp && q.fn <= p.fn {
					dominated = true
					break
				}
			}
			if !dominated && !slices.Contains(want, p) {
				want = append(want, p)
			}
		}
		slices.SortFunc(want, func(a, b pair) int { return cmp.Compare(a.fp, b.fp) })
		var got []pair
		for i := range sp.ffp {
			got = append(got, pair{int(sp.ffp[i]), int(sp.ffn[i])})
		}
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: front %v, Pareto set %v", trial, got, want)
		}
	}
}

// PrepareSorted on keys the caller sorted chooses the rules Prepare
// chooses from the scores, for both objectives; unsorted keys are refused.
func TestPrepareSortedMatchesPrepare(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for trial := range 50 {
		n := 2 + rng.IntN(4000)
		scores, labels := make([]float64, n), make([]bool, n)
		for i := range scores {
			scores[i] = math.Round(rng.NormFloat64()*20) / 8 // ties
			labels[i] = rng.IntN(2) == 0
		}
		labels[0], labels[1] = true, false
		var kneg, kpos []uint64
		for i, s := range scores {
			if labels[i] {
				kpos = append(kpos, SortKey(s))
			} else {
				kneg = append(kneg, SortKey(s))
			}
		}
		slices.Sort(kneg)
		slices.Sort(kpos)
		var a, b Chooser
		if err := a.Prepare(scores, labels, 1e-5, 0.95); err != nil {
			t.Fatal(err)
		}
		if err := b.PrepareSorted(kneg, kpos, 1e-5, 0.95); err != nil {
			t.Fatal(err)
		}
		for _, obj := range []Objective{RegionObjective, GDPObjective} {
			if x, y := a.Best(obj), b.Best(obj); x != y {
				t.Fatalf("trial %d: Prepare chose %+v, PrepareSorted %+v", trial, x, y)
			}
		}
	}
	var c Chooser
	if err := c.PrepareSorted([]uint64{3, 1}, []uint64{2}, 1e-5, 0.95); err == nil {
		t.Error("unsorted keys accepted")
	}
}

// mergeGroups (two merges side by side, without branches) gives the groups
// of a plain merge of the two sorted sides: on sides of 1 to 2000 keys
// with ties within and across them, from a few distinct keys to all
// distinct, and the two sides apart. radix.MedianKey, where the merge
// splits, is the key at rank ⌊n/2⌋.
func TestMergeGroupsMatchesPlainMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	for trial := range 500 {
		neg, pos := 1+rng.IntN(2000), 1+rng.IntN(2000)
		if trial < 50 {
			neg, pos = 1+rng.IntN(4), 1+rng.IntN(4)
		}
		levels := 1 + rng.IntN(3*(neg+pos))
		draw := func(n int, off float64) []uint64 {
			k := make([]uint64, n)
			for i := range k {
				k[i] = sortKey(float64(rng.IntN(levels)) - float64(levels)/2 + off)
			}
			slices.Sort(k)
			return k
		}
		off := 0.0 // every negative below every positive, or above
		if trial%10 == 1 {
			off = float64(levels)
		} else if trial%10 == 2 {
			off = -float64(levels)
		}
		var sp splits
		sp.kneg, sp.kpos, sp.neg, sp.pos = draw(neg, 0), draw(pos, off), neg, pos
		sp.mergeGroups()
		// The plain merge: every distinct key in order, with the counts
		// of each side at or below it.
		all := slices.Sorted(slices.Values(append(slices.Clone(sp.kneg), sp.kpos...)))
		if got, want := radix.MedianKey(sp.kneg, sp.kpos), all[len(all)/2]; got != want {
			t.Fatalf("trial %d: median key %x, want %x", trial, got, want)
		}
		keys := slices.Compact(all)
		wantNb, wantPb := []int32{0}, []int32{0}
		for _, k := range keys {
			i, _ := slices.BinarySearch(sp.kneg, k+1)
			j, _ := slices.BinarySearch(sp.kpos, k+1)
			wantNb, wantPb = append(wantNb, int32(i)), append(wantPb, int32(j))
		}
		if sp.groups != len(keys) || !slices.Equal(sp.nb, wantNb) || !slices.Equal(sp.pb, wantPb) {
			t.Fatalf("trial %d (%d negatives, %d positives, %d levels): %d groups, nb %v pb %v; want %d, %v %v",
				trial, neg, pos, levels, sp.groups, sp.nb, sp.pb, len(keys), wantNb, wantPb)
		}
	}
}
