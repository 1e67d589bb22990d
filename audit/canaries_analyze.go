package audit

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/mcmcaudit/mcmcaudit/internal/radix"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// CanaryInfo describes a canary design in its report (Report.Canaries):
// what is particular to it beside the bounds every design reports.
type CanaryInfo struct {
	// Canaries is m, Runs the runs pooled, Kind how the canaries were made
	// and Included how many of them were in (S_i = +1).
	Canaries int    `json:"canaries"`
	Runs     int    `json:"runs"`
	Kind     string `json:"kind,omitempty"`
	Included int    `json:"included"`
	// Guesses are the (k₊, k₋) pairs tested and GuessRule how they were
	// chosen (fixed in advance, or a grid paid for with Bonferroni).
	Guesses   []Guess `json:"guesses"`
	GuessRule string  `json:"guess_rule"`
	// Score is the score the canaries were ranked by: ScoreCalibrated,
	// or absent for the raw score (ScoreRaw); References is R, the
	// reference runs a calibrated score subtracts the mean of (absent for
	// the raw score).
	Score      string `json:"score,omitempty"`
	References int    `json:"references,omitempty"`
	// ReferenceCanaries is what the reference runs trained on besides D
	// (ReferenceAll; absent: none) and AverageReleases whether a score
	// is the mean over the releases so far (CanaryDesign).
	ReferenceCanaries string `json:"reference_canaries,omitempty"`
	AverageReleases   bool   `json:"average_releases,omitempty"`
}

// CanaryAttack names the canary design's attack: the ranking of the
// canaries by score, of which a guess pair (k₊, k₋) guesses the k₊
// highest in and the k₋ lowest out.
const CanaryAttack = "canary score ranking"

// CanaryAttackCalibrated names the attack of a calibrated score
// (ScoreCalibrated): the same ranking, of the calibrated scores.
const CanaryAttackCalibrated = "calibrated canary score ranking"

// averagedSuffix ends the attack's name when the scores are averaged over
// the releases (CanaryDesign.AverageReleases).
const averagedSuffix = " (mean over the releases so far)"

// canaryAttack returns the name of the design's attack.
func canaryAttack(cd *CanaryDesign) string {
	name := CanaryAttack
	if cd.Calibrated() {
		name = CanaryAttackCalibrated
	}
	if cd.AverageReleases {
		name += averagedSuffix
	}
	return name
}

// Descriptive are figures of an attack that carry no guarantee: the area
// under its ROC curve and its true-positive rate where the false-positive
// rate is at most 1% and 0.1%, measured on the same outcomes the bound
// uses, with no confidence interval.
type Descriptive struct {
	AUROC   stats.JSONFloat `json:"auroc"`
	TPRAt1  stats.JSONFloat `json:"tpr_at_fpr_1pct"`
	TPRAt01 stats.JSONFloat `json:"tpr_at_fpr_0.1pct"`
	// ROC is the ROC curve of the same scores on the same outcomes,
	// sampled: at each false-positive rate m/negatives of a grid of
	// counts m, about logarithmic from 1 to the negatives and holding the
	// largest m with FPR ≤ 1% and ≤ 0.1%, the largest TPR among thresholds
	// whose FPR is at most it (the definition of TPRAt1 and TPRAt01, which
	// are its values there). Empty when a class is empty. Not in the JSON
	// document: the report's plots draw it.
	ROC []ROCPoint `json:"-"`
}

// ROCPoint is a point of a sampled ROC curve.
type ROCPoint struct{ FPR, TPR float64 }

// rocGridPoints is about the number of points of a sampled ROC curve.
const rocGridPoints = 120

