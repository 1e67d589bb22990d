package audit

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/stats"
	"golang.org/x/sync/errgroup"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// The utility figures set beside the privacy figures, per release: how
// much the sampler moved (acceptance rate and clipping between two
// releases) and how far its releases are from the posterior they should
// sample. A chain that never moves leaks nothing, so a small ε lower bound
// on it says little; the report warns when it barely moves. How each
// figure is computed is in docs/derivations/utility.md.

// MaxUtilityDraws bounds the releases of one side a posterior comparison
// uses (the first ones, in trial order: the same for any worker count or
// shard layout). Its tests have power to spare at that size, and the
// exact Kolmogorov–Smirnov and χ² evaluations of every draw would
// otherwise cost more than the audit.
const MaxUtilityDraws = 20000

// Thresholds of the "barely moves" warning.
const (
	// MinAcceptance: a Metropolis–Hastings-type sampler accepting fewer
	// proposals than this fraction between two releases barely moves.
	MinAcceptance = 0.01
	// MinVarianceRatio: releases whose variance, in the posterior's
	// whitened coordinates, is below this fraction of the posterior's (their
	// spread below a tenth of the posterior's) barely move.
	MinVarianceRatio = 0.01
	// MinJudgedProposals is the fewest proposals between two releases
	// whose acceptance rate the rule judges alone, ⌈1/MinAcceptance⌉:
	// with fewer, one acceptance is already a rate of at least
	// MinAcceptance, so the rate says only whether any was accepted, and a
	// chain that moves often accepts none of a handful (one run of the
	// canary design, 4 proposals at 30% acceptance: 0.7⁴ = 24% of the
	// time). The rule then judges every proposal since the start of the
	// runs, which is what the release depends on: a chain that accepted
	// none of them still releases its starting point.
	MinJudgedProposals = 100
)

// Normal is a multivariate normal law N(Mean, Cov), Cov row-major d×d.
type Normal struct {
	Mean []float64 `json:"mean"`
	Cov  []float64 `json:"cov"`
}

// Posterior holds the law a release on D, and one on D′, would have if the
// mechanism sampled its target exactly: for a conjugate model, the exact
// posterior (ExactPosterior). The utility figures compare the releases
// with it.
type Posterior struct {
	D      Normal `json:"d"`
	DPrime Normal `json:"d_prime"`
}

// ExactPosterior returns the exact posteriors on D and on D′ of a chain
// whose model knows them (mechanisms.GaussianPosterior: the Gaussian, the
// linear-regression models), or nil when the mechanism is not such a
// chain, its datasets are not materialised, or its sampler does not
// target the posterior (the Gaussian query releases a noisy sum).
func ExactPosterior(m mechanisms.Mechanism, p dataset.Pair) (*Posterior, error) {
	c, ok := m.(*mechanisms.Chain)
	if !ok || p.D == nil || p.DPrime == nil || p.D.Virtual > 0 || p.DPrime.Virtual > 0 {
		return nil, nil
	}
	if _, ok := c.Sampler.(*mechanisms.GaussianQuery); ok {
		return nil, nil
	}
	return ModelPosterior(c.Model, p)
}

// ModelPosterior returns the exact posteriors on D and on D′ of a model
// that knows them (mechanisms.GaussianPosterior), whatever samples it:
// the law a program sampler or precomputed samples on that model should
// follow. It returns nil when the model has no closed-form posterior or the
// datasets are not materialised.
func ModelPosterior(m mechanisms.Model, p dataset.Pair) (*Posterior, error) {
	gp, ok := m.(mechanisms.GaussianPosterior)
	if !ok || p.D == nil || p.DPrime == nil || p.D.Virtual > 0 || p.DPrime.Virtual > 0 {
		return nil, nil
	}
	var out Posterior
	for _, s := range []struct {
		d   *dataset.Dataset
		law *Normal
	}{{p.D, &out.D}, {p.DPrime, &out.DPrime}} {
		mean, cov, err := gp.Posterior(s.d)
		if err != nil {
			return nil, fmt.Errorf("posterior of %s: %w", s.d.Name, err)
		}
		*s.law = Normal{Mean: mean, Cov: cov}
	}
	return &out, nil
}

