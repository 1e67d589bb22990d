package audit

import (
	"context"
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/stats"
	"golang.org/x/sync/errgroup"
)

// columns gathers the features of trials [lo, hi) at point p, reusing
// buf's storage when it is large enough (one point is analysed at a time).
// The labels are the same at every point: they are written only when
// labels is set or the storage is new. Without features the data carry
// labels only (X empty), for an analysis that reads the store itself
// (fitStoreScored).
func columns(t *Trials, p, lo, hi int, buf *attacks.Data, labels, features bool) *attacks.Data {
	d := buf
	nx := 0
	if features {
		nx = (hi - lo) * t.F
	}
	if d == nil || cap(d.X) < nx || cap(d.Label) < hi-lo {
		d = &attacks.Data{X: make([]float64, 0, nx), Label: make([]bool, hi-lo)}
		if buf != nil && !labels && cap(buf.Label) >= hi-lo {
			d.Label = buf.Label // still this worker's labels
		} else {
			labels = true
		}
	}
	d.N, d.F, d.X, d.Label = hi-lo, t.F, d.X[:nx], d.Label[:hi-lo]
	t.rows(p, lo, lo+nx/max(t.F, 1), d.X)
	if labels {
		for i := lo; i < hi; i++ {
			d.Label[i-lo] = t.Side[i-t.Lo] == dataset.SideDPrime
		}
	}
	return d
}

// buffers are reused from one release point to the next.
type buffers struct {
	train, sel *attacks.Data
	evalLabels []bool
	selScores  []float64
	row        []float64
	chooser    attacks.Chooser
	rules      []attacks.Rule
	counts     []stats.Counts
	// scorers[i] is attack i's fitted scorer at the current point.
	scorers []attacks.Scorer
	// descScores and descKeys hold describeAttack's scores and sort keys.
	descScores []float64
	descKeys   []uint64
	// evalScores holds the evaluation runs' scores of attack evalOf (−1:
	// none) at the current point, in selScores' or descScores' storage.
	evalScores []float64
	evalOf     int
	// labelled is set once the runs' labels are gathered and checked: they
	// are the same at every point.
	labelled bool
	// sorted holds the evaluation scores of attack sortedOf (−1: none)
	// sorted by label, when an audit has one attack: counting its rules
	// and describing it then share one sort.
	sorted   sortedScores
	sortedOf int
	// sorter and selKeys sort the selection runs from the store
	// (fitStoreScored).
	sorter  storeSorter
	selKeys []uint64
}

// countEval counts the errors of bufs.rules on the evaluation scores
// (bufs.evalScores, of attack bufs.evalOf): with one attack, on the scores
// sorted once (kept for describeAttack), else run by run.
func (b *buffers) countEval(oneAttack bool, labels []bool) []stats.Counts {
	b.sortedOf = -1
	if !oneAttack {
		return countScores(b.evalScores, labels, b.rules, b.counts)
	}
	b.sorted.buf = b.descKeys
	ok := b.sorted.fill(b.evalScores, labels)
	b.descKeys = b.sorted.buf
	if !ok { // a label without runs: runSets refuses it before
		return countScores(b.evalScores, labels, b.rules, b.counts)
	}
	counts := b.counts[:0]
	for _, r := range b.rules {
		c, ok := b.sorted.count(r)
		if !ok {
			return countScores(b.evalScores, labels, b.rules, b.counts)
		}
		counts = append(counts, c)
	}
	b.sortedOf = b.evalOf
	return counts
}