// rocGrid returns the false-positive counts at which an ROC curve over
// neg negatives is sampled: 1, …, neg about evenly on a log scale, with
// the largest counts whose rates are at most 1% and 0.1%, increasing.
func rocGrid(neg int) []int {
	ms := []int{neg}
	for i := 0; i < rocGridPoints; i++ {
		ms = append(ms, int(math.Round(math.Pow(float64(neg), float64(i)/rocGridPoints))))
	}
	for _, f := range []float64{0.01, 0.001} {
		if m := maxCountAt(neg, f); m > 0 {
			ms = append(ms, m)
		}
	}
	slices.Sort(ms)
	return slices.Compact(ms)
}

// maxCountAt is the largest m with float64(m)/float64(neg) ≤ f: the most
// false positives at a false-positive rate of at most f, as the rate is
// computed.
func maxCountAt(neg int, f float64) int {
	m := int(math.Floor(f * float64(neg)))
	for m > 0 && float64(m)/float64(neg) > f {
		m--
	}
	for float64(m+1)/float64(neg) <= f {
		m++
	}
	return m
}

// DescriptiveNote labels the descriptive figures in every report.
const DescriptiveNote = "AUROC and TPR at FPR 1% / 0.1% describe the attack on these outcomes; they carry no guarantee and no confidence"

// designAnalysis is what a design does between its trials and the parts
// of the report every design shares (test accuracy, utility): it fills
// the release points' bounds, the headline and the verdict.
type designAnalysis interface {
	analyze(ctx context.Context, t *Trials, r *Report) error
}

// analysis returns the analysis of the audit's design.
func (a *Audit) analysis() designAnalysis {
	if a.opts.Canaries != nil {
		return canaryDesign{a}
	}
	return runsDesign{a}
}

// canaryDesign is the analysis of the canary (one-run) design: the scores
// of every canary, from the run it belongs to, at each release point,
// ranked; every guess estimator's bound from the guesses of each pair.
type canaryDesign struct{ a *Audit }

// analyze fills r's release points, headline and verdict.
func (d canaryDesign) analyze(ctx context.Context, t *Trials, r *Report) error {
	a := d.a
	o := a.opts
	cd := o.Canaries
	incl := CanaryIncluded(o.Seed, cd.Count)
	r.TrainRuns, r.SelectRuns, r.EvalRuns, r.Features = 0, 0, 0, nil
	r.Attacks = []string{canaryAttack(cd)}
	mP := 1
	if o.PointSelection == SelectBonferroni {
		mP = len(a.points)
	}
	g := len(cd.Guesses)
	alpha := 1 - o.Confidence
	// α divided among k tests; with one test the confidence itself, which
	// 1 − (1 − c) would lose when c is tiny (the one-run bounds take c
	// down to stats.MinOneRunConfidence).
	divided := func(k int) float64 {
		if k == 1 {
			return o.Confidence
		}
		return 1 - alpha/float64(k)
	}
	conf := divided(g * mP)
	claimConf := conf
	if n := len(a.claims); n > 0 {
		claimConf = divided(g * mP * n)
		r.ClaimsTested, r.ClaimConfidence = n, claimConf
	}
	r.TestConfidence = conf
	info := &CanaryInfo{Canaries: cd.Count, Runs: cd.Runs, Kind: cd.Kind, Guesses: cd.Guesses, GuessRule: guessRule(cd.Guesses, alpha),
		Score: cd.Score, References: cd.References, ReferenceCanaries: cd.ReferenceCanaries, AverageReleases: cd.AverageReleases}
	for _, in := range incl {
		if in {
			info.Included++
		}
	}
	r.Canaries = info
	r.Multiplicity = canaryMultiplicity(g, len(a.points), len(a.claims), mP, alpha)
	sc := newCanaryScorer(cd, t)
	for k := range a.points {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("audit: analysis stopped: %w", err)
		}
		scores := sc.at(k)
		pt, err := a.canaryPoint(k, scores, incl, conf, claimConf)
		if err != nil {
			return err
		}
		r.Points = append(r.Points, pt)
	}
	// The verdict rests on the last release, fixed in advance, or on every
	// release under Bonferroni (then the headline ε is the largest bound,
	// valid simultaneously with all others).
	judged := []int{len(a.points) - 1}
	r.Headline = len(a.points) - 1
	if mP > 1 {
		judged, r.Headline = judged[:0], -1
	}
	best := max(r.Headline, 0)
	j, e := a.primary, o.Estimators[a.primary]
	for k := range r.Points {
		if mP > 1 {
			judged = append(judged, k)
			if e.Value(r.Points[k].Estimates[j].Bound) > e.Value(r.Points[best].Estimates[j].Bound) {
				best = k
			}
		}
	}
	r.Epsilon = r.Points[best].Estimates[j].Bound
	r.judgeCanaries(judged)
	return nil
}