// check validates a law of dimension d and returns the Cholesky factor of
// its covariance.
func (n Normal) check(d int, name string) error {
	if len(n.Mean) != d || len(n.Cov) != d*d {
		return fieldErr("Posterior", "%s: mean must have %d values and cov %d, got %d and %d", name, d, d*d, len(n.Mean), len(n.Cov))
	}
	for _, v := range append(append([]float64(nil), n.Mean...), n.Cov...) {
		if v-v != 0 {
			return fieldErr("Posterior", "%s: mean and cov must be finite", name)
		}
	}
	for i := 0; i < d; i++ {
		for j := 0; j < i; j++ {
			if a, b := n.Cov[i*d+j], n.Cov[j*d+i]; math.Abs(a-b) > 1e-12*math.Max(math.Abs(a), math.Abs(b)) {
				return fieldErr("Posterior", "%s: cov must be symmetric (entries (%d, %d) and (%d, %d) are %g and %g)", name, i, j, j, i, a, b)
			}
		}
	}
	if _, ok := marginalChol(n, allCoords(d)); !ok {
		return fieldErr("Posterior", "%s: cov must be positive definite", name)
	}
	return nil
}

func allCoords(d int) []int {
	out := make([]int, d)
	for i := range out {
		out[i] = i
	}
	return out
}

// marginalChol returns the Cholesky factor of the covariance of the
// coordinates idx.
func marginalChol(n Normal, idx []int) (*mat.Cholesky, bool) {
	d := len(n.Mean)
	q := len(idx)
	s := mat.NewSymDense(q, nil)
	for a, i := range idx {
		for b := a; b < q; b++ {
			s.SetSym(a, b, n.Cov[i*d+idx[b]])
		}
	}
	var ch mat.Cholesky
	return &ch, ch.Factorize(s)
}

// thetaColumns maps the feature columns that hold a raw coordinate of the
// release (attacks.Theta, attacks.Coords, inside attacks.Concat) to that
// coordinate: coordinate → column, first occurrence.
func thetaColumns(fm attacks.FeatureMap) map[int]int {
	out := map[int]int{}
	var walk func(fm attacks.FeatureMap, off int) int
	walk = func(fm attacks.FeatureMap, off int) int {
		switch f := fm.(type) {
		case attacks.Theta:
			for j := 0; j < f.D; j++ {
				if _, ok := out[j]; !ok {
					out[j] = off + j
				}
			}
		case attacks.Coords:
			for i, j := range f.Idx {
				if _, ok := out[j]; !ok {
					out[j] = off + i
				}
			}
		case attacks.Concat:
			for _, g := range f {
				off = walk(g, off)
			}
			return off
		}
		return off + len(fm.Names())
	}
	walk(fm, 0)
	return out
}

// PosteriorFit compares the releases of one side at one release point
// with the reference law of that side (Target.Posterior), on the
// coordinates the features store. With u_i = L⁻¹(θ_i − m) the releases
// whitened by the law's mean m and Cholesky factor L (of the coordinates
// compared), every u_i is N(0, I_q) when the releases follow the law.
type PosteriorFit struct {
	Side string `json:"side"`
	// Draws is the number of releases compared: the runs on that side, the
	// first MaxUtilityDraws of them in trial order in a larger audit.
	Draws int `json:"draws"`
	// Coords are the coordinates of θ compared.
	Coords []int `json:"coords"`
	// MeanError[j] is (mean of the releases − m_j)/σ_j: the error of the
	// releases' mean in posterior standard deviations σ_j = sqrt(Σ_jj).
	MeanError []float64 `json:"mean_error_sd"`
	// SDRatio[j] is the releases' standard deviation over σ_j.
	SDRatio []float64 `json:"sd_ratio"`
	// VarianceRatio is Σ_i ‖u_i − ū‖²/(q(n − 1)), the releases' variance
	// over the law's, averaged over the whitened coordinates (1 when they
	// follow it).
	VarianceRatio float64 `json:"variance_ratio"`
	// MeanChi2 is n‖ū‖², χ² with q degrees of freedom under the law;
	// MeanPValue its upper tail: small when the releases' mean is off.
	MeanChi2   float64 `json:"mean_chi2"`
	MeanPValue float64 `json:"mean_p_value"`
	// KS is the one-sample Kolmogorov–Smirnov statistic of the squared
	// radii ‖u_i‖² against the χ²_q law they follow under the law (it
	// sees a wrong spread or shape); KSPValue its p-value.
	KS       float64 `json:"ks"`
	KSPValue float64 `json:"ks_p_value"`
}