// evalBuffer returns storage for n evaluation scores: the selection runs'
// buffer when it is large enough (their scores are spent once the rules
// are chosen), so that a large audit's memory does not grow by a score per
// evaluation run and worker in the usual split.
func (b *buffers) evalBuffer(n int) []float64 {
	if cap(b.selScores) >= n {
		return b.selScores[:n]
	}
	if cap(b.descScores) < n {
		b.descScores = make([]float64, n)
	}
	return b.descScores[:n]
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

// scoreStore scores trials [lo, lo+len(out)) at point p from the store
// into out, a block of rows at a time (row: the block's storage).
func scoreStore(s attacks.Scorer, t *Trials, p, lo int, out []float64, row *[]float64) {
	const block = 256
	if len(*row) < block*t.F {
		*row = make([]float64, block*t.F)
	}
	for b := 0; b < len(out); b += block {
		m := min(block, len(out)-b)
		x := (*row)[:m*t.F]
		t.rows(p, lo+b, lo+b+m, x)
		for i := range m {
			out[b+i] = s(x[i*t.F : (i+1)*t.F])
		}
	}
}

// countScores counts the errors of every rule on scores (labels[i] is
// score i's label); counts[j] is rules[j]'s (counts is reused when long
// enough).
func countScores(scores []float64, labels []bool, rules []attacks.Rule, counts []stats.Counts) []stats.Counts {
	if cap(counts) < len(rules) {
		counts = make([]stats.Counts, len(rules))
	}
	counts = counts[:len(rules)]
	clear(counts)
	for j, r := range rules {
		c := &counts[j]
		for i, v := range scores {
			attacks.Tally(c, r.Positive(v), labels[i])
		}
	}
	return counts
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
// chosen there too, and errors counted on the rest (A2) only. Release
// points are analysed in parallel (Execution.Workers); the report does not
// depend on the worker count. It is AnalyzeContext without cancellation.
func (a *Audit) Analyze(t *Trials) (*Report, error) {
	return a.AnalyzeContext(context.Background(), t)
}

// AnalyzeContext is Analyze that stops when ctx is cancelled: ctx is
// checked before every release point and every attack, and the error then
// wraps ctx.Err() (no partial report is returned). Before anything is
// fitted, the attack stage's estimated work is checked against
// Execution.MaxWork.
func (a *Audit) AnalyzeContext(ctx context.Context, t *Trials) (*Report, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("audit: analysis not started: %w", err)
	}
	o := a.opts
	n := o.Trials
	if t.Lo != 0 || t.Hi != n || t.N != n {
		return nil, fmt.Errorf("audit: analysis needs all %d trials, have [%d, %d)", n, t.Lo, t.Hi)
	}
	if t.ConfigHash != o.ID {
		return nil, fmt.Errorf("audit: trials were produced by another configuration (hash %.12s…, expected %.12s…)", t.ConfigHash, o.ID)
	}
	if t.P != len(a.points) || t.F != len(a.features) {
		return nil, fmt.Errorf("audit: trials have %d release points × %d features, the audit %d × %d", t.P, t.F, len(a.points), len(a.features))
	}
	if err := a.CheckWork(0, 0, true); err != nil {
		return nil, err
	}
	r := a.newReport(t)
	if err := a.analysis().analyze(ctx, t, r); err != nil {
		return nil, err
	}
	if len(r.Points) > 0 {
		r.Tightness = a.tightness(r, a.headlinePoint(r))
	}
	if t.TestSize > 0 {
		for k := range r.Points {
			acc := float64(t.Correct[k]) / (float64(a.accuracyRuns()) * float64(t.TestSize))
			r.Points[k].TestAccuracy = &acc
		}
	}
	r.DescriptiveNote = DescriptiveNote
	r.keepOneROC()
	if err := a.utility(t, r); err != nil {
		return nil, err
	}
	r.noteDeterminism(t)
	return r, nil
}

// runsDesign is the analysis of the multi-run design: attacks trained,
// their rules chosen and their errors counted on disjoint runs, every
// count estimator's bound per release point, the headline and the claims.
type runsDesign struct{ a *Audit }

// analyze fills r's release points, headline and verdict.
func (d runsDesign) analyze(ctx context.Context, t *Trials, r *Report) error {
	a := d.a
	o := a.opts
	dup, err := a.checkRepeats(t)
	if err != nil {
		return err
	}
	r.noteRepeats(dup)
	// Multiplicity: tests evaluated on A2 per point × points tested.
	mA, mP := 1, 1
	if o.AttackSelection == SelectBonferroni {
		mA = len(o.Attacks)
	}
	if o.PointSelection == SelectBonferroni {
		mP = len(a.points)
	}
	alpha := 1 - o.Confidence
	r.TestConfidence = 1 - alpha/float64(mA*mP)
	r.SelectionConfidence = o.SelectionConfidence
	// Claims: one verdict answers for all m claims, so α is divided among
	// them (Bonferroni): each claim is tested once, on a release, attack
	// and rule chosen on the selection runs (claims.go), at α/m — the
	// choice sees no evaluation run, so it needs no share of α — and the
	// chance of any false VIOLATION stays ≤ α.
	if m := len(a.claims); m > 0 {
		r.ClaimsTested = m
		r.ClaimConfidence = 1 - alpha/float64(m)
	}
	r.Multiplicity = multiplicityNote(len(o.Attacks), len(a.points), len(a.claims), mA, mP, alpha)

	if err := a.analyzePoints(ctx, t, r); err != nil {
		return err
	}
	for k, e := range a.design.Exact {
		v := stats.JSONFloat(e)
		r.Points[k].Exact = &v
	}
	for k := range a.design.Convergence {
		r.Points[k].Convergence = &a.design.Convergence[k]
	}
	c := r.Points[0].Estimates[a.primary].Bound.Counts
	r.EvalNegatives, r.EvalPositives = c.Negatives, c.Positives
	r.headline(mP, a.primary, a.opts.Estimators[a.primary])
	a.testClaims(r)
	return nil
}

// newReport fills in what the report says about the audit itself.
func (a *Audit) newReport(t *Trials) *Report {
	o, dg := a.opts, a.design
	nTr, nSe, nEv := o.Split.Sizes(o.Trials)
	r := &Report{
		Name: dg.Name, ConfigHash: o.ID, Seed: o.Seed, Trials: o.Trials,
		Mechanism: dg.Mechanism, Features: a.features,
		TrainRuns: nTr, SelectRuns: nSe, EvalRuns: nEv,
		Delta: o.Delta, Confidence: o.Confidence,
		AttackSelection: o.AttackSelection, PointSelection: o.PointSelection,
		Info: t.Info.Totals(), Headline: -1, TestSize: t.TestSize, Notes: dg.Notes,
		D: dg.D, DPrime: dg.DPrime, Adjacency: dg.Adjacency, PairNote: dg.PairNote, ExactSource: dg.ExactSource,
		IterationsUnknown: dg.IterationsUnknown,
	}
	for _, c := range o.Attacks {
		r.Attacks = append(r.Attacks, c.Name())
	}
	for _, c := range a.claims {
		r.Claims = append(r.Claims, c.Name)
	}
	return r
}

// analyzePoints analyses every release point, in parallel; point k only
// writes r.Points[k], so the report is the same for any worker count.
func (a *Audit) analyzePoints(ctx context.Context, t *Trials, r *Report) error {
	r.Points = make([]PointResult, len(a.points))
	var g errgroup.Group
	g.SetLimit(Workers(a.exec.Workers))
	work := make(chan int, len(a.points))
	for k := range a.points {
		work <- k
	}
	close(work)
	for w := 0; w < min(Workers(a.exec.Workers), len(a.points)); w++ {
		g.Go(func() error {
			var bufs buffers
			next := -1 // a point taken with the one before (prefetchPair)
			for {
				k, ok := next, next >= 0
				if !ok {
					if k, ok = <-work; !ok {
						return nil
					}
					next = a.prefetchPair(t, k, work, &bufs)
				} else {
					next = -1
				}
				if err := ctx.Err(); err != nil {
					return fmt.Errorf("audit: analysis interrupted: %w", err)
				}
				pr, err := a.analyzePoint(ctx, t, k, r.TestConfidence, &bufs)
				if err != nil {
					if ctx.Err() != nil {
						return fmt.Errorf("audit: analysis interrupted: %w", ctx.Err())
					}
					return fmt.Errorf("release %q: %w", a.points[k].Label, err)
				}
				r.Points[k] = pr
			}
		})
	}
	return g.Wait()
}

// prefetchPair takes the point after k from work, when the analysis sorts
// the store itself (storeScored), and gathers both points' keys in one
// pass over the store; it returns that point, or −1.
func (a *Audit) prefetchPair(t *Trials, k int, work chan int, bufs *buffers) int {
	if !a.storeScored(t) {
		return -1
	}
	var q int
	select {
	case v, ok := <-work:
		if !ok {
			return -1
		}
		q = v
	default:
		return -1
	}
	if rs, err := a.runSets(t, k, bufs, false); err == nil {
		bufs.sorter.prefetch(t, k, q, rs, a.opts.Trials)
	}
	return q
}

// headline chooses the release point the headline rests on — on training
// runs, unless every point is tested under Bonferroni (the claims are
// judged apart, each on its own test: testClaims). The headline bound is
// estimator j's (e): the region bound unless the audit leaves it out.
func (r *Report) headline(mP, j int, e Estimator) {
	if mP == 1 {
		best := 0
		for k, pr := range r.Points {
			if pr.selectionScore > r.Points[best].selectionScore {
				best = k
			}
		}
		r.Headline = best
		r.Epsilon = r.Points[best].Estimates[j].Bound
		return
	}
	best := 0
	for k := range r.Points {
		if e.Value(r.Points[k].Estimates[j].Bound) > e.Value(r.Points[best].Estimates[j].Bound) {
			best = k
		}
	}
	r.Epsilon = r.Points[best].Estimates[j].Bound
}

func multiplicityNote(attacks, points, claims, mA, mP int, alpha float64) string {
	s := ""
	if attacks > 1 {
		if mA > 1 {
			s += fmt.Sprintf("all %d attacks counted on the evaluation runs, α divided among them (Bonferroni); ", mA)
		} else {
			s += fmt.Sprintf("one of %d attacks chosen on training runs; ", attacks)
		}
	}
	if points > 1 {
		if mP > 1 {
			s += fmt.Sprintf("all %d release points tested, α divided among them (Bonferroni); ", mP)
		} else {
			s += "per-point values are pointwise (each holds at its confidence on its own); the verdict rests on one release point chosen on training runs; "
		}
	}
	what := "each test"
	if claims > 1 {
		what = "each ε bound"
	}
	if mA*mP > 1 {
		s += fmt.Sprintf("%s at level α/%d = %.3g", what, mA*mP, alpha/float64(mA*mP))
	} else {
		s += fmt.Sprintf("%s at level α = %.3g", what, alpha)
	}
	switch {
	case claims > 1:
		s += fmt.Sprintf("; %s: each claim tested once, %s, at level α/%d = %.3g", claimsDivided(claims), claimChoice, claims, alpha/float64(claims))
	case claims == 1 && mA*mP > 1:
		s += fmt.Sprintf("; the claim tested once, %s, at level α = %.3g", claimChoice, alpha)
	}
	return s
}

// claimChoice says how a claim's one test is chosen (claims.go), and why
// the choice takes no share of α.
const claimChoice = "on the release, attack and rule chosen for it on the selection runs (no evaluation run enters the choice, so α is not divided over them)"

// claimsDivided says that α is shared among the claims.
func claimsDivided(m int) string {
	return fmt.Sprintf("%d claims tested, α divided among them (Bonferroni)", m)
}

// ClaimLevel states the level the verdict holds at: the family-wise
// confidence over every claim tested and the level of each claim's test
// ("" when no claim is tested). In the multi-run design each claim is
// tested once, at α/m for m claims, on a release, attack and rule chosen
// on the selection runs: the choice uses no evaluation run, so the
// family-wise error stays ≤ α without dividing α over attacks or points.
func (r *Report) ClaimLevel() string {
	m := r.ClaimsTested
	if m == 0 {
		return ""
	}
	alpha := 1 - r.Confidence
	per := 1 - r.ClaimConfidence
	div := int(math.Round(alpha / per))
	once := ""
	// Claims tested once each (ClaimTests) say how the one test was
	// chosen; claims tested on guesses at every release judged do not.
	if len(r.ClaimTests) > 0 {
		once = "; each claim tested once, " + claimChoice
		if m == 1 {
			once = "; tested once, " + claimChoice
		}
	}
	if m == 1 {
		if div == 1 {
			return fmt.Sprintf("1 claim tested, at confidence %.6g (α = %.3g)%s", r.Confidence, alpha, once)
		}
		return fmt.Sprintf("1 claim tested, at confidence %.6g: each test at α/%d = %.3g (confidence %.6g)", r.Confidence, div, per, r.ClaimConfidence)
	}
	s := fmt.Sprintf("%s: each claim at α/%d = %.3g", claimsDivided(m), m, alpha/float64(m))
	if div != m {
		s += fmt.Sprintf(", each test at α/%d = %.3g", div, per)
	}
	return s + fmt.Sprintf(" (confidence %.6g)%s; the verdict holds at confidence %.6g for the %d claims together", r.ClaimConfidence, once, r.Confidence, m)
}

// runSets are the training, threshold-selection and evaluation runs of one
// release point (the evaluation runs are scored straight from the store;
// only their labels are gathered).
type runSets struct {
	train, sel, eval *attacks.Data
	evalLo           int
	selLo, selHi     int // the selection runs' trials
}

// runSets gathers the runs of point k, their features only when features
// is set.
func (a *Audit) runSets(t *Trials, k int, bufs *buffers, features bool) (runSets, error) {
	n := a.opts.Trials
	nTr, nSe, _ := a.opts.Split.Sizes(n)
	first := !bufs.labelled
	bufs.train = columns(t, k, 0, nTr, bufs.train, first, features)
	rs := runSets{train: bufs.train, sel: bufs.train, evalLo: nTr + nSe, selLo: 0, selHi: nTr}
	if nSe > 0 {
		bufs.sel = columns(t, k, nTr, nTr+nSe, bufs.sel, first, features)
		rs.sel, rs.selLo, rs.selHi = bufs.sel, nTr, nTr+nSe
	}
	if first {
		bufs.evalLabels = labelsOf(t, nTr+nSe, n, bufs.evalLabels)
	}
	rs.eval = &attacks.Data{N: n - nTr - nSe, F: t.F, Label: bufs.evalLabels}
	if !first {
		return rs, nil // the labels were checked at the first point
	}
	for _, d := range []struct {
		name string
		d    *attacks.Data
	}{{"training", rs.train}, {"threshold-selection", rs.sel}, {"evaluation", rs.eval}} {
		if neg, pos := d.d.Counts(); neg == 0 || pos == 0 {
			return rs, fieldErr("Trials", "the %s runs have %d on D and %d on D′; both sides need runs (raise the number of trials)", d.name, neg, pos)
		}
	}
	bufs.labelled = true
	return rs, nil
}

// analyzePoint audits release point k: fit every attack on the training
// runs, let every estimator choose its rule on the selection runs, count
// on the evaluation runs, bound ε, and test the claims.
func (a *Audit) analyzePoint(ctx context.Context, t *Trials, k int, conf float64, bufs *buffers) (PointResult, error) {
	pr := PointResult{Point: a.points[k]}
	fromStore := a.storeScored(t)
	rs, err := a.runSets(t, k, bufs, !fromStore)
	if err != nil {
		return pr, err
	}
	var best []int
	done := false
	if fromStore {
		if best, done, err = a.fitStoreScored(ctx, t, k, rs, bufs, &pr); err != nil {
			return pr, err
		}
		if !done { // the store cannot be sorted as it is: the runs' features after all
			if rs, err = a.runSets(t, k, bufs, true); err != nil {
				return pr, err
			}
		}
	}
	if !done {
		if best, err = a.fitAttacks(ctx, t, k, rs, bufs, &pr); err != nil {
			return pr, err
		}
	}
	pr.selectionScore = a.selectionScore(&pr, best[a.primary])
	if err = a.evaluateAttacks(&pr, best, conf); err != nil {
		return pr, err
	}
	pr.Estimates = make([]PointEstimate, len(a.opts.Estimators))
	for j, e := range a.opts.Estimators {
		pr.Estimates[j] = PointEstimate{Estimator: e.Name(), Best: best[j], Bound: *pr.Attacks[best[j]].Estimates[j].Bound}
	}
	c := pr.Estimates[a.primary].Bound.Counts
	if pr.Ceiling, err = stats.Ceiling(c.Negatives, c.Positives, a.opts.Delta, conf); err != nil {
		return pr, err
	}
	pr.Descriptive = a.describeAttack(t, k, rs, bufs, pr)
	if len(a.claims) > 0 {
		a.claimsAtPoint(&pr, k)
	}
	return pr, nil
}

// describeAttack returns the descriptive figures of the region bound's
// attack at point k on the evaluation runs (Descriptive).
func (a *Audit) describeAttack(t *Trials, k int, rs runSets, bufs *buffers, pr PointResult) *Descriptive {
	best := pr.Estimates[a.primary].Best
	score, rule := bufs.scorers[best], pr.Attacks[best].Estimates[a.primary].Rule
	if bufs.sortedOf == best && (rule.Orientation == 1 || rule.Orientation == -1) {
		d := bufs.sorted.describe(rule.Orientation == 1)
		return &d
	}
	n := a.opts.Trials - rs.evalLo
	scores := bufs.evalScores
	if bufs.evalOf != best {
		scores = bufs.evalBuffer(n)
		scoreStore(score, t, k, rs.evalLo, scores, &bufs.row)
	}
	bufs.evalOf = -1 // oriented below: no longer the attack's scores
	o := float64(rule.Orientation)
	for i, v := range scores {
		scores[i] = o * v
	}
	var d Descriptive
	d, bufs.descKeys = describeScoresBuf(scores, rs.eval.Label, bufs.descKeys)
	return &d
}

// fitAttacks trains every attack, lets every estimator choose its rule on
// the selection runs and counts every rule on the evaluation runs; best[j]
// is the attack the selection runs prefer for estimator j.
func (a *Audit) fitAttacks(ctx context.Context, t *Trials, k int, rs runSets, bufs *buffers, pr *PointResult) (best []int, err error) {
	o := a.opts
	best = make([]int, len(o.Estimators))
	for j := range best {
		best[j] = -1
	}
	bufs.scorers = bufs.scorers[:0]
	for _, atk := range o.Attacks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		score, err := atk.Fit(rs.train, o.Delta, o.Confidence)
		note := ""
		if err != nil {
			// An attack that cannot be fitted has no power; it never makes
			// an audit fail (nor can it inflate a bound).
			note = "fit failed, constant score: " + err.Error()
			score = func([]float64) float64 { return 0 }
		}
		bufs.scorers = append(bufs.scorers, score)
		// The threshold attack on one feature scores a run by that feature:
		// the selection runs' features are their scores, and the
		// evaluation runs' are read from the store as they are.
		_, coordinate := atk.(attacks.BestCoordinate)
		identity := coordinate && t.F == 1 && err == nil
		selScores := rs.sel.X
		if !identity {
			bufs.selScores = scoreAll(score, rs.sel, bufs.selScores)
			selScores = bufs.selScores
		}
		ar, err := a.chooseRules(bufs, selScores, rs.sel.Label)
		if err != nil {
			return nil, fmt.Errorf("attack %s: %w", atk.Name(), err)
		}
		ar.Attack, ar.Note = atk.Name(), note
		bufs.evalScores = bufs.evalBuffer(o.Trials - rs.evalLo)
		if identity {
			t.rows(k, rs.evalLo, o.Trials, bufs.evalScores)
		} else {
			scoreStore(score, t, k, rs.evalLo, bufs.evalScores, &bufs.row)
		}
		bufs.evalOf = len(pr.Attacks)
		bufs.counts = bufs.countEval(len(o.Attacks) == 1, rs.eval.Label)
		for j := range ar.Estimates {
			ar.Estimates[j].Counts = bufs.counts[j]
		}
		pr.Attacks = append(pr.Attacks, ar)
		i := len(pr.Attacks) - 1
		for j, e := range o.Estimators {
			if best[j] < 0 || e.Value(ar.Estimates[j].Selection) > e.Value(pr.Attacks[best[j]].Estimates[j].Selection) {
				best[j] = i
			}
		}
	}
	return best, nil
}