// canaryScorer computes the canaries' scores release after release.
type canaryScorer struct {
	cd                    *CanaryDesign
	t                     *Trials
	scores, sum, ref, row []float64
}

func newCanaryScorer(cd *CanaryDesign, t *Trials) *canaryScorer {
	m := cd.Count
	return &canaryScorer{cd: cd, t: t, scores: make([]float64, m), sum: make([]float64, m), ref: make([]float64, m), row: make([]float64, t.F)}
}

// at returns every canary's score at release point k (the points taken in
// order 0, 1, …), each from the run it belongs to: the feature s_i; with a
// calibrated score s_i − (1/R) Σ_r s_i^(r), its mean over the reference
// runs (trials Runs … Runs+R−1) subtracted; with AverageReleases, the mean
// of those scores over points 0 … k. Only the trials' outputs enter, never
// S. The slice is overwritten by the next call.
func (c *canaryScorer) at(k int) []float64 {
	cd, t, scores, row := c.cd, c.t, c.scores, c.row
	for j := 0; j < cd.Runs; j++ {
		lo, hi := cd.RunCanaries(j)
		t.Row(j, k, row)
		copy(scores[lo:hi], row[lo:hi])
	}
	if cd.Calibrated() {
		clear(c.ref)
		for r := range cd.References {
			t.Row(cd.Runs+r, k, row)
			for i := range c.ref {
				c.ref[i] += row[i]
			}
		}
		for i := range scores {
			scores[i] -= c.ref[i] / float64(cd.References)
		}
	}
	if cd.AverageReleases {
		for i, s := range scores {
			c.sum[i] += s
			scores[i] = c.sum[i] / float64(k+1)
		}
	}
	return scores
}

// guessRule says how the guesses were chosen.
func guessRule(gs []Guess, alpha float64) string {
	if len(gs) == 1 {
		return fmt.Sprintf("fixed in advance: k+ = %d highest scores guessed in, k- = %d lowest guessed out", gs[0].Plus, gs[0].Minus)
	}
	return fmt.Sprintf("best of a grid of %d (k+, k-) pairs fixed in advance, each tested at α/%d = %.3g (Bonferroni)", len(gs), len(gs), alpha/float64(len(gs)))
}

// canaryMultiplicity explains how α was shared in a canary design.
func canaryMultiplicity(g, points, claims, mP int, alpha float64) string {
	s := fmt.Sprintf("α = %.3g", alpha)
	if g > 1 {
		s += fmt.Sprintf(" divided among %d guess pairs", g)
	}
	if mP > 1 {
		s += fmt.Sprintf(", among %d release points (Bonferroni)", mP)
	} else if points > 1 {
		s += fmt.Sprintf("; the verdict rests on the last of %d release points, fixed in advance (the others' bounds hold each on its own)", points)
	}
	if claims > 1 {
		s += fmt.Sprintf(", and among %d claims", claims)
	}
	return s
}

// rankCanaries returns the canaries by decreasing score, ties by
// increasing index (an order that does not look at S).
func rankCanaries(scores []float64) []int {
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int {
		switch {
		case scores[i] > scores[j]:
			return -1
		case scores[i] < scores[j]:
			return 1
		}
		return 0
	})
	return idx
}

