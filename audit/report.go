package audit

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// Verdict is the outcome of testing the claims.
type Verdict uint8

const (
	// VerdictNoClaim: no claim spoke about the release points judged.
	VerdictNoClaim Verdict = iota
	// VerdictNotRefuted: the audit found no evidence against any claim
	// (which does not prove them).
	VerdictNotRefuted
	// VerdictViolation: a claim is refuted, with the audit's confidence.
	VerdictViolation
)

var verdictNames = []string{"no claim", "not refuted", "VIOLATION"}

// String returns "no claim", "not refuted" or "VIOLATION".
func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return fmt.Sprintf("Verdict(%d)", v)
}

// MarshalText implements encoding.TextMarshaler.
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// ClaimResult is what one claim says about one release point. The claim
// is tested once, at the release chosen for it (Report.ClaimTests).
type ClaimResult struct {
	Name string `json:"name"`
	// Covered is false when the claim says nothing about this release.
	Covered bool `json:"covered"`
	// EpsilonAtDelta is the claim's ε at the audit's δ (the "upper bound"
	// column); +Inf when it certifies nothing at that δ.
	EpsilonAtDelta stats.JSONFloat `json:"epsilon_at_delta"`
	// Rejected and Test are the outcome of a claim tested on guesses (the
	// canary design, which has no error rates to refute a profile with;
	// the multi-run design tests each claim once: Report.ClaimTests):
	// whether this release's test alone rejects the claim at the claims'
	// confidence, and which test was run with what result. A rejection
	// makes the verdict only at a release the verdict rests on
	// (Report.Headline, or every release when it is −1).
	Rejected bool   `json:"rejected,omitempty"`
	Test     string `json:"test,omitempty"`
}

// Refuted reports whether this release's test on guesses rejects the
// claim (the canary design); only at a release the verdict rests on does
// that make a violation.
func (c ClaimResult) Refuted() bool {
	return c.Rejected
}

// AttackEstimate is one estimator's outcome for one attack at one release
// point.
type AttackEstimate struct {
	// Estimator is the estimator's name (Estimator.Name).
	Estimator string
	// Rule is the rule the estimator chose on the threshold-selection
	// runs, and Selection the bound their counts give under it (it
	// decides, never reports).
	Rule      attacks.Rule
	Selection stats.Estimate
	// Guess is, in a canary design, the rule instead: the guess pair
	// (k₊, k₋) on the canaries' score ranking whose bound is the best of
	// the pairs fixed in advance (nil in the multi-run design).
	Guess *Guess
	// Counts are the rule's errors on the evaluation runs, and Bound
	// their bound (nil when the attack was not evaluated for this
	// estimator).
	Counts stats.Counts
	Bound  *stats.Estimate
}

// AttackResult is one attack's outcome at one release point.
type AttackResult struct {
	Attack string
	// Note reports an attack that could not be fitted.
	Note string
	// Evaluated is true when the attack was counted on the evaluation
	// runs for the estimators' verdicts.
	Evaluated bool
	// Estimates holds one entry per estimator of the audit
	// (Options.Estimators), in that order: each estimator chooses its own
	// rule on the same selection runs.
	Estimates []AttackEstimate
}

// PointEstimate is one estimator's bound at one release point.
type PointEstimate struct {
	// Estimator is the estimator's name (Estimator.Name).
	Estimator string
	// Best indexes the attack reported, and Bound is its bound.
	Best  int
	Bound stats.Estimate
}

// PointResult is the audit of one release point.
type PointResult struct {
	Point   mechanisms.ReleasePoint
	Attacks []AttackResult
	// Estimates holds one entry per estimator, in the order of
	// AttackResult.Estimates.
	Estimates []PointEstimate
	// Ceiling is the largest region bound the evaluation runs could give.
	Ceiling stats.Estimate
	// Descriptive describes the region bound's attack on the evaluation
	// runs, its scores oriented by the rule chosen on the selection runs
	// (AUROC, TPR at FPR 1% and 0.1% for telling D′ from D); no guarantee.
	Descriptive *Descriptive
	// Exact is the true ε at δ of this release when it is known in closed
	// form (Target.Exact).
	Exact *stats.JSONFloat
	// Convergence is Bertazzi et al. Prop. 3.3's theoretical lower bound
	// on this release's ε, when the release's law is known in closed form
	// (Design.Convergence).
	Convergence *ConvergenceBound
	// TestAccuracy is the mean accuracy of the released models on the
	// held-out test set, over every trial (when measured).
	TestAccuracy *float64
	Claims       []ClaimResult
	// Utility says how much the sampler moved before this release and how
	// far the releases are from the posterior (see Utility).
	Utility *Utility
	// selectionScore ranks points for the headline (training runs only).
	selectionScore float64
	// claimBest is, per claim, the candidate (the headline estimator's
	// rule at an evaluated attack) with the largest selection margin at
	// this point.
	claimBest []claimCand
}