// storeScored reports whether the audit's one attack scores a run by the
// store's one feature (the threshold attack on one feature): the analysis
// can then sort the stored values themselves (fitStoreScored).
func (a *Audit) storeScored(t *Trials) bool {
	if len(a.opts.Attacks) != 1 || t.F != 1 {
		return false
	}
	_, ok := a.opts.Attacks[0].(attacks.BestCoordinate)
	return ok
}

// fitStoreScored is fitAttacks for an audit whose one attack scores a run
// by the store's one feature (storeScored), with rs's features not
// gathered: the selection and evaluation runs are sorted from the store
// (storeSorter), the rules chosen on the one and counted on the other by
// binary search. done is false, with nothing changed in pr, when the store
// cannot be sorted so (a NaN value, a reference that is not finite) or the
// attack cannot be fitted; fitAttacks then does the work.
func (a *Audit) fitStoreScored(ctx context.Context, t *Trials, k int, rs runSets, bufs *buffers, pr *PointResult) (best []int, done bool, err error) {
	o := a.opts
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	atk := o.Attacks[0]
	score, err := atk.Fit(rs.train, o.Delta, o.Confidence)
	if err != nil {
		return nil, false, nil
	}
	if len(bufs.selKeys) < rs.selHi-rs.selLo {
		bufs.selKeys = make([]uint64, rs.selHi-rs.selLo)
	}
	kpos, kneg, ok := bufs.sorter.sort(t, k, rs.selLo, rs.selHi, rs.sel.Label, bufs.selKeys)
	if !ok {
		return nil, false, nil
	}
	bufs.sorted.buf = bufs.descKeys
	ok = bufs.sorted.fillStore(t, k, rs.evalLo, o.Trials, rs.eval.Label, &bufs.sorter)
	bufs.descKeys = bufs.sorted.buf
	if !ok {
		return nil, false, nil
	}
	if err := bufs.chooser.PrepareSorted(kneg, kpos, o.Delta, o.selectionConfidence()); err != nil {
		return nil, true, fmt.Errorf("attack %s: %w", atk.Name(), err)
	}
	ar, err := a.pickRules(bufs)
	if err != nil {
		return nil, true, fmt.Errorf("attack %s: %w", atk.Name(), err)
	}
	ar.Attack = atk.Name()
	bufs.scorers = append(bufs.scorers[:0], score)
	bufs.evalOf, bufs.sortedOf = -1, 0
	counts := bufs.counts[:0]
	for _, r := range bufs.rules {
		c, ok := bufs.sorted.count(r)
		if !ok { // a NaN threshold: run by run
			bufs.evalScores = bufs.evalBuffer(o.Trials - rs.evalLo)
			t.rows(k, rs.evalLo, o.Trials, bufs.evalScores)
			bufs.evalOf = 0
			c = countScores(bufs.evalScores, rs.eval.Label, []attacks.Rule{r}, nil)[0]
		}
		counts = append(counts, c)
	}
	bufs.counts = counts
	for j := range ar.Estimates {
		ar.Estimates[j].Counts = counts[j]
	}
	pr.Attacks = append(pr.Attacks, ar)
	return make([]int, len(o.Estimators)), true, nil
}