// Utility holds the utility figures of one release point.
type Utility struct {
	// Iterations since the previous release (since the start for the
	// first); 0, and absent from the JSON, when the release points do not
	// know their iterations (Design.IterationsUnknown).
	Iterations int `json:"iterations_since_previous,omitempty"`
	// Runs is the number of runs whose counters are summed below (every
	// run, unless some recorded no per-release counters).
	Runs int `json:"runs_counted,omitempty"`
	// Counter differences since the previous release, summed over runs.
	Proposals    int `json:"proposals,omitempty"`
	Accepted     int `json:"accepted,omitempty"`
	GradEvals    int `json:"grad_evals,omitempty"`
	ClippedGrads int `json:"clipped_grads,omitempty"`
	LLREvals     int `json:"llr_evals,omitempty"`
	ClippedLLRs  int `json:"clipped_llrs,omitempty"`
	// AcceptanceRate, ClippedGradFraction and ClippedLLRFraction are the
	// ratios of those counts (absent when their denominator is 0).
	AcceptanceRate      *float64 `json:"acceptance_rate,omitempty"`
	ClippedGradFraction *float64 `json:"clipped_grad_fraction,omitempty"`
	ClippedLLRFraction  *float64 `json:"clipped_llr_fraction,omitempty"`
	// ProposalsSinceStart and AcceptedSinceStart count the proposals since
	// the start of the runs, and AcceptanceSinceStart is their ratio: set
	// only where fewer than MinJudgedProposals were made since the
	// previous release, when the "barely moves" rule judges these instead.
	ProposalsSinceStart  int      `json:"proposals_since_start,omitempty"`
	AcceptedSinceStart   int      `json:"accepted_since_start,omitempty"`
	AcceptanceSinceStart *float64 `json:"acceptance_rate_since_start,omitempty"`
	// Posterior compares the releases with Target.Posterior, on D and on
	// D′ (absent without a reference law or raw θ features).
	Posterior []PosteriorFit `json:"posterior,omitempty"`
	// BarelyMoves is set when the acceptance rate is below MinAcceptance
	// or a side's VarianceRatio below MinVarianceRatio; Why says which.
	BarelyMoves bool     `json:"barely_moves,omitempty"`
	Why         []string `json:"why,omitempty"`
}

// HasUtility reports whether the report carries utility figures.
func (r *Report) HasUtility() bool {
	for _, pr := range r.Points {
		if u := pr.Utility; u != nil && (u.AcceptanceRate != nil || u.ClippedGradFraction != nil || u.ClippedLLRFraction != nil || len(u.Posterior) > 0) {
			return true
		}
	}
	return false
}

// checkPosterior validates Target.Posterior against the releases'
// dimension d.
func checkPosterior(p *Posterior, d int) error {
	if p == nil {
		return nil
	}
	if err := p.D.check(d, "D"); err != nil {
		return err
	}
	return p.DPrime.check(d, "D′")
}

// pointUtility computes the utility figures of release point k: the
// iterations since the previous release, the counters' differences (per,
// when every release has its counters) and the releases' distance to the
// posterior on the stored coordinates.
func (a *Audit) pointUtility(t *Trials, k int, per []mechanisms.Snapshot, coords []int, rows *[2][]int) (*Utility, error) {
	u := &Utility{}
	if !a.design.IterationsUnknown {
		u.Iterations = a.points[k].Iteration
		if k > 0 {
			u.Iterations -= a.points[k-1].Iteration
		}
	}
	if per != nil {
		counterDiffs(u, per, k)
	}
	if post := a.design.Posterior; post != nil && len(coords) > 0 {
		for _, s := range []dataset.Side{dataset.SideD, dataset.SideDPrime} {
			law := post.D
			if s == dataset.SideDPrime {
				law = post.DPrime
			}
			fit, err := fitPosteriorRows(t, k, rows[s], s, law, coords, a.design.ThetaColumns)
			if err != nil {
				return nil, err
			}
			if fit != nil {
				u.Posterior = append(u.Posterior, *fit)
			}
		}
	}
	barelyMoves(u)
	return u, nil
}