// Estimate returns the point's entry for the estimator of this name, and
// whether there is one.
func (pr *PointResult) Estimate(name string) (PointEstimate, bool) {
	for _, e := range pr.Estimates {
		if e.Estimator == name {
			return e, true
		}
	}
	return PointEstimate{}, false
}

// Primary returns the name of the estimator the headline rests on at the
// point (as primaryEstimator chooses it): the one-run bound in a canary
// design, the region bound in the multi-run design, or, when the audit
// leaves that out, its first estimator.
func (pr *PointResult) Primary() string {
	for _, n := range []string{OneRunEstimator{}.Name(), RegionEstimator{}.Name()} {
		if _, ok := pr.Estimate(n); ok {
			return n
		}
	}
	if len(pr.Estimates) > 0 {
		return pr.Estimates[0].Estimator
	}
	return RegionEstimator{}.Name()
}

// EpsilonBound returns the bound the headline rests on at the point: the
// region bound (Heller & Fetaya eq. 12) in the multi-run design, the
// one-run bound (Steinke, Nasr & Jagielski 2023) in the canary design —
// or the first estimator's when the audit leaves those out (Primary).
func (pr *PointResult) EpsilonBound() stats.Estimate {
	e, _ := pr.Estimate(pr.Primary())
	return e.Bound
}

// MuBound returns the μ lower bound at the point: the GDP estimator's in
// the multi-run design, the one-run f-DP estimator's in the canary design
// (zero when the audit runs neither).
func (pr *PointResult) MuBound() stats.Estimate {
	if e, ok := pr.Estimate(OneRunFDPEstimator{}.Name()); ok {
		return e.Bound
	}
	return pr.GDP()
}

// Region returns the region bound at the point (Heller & Fetaya eq. 12),
// the estimator every multi-run audit runs.
func (pr *PointResult) Region() stats.Estimate {
	e, _ := pr.Estimate(RegionEstimator{}.Name())
	return e.Bound
}

// GDP returns the GDP estimator's bound at the point (zero when the audit
// does not run it).
func (pr *PointResult) GDP() stats.Estimate {
	e, _ := pr.Estimate(GDPEstimator{}.Name())
	return e.Bound
}

// Estimate returns the attack's entry for the estimator of this name, and
// whether there is one.
func (ar *AttackResult) Estimate(name string) (AttackEstimate, bool) {
	for _, e := range ar.Estimates {
		if e.Estimator == name {
			return e, true
		}
	}
	return AttackEstimate{}, false
}

// DatasetInfo describes a dataset of the audited pair.
type DatasetInfo struct {
	Name    string `json:"name"`
	Records int    `json:"records"`
}

