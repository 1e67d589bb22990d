package report

import (
	"fmt"
	"strconv"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// Every design reports the same structure (audit.Report.Points, each with
// every estimator's bound); what differs is the evidence a bound rests on:
// error counts on evaluation runs (the multi-run design) or guesses about
// canaries (the canary design, stats.Estimate.Guesses). The helpers below
// render either from the bound itself, and the design's own description
// (audit.Report.Canaries) for the setting lines (describeDesign).

// fromGuesses reports whether the report's bounds rest on guesses.
func fromGuesses(r *audit.Report) bool {
	return len(r.Points) > 0 && r.Points[0].EpsilonBound().Guesses != nil
}

// evidenceHeader names the columns of the ε_lb bound's evidence.
func evidenceHeader(r *audit.Report) []string {
	if fromGuesses(r) {
		return []string{"guesses (k+, k-)", "correct"}
	}
	return []string{"FP/neg", "FN/pos"}
}

// guessOf returns the guess pair behind the named estimator's bound at pr
// (zero outside the canary design).
func guessOf(pr audit.PointResult, estimator string) audit.Guess {
	e, _ := pr.Estimate(estimator)
	if e.Best >= len(pr.Attacks) {
		return audit.Guess{}
	}
	if ae, ok := pr.Attacks[e.Best].Estimate(estimator); ok && ae.Guess != nil {
		return *ae.Guess
	}
	return audit.Guess{}
}

// evidenceCells are the row's cells under evidenceHeader.
func evidenceCells(pr audit.PointResult) []string {
	b := pr.EpsilonBound()
	if g := b.Guesses; g != nil {
		p := guessOf(pr, audit.OneRunEstimator{}.Name())
		return []string{fmt.Sprintf("(%d, %d)", p.Plus, p.Minus), counts(g.Correct, g.Guesses)}
	}
	return []string{counts(b.Counts.FP, b.Counts.Negatives), counts(b.Counts.FN, b.Counts.Positives)}
}

// designText is what the renderers say of the design that made a report,
// beside the bounds every design reports alike: the setting's lines of
// (field, text), the audited data in one line, and what the headline
// bound rests on. describeDesign is the renderers' one branch on the
// design.
type designText struct {
	setting  [][2]string
	datasets string
	evidence string
}

// describeDesign returns the text of r's design: the canary design's when
// r has one (audit.Report.Canaries), else the multi-run design's.
func describeDesign(r *audit.Report) designText {
	if r.Canaries != nil {
		return canaryText(r, r.Canaries)
	}
	e := r.Epsilon
	d := designText{datasets: DatasetsLine(r),
		evidence: fmt.Sprintf("%d evaluation runs: FP %d/%d, FN %d/%d", r.EvalRuns, e.Counts.FP, e.Counts.Negatives, e.Counts.FN, e.Counts.Positives)}
	d.setting = [][2]string{
		{"datasets", d.datasets},
		{"runs", RunsLine(r)},
		{"features", fmt.Sprintf("%v; attacks %v", r.Features, r.Attacks)},
	}
	return d
}

// canaryText is describeDesign for a canary design c.
func canaryText(r *audit.Report, c *audit.CanaryInfo) designText {
	data := "owned by the mechanism"
	if r.D != nil {
		data = fmt.Sprintf("D = %s (%d records)", r.D.Name, r.D.Records)
	}
	var g stats.OneRunCounts
	if r.Epsilon.Guesses != nil {
		g = *r.Epsilon.Guesses
	}
	d := designText{datasets: fmt.Sprintf("%s plus the included canaries; adjacency: %s", data, r.Adjacency),
		evidence: fmt.Sprintf("one-run design, %d run(s), %d canaries, %d/%d guesses correct; adjacency %s", c.Runs, g.Canaries, g.Correct, g.Guesses, r.Adjacency)}
	if c.Score == audit.ScoreCalibrated {
		d.evidence += fmt.Sprintf("; calibrated score, %d reference run(s)", c.References)
	}
	d.setting = [][2]string{
		{"design", fmt.Sprintf("one run (canaries, Steinke, Nasr & Jagielski 2023): %d %s canaries, %d included by the seed's coins; %d run(s) pooled, each canary in exactly one", c.Canaries, c.Kind, c.Included, c.Runs)},
		{"datasets", d.datasets},
		{"score", scoreText(r, c)},
		{"guesses", c.GuessRule},
	}
	return d
}

// scoreText is the setting line of the canary design's score: raw, or
// calibrated by reference runs (audit.ScoreCalibrated).
func scoreText(r *audit.Report, c *audit.CanaryInfo) string {
	s := "each canary's log-likelihood (or the program's score) under the released θ"
	if c.Kind == audit.GradientCanaryKind {
		s = "each canary's path statistic Λ_i: the log-likelihood ratio, canary in against out, under the declared sampler, of every quantity the run released along the canary's own coordinate"
	}
	if c.Score == audit.ScoreCalibrated {
		data := "D alone, without canaries"
		if c.ReferenceCanaries == audit.ReferenceAll {
			data = "D plus every canary, whatever the coins"
		}
		s = fmt.Sprintf("calibrated: %s minus its mean under the releases of %d reference run(s) on %s", s, c.References, data)
	}
	if c.AverageReleases {
		s += ", averaged over the releases so far"
	}
	attack := audit.CanaryAttack
	if len(r.Attacks) > 0 {
		attack = r.Attacks[0]
	}
	return fmt.Sprintf("%s, at every release (seed %d); attack: %s", s, r.Seed, attack)
}

// GuessLegend explains the bound columns of a canary design's table.
const GuessLegend = "ε_lb: one-run bound of Steinke, Nasr & Jagielski 2023 (Thm 3.1; App. D for δ > 0) from the guesses of the " +
	"pair (k+, k-) shown, at the test confidence; μ_lb: rigorous lower bound on the GDP parameter from the f-DP test of " +
	"Mahloujifar, Melis & Chaudhuri 2024 (audit with cap), with its own best pair; the ε it would imply is shown apart below. " +
	"ceiling: the ε_lb if every guess were correct (what m and r allow)."

// guessClaimLegend explains the claim cells of a canary design.
const guessClaimLegend = "claim: each claim is tested on the guesses (the one-run p-value of Steinke et al. for an (ε, δ) claim, the " +
	"f-DP test for a μ-GDP claim), at the claims' confidence; \"REFUTED\" marks a rejection at a release the verdict rests on, " +
	"\"" + pointwiseCell + "\" one at another release: that release's test alone rejects the claim at the level of one test, " +
	"not divided among the releases, which is no refutation. The tests are in the JSON report."

// pointwiseCell marks a claim that the test of a release the verdict does
// not rest on rejects on its own: no refutation.
const pointwiseCell = "rejected pointwise"

// guessClaimCell is the cell of a claim tested on guesses at point k.
func guessClaimCell(r *audit.Report, k int, c audit.ClaimResult) string {
	switch {
	case !c.Rejected:
		return "ok"
	case r.Headline < 0 || k == r.Headline:
		return "REFUTED"
	}
	return pointwiseCell
}

// evidenceCSVHead and evidenceCSVRow are the CSV columns of the ε_lb and
// μ_lb bounds' evidence, before eps_lb and before mu_lb.
func evidenceCSVHead(r *audit.Report) (eps, mu []string) {
	if fromGuesses(r) {
		return []string{"attack", "guesses_plus", "guesses_minus", "guesses", "correct", "canaries"},
			[]string{"fdp_attack", "fdp_guesses_plus", "fdp_guesses_minus", "fdp_correct"}
	}
	return []string{"attack", "fp", "negatives", "fn", "positives", "fpr_upper", "fnr_upper"},
		[]string{"gdp_attack", "gdp_fp", "gdp_fn"}
}

func evidenceCSVRow(pr audit.PointResult, g func(float64) string) (eps, mu []string) {
	e, m := pr.EpsilonBound(), pr.MuBound()
	if e.Guesses != nil {
		ge, gm := guessOf(pr, audit.OneRunEstimator{}.Name()), guessOf(pr, audit.OneRunFDPEstimator{}.Name())
		mc := stats.OneRunCounts{}
		if m.Guesses != nil {
			mc = *m.Guesses
		}
		return []string{pr.Attacks[bestAttack(pr, audit.OneRunEstimator{}.Name())].Attack, strconv.Itoa(ge.Plus), strconv.Itoa(ge.Minus),
				strconv.Itoa(e.Guesses.Guesses), strconv.Itoa(e.Guesses.Correct), strconv.Itoa(e.Guesses.Canaries)},
			[]string{pr.Attacks[bestAttack(pr, audit.OneRunFDPEstimator{}.Name())].Attack, strconv.Itoa(gm.Plus), strconv.Itoa(gm.Minus), strconv.Itoa(mc.Correct)}
	}
	c := e.Counts
	return []string{pr.Attacks[bestAttack(pr, pr.Primary())].Attack, strconv.Itoa(c.FP), strconv.Itoa(c.Negatives), strconv.Itoa(c.FN), strconv.Itoa(c.Positives),
			g(e.FPR), g(e.FNR)},
		[]string{pr.Attacks[bestAttack(pr, "gdp")].Attack, strconv.Itoa(m.Counts.FP), strconv.Itoa(m.Counts.FN)}
}

// primaryName returns the name of the estimator the headline rests on at
// pr: the one-run bound in a canary design, else the region bound.
func primaryName(pr audit.PointResult) string { return pr.Primary() }

// claimRefutedAt reports a refutation of claim c at point k as the CSV
// states it: a refuted profile (multi-run design, as it always has), or a
// rejection on guesses at a release the verdict rests on (a rejection at
// another release is no refutation: the JSON has it as "rejected").
func claimRefutedAt(r *audit.Report, k, ci int, c audit.ClaimResult) bool {
	if c.Test != "" {
		return c.Rejected && (r.Headline < 0 || k == r.Headline)
	}
	ref := r.ClaimTestAt(k, ci)
	return ref != nil && ref.Refuted
}

// regionHeadline reports whether the report's ε_lb column and headline
// are the region bound (or, in the canary design, the one-run bound): the
// bounds that assume nothing about the trade-off curve.
func regionHeadline(r *audit.Report) bool {
	if len(r.Points) == 0 {
		return true
	}
	p := r.Points[0].Primary()
	return p == audit.RegionEstimator{}.Name() || p == audit.OneRunEstimator{}.Name()
}

// otherHeadlineLegend explains the ε_lb column of a multi-run report that
// leaves the region bound out: it is the first listed estimator's ε, with
// the assumption that bound rests on.
func otherHeadlineLegend(r *audit.Report) string {
	pr := r.Points[0]
	b := pr.EpsilonBound()
	s := fmt.Sprintf("ε_lb: the %s estimator's ε (%s) on the evaluation runs, at the test confidence", pr.Primary(), b.Estimator)
	if b.Assumption != "" {
		s += "; it assumes " + b.Assumption
	}
	return s + ". The audit leaves the region bound out (audit.estimators), so the headline rests on this estimator. μ_lb: GDP lower bound on μ where the audit runs it. ceiling: the largest region bound these run counts allow."
}

// assumes returns "; assumes A" for an estimate that holds only under the
// assumption A, else "".
func assumes(e stats.Estimate) string {
	if e.Assumption == "" {
		return ""
	}
	return "; assumes " + e.Assumption
}