// utility computes the utility figures of every release point and the
// report's warnings; it runs after the headline is chosen.
func (a *Audit) utility(t *Trials, r *Report) error {
	cols := a.design.ThetaColumns
	var coords []int
	for j := range cols {
		coords = append(coords, j)
	}
	sort.Ints(coords)
	post := a.design.Posterior
	switch {
	case post == nil:
	case len(coords) == 0:
		r.UtilityNote = "the distance to the posterior needs the raw release among the features (theta or coord:K); none is stored"
	case len(coords) < a.design.Dim:
		r.UtilityNote = fmt.Sprintf("the distance to the posterior is computed on the stored coordinates %v of θ only (their marginal law)", coords)
	}
	per := t.Info.PerRelease
	if len(per) != len(a.points) {
		per = nil
	}
	// The trials each side's posterior fit reads, the same at every point.
	var rows [2][]int
	if post != nil && len(coords) > 0 {
		rows = utilityRows(t)
	}
	// Release points in parallel: point k writes only r.Points[k].
	var g errgroup.Group
	g.SetLimit(Workers(a.exec.Workers))
	for k := range r.Points {
		g.Go(func() error {
			u, err := a.pointUtility(t, k, per, coords, &rows)
			r.Points[k].Utility = u
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	var moving []string
	for k := range r.Points {
		if r.Points[k].Utility.BarelyMoves {
			moving = append(moving, r.Points[k].Point.Label)
		}
	}
	if r.HeadlineBarelyMoves() {
		r.Warnings = append(r.Warnings, "the release the headline rests on barely moves: its ε lower bound means little about the sampler's privacy when it does move (see the utility figures)")
	}
	if per == nil {
		if w, ok := stuckOverall(t.Info); ok {
			r.Warnings = append(r.Warnings, w)
		}
	}
	if len(moving) > 0 {
		first := r.Points[indexOfLabel(r, moving[0])].Utility.Why
		r.Warnings = append(r.Warnings, fmt.Sprintf("the chain barely moves at %d of %d releases (%s; at %s: %s): a sampler that does not move leaks little, so a small ε lower bound there says little about the sampler in use",
			len(moving), len(r.Points), abbreviate(moving, 4), moving[0], strings.Join(first, "; ")))
	}
	return nil
}

// HeadlineBarelyMoves reports whether the release the headline rests on
// (every release, under Bonferroni over points) barely moves.
func (r *Report) HeadlineBarelyMoves() bool {
	for k, pr := range r.Points {
		if (r.Headline < 0 || k == r.Headline) && pr.Utility != nil && pr.Utility.BarelyMoves {
			return true
		}
	}
	return false
}

func indexOfLabel(r *Report, label string) int {
	for k, pr := range r.Points {
		if pr.Point.Label == label {
			return k
		}
	}
	return 0
}

func abbreviate(xs []string, n int) string {
	if len(xs) <= n {
		return strings.Join(xs, ", ")
	}
	return strings.Join(xs[:n], ", ") + fmt.Sprintf(", … (%d more)", len(xs)-n)
}

// stuckOverall is the warning of a sampler that counts its proposals but
// not per release (a program's info): fewer than MinAcceptance of all
// its proposals, over every run, were accepted.
func stuckOverall(info mechanisms.Info) (string, bool) {
	if info.Proposals <= 0 || float64(info.Accepted) >= MinAcceptance*float64(info.Proposals) {
		return "", false
	}
	return fmt.Sprintf("the chain barely moves: %d of %d proposals accepted over every run (rate %.3g < %g; the sampler reports no counters per release): a sampler that does not move leaks little, so a small ε lower bound there says little about the sampler in use",
		info.Accepted, info.Proposals, float64(info.Accepted)/float64(info.Proposals), MinAcceptance), true
}

// counterDiffs fills the counter differences between releases k−1 and k.
func counterDiffs(u *Utility, per []mechanisms.Snapshot, k int) {
	cur, prev := per[k], mechanisms.Snapshot{}
	if k > 0 {
		prev = per[k-1]
	}
	u.Runs = cur.Runs
	u.Proposals, u.Accepted = cur.Proposals-prev.Proposals, cur.Accepted-prev.Accepted
	u.GradEvals, u.ClippedGrads = cur.GradEvals-prev.GradEvals, cur.ClippedGrads-prev.ClippedGrads
	u.LLREvals, u.ClippedLLRs = cur.LLREvals-prev.LLREvals, cur.ClippedLLRs-prev.ClippedLLRs
	ratio := func(a, b int) *float64 {
		if b <= 0 {
			return nil
		}
		v := float64(a) / float64(b)
		return &v
	}
	u.AcceptanceRate = ratio(u.Accepted, u.Proposals)
	u.ClippedGradFraction = ratio(u.ClippedGrads, u.GradEvals)
	u.ClippedLLRFraction = ratio(u.ClippedLLRs, u.LLREvals)
	if u.AcceptanceRate != nil && u.Proposals < MinJudgedProposals {
		u.ProposalsSinceStart, u.AcceptedSinceStart = cur.Proposals, cur.Accepted
		u.AcceptanceSinceStart = ratio(cur.Accepted, cur.Proposals)
	}
}

// barelyMoves applies the two rules of the warning: the acceptance rate
// since the previous release, or since the start where too few proposals
// were made since the previous release (MinJudgedProposals), and the
// releases' variance.
func barelyMoves(u *Utility) {
	if r := u.AcceptanceSinceStart; r != nil {
		if *r < MinAcceptance {
			why := fmt.Sprintf("%d of %d proposals accepted since the start (rate %.3g < %g; the %d since the previous release are too few to judge alone)",
				u.AcceptedSinceStart, u.ProposalsSinceStart, *r, MinAcceptance, u.Proposals)
			if u.ProposalsSinceStart == u.Proposals { // the first release
				why = fmt.Sprintf("%d of %d proposals accepted before it (rate %.3g < %g)", u.AcceptedSinceStart, u.ProposalsSinceStart, *r, MinAcceptance)
			}
			u.Why = append(u.Why, why)
		}
	} else if u.AcceptanceRate != nil && *u.AcceptanceRate < MinAcceptance {
		over := fmt.Sprintf("over the %d iterations before it", u.Iterations)
		if u.Iterations == 0 {
			over = "since the previous release"
		}
		u.Why = append(u.Why, fmt.Sprintf("acceptance rate %.3g < %g %s", *u.AcceptanceRate, MinAcceptance, over))
	}
	for _, f := range u.Posterior {
		if f.VarianceRatio < MinVarianceRatio {
			u.Why = append(u.Why, fmt.Sprintf("on %s the releases' variance is %.3g of the posterior's (< %g)", f.Side, f.VarianceRatio, MinVarianceRatio))
		}
	}
	u.BarelyMoves = len(u.Why) > 0
}

// utilityRows returns, for each side, the store rows (trial − t.Lo) of
// the releases its posterior fit compares: the first MaxUtilityDraws
// trials on that side, in trial order.
func utilityRows(t *Trials) [2][]int {
	var rows [2][]int
	for i, s := range t.Side {
		if s <= dataset.SideDPrime && len(rows[s]) < MaxUtilityDraws {
			rows[s] = append(rows[s], i)
		}
	}
	return rows
}

// fitPosterior compares the releases of side s at point k with law on the
// coordinates coords (stored in columns cols); nil with fewer than two
// releases on that side.
func fitPosterior(t *Trials, k int, s dataset.Side, law Normal, coords []int, cols map[int]int) (*PosteriorFit, error) {
	rows := utilityRows(t)
	return fitPosteriorRows(t, k, rows[s], s, law, coords, cols)
}

// fitPosteriorRows is fitPosterior on the releases of the store rows rows
// (those of side s, utilityRows). It reads the coordinates straight from
// the feature store into one flat buffer (the value t.Row would give:
// trial 0's feature plus the stored deviation), with no allocation per
// draw.
func fitPosteriorRows(t *Trials, k int, rows []int, s dataset.Side, law Normal, coords []int, cols map[int]int) (*PosteriorFit, error) {
	n, q := len(rows), len(coords)
	if n < 2 {
		return nil, nil
	}
	x := make([]float64, n*q)
	for a, j := range coords {
		c := cols[j]
		ref := t.Ref[k*t.F+c]
		xa := x[a:]
		for r, i := range rows {
			xa[r*q] = ref + float64(t.X[(i*t.P+k)*t.F+c])
		}
	}
	l, err := whitener(law, coords)
	if err != nil {
		return nil, fmt.Errorf("posterior of %s: %w", s, err)
	}
	f, err := fitFlat(x, n, law, coords, l)
	if err != nil {
		return nil, fmt.Errorf("posterior of %s: %w", s, err)
	}
	f.Side = s.String()
	return f, nil
}

// FitPosterior compares draws (each holding the coordinates coords of a
// release, at least two draws) with the marginal of law on those
// coordinates: the figures of PosteriorFit, Side left empty.
func FitPosterior(draws [][]float64, law Normal, coords []int) (*PosteriorFit, error) {
	if len(draws) < 2 {
		return nil, fmt.Errorf("need at least two draws, got %d", len(draws))
	}
	l, err := whitener(law, coords)
	if err != nil {
		return nil, err
	}
	q := len(coords)
	x := make([]float64, 0, len(draws)*q)
	for i, d := range draws {
		if len(d) != q {
			return nil, fmt.Errorf("draw %d has %d coordinates, want %d", i, len(d), q)
		}
		x = append(x, d...)
	}
	return fitFlat(x, len(draws), law, coords, l)
}

// whitener checks coords against law's dimension and returns the lower
// Cholesky factor L of the marginal covariance of those coordinates,
// row-major q×q.
func whitener(law Normal, coords []int) ([]float64, error) {
	for _, j := range coords {
		if j < 0 || j >= len(law.Mean) {
			return nil, fmt.Errorf("coordinate %d outside the law's dimension %d", j, len(law.Mean))
		}
	}
	q := len(coords)
	ch, ok := marginalChol(law, coords)
	if !ok {
		return nil, fmt.Errorf("covariance of coordinates %v is not positive definite", coords)
	}
	var lt mat.TriDense
	ch.LTo(&lt)
	l := make([]float64, q*q)
	for a := 0; a < q; a++ {
		for b := 0; b <= a; b++ {
			l[a*q+b] = lt.At(a, b)
		}
	}
	return l, nil
}

// fitFlat is FitPosterior on n ≥ 2 draws held row by row in x (n×q), with
// L the whitener of law on coords. It overwrites x.
func fitFlat(x []float64, n int, law Normal, coords []int, l []float64) (*PosteriorFit, error) {
	q := len(coords)
	d := len(law.Mean)
	// xs holds the releases' deviations from the law's mean, us their
	// whitened form, both row by row: the moments are taken in two passes
	// (a one-pass sum of squares cancels when the releases barely vary).
	xs, us, radii := x[:n*q], make([]float64, n*q), make([]float64, n)
	for i := 0; i < n; i++ {
		o := i * q
		for a, j := range coords {
			xs[o+a] -= law.Mean[j]
		}
		// u = L⁻¹x by forward substitution.
		r := 0.0
		for a := 0; a < q; a++ {
			v := xs[o+a]
			for b := 0; b < a; b++ {
				v -= l[a*q+b] * us[o+b]
			}
			us[o+a] = v / l[a*q+a]
			r += us[o+a] * us[o+a]
		}
		radii[i] = r
	}
	nf := float64(n)
	// mean and centred sum of squares of column a of m.
	moments := func(m []float64, a int) (mean, ss float64) {
		for i := 0; i < n; i++ {
			mean += m[i*q+a]
		}
		mean /= nf
		for i := 0; i < n; i++ {
			e := m[i*q+a] - mean
			ss += e * e
		}
		return mean, ss
	}
	f := &PosteriorFit{Draws: n, Coords: coords, MeanError: make([]float64, q), SDRatio: make([]float64, q)}
	for a, j := range coords {
		sd := math.Sqrt(law.Cov[j*d+j])
		mean, ss := moments(xs, a)
		f.MeanError[a] = mean / sd
		f.SDRatio[a] = math.Sqrt(ss/(nf-1)) / sd
	}
	var ubar2, ssU float64
	for a := 0; a < q; a++ {
		mean, ss := moments(us, a)
		ubar2 += mean * mean
		ssU += ss
	}
	f.VarianceRatio = ssU / (float64(q) * (nf - 1))
	chi := distuv.ChiSquared{K: float64(q)}
	f.MeanChi2 = nf * ubar2
	f.MeanPValue = chi.Survival(f.MeanChi2)
	f.KS = stats.KSStatistic(radii, chi.CDF)
	p, err := stats.KSPValue(n, f.KS)
	if err != nil {
		return nil, err
	}
	f.KSPValue = p
	return f, nil
}