// Report is the outcome of an audit. It is self-contained: everything a
// reader needs to interpret the numbers (what was audited, on which data,
// with which features, attacks and claims) is in it.
type Report struct {
	Name string `json:"name"`
	// ConfigHash is the audit's ID (for a scenario, the SHA-256 of its
	// canonical configuration).
	ConfigHash string `json:"config_hash"`
	Seed       uint64 `json:"seed"`
	Trials     int    `json:"trials"`
	// Mechanism names what ran; D and DPrime the datasets (absent when
	// the mechanism owns its data); Adjacency and PairNote how they differ.
	Mechanism string       `json:"mechanism"`
	D         *DatasetInfo `json:"d,omitempty"`
	DPrime    *DatasetInfo `json:"d_prime,omitempty"`
	Adjacency string       `json:"adjacency,omitempty"`
	PairNote  string       `json:"pair_note,omitempty"`
	// ExactSource says where the points' exact ε come from ("": the
	// interim-region counterexample's closed form).
	ExactSource string `json:"exact_source,omitempty"`
	// Features labels the feature columns, Attacks the classifiers and
	// Claims the upper bounds tested.
	Features []string `json:"features"`
	Attacks  []string `json:"attacks"`
	Claims   []string `json:"claims,omitempty"`
	// Notes are assumptions the bounds rest on besides the statistics
	// (Target.Notes).
	Notes []string `json:"notes,omitempty"`
	// Duplicates counts the runs that repeat an earlier run exactly
	// (absent when none does).
	Duplicates *Duplicates `json:"duplicates,omitempty"`
	// RepeatBound is what independent runs would repeat by chance at the
	// values' resolution (present with Duplicates).
	RepeatBound *RepeatBound `json:"repeats_expected,omitempty"`
	// TestSize is the size of the held-out test set (0: no accuracy).
	TestSize int `json:"test_size,omitempty"`
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
	TestConfidence float64 `json:"test_confidence"`
	// SelectionConfidence is Options.SelectionConfidence (0: the rules are
	// chosen at the confidence of the bounds).
	SelectionConfidence float64 `json:"selection_confidence,omitempty"`
	// ClaimsTested is the number of claims tested (Options.Claims and the
	// theorem claims) and ClaimConfidence the confidence each claim's test
	// is run at: α is divided among the claims as well, so that the
	// verdict holds at Confidence for all of them together (absent
	// without claims).
	ClaimsTested    int       `json:"claims_tested,omitempty"`
	ClaimConfidence float64   `json:"claim_confidence,omitempty"`
	AttackSelection Selection `json:"attack_selection"`
	PointSelection  Selection `json:"point_selection"`
	// Multiplicity explains how α was shared.
	Multiplicity string        `json:"multiplicity"`
	Points       []PointResult `json:"points"`
	// IterationsUnknown says that Points[k].Point.Iteration is only the
	// release's rank 1, 2, … (a program sampler or a samples file that
	// names its releases without their iterations); not in the JSON.
	IterationsUnknown bool `json:"-"`
	// Headline is the index of the release point the headline ε_lb rests
	// on (chosen on training runs by ε_lb alone, whatever the claims), or
	// −1 under Bonferroni over points. Each claim's one test rests on the
	// release chosen for it (ClaimTests), which may be another.
	Headline int `json:"headline"`
	// Epsilon is the headline lower bound: the region bound at Headline,
	// or the maximum over points under Bonferroni (valid simultaneously).
	Epsilon stats.Estimate `json:"epsilon"`
	// Tightness says how much of the tightest claim covering the
	// headline's release the headline proves (absent when no claim covers
	// it).
	Tightness  *Tightness `json:"tightness,omitempty"`
	Verdict    Verdict    `json:"verdict"`
	Violations []string   `json:"violations,omitempty"`
	// ClaimTests holds each claim's one test, in the order of Claims
	// (absent without claims; see ClaimTest).
	ClaimTests []ClaimTest     `json:"claim_tests,omitempty"`
	Info       mechanisms.Info `json:"sampler_info"`
	// Warnings are what a reader must know before trusting the headline,
	// e.g. that the chain barely moves (see Utility).
	Warnings []string `json:"warnings,omitempty"`
	// UtilityNote says what limits the utility figures, if anything.
	UtilityNote string `json:"utility_note,omitempty"`
	// DescriptiveNote labels the points' descriptive figures (absent in
	// reports without them).
	DescriptiveNote string `json:"descriptive_note,omitempty"`
	// Canaries describes a canary design (Options.Canaries): its canaries
	// and guesses. Its bounds are in Points and Epsilon, as every
	// design's.
	Canaries *CanaryInfo `json:"canaries,omitempty"`
}

// Violated reports whether a claim was refuted.
func (r *Report) Violated() bool { return r.Verdict == VerdictViolation }

// HasExact reports whether the report carries the exact ε of its points.
func (r *Report) HasExact() bool { return len(r.Points) > 0 && r.Points[0].Exact != nil }

// HasAccuracy reports whether the report carries test accuracies.
func (r *Report) HasAccuracy() bool { return len(r.Points) > 0 && r.Points[0].TestAccuracy != nil }

// Versions records what produced a report.
type Versions struct {
	Go     string `json:"go"`
	Module string `json:"module"`
	// Revision is the VCS revision the binary was built from, when known.
	Revision string `json:"revision,omitempty"`
	// Modified reports a build from a work tree with uncommitted changes.
	Modified bool `json:"modified,omitempty"`
}

// CurrentVersions reads the build information of the running binary.
func CurrentVersions() Versions {
	v := Versions{Go: runtime.Version(), Module: "(devel)"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v.Module = bi.Main.Path + " " + bi.Main.Version
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Revision = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	return v
}

// WriteJSON writes v as indented JSON.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