// chooseRules lets every estimator choose its rule on the selection runs'
// scores (sorted once), leaving the rules in bufs.rules.
func (a *Audit) chooseRules(bufs *buffers, scores []float64, labels []bool) (AttackResult, error) {
	if err := bufs.chooser.Prepare(scores, labels, a.opts.Delta, a.opts.selectionConfidence()); err != nil {
		return AttackResult{}, err
	}
	return a.pickRules(bufs)
}

// pickRules lets every estimator choose its rule on the selection runs
// prepared in bufs.chooser, leaving the rules in bufs.rules.
func (a *Audit) pickRules(bufs *buffers) (AttackResult, error) {
	o := a.opts
	ar := AttackResult{Estimates: make([]AttackEstimate, len(o.Estimators))}
	bufs.rules = bufs.rules[:0]
	for j, e := range o.Estimators {
		ce := e.(CountEstimator) // checkEstimators
		s := bufs.chooser.Best(ce.Objective())
		sel, err := ce.Bound(s.Counts, o.Delta, o.Confidence)
		if err != nil {
			return ar, err
		}
		ar.Estimates[j] = AttackEstimate{Estimator: e.Name(), Rule: s.Rule, Selection: sel}
		bufs.rules = append(bufs.rules, s.Rule)
	}
	return ar, nil
}