// guessCounts returns (m, r, v) for each guess pair: inTop[k] counts the
// included canaries among the k highest-ranked.
func guessCounts(g Guess, inTop []int) stats.OneRunCounts {
	m := len(inTop) - 1
	out := g.Minus - (inTop[m] - inTop[m-g.Minus])
	return stats.OneRunCounts{Canaries: m, Guesses: g.R(), Correct: inTop[g.Plus] + out}
}

// canaryPoint computes every estimator's bound, the ceiling, the
// descriptive figures and the claim tests at release point k.
func (a *Audit) canaryPoint(k int, scores []float64, incl []bool, conf, claimConf float64) (PointResult, error) {
	o := a.opts
	order := rankCanaries(scores)
	inTop := make([]int, len(order)+1)
	for i, c := range order {
		inTop[i+1] = inTop[i]
		if incl[c] {
			inTop[i+1]++
		}
	}
	d := describeScores(scores, incl)
	pr := PointResult{Point: a.points[k], Descriptive: &d}
	gs := o.Canaries.Guesses
	counts := make([]stats.OneRunCounts, len(gs))
	for i, g := range gs {
		counts[i] = guessCounts(g, inTop)
	}
	ar := AttackResult{Attack: canaryAttack(o.Canaries), Evaluated: true, Estimates: make([]AttackEstimate, len(o.Estimators))}
	for j, e := range o.Estimators {
		ge := e.(GuessEstimator) // checkEstimators
		for i := range gs {
			b, err := ge.BoundGuesses(counts[i], o.Delta, conf)
			if err != nil {
				return pr, err
			}
			if i == 0 || ge.Value(b) > ge.Value(*ar.Estimates[j].Bound) {
				ar.Estimates[j] = AttackEstimate{Estimator: e.Name(), Guess: &gs[i], Bound: &b}
			}
		}
		pr.Estimates = append(pr.Estimates, PointEstimate{Estimator: e.Name(), Bound: *ar.Estimates[j].Bound})
	}
	pr.Attacks = []AttackResult{ar}
	for i, c := range counts {
		c.Correct = c.Guesses
		ceil, err := stats.OneRunEpsilon(c, o.Delta, conf)
		if err != nil {
			return pr, err
		}
		if i == 0 || ceil.Epsilon > pr.Ceiling.Epsilon {
			pr.Ceiling = ceil.Estimate()
		}
	}
	pr.Ceiling.Kind, pr.Ceiling.Estimator = stats.CeilingKind, stats.EstimatorOneRunCeiling
	for _, cl := range a.claims {
		pr.Claims = append(pr.Claims, a.testCanaryClaim(cl, k, counts, claimConf))
	}
	return pr, nil
}

// testCanaryClaim tests a claim given as data against the guesses of every
// pair, each at level 1 − claimConf (Rejected; the verdict counts it at
// the points it rests on): a pure (ε₀, δ₀) claim by the p-value of Steinke
// et al. (stats.OneRunPValue at ε₀, δ₀, decided by
// stats.OneRunPureRejected), a μ-GDP claim by the f-DP test of Mahloujifar
// et al. (stats.OneRunFDPStatistic); both decide in the confidence itself
// when it is small.
func (a *Audit) testCanaryClaim(cl Claim, k int, counts []stats.OneRunCounts, claimConf float64) ClaimResult {
	level := 1 - claimConf
	res := ClaimResult{Name: cl.Name}
	if prof, _, ok := cl.At(k); ok {
		res.Covered = true
		res.EpsilonAtDelta = stats.JSONFloat(EpsilonAt(prof, a.opts.Delta))
	}
	kind, eps, delta, mu, ok := canaryTestOf(cl, k, a.opts.Delta)
	if !ok {
		return res
	}
	switch kind {
	case "pure":
		best, bi := math.Inf(1), 0
		for i, c := range counts {
			if p := stats.OneRunPValue(c, eps, delta); p < best {
				best, bi = p, i
			}
			if stats.OneRunPureRejected(c, eps, delta, claimConf) {
				res.Rejected = true
			}
		}
		c := counts[bi]
		res.Test = fmt.Sprintf("one-run p-value of (%g, %g)-DP = %.4g with %d/%d guesses correct (level %.4g)", eps, delta, best, c.Correct, c.Guesses, level)
	case "gdp":
		best, bi := math.Inf(-1), 0
		for i, c := range counts {
			if v := stats.OneRunFDPStatistic(c, mu, claimConf); v > best {
				best, bi = v, i
			}
		}
		res.Rejected = best > 0
		c := counts[bi]
		res.Test = fmt.Sprintf("f-DP test (audit with cap) of %g-GDP: statistic %.4g (> 0 rejects) with %d/%d guesses correct (level %.4g)", mu, best, c.Correct, c.Guesses, level)
	}
	return res
}

