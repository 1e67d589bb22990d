package audit

import (
	"fmt"
	"math"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// Assignment says how trials are given to D or D′.
type Assignment uint8

const (
	// AssignRandom (the zero value) draws each trial's side with
	// probability ½ from the trial's own random stream (Heller & Fetaya
	// §V).
	AssignRandom Assignment = iota
	// AssignBalanced alternates sides: trial i runs on D′ when i is odd.
	AssignBalanced
	// AssignGiven takes each trial's side from Options.Sides (precomputed
	// samples whose sides are known).
	AssignGiven
)

var assignmentNames = []string{"random", "balanced", "given"}

// String returns the name used in scenarios and reports.
func (a Assignment) String() string {
	if int(a) < len(assignmentNames) {
		return assignmentNames[a]
	}
	return fmt.Sprintf("Assignment(%d)", a)
}

// MarshalText implements encoding.TextMarshaler.
func (a Assignment) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// ParseAssignment returns the assignment with this name ("" is random).
func ParseAssignment(s string) (Assignment, error) {
	if s == "" {
		return AssignRandom, nil
	}
	for i, n := range assignmentNames[:2] {
		if s == n {
			return Assignment(i), nil
		}
	}
	return 0, fmt.Errorf("must be random or balanced, got %q", s)
}

// Selection says how several attacks, or several release points, share
// the error probability α = 1 − confidence.
type Selection uint8

const (
	// SelectOnTraining (the zero value) picks one attack (or release
	// point) on the training runs and spends all of α on it.
	SelectOnTraining Selection = iota
	// SelectBonferroni evaluates every attack (or point) on the
	// evaluation runs, each at α/m.
	SelectBonferroni
)

var selectionNames = []string{"training", "bonferroni"}

// String returns the name used in scenarios and reports.
func (s Selection) String() string {
	if int(s) < len(selectionNames) {
		return selectionNames[s]
	}
	return fmt.Sprintf("Selection(%d)", s)
}

// MarshalText implements encoding.TextMarshaler.
func (s Selection) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// ParseSelection returns the selection with this name ("" is training).
func ParseSelection(s string) (Selection, error) {
	if s == "" {
		return SelectOnTraining, nil
	}
	for i, n := range selectionNames {
		if s == n {
			return Selection(i), nil
		}
	}
	return 0, fmt.Errorf("must be training or bonferroni, got %q", s)
}

// Split gives the fractions of trials used to train the attacks (A1), to
// choose their thresholds (0 for a two-way split: thresholds on the
// training runs) and to count errors (A2). They must sum to 1. The zero
// value is the default: half train, half evaluate.
type Split struct {
	Train  float64 `yaml:"train" json:"train"`
	Select float64 `yaml:"select,omitempty" json:"select,omitempty"`
	Eval   float64 `yaml:"eval" json:"eval"`
}

// DefaultSplit is the split of a zero Split.
var DefaultSplit = Split{Train: 0.5, Eval: 0.5}

// Sizes returns the numbers of training, threshold-selection and
// evaluation runs among n trials.
func (s Split) Sizes(n int) (train, sel, eval int) {
	tr := int(math.Round(s.Train * float64(n)))
	se := int(math.Round(s.Select * float64(n)))
	if tr+se > n {
		se = n - tr
	}
	return tr, se, n - tr - se
}

// Limits on an audit, so that a typo cannot exhaust the machine.
const (
	MinTrials = 20
	MaxTrials = 100_000_000
	// MaxWorkers bounds Execution.Workers.
	MaxWorkers = 4096
	// MaxFeatureBytes bounds the feature store of an audit in memory
	// (trials × release points × features × 4 bytes).
	MaxFeatureBytes = 16 << 30
	// DefaultMaxWork is the work limit of a zero Execution.MaxWork, in the
	// units of mechanisms.RunCost (2 to 10 ns of CPU each on the bundled
	// scenarios): half an hour to three hours of CPU, forty times the
	// heaviest bundled audit, so that a typo in a run length or a trial
	// count is refused before any run rather than discovered days later.
	DefaultMaxWork = 1e12
)

// selectionConfidence is the confidence at which rules are chosen on the
// training or selection runs: SelectionConfidence, or Confidence unset.
func (o *Options) selectionConfidence() float64 {
	if o.SelectionConfidence != 0 {
		return o.SelectionConfidence
	}
	return o.Confidence
}

// DefaultConfidence is the confidence of a zero Options.Confidence.
const DefaultConfidence = 0.95

// Options are the design of an audit: everything its analysis depends on
// (release points and features, attacks, split, estimators, claims, δ,
// confidence, seed, trials, assignment, selection modes, repeats policy)
// and nothing about how the runs are made (Execution). Every zero value
// is either the documented default or an error: a forgotten field never
// silently weakens the procedure.
type Options struct {
	// Trials is the total number of runs on both datasets; required, in
	// [MinTrials, MaxTrials].
	Trials int
	// Seed makes the audit reproducible: trial i on side s draws its
	// randomness from (Seed, s, i) only. Zero is a seed like any other.
	Seed uint64
	// Assignment gives trials to D or D′ (zero: AssignRandom).
	Assignment Assignment
	// Sides lists every trial's side for AssignGiven (length Trials);
	// it must be empty otherwise.
	Sides []dataset.Side
	// Split divides the trials (zero: DefaultSplit).
	Split Split
	// Features maps a release to what the attacks see (nil: every
	// coordinate of the release, attacks.Theta).
	Features attacks.FeatureMap
	// Attacks are the classifiers (nil: the best single-coordinate
	// threshold, attacks.BestCoordinate).
	Attacks []attacks.Classifier
	// AttackSelection and PointSelection share α among attacks and among
	// release points (zero: SelectOnTraining, one chosen on training runs).
	AttackSelection Selection
	PointSelection  Selection
	// Estimators turn the attacks' errors into bounds, each choosing its
	// own rules on the selection runs (nil: the default estimators,
	// Estimators(); others by name: EstimatorByName). The headline, the
	// ceiling and the verdict's ranking rest on the region bound, the one
	// bound that assumes nothing about the mechanism's trade-off curve,
	// or, when it is left out, on the first estimator listed (its Value).
	// A canary design takes GuessEstimators instead (nil:
	// CanaryEstimators()), its headline on the one-run bound
	// (OneRunEstimator) or the first listed.
	Estimators []Estimator
	// Delta is the δ of the (ε, δ) lower bounds, in [0, 1); the zero value
	// means δ = 0 (pure ε).
	Delta float64
	// Confidence is the probability, in (0, 1), with which every reported
	// bound holds (zero: DefaultConfidence).
	Confidence float64
	// SelectionConfidence, when set, is the confidence of the
	// Clopper–Pearson bounds at which the estimators choose their rules on
	// the training (or selection) runs, and each claim its rule among
	// theirs; zero: Confidence. The rule that
	// maximises a bound over many thresholds favours those whose training
	// counts were lucky, mostly in the far tails (the winner's curse); a
	// stricter level (0.99999) penalises the tails more and picks rules
	// whose evaluation bound is tighter. Validity does not depend on it:
	// the rules never see the evaluation runs.
	SelectionConfidence float64
	// Claims are upper bounds to test against the audit.
	Claims []Claim
	// Theorems adds, as claims, the theoretical guarantees the mechanism
	// declares (mechanisms.Guarantor); it is an error when none applies.
	Theorems bool
	// ID identifies the configuration in trials files and checkpoints, so
	// that shards and checkpoints of different audits are never mixed
	// (empty: a digest of the options and the target's names).
	ID string
	// Repeats says what Analyze does with trials that repeat an earlier
	// trial on the same dataset bit for bit (zero: RepeatsIgnored).
	Repeats RepeatPolicy
	// Canaries, when set, makes the audit a one-run (canary) design
	// (CanaryDesign): its trials are its runs, then its reference runs
	// (Trials is 0 or Canaries.Trials()), the features of a release are
	// the m canaries' scores (Features must have m columns; nil: the
	// release is the scores), Estimators are GuessEstimators, and Split, Attacks and
	// AttackSelection are not used. PointSelection SelectOnTraining means the verdict rests on the
	// last release point, fixed in advance; SelectBonferroni tests every
	// point at α/P.
	Canaries *CanaryDesign
}

// FieldError reports an invalid option: its Path holds the Go field
// names ("Trials", "Split.Train"; the engine has no YAML names).
type FieldError = field.Error

func fieldErr(name, format string, args ...any) error {
	var p field.Path
	for _, n := range strings.Split(name, ".") {
		p = p.Field(n, "")
	}
	return field.Errorf(p, format, args...)
}

// Validate checks the options on their own (New also checks them against
// the target); errors are *FieldError.
func (o Options) Validate() error {
	if err := o.validateTrials(); err != nil {
		return err
	}
	if err := o.Split.check(); err != nil {
		return err
	}
	if err := o.validateLevels(); err != nil {
		return err
	}
	return o.validateParts()
}

// validateTrials checks the trials and their sides: the canary design's
// own checks, or the number of trials, the assignment, and the sides that
// AssignGiven (and only it) lists, one per trial.
func (o Options) validateTrials() error {
	if o.Canaries != nil {
		if err := o.validateCanaries(); err != nil {
			return err
		}
	} else if o.Trials < MinTrials || o.Trials > MaxTrials {
		return fieldErr("Trials", "must be in [%d, %d], got %d", MinTrials, MaxTrials, o.Trials)
	}
	if o.Assignment > AssignGiven {
		return fieldErr("Assignment", "must be AssignRandom, AssignBalanced or AssignGiven, got %d", o.Assignment)
	}
	if (o.Assignment == AssignGiven) != (len(o.Sides) > 0) {
		return fieldErr("Sides", "must list every trial's side with AssignGiven, and only then (have %d sides, assignment %s)", len(o.Sides), o.Assignment)
	}
	if o.Assignment != AssignGiven {
		return nil
	}
	if len(o.Sides) != o.Trials {
		return fieldErr("Sides", "must have one side per trial (%d), got %d", o.Trials, len(o.Sides))
	}
	for i, s := range o.Sides {
		if s > dataset.SideDPrime {
			return fieldErr("Sides", "trial %d: must be SideD or SideDPrime, got %d", i, s)
		}
	}
	return nil
}

// validateLevels checks the enumerations and levels of the analysis: the
// attack and point selections, δ, the confidence and the repeats policy.
func (o Options) validateLevels() error {
	for _, sel := range []struct {
		name string
		v    Selection
	}{{"AttackSelection", o.AttackSelection}, {"PointSelection", o.PointSelection}} {
		if sel.v > SelectBonferroni {
			return fieldErr(sel.name, "must be SelectOnTraining or SelectBonferroni, got %d", sel.v)
		}
	}
	if !(o.Delta >= 0 && o.Delta < 1) {
		return fieldErr("Delta", "must be in [0, 1), got %g", o.Delta)
	}
	if o.SelectionConfidence != 0 && !(o.SelectionConfidence > 0 && o.SelectionConfidence < 1) {
		return fieldErr("SelectionConfidence", "must be in (0, 1) (0: the confidence), got %g", o.SelectionConfidence)
	}
	if o.Confidence != 0 && !(o.Confidence > 0 && o.Confidence < 1) {
		return fieldErr("Confidence", "must be in (0, 1) (0: the default %g), got %g", DefaultConfidence, o.Confidence)
	}
	if o.Repeats > RepeatsRefused {
		return fieldErr("Repeats", "must be RepeatsIgnored, RepeatsNoted or RepeatsRefused, got %d", o.Repeats)
	}
	return nil
}

// validateParts checks the pieces the caller plugs in: no nil attack, the
// estimators, and a profile on every claim.
func (o Options) validateParts() error {
	for i, a := range o.Attacks {
		if a == nil {
			return fieldErr("Attacks", "attack %d is nil", i)
		}
	}
	if err := checkEstimators(o.Estimators, o.Canaries != nil); err != nil {
		return err
	}
	for i, c := range o.Claims {
		if c.At == nil {
			return fieldErr("Claims", "claim %d (%q) has no profile (At is nil)", i, c.Name)
		}
	}
	return nil
}

// validateCanaries checks the options of a canary design.
func (o Options) validateCanaries() error {
	if err := o.Canaries.validate(); err != nil {
		return err
	}
	if o.Confidence != 0 && o.Confidence < stats.MinOneRunConfidence {
		return fieldErr("Confidence", "must be in [%g, 1) in the canary design (the one-run bounds), got %g", stats.MinOneRunConfidence, o.Confidence)
	}
	if runs := o.Canaries.Trials(); o.Trials != 0 && o.Trials != runs {
		return fieldErr("Trials", "the canary design's trials are its runs and reference runs: 0 or Canaries.Runs + Canaries.References (%d), got %d", runs, o.Trials)
	}
	if o.Assignment != AssignRandom || len(o.Sides) > 0 {
		return fieldErr("Assignment", "the canary design runs on D plus canaries only: leave Assignment and Sides zero")
	}
	return nil
}

func (s Split) check() error {
	if s == (Split{}) {
		return nil
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"Split.Train", s.Train}, {"Split.Select", s.Select}, {"Split.Eval", s.Eval}} {
		if !(f.v >= 0 && f.v <= 1) {
			return fieldErr(f.name, "must be in [0, 1], got %g", f.v)
		}
	}
	if s.Train == 0 || s.Eval == 0 {
		return fieldErr("Split", "train and eval must both be > 0 (or the whole split zero for the default %g/%g), got train=%g eval=%g", DefaultSplit.Train, DefaultSplit.Eval, s.Train, s.Eval)
	}
	if sum := s.Train + s.Select + s.Eval; math.Abs(sum-1) > 1e-9 {
		return fieldErr("Split", "train + select + eval must be 1, got %g", sum)
	}
	return nil
}

