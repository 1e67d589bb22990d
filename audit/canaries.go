package audit

import (
	"context"
	"fmt"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// The one-run (canary) design of Steinke, Nasr & Jagielski 2023 (arXiv
// 2305.08846, §3): m canary records, each included in the training data
// independently with probability ½ (S_i ∈ {−1, +1} from the audit seed,
// add/remove adjacency); one run — or Runs runs, every canary belonging to
// exactly one of them — of the mechanism on D plus the included canaries;
// a score per canary and release point; guesses +1 for the k₊ highest
// scores and −1 for the k₋ lowest; the counts (m, r, v) give ε_lb
// (stats.OneRunEpsilon) and μ_lb (stats.OneRunFDP).
//
// In the engine a canary design is a design whose trials are its runs:
// trial j is run j, and its features at a release point are the m canaries'
// scores (Options.Features maps a release to them). A calibrated score
// (CanaryDesign.Score) adds R reference runs, on D alone or on D plus
// every canary, as trials Runs … Runs+R−1. Simulation, shards, merging, checkpoints and the work estimate
// treat them all like any trials; the configuration hash covers Score and
// References.

// Limits of the canary design.
const (
	// MinCanaries and MaxCanaries bound CanaryDesign.Count.
	MinCanaries = 2
	MaxCanaries = 10_000_000
	// MaxGuessGrid bounds the number of (k₊, k₋) pairs of a grid.
	MaxGuessGrid = 64
	// MaxReferences bounds CanaryDesign.References.
	MaxReferences = 1000
)

// The scores of a canary design (CanaryDesign.Score).
const (
	// ScoreRaw scores a canary by the feature map's value at a release
	// (its log-likelihood under the released θ, or a program's own score).
	ScoreRaw = "raw"
	// ScoreCalibrated scores it by that value minus its mean over the
	// design's reference runs: runs of the same mechanism with a mask
	// fixed whatever S (CanaryDesign.ReferenceCanaries), from streams of
	// their own.
	ScoreCalibrated = "calibrated"
)

// The data of a calibrated score's reference runs
// (CanaryDesign.ReferenceCanaries).
const (
	// ReferenceNone runs the references on D alone, without any canary.
	ReferenceNone = "none"
	// ReferenceAll runs them on D plus every canary: the canaries'
	// population is then the run's (about half of them in), so what the
	// canaries do to one another cancels too.
	ReferenceAll = "all"
)

// CanaryDesign configures the one-run design (Options.Canaries).
type CanaryDesign struct {
	// Count is m, the number of canaries, in [MinCanaries, MaxCanaries].
	Count int `json:"count"`
	// Runs is the number of runs pooled (zero: 1), in [1, Count]: canary
	// i belongs to run ⌊i·Runs/Count⌋, so the canaries split evenly in
	// order and each belongs to exactly one run.
	Runs int `json:"runs"`
	// Kind says how the canaries were made (mislabel, deepfool, random, or
	// a user's words); reports show it.
	Kind string `json:"kind,omitempty"`
	// Guesses are the attack's (k₊, k₋). One pair is fixed in advance and
	// gets all of α; several are a grid chosen from after the run, each
	// tested at α divided by their number (Bonferroni). Nil: one pair,
	// DefaultGuesses(Count).
	Guesses []Guess `json:"guesses,omitempty"`
	// Score is how a canary is scored: ScoreRaw (or empty), the feature
	// map's value at the release; or ScoreCalibrated, that value minus its
	// mean over References reference runs, which measures how much the
	// run's release favours the canary beyond what the reference runs'
	// releases do (its own difficulty cancels). A calibrated score is a function of the
	// releases only, never of S, so the one-run bounds hold unchanged.
	Score string `json:"score,omitempty"`
	// References is R, the number of reference runs of a calibrated score
	// (zero: 1), in [1, MaxReferences]; zero with the raw score. They are
	// trials Runs … Runs+R−1 of the audit: the mechanism on D alone, or
	// on D plus every canary (ReferenceCanaries; a CanaryRunner gets an
	// all-false or all-true mask), each from its own trial stream,
	// independent of the inclusion coins and of the runs.
	References int `json:"references,omitempty"`
	// ReferenceCanaries is what the reference runs train on besides D:
	// ReferenceNone (or empty), no canary; ReferenceAll, every canary.
	// Either mask is fixed, whatever S is. Only with ScoreCalibrated.
	ReferenceCanaries string `json:"reference_canaries,omitempty"`
	// AverageReleases scores a canary at release point k by the mean of
	// its scores (raw or calibrated) at points 1 … k: the releases the
	// adversary has seen by then, whose sampling noise partly averages
	// out while a canary's pull on the chain persists.
	AverageReleases bool `json:"average_releases,omitempty"`
}

// Calibrated reports whether the design scores canaries against
// reference runs (ScoreCalibrated).
func (c *CanaryDesign) Calibrated() bool { return c.Score == ScoreCalibrated }

// Trials returns the design's trials: its runs, then its reference runs
// (the design with its defaults filled).
func (c *CanaryDesign) Trials() int { return max(c.Runs, 1) + c.refs() }

// refs returns the number of reference runs, the default filled.
func (c *CanaryDesign) refs() int {
	if !c.Calibrated() {
		return 0
	}
	return max(c.References, 1)
}

// Guess is how many canaries the attack guesses in, and out.
type Guess struct {
	// Plus guesses "included" for the Plus highest scores, Minus guesses
	// "left out" for the Minus lowest.
	Plus  int `json:"plus"`
	Minus int `json:"minus"`
}

// R returns the number of guesses, k₊ + k₋.
func (g Guess) R() int { return g.Plus + g.Minus }

// DefaultGuesses is the guess of a nil CanaryDesign.Guesses: r = m/10
// (at least 1), half of them on each side.
func DefaultGuesses(m int) Guess { return SplitGuesses(max(m/10, 1)) }

// SplitGuesses splits r guesses between the two ends: k₊ = ⌈r/2⌉,
// k₋ = ⌊r/2⌋.
func SplitGuesses(r int) Guess { return Guess{Plus: r - r/2, Minus: r / 2} }

// validate checks the design.
func (c *CanaryDesign) validate() error {
	if c.Count < MinCanaries || c.Count > MaxCanaries {
		return fieldErr("Canaries.Count", "must be in [%d, %d], got %d", MinCanaries, MaxCanaries, c.Count)
	}
	if c.Runs < 0 || c.Runs > c.Count {
		return fieldErr("Canaries.Runs", "must be in [1, count=%d] (0: 1), got %d", c.Count, c.Runs)
	}
	if len(c.Guesses) > MaxGuessGrid {
		return fieldErr("Canaries.Guesses", "at most %d pairs (each costs a Bonferroni share of α), got %d", MaxGuessGrid, len(c.Guesses))
	}
	for i, g := range c.Guesses {
		if g.Plus < 0 || g.Minus < 0 || g.R() < 1 || g.R() > c.Count {
			return fieldErr("Canaries.Guesses", "pair %d: k+ and k- must be ≥ 0 with 1 ≤ k+ + k- ≤ count=%d, got (%d, %d)", i, c.Count, g.Plus, g.Minus)
		}
	}
	switch c.Score {
	case "", ScoreRaw:
		if c.References != 0 {
			return fieldErr("Canaries.References", "only with Score %q (the raw score has no reference runs), got %d", ScoreCalibrated, c.References)
		}
	case ScoreCalibrated:
		if c.References < 0 || c.References > MaxReferences {
			return fieldErr("Canaries.References", "must be in [1, %d] (0: 1), got %d", MaxReferences, c.References)
		}
	default:
		return fieldErr("Canaries.Score", "must be %q or %q (empty: raw), got %q", ScoreRaw, ScoreCalibrated, c.Score)
	}
	switch c.ReferenceCanaries {
	case "":
	case ReferenceNone, ReferenceAll:
		if !c.Calibrated() {
			return fieldErr("Canaries.ReferenceCanaries", "only with Score %q, got %q", ScoreCalibrated, c.ReferenceCanaries)
		}
	default:
		return fieldErr("Canaries.ReferenceCanaries", "must be %q or %q (empty: none), got %q", ReferenceNone, ReferenceAll, c.ReferenceCanaries)
	}
	return nil
}

// withDefaults fills the zero defaults.
func (c CanaryDesign) withDefaults() *CanaryDesign {
	if c.Runs == 0 {
		c.Runs = 1
	}
	if len(c.Guesses) == 0 {
		c.Guesses = []Guess{DefaultGuesses(c.Count)}
	}
	if c.Score == ScoreRaw {
		c.Score = "" // one spelling of the default, so one configuration hash
	}
	c.References = c.refs()
	if c.ReferenceCanaries == ReferenceNone {
		c.ReferenceCanaries = "" // the default's one spelling
	}
	c.Guesses = append([]Guess(nil), c.Guesses...)
	return &c
}

// RunOf returns the run canary i belongs to.
func (c *CanaryDesign) RunOf(i int) int { return int(int64(i) * int64(c.Runs) / int64(c.Count)) }

// RunCanaries returns the canaries of run j: [lo, hi).
func (c *CanaryDesign) RunCanaries(j int) (lo, hi int) {
	return mechanisms.RunRange(c.Count, c.Runs, j)
}

// streamInclusion is the random stream of the canaries' inclusion coins,
// apart from every stream of a trial (mechanisms.Stream*).
const streamInclusion uint64 = 0x43414e41525953 // "CANARYS"

// CanaryIncluded returns S: included[i] is true (S_i = +1) when canary i
// is in the training data, a fair coin drawn from the audit seed alone.
func CanaryIncluded(seed uint64, m int) []bool {
	in := make([]bool, m)
	for i := range in {
		in[i] = mechanisms.TrialDraw(seed, dataset.SideD, i, streamInclusion)>>63 == 1
	}
	return in
}

// CanaryRunner is implemented by mechanisms that own their data and take
// canaries by an inclusion mask (a program that holds the canary records):
// RunCanaries performs one run on the base data plus canaries i with
// include[i], emitting every release as Run does. The engine gives a
// CanaryRunner the mask and never a dataset (Target.Canaries then only
// identify the canaries, and may be empty).
type CanaryRunner interface {
	RunCanaries(ctx context.Context, t mechanisms.Trial, include []bool, emit mechanisms.Emit) (mechanisms.Info, error)
}

// canaryRuns is what simulating a canary design needs.
type canaryRuns struct {
	design *CanaryDesign
	// include is the whole S; masks[j] the canaries of run j that are in
	// (for a reference run, j ≥ Runs, a mask fixed whatever S).
	include []bool
	masks   [][]bool
	// data[j] is D plus the included canaries of run j, D alone or D plus
	// every canary for a reference run (nil for a CanaryRunner).
	data   []*dataset.Dataset
	runner CanaryRunner
}

// prepareCanaries checks a canary design against its target and returns
// the runs and the release points.
func prepareCanaries(t Target, o Options) (*canaryRuns, []mechanisms.ReleasePoint, error) {
	cd := o.Canaries
	cr := &canaryRuns{design: cd, include: CanaryIncluded(o.Seed, cd.Count)}
	for j := 0; j < cd.Runs; j++ {
		lo, hi := cd.RunCanaries(j)
		mask := make([]bool, cd.Count)
		copy(mask[lo:hi], cr.include[lo:hi])
		cr.masks = append(cr.masks, mask)
	}
	cr.addReferences()
	if n := len(o.Features.Names()); n != cd.Count {
		return nil, nil, fieldErr("Features", "a canary design scores every canary: the feature map must have count=%d columns (one score per canary), got %d", cd.Count, n)
	}
	if _, ok := t.Mechanism.(mechanisms.CanaryGuarantor); o.Theorems && !ok {
		return nil, nil, fieldErr("Theorems", "not available in the canary design of %s: the theorems bound replace-one pairs of datasets of a fixed size n, while the canary design's datasets differ by adding or removing canaries (their size varies with the coins), and a replace-one guarantee implies no add/remove bound (releasing the dataset's size is replace-one 0-DP); only mechanisms that bound one canary's add/remove (gradient canaries) are tested against theorems", mechanisms.NameOf(t.Mechanism))
	}
	for _, c := range o.Claims {
		if c.Spec == nil || (c.Spec.Kind != "pure" && c.Spec.Kind != "gdp") {
			return nil, nil, fieldErr("Claims", "claim %q: the canary design tests (ε, δ) and μ-GDP claims given as data (PureClaim, GDPClaim)", c.Name)
		}
	}
	if r, ok := t.Mechanism.(CanaryRunner); ok {
		cr.runner = r
		pts, err := t.Mechanism.Points(t.Pair.D)
		return cr, pts, err
	}
	if t.Pair.D == nil {
		return nil, nil, fmt.Errorf("audit: Target.Pair.D: the canary design adds canaries to D, and the mechanism has no data to add them to")
	}
	if len(t.Canaries) != cd.Count {
		return nil, nil, fieldErr("Canaries.Count", "Target.Canaries has %d records for %d canaries", len(t.Canaries), cd.Count)
	}
	var pts []mechanisms.ReleasePoint
	for j, mask := range cr.masks {
		d := &dataset.Dataset{Name: cr.dataName(t.Pair.D.Name, j)}
		d.Records = append(append(d.Records, t.Pair.D.Records...), included(t.Canaries, mask)...)
		if ck, ok := t.Mechanism.(mechanisms.Checker); ok {
			if err := ck.Check(d); err != nil {
				return nil, nil, err
			}
		}
		p, err := t.Mechanism.Points(d)
		if err != nil {
			return nil, nil, err
		}
		if j > 0 && len(p) != len(pts) {
			return nil, nil, fmt.Errorf("release: runs 0 and %d have different release points (%d vs %d): release the final state, or snapshots", j, len(pts), len(p))
		}
		if j == 0 {
			pts = p
		}
		cr.data = append(cr.data, d)
	}
	return cr, pts, nil
}

// addReferences appends the masks of the reference runs, trials Runs …
// Runs+R−1, whatever S is: all false (their data is D alone), or all true
// with ReferenceAll (D plus every canary).
func (cr *canaryRuns) addReferences() {
	for range cr.design.refs() {
		mask := make([]bool, cr.design.Count)
		if cr.design.ReferenceCanaries == ReferenceAll {
			for i := range mask {
				mask[i] = true
			}
		}
		cr.masks = append(cr.masks, mask)
	}
}

// dataName names the dataset of trial j: a run's, or a reference run's.
func (cr *canaryRuns) dataName(d string, j int) string {
	if r := j - cr.design.Runs; r >= 0 {
		if cr.design.ReferenceCanaries == ReferenceAll {
			return fmt.Sprintf("%s + every canary (reference run %d)", d, r)
		}
		return fmt.Sprintf("%s (reference run %d, no canary)", d, r)
	}
	return fmt.Sprintf("%s + canaries of run %d", d, j)
}

// included returns the canaries whose mask is set.
func included(c []dataset.Record, mask []bool) []dataset.Record {
	var out []dataset.Record
	for i, in := range mask {
		if in {
			out = append(out, c[i])
		}
	}
	return out
}

// runCanary runs trial i, the canary design's run i (or, from Runs on,
// its reference run i − Runs), emitting into w.
func (w *trialWorker) runCanary(ctx context.Context, i int) (mechanisms.Info, error) {
	a, cr := w.a, w.a.canaries
	tr := w.src.Trial(a.opts.Seed, dataset.SideD, i)
	if cr.runner != nil {
		return cr.runner.RunCanaries(ctx, tr, cr.masks[i], w.emit)
	}
	return a.target.Mechanism.Run(ctx, tr, cr.data[i], w.emit)
}

// GradientCanaryKind is CanaryDesign.Kind for gradient canaries
// (mechanisms.CanaryPaths), whose scores are their path statistics.
const GradientCanaryKind = "gradient"

// accuracyRuns returns the number of trials whose test accuracy is
// counted: all, or a canary design's runs (not its reference runs).
func (a *Audit) accuracyRuns() int {
	if c := a.opts.Canaries; c != nil {
		return c.Runs
	}
	return a.opts.Trials
}

// CanaryAdjacency is the adjacency a canary design audits.
const CanaryAdjacency = "add/remove (one canary)"

// newCanaryAudit is New for a canary design (o has its defaults).
func newCanaryAudit(t Target, o Options) (*Audit, error) {
	if sc, ok := o.Features.(scoreColumns); ok && t.Mechanism.Dim() != sc.m {
		return nil, fieldErr("Features", "required: the mechanism releases %d values, not the %d canaries' scores; give a feature map that scores them (e.g. attacks.LogLik of Target.Canaries)", t.Mechanism.Dim(), sc.m)
	}
	cr, pts, err := prepareCanaries(t, o)
	if err != nil {
		return nil, err
	}
	if len(pts) == 0 {
		return nil, fmt.Errorf("release: the mechanism has no release point")
	}
	a, err := prepare(t, mechanisms.NameOf(t.Mechanism), t.Mechanism.Dim(), o, pts)
	if err != nil {
		return nil, err
	}
	a.canaries = cr
	a.design.Adjacency = CanaryAdjacency
	return a, nil
}

// canaryScores is the default feature map of a canary design: the release
// is the m scores themselves (a program answering with scores).
func canaryScores(m int) attacks.FeatureMap { return scoreColumns{m} }

// scoreColumns passes a release of m scores through, naming each column
// after its canary.
type scoreColumns struct{ m int }

// Names implements attacks.FeatureMap.
func (s scoreColumns) Names() []string {
	out := make([]string, s.m)
	for i := range out {
		out[i] = fmt.Sprintf("score(canary %d)", i)
	}
	return out
}

// Map implements attacks.FeatureMap.
func (s scoreColumns) Map(theta, out []float64) { copy(out, theta) }
