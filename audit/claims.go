package audit

import (
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// How a claim is tested (multi-run design). For each claim, ONE triple —
// a release point the claim covers, an attack, and a decision rule — is
// tested once on the evaluation runs, at level α/m for the m claims of the
// audit. For a single (ε₀, δ₀) claim (PureClaim) the rule is the headline
// estimator's (the audit's primary estimator: the region bound unless the
// audit leaves it out), for each attack the headline evaluates at that
// release (the one chosen on training runs, or every attack under
// Bonferroni over attacks); a claim of a whole profile (μ-GDP, a theorem's)
// may also take another estimator's rule where that estimator's bound was
// counted on the evaluation runs (the GDP rule suits a GDP profile better
// than the region rule's extreme threshold). Among these, the release, the
// attack and the rule are chosen on the selection runs only, by the
// claim's own objective: the margin of the
// whole-profile test (Refute, Heller & Fetaya eq. 10) at the
// Clopper–Pearson upper bounds of the selection-run error rates. No
// evaluation run enters the choice, so the choice costs no share of α:
// each claim's test, conditioned on the selection runs, is a single test
// at level α/m, and the chance that any of the m tests refutes a true
// claim is at most α (Bonferroni over the claims only).
//
// When a claim's choice falls on the headline's release (attacks chosen
// on training runs), its test uses the very evaluation counts the
// headline's ε_lb rests on; with one claim, also at the headline's
// confidence. A single (ε₀, δ) claim at the audit's δ with ε₀ below the
// region ε_lb is then refuted by construction: ε_lb > ε₀ says
// 1 − δ − FPR_ub > e^ε₀·FNR_ub (or the mirror), the inequality the test
// checks at the claim's knot ε₀. Any other case where a claim stands
// although ε_lb exceeds its ε at δ carries a note saying why (noteClaims).

// ClaimTest is the one test of one claim: the release and attack chosen
// for it on the selection runs, the headline estimator's rule there, and
// the refutation its evaluation counts give.
type ClaimTest struct {
	Name string `json:"name"`
	// Covered is false when the claim covers no release point (then it is
	// not tested and the rest is empty).
	Covered bool `json:"covered"`
	// Point indexes the release point tested, Release is its label.
	Point   int    `json:"point"`
	Release string `json:"release,omitempty"`
	// Attack is the attack tested; Rule names the estimator whose rule
	// was tested (the headline's; for a whole-profile claim possibly another
	// estimator's), Threshold is the rule itself.
	Attack    string        `json:"attack,omitempty"`
	Rule      string        `json:"rule,omitempty"`
	Threshold *attacks.Rule `json:"threshold,omitempty"`
	// SelectionCounts are the rule's errors on the selection runs and
	// SelectionMargin the whole-profile margin they give at the audit's
	// confidence: the figure the release and attack were chosen by (the
	// largest).
	SelectionCounts stats.Counts `json:"selection_counts"`
	SelectionMargin float64      `json:"selection_margin"`
	// Refutation is the test on the evaluation runs, at the claims'
	// confidence (Report.ClaimConfidence).
	Refutation *Refutation `json:"refutation,omitempty"`
	// Note explains a claim not refuted although the headline ε_lb
	// exceeds the claim's ε at δ at the headline's release.
	Note string `json:"note,omitempty"`
}

// claimCand is a candidate for a claim's test at one release point: an
// estimator's rule (estimator indexes Options.Estimators) at an attack
// evaluated for it.
type claimCand struct {
	attack    int
	estimator int
	threshold attacks.Rule
	sel, eval stats.Counts
	margin    float64
}

// claimsAtPoint fills in what point k says about every claim — its ε at δ
// and, per claim, the candidate with the largest selection margin there
// (the first on a tie). The claims do not rank the points for the
// headline: the headline ε_lb rests on the release chosen as in an audit
// without claims, and each claim's test on the release its own margin
// picks.
func (a *Audit) claimsAtPoint(pr *PointResult, k int) {
	o := a.opts
	pr.claimBest = make([]claimCand, len(a.claims))
	for ci, cl := range a.claims {
		prof, knots, ok := cl.At(k)
		res := ClaimResult{Name: cl.Name, Covered: ok}
		best := claimCand{margin: math.Inf(-1), attack: -1}
		if ok {
			res.EpsilonAtDelta = stats.JSONFloat(EpsilonAt(prof, o.Delta))
			for i, ar := range pr.Attacks {
				for _, j := range a.claimRules(cl) {
					// Bound set: the attacks this estimator is counted on
					// at this point (for the headline's, ar.Evaluated).
					e := ar.Estimates[j]
					if e.Bound == nil {
						continue
					}
					f, g := rateBounds(e.Selection.Counts, o.selectionConfidence())
					if m := Refute(f, g, prof, knots).Margin; m > best.margin {
						best = claimCand{attack: i, estimator: j, threshold: e.Rule, sel: e.Selection.Counts, eval: e.Counts, margin: m}
					}
				}
			}
		}
		pr.claimBest[ci] = best
		pr.Claims = append(pr.Claims, res)
	}
}

// claimRules returns the estimators (indices of Options.Estimators) whose
// rules are candidates for claim cl's test: the headline's alone for a
// single (ε₀, δ₀) claim — so that a claim tested at the headline's
// release meets the headline's own counts — and, for a claim of a whole
// profile, the headline's first, then every other count estimator's.
func (a *Audit) claimRules(cl Claim) []int {
	out := []int{a.primary}
	if cl.Spec != nil && cl.Spec.Kind == "pure" {
		return out
	}
	for j := range a.opts.Estimators {
		if j != a.primary {
			out = append(out, j)
		}
	}
	return out
}

// testClaims tests every claim once: on the candidate with the largest
// selection margin over every release point it covers (the first on a
// tie), on the evaluation runs at r.ClaimConfidence; then it judges.
func (a *Audit) testClaims(r *Report) {
	if len(a.claims) == 0 {
		r.Verdict = VerdictNoClaim
		return
	}
	r.ClaimTests = make([]ClaimTest, len(a.claims))
	for ci, cl := range a.claims {
		ct := ClaimTest{Name: cl.Name, Point: -1}
		best, bk := claimCand{margin: math.Inf(-1)}, -1
		for k := range r.Points {
			if c := r.Points[k].claimBest[ci]; c.attack >= 0 && (bk < 0 || c.margin > best.margin) {
				best, bk = c, k
			}
		}
		if bk >= 0 {
			prof, knots, _ := cl.At(bk)
			pr := &r.Points[bk]
			ct.Covered, ct.Point, ct.Release = true, bk, pr.Point.Label
			rule := a.opts.Estimators[best.estimator].Name()
			ct.Attack, ct.Rule, ct.Threshold = pr.Attacks[best.attack].Attack, rule, &best.threshold
			ct.SelectionCounts, ct.SelectionMargin = best.sel, best.margin
			f, g := rateBounds(best.eval, r.ClaimConfidence)
			ref := Refute(f, g, prof, knots)
			ref.Attack, ref.Estimator, ref.Confidence = ct.Attack, rule, r.ClaimConfidence
			eval := best.eval
			ref.Counts = &eval
			ref.Reason = ref.Explain()
			ct.Refutation = &ref
		}
		r.ClaimTests[ci] = ct
	}
	a.noteClaims(r)
	r.judge()
}

// headlinePoint is the release the headline ε_lb comes from: r.Headline,
// or under Bonferroni over the points the first with the largest bound of
// the headline's estimator (as Report.headline chooses it).
func (a *Audit) headlinePoint(r *Report) int {
	if r.Headline >= 0 {
		return r.Headline
	}
	e, best := a.opts.Estimators[a.primary], 0
	for k := range r.Points {
		if e.Value(r.Points[k].Estimates[a.primary].Bound) > e.Value(r.Points[best].Estimates[a.primary].Bound) {
			best = k
		}
	}
	return best
}

// noteClaims explains every claim that is not refuted although the
// headline ε_lb exceeds its ε at δ at the headline's release.
func (a *Audit) noteClaims(r *Report) {
	if len(r.Points) == 0 {
		return
	}
	h := a.headlinePoint(r)
	pr := &r.Points[h]
	for ci := range r.ClaimTests {
		ct := &r.ClaimTests[ci]
		cr := pr.Claims[ci]
		if !ct.Covered || ct.Refutation.Refuted || !cr.Covered || !(r.Epsilon.Epsilon > float64(cr.EpsilonAtDelta)) {
			continue
		}
		ct.Note = a.claimNote(r, ci, h)
	}
}

// claimNote says why claim ci's test did not refute it although the
// headline ε_lb at release h exceeds its ε at δ there: the claim's own
// margin chose another release or attack; or its test was at a higher
// confidence than ε_lb (α shared among the claims); or ε_lb is not the
// region bound (another estimator's, resting on its assumption); or,
// failing all these, the search over ε missed the violation. (At a lower
// confidence than ε_lb's — α divided over the headline's attacks or
// points — the same counts only refute more.)
func (a *Audit) claimNote(r *Report, ci, h int) string {
	ct := &r.ClaimTests[ci]
	pr := &r.Points[h]
	hb := pr.Estimates[a.primary].Best
	ha := pr.Attacks[hb]
	he := ha.Estimates[a.primary]
	s := fmt.Sprintf("not refuted although ε_lb = %s at %s exceeds the claim's ε at δ = %s there: ",
		stats.FormatFloat(r.Epsilon.Epsilon), pr.Point.Label, stats.FormatFloat(float64(pr.Claims[ci].EpsilonAtDelta)))
	if ct.Point != h || ct.Attack != ha.Attack || ct.Rule != he.Estimator {
		prof, knots, _ := a.claims[ci].At(h)
		f, g := rateBounds(he.Selection.Counts, a.opts.Confidence)
		hm := Refute(f, g, prof, knots).Margin
		return s + fmt.Sprintf("the claim's test used %s, chosen on the selection runs (margin %.4g there); "+
			"the headline's rule (the %s attack's %s rule at %s, selection margin %.4g) was not chosen for it",
			ct.describe(), ct.SelectionMargin, ha.Attack, he.Estimator, pr.Point.Label, hm)
	}
	if r.ClaimConfidence > r.Epsilon.Confidence {
		return s + fmt.Sprintf("the claim's test used the headline's rule, at confidence %.6g (α shared among %d claims) where ε_lb is at confidence %.6g",
			r.ClaimConfidence, r.ClaimsTested, r.Epsilon.Confidence)
	}
	if he.Estimator != (RegionEstimator{}).Name() {
		return s + fmt.Sprintf("ε_lb is the %s estimator's bound, which holds only under its assumption; the claim's test assumes nothing", he.Estimator)
	}
	return s + "the claim's test used the headline's rule at the headline's confidence, and the whole-profile search over ε missed the violation"
}

// describe names the tested triple: "final, the threshold attack's region
// rule".
func (ct *ClaimTest) describe() string {
	return fmt.Sprintf("%s, the %s attack's %s rule", ct.Release, ct.Attack, ct.Rule)
}

// Describe says which release, attack and rule the claim was tested
// with, chosen on the selection runs ("" when it covers no release).
func (ct *ClaimTest) Describe() string {
	if !ct.Covered {
		return ""
	}
	return ct.describe()
}

// judge sets the verdict from the claims' tests: VIOLATION iff some
// claim's one test refutes it.
func (r *Report) judge() {
	anyCovered := false
	r.Verdict = VerdictNoClaim
	for _, ct := range r.ClaimTests {
		if !ct.Covered {
			continue
		}
		anyCovered = true
		if ref := ct.Refutation; ref.Refuted {
			r.Violations = append(r.Violations, fmt.Sprintf("%s at %s: %s refuted%s — %s",
				ct.Name, ct.Release, ref.Pair(), r.otherDelta(ref), ref.Explain()))
		}
	}
	switch {
	case len(r.Violations) > 0:
		r.Verdict = VerdictViolation
	case anyCovered:
		r.Verdict = VerdictNotRefuted
	}
}

// ClaimTestAt returns claim ci's test when it was made at release point
// k, else nil: the per-point tables show a claim's outcome only where it
// was tested.
func (r *Report) ClaimTestAt(k, ci int) *Refutation {
	if ci >= len(r.ClaimTests) || !r.ClaimTests[ci].Covered || r.ClaimTests[ci].Point != k {
		return nil
	}
	return r.ClaimTests[ci].Refutation
}

// rateBounds returns the one-sided Clopper–Pearson upper bounds of the two
// error rates at tail level (1 − conf)/2 each, as stats.RegionBound uses.
func rateBounds(c stats.Counts, conf float64) (fpr, fnr float64) {
	e, err := stats.RegionBound(c, 0, conf)
	if err != nil {
		return 1, 1
	}
	return e.FPR, e.FNR
}

// otherDelta notes when the refuted pair is not at the report's δ, where
// the table's "upper bound" column reads the claim.
func (r *Report) otherDelta(ref *Refutation) string {
	if ref.Delta == r.Delta {
		return ""
	}
	return fmt.Sprintf(", a pair other than the claim's ε at δ = %g", r.Delta)
}