// withDefaults returns the options with every zero default filled in.
func (o Options) withDefaults(dim int) Options {
	if o.Split == (Split{}) {
		o.Split = DefaultSplit
	}
	if o.Confidence == 0 {
		o.Confidence = DefaultConfidence
	}
	if o.Canaries != nil {
		o.Canaries = o.Canaries.withDefaults()
		o.Trials = o.Canaries.Trials()
		if o.Features == nil {
			o.Features = canaryScores(o.Canaries.Count)
		}
	}
	if o.Features == nil {
		o.Features = attacks.Theta{D: dim}
	}
	if len(o.Attacks) == 0 {
		o.Attacks = []attacks.Classifier{attacks.BestCoordinate{}}
	}
	if len(o.Estimators) == 0 {
		o.Estimators = Estimators()
		if o.Canaries != nil {
			o.Estimators = CanaryEstimators()
		}
	}
	return o
}

// Execution says how an audit's runs and analysis are carried out; no
// field of it ever changes a result (checkpointing, also execution, is
// configured per call: CheckpointOptions). The zero value is the default.
type Execution struct {
	// Workers is the number of concurrent runs and of release points
	// analysed at once, in [0, MaxWorkers] (zero: one per CPU).
	Workers int
	// Progress, when set, receives the number of trials completed.
	Progress Progress
	// MaxWork bounds the estimated work (Audit.Work) of what one call
	// computes: Simulate's runs, or Analyze's attacks; beyond it they
	// refuse to start with a *FieldError naming MaxWork (zero:
	// DefaultMaxWork; +Inf: no limit).
	MaxWork float64
	// Determinism says what happens when a trial run again releases other
	// values (zero: DeterminismRefused, the audit stops; see
	// DeterminismChecks).
	Determinism DeterminismPolicy
}