// canaryTestOf returns what the canary design tests of a claim at release
// k: a μ-GDP claim, or a theorem whose profile there is μ-GDP, by the f-DP
// test of μ ("gdp"); a pure (ε, δ) claim at its (ε, δ), or any other
// theorem at the point (ε(δ), δ) of its profile at the audit's δ ("pure"),
// which the profile implies. ok is false when the claim does not cover k.
func canaryTestOf(cl Claim, k int, auditDelta float64) (kind string, eps, delta, mu float64, ok bool) {
	if s := cl.Spec; s != nil && s.Kind == "pure" {
		return "pure", s.Epsilon, s.Delta, 0, true
	}
	if m, isGDP := claimMu(cl, k); isGDP {
		return "gdp", 0, 0, m, true
	}
	prof, _, covered := cl.At(k)
	if !covered {
		return "", 0, 0, 0, false
	}
	e := EpsilonAt(prof, auditDelta)
	if math.IsInf(e, 1) || math.IsNaN(e) {
		return "", 0, 0, 0, false
	}
	return "pure", e, auditDelta, 0, true
}

// judgeCanaries sets the verdict from the claims at the judged points.
func (r *Report) judgeCanaries(points []int) {
	r.Verdict = VerdictNoClaim
	for _, k := range points {
		p := r.Points[k]
		for _, c := range p.Claims {
			if r.Verdict == VerdictNoClaim {
				r.Verdict = VerdictNotRefuted
			}
			if c.Rejected {
				r.Violations = append(r.Violations, fmt.Sprintf("%s at %s: refuted for %s — %s", c.Name, p.Point.Label, CanaryAdjacency, c.Test))
			}
		}
	}
	if len(r.Violations) > 0 {
		r.Verdict = VerdictViolation
	}
}

// describeScores returns the descriptive figures of scores as a test of
// label (true: positive): AUROC with ties counted half, and the largest TPR
// among thresholds whose FPR is at most 1% and 0.1% (NaN when a class is
// empty; NaN scores rank last, tied). Each class's scores are sorted apart:
// the figures depend only on the groups of equal scores, walked from the
// highest down.
func describeScores(scores []float64, label []bool) Descriptive {
	d, _ := describeScoresBuf(scores, label, nil)
	return d
}

// describeScoresBuf is describeScores with its sort buffer: buf is used
// when it holds len(scores) + max(positives, negatives) keys, and the
// buffer used is returned for the next call.
func describeScoresBuf(scores []float64, label []bool, buf []uint64) (Descriptive, []uint64) {
	ss := sortedScores{buf: buf}
	if !ss.fill(scores, label) {
		nan := stats.JSONFloat(math.NaN())
		return Descriptive{AUROC: nan, TPRAt1: nan, TPRAt01: nan}, ss.buf
	}
	return ss.describe(true), ss.buf
}

// orderKey maps a non-NaN float to a key whose unsigned order is the
// float's order, −0 and +0 to one key (they compare equal).
func orderKey(s float64) uint64 { return radix.FloatKey(s) }