// selectionScore ranks release point pr for the headline, before any
// evaluation run is looked at (claims do not enter: each claim's test
// picks its own release, claims.go): the selection-run
// region bound of the attack chosen on training runs, or under Bonferroni
// the largest over all attacks (every one is a candidate). Evaluation runs
// must not enter: the attack reported under Bonferroni is re-picked on
// them, and ranking by its score would choose the release on them too.
func (a *Audit) selectionScore(pr *PointResult, best int) float64 {
	e := a.opts.Estimators[a.primary]
	s := e.Value(pr.Attacks[best].Estimates[a.primary].Selection)
	if a.opts.AttackSelection == SelectBonferroni {
		for _, ar := range pr.Attacks {
			s = math.Max(s, e.Value(ar.Estimates[a.primary].Selection))
		}
	}
	return s
}

// evaluateAttacks bounds ε on the evaluation counts: of the attacks chosen
// on training runs, or of every attack under Bonferroni (then, for each
// estimator, the best on the evaluation runs is reported: all share the
// divided α). Without Bonferroni the attack the region bound chose is
// evaluated for every estimator, and each other estimator's own choice,
// when it differs, for that estimator.
func (a *Audit) evaluateAttacks(pr *PointResult, best []int, conf float64) error {
	delta, est := a.opts.Delta, a.opts.Estimators
	bound := func(ar *AttackResult, j int) error {
		b, err := est[j].(CountEstimator).Bound(ar.Estimates[j].Counts, delta, conf)
		if err != nil {
			return err
		}
		ar.Estimates[j].Bound = &b
		return nil
	}
	bonferroni := a.opts.AttackSelection == SelectBonferroni
	for i := range pr.Attacks {
		ar := &pr.Attacks[i]
		if !bonferroni && i != best[a.primary] {
			continue
		}
		for j := range est {
			if err := bound(ar, j); err != nil {
				return err
			}
		}
		ar.Evaluated = true
	}
	for j, e := range est {
		if bonferroni {
			for i := range pr.Attacks {
				if e.Value(*pr.Attacks[i].Estimates[j].Bound) > e.Value(*pr.Attacks[best[j]].Estimates[j].Bound) {
					best[j] = i
				}
			}
		} else if ar := &pr.Attacks[best[j]]; ar.Estimates[j].Bound == nil {
			if err := bound(ar, j); err != nil {
				return err
			}
		}
	}
	return nil
}

// ROCRelease returns the release whose ROC curve a report draws: the
// headline's, or under Bonferroni over the releases the first with the
// headline's ε_lb; −1 when there is none.
func (r *Report) ROCRelease() int {
	k := r.Headline
	if k < 0 {
		for i := range r.Points {
			if r.Points[i].EpsilonBound().Epsilon == r.Epsilon.Epsilon {
				k = i
				break
			}
		}
	}
	if k < 0 || k >= len(r.Points) {
		return -1
	}
	return k
}

// keepOneROC drops the sampled ROC curves of every release but
// ROCRelease's, which no report draws: a trajectory of 10⁵ releases would
// otherwise keep 10⁵ curves of about 2 KB each.
func (r *Report) keepOneROC() {
	keep := r.ROCRelease()
	for k := range r.Points {
		if d := r.Points[k].Descriptive; d != nil && k != keep {
			d.ROC = nil
		}
	}
}
