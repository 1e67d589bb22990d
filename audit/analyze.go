package audit

import (
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// ClaimResult is one claim tested at one release point.
type ClaimResult struct {
	Name string `json:"name"`
	// Covered is false when the claim says nothing about this release.
	Covered bool `json:"covered"`
	// EpsilonAtDelta is the claim's ε at the audit's δ (the "upper bound"
	// column); +Inf when it certifies nothing at that δ.
	EpsilonAtDelta stats.JSONFloat `json:"epsilon_at_delta"`
	Refutation     *Refutation     `json:"refutation,omitempty"`
}

// AttackResult is one attack's outcome at one release point.
type AttackResult struct {
	Attack string `json:"attack"`
	// Note reports an attack that could not be fitted.
	Note string       `json:"note,omitempty"`
	Rule attacks.Rule `json:"rule"`
	// Selection is the criterion on the threshold-selection runs: the
	// region bound their counts give (it decides, never reports).
	Selection stats.Estimate `json:"selection"`
	// Evaluated is true when the attack was counted on the evaluation runs.
	Evaluated bool `json:"evaluated"`
	// Counts and Region come from the evaluation runs.
	Counts stats.Counts    `json:"counts"`
	Region *stats.Estimate `json:"region,omitempty"`
	// The GDP estimator has its own rule, chosen on the same selection
	// runs to maximise μ_lb, and its own evaluation counts.
	GDPRule      attacks.Rule    `json:"gdp_rule"`
	GDPSelection float64         `json:"gdp_selection_mu"`
	GDPSelCounts stats.Counts    `json:"gdp_selection_counts"`
	GDPCounts    stats.Counts    `json:"gdp_counts"`
	GDP          *stats.Estimate `json:"gdp,omitempty"`
}

// PointResult is the audit of one release point.
type PointResult struct {
	Point   mechanisms.ReleasePoint `json:"point"`
	Attacks []AttackResult          `json:"attacks"`
	// Best and BestGDP index the attacks reported for the region bound
	// and for the GDP estimator.
	Best    int            `json:"best"`
	BestGDP int            `json:"best_gdp"`
	Region  stats.Estimate `json:"region"`
	GDP     stats.Estimate `json:"gdp"`
	Ceiling stats.Estimate `json:"ceiling"`
	// Exact is the true ε at δ of this release when it is known in closed
	// form (the interim-region counterexample; see ExactEpsilons).
	Exact *stats.JSONFloat `json:"exact_epsilon,omitempty"`
	// TestAccuracy is the mean accuracy of the released models on the
	// held-out test set, over every trial (when measured).
	TestAccuracy *float64      `json:"test_accuracy,omitempty"`
	Claims       []ClaimResult `json:"claims,omitempty"`
	// selectionScore ranks points for the verdict (training runs only).
	selectionScore float64
}

// Report is the outcome of an audit.
type Report struct {
	Name       string `json:"name"`
	ConfigHash string `json:"config_hash"`
	Seed       uint64 `json:"seed"`
	Trials     int    `json:"trials"`
	// TrainRuns, SelectRuns and EvalRuns give the split; EvalNegatives and
	// EvalPositives the evaluation runs per side.
	TrainRuns     int     `json:"train_runs"`
	SelectRuns    int     `json:"select_runs"`
	EvalRuns      int     `json:"eval_runs"`
	EvalNegatives int     `json:"eval_negatives"`
	EvalPositives int     `json:"eval_positives"`
	Delta         float64 `json:"delta"`
	Confidence    float64 `json:"confidence"`
	// TestConfidence is the confidence each evaluated test is run at after
	// the Bonferroni division (equal to Confidence when nothing is divided).
	TestConfidence  float64   `json:"test_confidence"`
	AttackSelection Selection `json:"attack_selection"`
	PointSelection  Selection `json:"point_selection"`
	// Multiplicity explains how α was shared.
	Multiplicity string        `json:"multiplicity"`
	Points       []PointResult `json:"points"`
	// Headline is the index of the release point the verdict rests on
	// (chosen on training runs), or −1 under Bonferroni over points.
	Headline int `json:"headline"`
	// Epsilon is the headline lower bound: the region bound at Headline,
	// or the maximum over points under Bonferroni (valid simultaneously).
	Epsilon stats.Estimate `json:"epsilon"`
	// Verdict is "VIOLATION", "not refuted" or "no claim".
	Verdict    string          `json:"verdict"`
	Violations []string        `json:"violations,omitempty"`
	Info       mechanisms.Info `json:"sampler_info"`
}

// Violated reports whether a claim was refuted.
func (r *Report) Violated() bool { return r.Verdict == VerdictViolation }

// Verdicts.
const (
	VerdictViolation  = "VIOLATION"
	VerdictNotRefuted = "not refuted"
	VerdictNoClaim    = "no claim"
)

// splitSizes returns the sizes of the train, select and eval ranges.
func splitSizes(n int, s Split) (int, int, int) {
	tr := int(math.Round(s.Train * float64(n)))
	se := int(math.Round(s.Select * float64(n)))
	if tr+se > n {
		se = n - tr
	}
	return tr, se, n - tr - se
}

// columns gathers the features of trials [lo, hi) at point p, reusing
// buf's storage when it is large enough (one point is analysed at a time).
func columns(t *Trials, p, lo, hi int, buf *attacks.Data) *attacks.Data {
	d := buf
	if d == nil || cap(d.X) < (hi-lo)*t.F || cap(d.Label) < hi-lo {
		d = &attacks.Data{X: make([]float64, 0, (hi-lo)*t.F), Label: make([]bool, hi-lo)}
	}
	d.N, d.F, d.X, d.Label = hi-lo, t.F, d.X[:0], d.Label[:hi-lo]
	for i := lo; i < hi; i++ {
		d.X = d.X[:len(d.X)+t.F]
		t.Row(i, p, d.X[len(d.X)-t.F:])
		d.Label[i-lo] = t.Side[i-t.Lo] == dataset.SideDPrime
	}
	return d
}

// buffers are reused from one release point to the next.
type buffers struct {
	train, sel            *attacks.Data
	evalLabels            []bool
	selScores, evalScores []float64
	row                   []float64
	chooser               attacks.Chooser
}

// labelsOf returns the labels (true: D′) of trials [lo, hi).
func labelsOf(t *Trials, lo, hi int, buf []bool) []bool {
	if cap(buf) < hi-lo {
		buf = make([]bool, hi-lo)
	}
	buf = buf[:hi-lo]
	for i := lo; i < hi; i++ {
		buf[i-lo] = t.Side[i-t.Lo] == dataset.SideDPrime
	}
	return buf
}

// scoreStore scores trials [lo, hi) at point p directly from the store.
func scoreStore(s attacks.Scorer, t *Trials, p, lo, hi int, buf []float64, row *[]float64) []float64 {
	if cap(buf) < hi-lo {
		buf = make([]float64, hi-lo)
	}
	buf = buf[:hi-lo]
	if len(*row) < t.F {
		*row = make([]float64, t.F)
	}
	for i := lo; i < hi; i++ {
		buf[i-lo] = s(t.Row(i, p, *row))
	}
	return buf
}

func scoreAll(s attacks.Scorer, d *attacks.Data, buf []float64) []float64 {
	out := buf[:0]
	if cap(out) < d.N {
		out = make([]float64, d.N)
	}
	out = out[:d.N]
	for i := range out {
		out[i] = s(d.Row(i))
	}
	return out
}

// Analyze runs the attack and estimator stage on complete trials: attacks
// are trained on the first Split.Train fraction of trials (A1), thresholds
// chosen there (or on the Split.Select fraction), attack and release point
// chosen there too, and errors counted on the rest (A2) only.
func Analyze(p *Plan, t *Trials) (*Report, error) {
	c := p.Config
	n := c.Audit.Trials
	if t.Lo != 0 || t.Hi != n || t.N != n {
		return nil, fmt.Errorf("audit: analysis needs all %d trials, have [%d, %d)", n, t.Lo, t.Hi)
	}
	if t.ConfigHash != p.Hash {
		return nil, fmt.Errorf("audit: trials were produced by another configuration (hash %.12s…, expected %.12s…)", t.ConfigHash, p.Hash)
	}
	nTr, nSe, nEv := splitSizes(n, c.Audit.Split)
	r := &Report{
		Name: c.Name, ConfigHash: p.Hash, Seed: c.Seed, Trials: n,
		TrainRuns: nTr, SelectRuns: nSe, EvalRuns: nEv,
		Delta: c.Audit.Delta, Confidence: c.Audit.Confidence,
		AttackSelection: c.Audit.AttackSelection, PointSelection: c.Audit.PointSelection,
		Info: t.Info, Headline: -1,
	}
	// Multiplicity: tests evaluated on A2 per point × points tested.
	mA := 1
	if c.Audit.AttackSelection == SelectBonferroni {
		mA = len(p.Attacks)
	}
	mP := 1
	if c.Audit.PointSelection == SelectBonferroni {
		mP = len(p.Points)
	}
	alpha := 1 - c.Audit.Confidence
	r.TestConfidence = 1 - alpha/float64(mA*mP)
	r.Multiplicity = multiplicityNote(p, mA, mP, alpha)

	var bufs buffers
	for k := range p.Points {
		pr, err := analyzePoint(p, t, k, nTr, nSe, r.TestConfidence, &bufs)
		if err != nil {
			return nil, fmt.Errorf("release %q: %w", p.Points[k].Label, err)
		}
		r.Points = append(r.Points, pr)
	}
	if t.TestSize > 0 {
		for k := range r.Points {
			a := float64(t.Correct[k]) / (float64(t.N) * float64(t.TestSize))
			r.Points[k].TestAccuracy = &a
		}
	}
	if ex, ok := ExactEpsilons(p); ok {
		for k := range r.Points {
			v := stats.JSONFloat(ex[k])
			r.Points[k].Exact = &v
		}
	}
	r.EvalNegatives = r.Points[0].Region.Counts.Negatives
	r.EvalPositives = r.Points[0].Region.Counts.Positives

	// The headline and the verdict. Anything but an explicit Bonferroni
	// request is the training-run selection, the procedure whose α the
	// multiplicity above assumed (mP = 1).
	if mP == 1 {
		best := 0
		for k, pr := range r.Points {
			if pr.selectionScore > r.Points[best].selectionScore {
				best = k
			}
		}
		r.Headline = best
		r.Epsilon = r.Points[best].Region
		r.judge([]int{best})
	} else {
		best := 0
		for k, pr := range r.Points {
			if pr.Region.Epsilon > r.Points[best].Region.Epsilon {
				best = k
			}
		}
		r.Epsilon = r.Points[best].Region
		all := make([]int, len(r.Points))
		for k := range all {
			all[k] = k
		}
		r.judge(all)
	}
	return r, nil
}

func multiplicityNote(p *Plan, mA, mP int, alpha float64) string {
	s := ""
	if len(p.Attacks) > 1 {
		if mA > 1 {
			s += fmt.Sprintf("all %d attacks counted on the evaluation runs, α divided among them (Bonferroni); ", mA)
		} else {
			s += fmt.Sprintf("one of %d attacks chosen on training runs; ", len(p.Attacks))
		}
	}
	if len(p.Points) > 1 {
		if mP > 1 {
			s += fmt.Sprintf("all %d release points tested, α divided among them (Bonferroni); ", mP)
		} else {
			s += fmt.Sprintf("per-point values are pointwise (each holds at its confidence on its own); the verdict rests on one release point chosen on training runs; ")
		}
	}
	if mA*mP > 1 {
		s += fmt.Sprintf("each test at level α/%d = %.3g", mA*mP, alpha/float64(mA*mP))
	} else {
		s += fmt.Sprintf("each test at level α = %.3g", alpha)
	}
	return s
}

func analyzePoint(p *Plan, t *Trials, k, nTr, nSe int, conf float64, bufs *buffers) (PointResult, error) {
	c := p.Config
	n := c.Audit.Trials
	delta := c.Audit.Delta
	pr := PointResult{Point: p.Points[k]}
	// Every attack is evaluated only under an explicit Bonferroni request;
	// anything else is the training-run choice of one attack.
	mA := 1
	if c.Audit.AttackSelection == SelectBonferroni {
		mA = len(p.Attacks)
	}
	bufs.train = columns(t, k, 0, nTr, bufs.train)
	train := bufs.train
	sel := train
	if nSe > 0 {
		bufs.sel = columns(t, k, nTr, nTr+nSe, bufs.sel)
		sel = bufs.sel
	}
	// The evaluation runs are scored straight from the feature store; only
	// their labels are gathered.
	eval := &attacks.Data{N: n - nTr - nSe, F: t.F, Label: labelsOf(t, nTr+nSe, n, bufs.evalLabels)}
	bufs.evalLabels = eval.Label
	for _, d := range []struct {
		name string
		d    *attacks.Data
	}{{"training", train}, {"threshold-selection", sel}, {"evaluation", eval}} {
		if neg, pos := d.d.Counts(); neg == 0 || pos == 0 {
			return pr, fmt.Errorf("audit.trials: the %s runs have %d on D and %d on D′; both sides need runs (raise audit.trials)", d.name, neg, pos)
		}
	}
	best, bestGDP := -1, -1
	for _, a := range p.Attacks {
		score, err := a.Fit(train, delta, c.Audit.Confidence)
		note := ""
		if err != nil {
			// An attack that cannot be fitted has no power; it never makes
			// an audit fail (nor can it inflate a bound).
			note = "fit failed, constant score: " + err.Error()
			score = func([]float64) float64 { return 0 }
		}
		bufs.selScores = scoreAll(score, sel, bufs.selScores)
		s, sg, err := bufs.chooser.ChooseRules(bufs.selScores, sel.Label, delta, c.Audit.Confidence)
		if err != nil {
			return pr, fmt.Errorf("attack %s: %w", a.Name(), err)
		}
		selEst, _ := stats.RegionBound(s.Counts, delta, c.Audit.Confidence)
		ar := AttackResult{Attack: a.Name(), Note: note, Rule: s.Rule, Selection: selEst, GDPRule: sg.Rule, GDPSelection: sg.Epsilon, GDPSelCounts: sg.Counts}
		bufs.evalScores = scoreStore(score, t, k, nTr+nSe, n, bufs.evalScores, &bufs.row)
		evalScores := bufs.evalScores
		ar.Counts = attacks.Count(s.Rule, evalScores, eval.Label)
		ar.GDPCounts = attacks.Count(sg.Rule, evalScores, eval.Label)
		pr.Attacks = append(pr.Attacks, ar)
		if best < 0 || s.Epsilon > pr.Attacks[best].Selection.Epsilon {
			best = len(pr.Attacks) - 1
		}
		if bestGDP < 0 || sg.Epsilon > pr.Attacks[bestGDP].GDPSelection {
			bestGDP = len(pr.Attacks) - 1
		}
	}
	// Evaluate: the training-chosen attack, or all of them (Bonferroni).
	for i := range pr.Attacks {
		ar := &pr.Attacks[i]
		if mA == 1 && i != best {
			continue
		}
		reg, err := stats.RegionBound(ar.Counts, delta, conf)
		if err != nil {
			return pr, err
		}
		gdp, err := stats.GDPBound(ar.GDPCounts, delta, conf)
		if err != nil {
			return pr, err
		}
		ar.Evaluated, ar.Region, ar.GDP = true, &reg, &gdp
	}
	if mA > 1 {
		for i := range pr.Attacks {
			if pr.Attacks[i].Region.Epsilon > pr.Attacks[best].Region.Epsilon {
				best = i
			}
			if pr.Attacks[i].GDP.Mu > pr.Attacks[bestGDP].GDP.Mu {
				bestGDP = i
			}
		}
	} else if !pr.Attacks[bestGDP].Evaluated {
		// One attack per estimator is chosen on training runs; the GDP
		// estimator's may differ from the region bound's.
		ar := &pr.Attacks[bestGDP]
		gdp, err := stats.GDPBound(ar.GDPCounts, delta, conf)
		if err != nil {
			return pr, err
		}
		ar.GDP = &gdp
	}
	pr.Best, pr.BestGDP = best, bestGDP
	pr.Region, pr.GDP = *pr.Attacks[best].Region, *pr.Attacks[bestGDP].GDP
	ceil, err := stats.Ceiling(pr.Region.Counts.Negatives, pr.Region.Counts.Positives, delta, conf)
	if err != nil {
		return pr, err
	}
	pr.Ceiling = ceil

	// Claims: every evaluated attack's bounds are tested (they share α).
	// Points are ranked for the verdict on training runs only: by the
	// selection-run evidence against the claims when there are claims
	// (the largest refutation margin; −Inf where no claim speaks), else by
	// the selection-run region bound.
	pr.selectionScore = pr.Attacks[best].Selection.Epsilon
	if len(p.Claims) > 0 {
		pr.selectionScore = math.Inf(-1)
	}
	// Each claim is tested with the rule — the region-bound rule or the GDP
	// rule of the attacks evaluated — whose selection-run counts refute it
	// most clearly; the choice uses selection runs only.
	type cand struct {
		sel, eval stats.Counts
	}
	var cands []cand
	for _, ar := range pr.Attacks {
		if ar.Evaluated {
			cands = append(cands, cand{ar.Selection.Counts, ar.Counts}, cand{ar.GDPSelCounts, ar.GDPCounts})
		}
	}
	selConf := c.Audit.Confidence
	for _, cl := range p.Claims {
		prof, knots, ok := cl.At(k)
		res := ClaimResult{Name: cl.Name, Covered: ok}
		if ok {
			res.EpsilonAtDelta = stats.JSONFloat(EpsilonAt(prof, delta))
			bestSel, bestIdx := math.Inf(-1), 0
			for i, cd := range cands {
				f, g := rateBounds(cd.sel, selConf)
				if m := Refute(f, g, prof, knots).Margin; m > bestSel {
					bestSel, bestIdx = m, i
				}
			}
			f, g := rateBounds(cands[bestIdx].eval, conf)
			ref := Refute(f, g, prof, knots)
			res.Refutation = &ref
			pr.selectionScore = math.Max(pr.selectionScore, bestSel)
		}
		pr.Claims = append(pr.Claims, res)
	}
	return pr, nil
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

// judge sets the verdict from the claims at the given points.
func (r *Report) judge(points []int) {
	anyCovered := false
	r.Verdict = VerdictNoClaim
	for _, k := range points {
		for _, cr := range r.Points[k].Claims {
			if !cr.Covered {
				continue
			}
			anyCovered = true
			if cr.Refutation != nil && cr.Refutation.Refuted {
				ref := cr.Refutation
				r.Violations = append(r.Violations, fmt.Sprintf(
					"%s at %s: (ε, δ) = (%.4g, %.3g) refuted — the evaluation runs' error rates (FPR ≤ %.4g, FNR ≤ %.4g at confidence %.4g) admit no (%.4g, %.3g)-DP mechanism",
					cr.Name, r.Points[k].Point.Label, ref.Epsilon, ref.Delta,
					ref.FPR, ref.FNR, r.TestConfidence, ref.Epsilon, ref.Delta))
			}
		}
	}
	switch {
	case len(r.Violations) > 0:
		r.Verdict = VerdictViolation
	case anyCovered:
		r.Verdict = VerdictNotRefuted
	}
}
