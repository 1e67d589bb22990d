package audit

import (
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// How a claim is tested (multi-run design). For each claim, ONE triple —
// a release point the claim covers, an attack, and a decision rule — is
// chosen on the selection runs only (the runs the thresholds are chosen
// on), by the claim's own objective: the margin of the whole-profile test
// (Refute, Heller & Fetaya eq. 10) at the Clopper–Pearson upper bounds of
// the selection-run error rates, the distance of those rates to the
// claim's whole profile. That one triple is then tested once on the
// evaluation runs, at level α/m for the m claims of the audit. No
// evaluation run enters the choice, so the choice costs no share of α:
// each claim's test, conditioned on the selection runs, is a single test
// at level α/m, and the chance that any of the m tests refutes a true
// claim is at most α (Bonferroni over the claims only).
//
// The candidate rules at a (release, attack) are every estimator's rule
// (chosen for its own objective, the region rule among them) and the rule
// the exact threshold search of attacks.Chooser finds for the claim's
// objective at that release. The latter maximises the selection margin
// over every threshold, so the estimators' rules only win ties; they are
// kept as candidates, ahead of it on a tie, so that when the claim's
// optimum is also the headline's rule the claim is tested with the very
// counts the headline's ε_lb rests on (a single (ε, δ) claim with ε below
// ε_lb is then refuted by the same inequality).

// ClaimRule names the rule chosen for a claim's own objective (ClaimTest.Rule).
const ClaimRule = "claim"

// ClaimTest is the one test of one claim: the release, attack and rule
// chosen for it on the selection runs, and the refutation its evaluation
// counts give.
type ClaimTest struct {
	Name string `json:"name"`
	// Covered is false when the claim covers no release point (then it is
	// not tested and the rest is empty).
	Covered bool `json:"covered"`
	// Point indexes the release point tested, Release is its label.
	Point   int    `json:"point"`
	Release string `json:"release,omitempty"`
	// Attack is the attack tested; Rule says whose objective chose its
	// rule: an estimator's name, or ClaimRule for the claim's own margin.
	// Threshold is the rule itself.
	Attack    string        `json:"attack,omitempty"`
	Rule      string        `json:"rule,omitempty"`
	Threshold *attacks.Rule `json:"threshold,omitempty"`
	// SelectionCounts are the rule's errors on the selection runs and
	// SelectionMargin the whole-profile margin they give at the audit's
	// confidence: the figure the triple was chosen by (the largest).
	SelectionCounts stats.Counts `json:"selection_counts"`
	SelectionMargin float64      `json:"selection_margin"`
	// Refutation is the test on the evaluation runs, at the claims'
	// confidence (Report.ClaimConfidence).
	Refutation *Refutation `json:"refutation,omitempty"`
	// Note explains a claim not refuted although the headline ε_lb
	// exceeds the claim's ε at δ at the headline's release.
	Note string `json:"note,omitempty"`
}

// claimCand is a candidate rule for a claim's test at one release point.
type claimCand struct {
	attack    int
	rule      string
	threshold attacks.Rule
	sel, eval stats.Counts
	margin    float64
}

// claimRule is the rule the threshold search found for claim ci's own
// objective at one release point and attack.
type claimRule struct {
	ci        int
	threshold attacks.Rule
	sel, eval stats.Counts
}

// claimObjective is claim ci's criterion at point k for attacks.Chooser:
// the whole-profile margin of the error rates (Refute), which is
// non-increasing in each rate (a maximum over ε of functions that are),
// as the exact search requires. The search looks for positive maxima
// only, and a margin can be negative: it is shifted by 3, which keeps
// every value positive (at ε = 0 the margin is 1 − δ(0) − FPR − FNR ≥ −2
// once clamped there). The search evaluates it many times, so it uses a
// coarser search over ε than Refute (64 grid points, 30 golden-section
// steps, the knots exactly): the objective only chooses the rule, on
// selection runs, and the triples are then ranked and tested by Refute
// itself, so the coarseness can cost power, never validity.
func claimObjective(prof func(float64) float64, knots []float64) attacks.Objective {
	return func(a, b, _ float64) float64 {
		return 3 + math.Max(-2, refute(a, b, prof, knots, 64, 30).Margin)
	}
}

// chooseClaimRules adds, for attack ar at point k, the rule each claim
// covering k gets from the exact threshold search for its own objective
// (on the selection set bufs.chooser was prepared with) to bufs.rules, so
// that the evaluation pass counts them with the estimators' rules.
func (a *Audit) chooseClaimRules(k int, bufs *buffers, ar *AttackResult) {
	for ci, cl := range a.claims {
		prof, knots, ok := cl.At(k)
		if !ok {
			continue
		}
		s := bufs.chooser.Best(claimObjective(prof, knots))
		ar.claimRules = append(ar.claimRules, claimRule{ci: ci, threshold: s.Rule, sel: s.Counts})
		bufs.rules = append(bufs.rules, s.Rule)
	}
}

// setClaimCounts stores the evaluation counts of the claims' rules, which
// follow the estimators' in counts.
func setClaimCounts(ar *AttackResult, counts []stats.Counts) {
	for i := range ar.claimRules {
		ar.claimRules[i].eval = counts[len(ar.Estimates)+i]
	}
}

// claimsAtPoint fills in what point k says about every claim — its ε at δ
// and, per claim, the candidate with the largest selection margin there.
// The claims do not rank the points for the headline: the headline ε_lb
// rests on the release chosen as in an audit without claims, and each
// claim's test on the release its own margin picks.
func (a *Audit) claimsAtPoint(pr *PointResult, k int) {
	o := a.opts
	pr.claimBest = make([]claimCand, len(a.claims))
	for ci, cl := range a.claims {
		prof, knots, ok := cl.At(k)
		res := ClaimResult{Name: cl.Name, Covered: ok}
		best := claimCand{margin: math.Inf(-1), attack: -1}
		if ok {
			res.EpsilonAtDelta = stats.JSONFloat(EpsilonAt(prof, o.Delta))
			margin := func(c stats.Counts) float64 {
				f, g := rateBounds(c, o.Confidence)
				return Refute(f, g, prof, knots).Margin
			}
			for i, ar := range pr.Attacks {
				for _, e := range ar.Estimates {
					if m := margin(e.Selection.Counts); m > best.margin {
						best = claimCand{attack: i, rule: e.Estimator, threshold: e.Rule, sel: e.Selection.Counts, eval: e.Counts, margin: m}
					}
				}
				for _, cr := range ar.claimRules {
					if cr.ci != ci {
						continue
					}
					if m := margin(cr.sel); m > best.margin {
						best = claimCand{attack: i, rule: ClaimRule, threshold: cr.threshold, sel: cr.sel, eval: cr.eval, margin: m}
					}
				}
			}
		}
		pr.claimBest[ci] = best
		pr.Claims = append(pr.Claims, res)
	}
}

// testClaims tests every claim once: on the triple with the largest
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
			ct.Attack, ct.Rule, ct.Threshold = pr.Attacks[best.attack].Attack, best.rule, &best.threshold
			ct.SelectionCounts, ct.SelectionMargin = best.sel, best.margin
			f, g := rateBounds(best.eval, r.ClaimConfidence)
			ref := Refute(f, g, prof, knots)
			ref.Attack, ref.Confidence = ct.Attack, r.ClaimConfidence
			if best.rule == ClaimRule {
				ref.ClaimRule = true
			} else {
				ref.Estimator = best.rule
			}
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

// headlinePoint is the release the headline ε_lb comes from.
func (r *Report) headlinePoint() int {
	if r.Headline >= 0 {
		return r.Headline
	}
	best := 0
	for k := range r.Points {
		if r.Points[k].Region().Epsilon > r.Points[best].Region().Epsilon {
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
	h := r.headlinePoint()
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
// headline ε_lb at release h exceeds its ε at δ there.
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
	if r.ClaimConfidence != r.Epsilon.Confidence {
		return s + fmt.Sprintf("the claim's test used the headline's rule, at confidence %.6g (α shared among %d claims) where ε_lb is at confidence %.6g",
			r.ClaimConfidence, r.ClaimsTested, r.Epsilon.Confidence)
	}
	return s + "the claim's test used the headline's rule at the headline's confidence, and the whole-profile search over ε missed the violation"
}

// describe names the tested triple: "final, the threshold attack's gdp
// rule", or "… claim-margin rule" for the rule chosen for the claim's own
// margin.
func (ct *ClaimTest) describe() string {
	rule := ct.Rule + " rule"
	if ct.Rule == ClaimRule {
		rule = "claim-margin rule"
	}
	return fmt.Sprintf("%s, the %s attack's %s", ct.Release, ct.Attack, rule)
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