// Validate checks the execution settings; errors are *FieldError.
func (x Execution) Validate() error {
	if x.Workers < 0 || x.Workers > MaxWorkers {
		return fieldErr("Workers", "must be in [0, %d], got %d", MaxWorkers, x.Workers)
	}
	if !(x.MaxWork >= 0) {
		return fieldErr("MaxWork", "must be ≥ 0 (0: the default %g, +Inf: no limit), got %g", DefaultMaxWork, x.MaxWork)
	}
	if x.Determinism > DeterminismUnchecked {
		return fieldErr("Determinism", "must be DeterminismRefused, DeterminismNoted or DeterminismUnchecked, got %d", x.Determinism)
	}
	return nil
}

// withDefaults returns the settings with every zero default filled in.
func (x Execution) withDefaults() Execution {
	if x.MaxWork == 0 {
		x.MaxWork = DefaultMaxWork
	}
	return x
}

// UnmarshalText implements encoding.TextUnmarshaler, accepting every name
// String returns.
func (a *Assignment) UnmarshalText(b []byte) error {
	for i, n := range assignmentNames {
		if string(b) == n {
			*a = Assignment(i)
			return nil
		}
	}
	return fmt.Errorf("assignment: must be random, balanced or given, got %q", b)
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *Selection) UnmarshalText(b []byte) error {
	v, err := ParseSelection(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}
