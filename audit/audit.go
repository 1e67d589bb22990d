package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// Target is what is audited: a mechanism and the two adjacent datasets it
// runs on, with what reports need to know about them.
type Target struct {
	// Name identifies the audit in reports.
	Name string
	// Mechanism is run once per trial; built-in samplers are
	// mechanisms.Chain values, a user's sampler implements the interface.
	Mechanism mechanisms.Mechanism
	// Pair holds D and D′ (a mechanism that owns its data, such as a
	// program reading its own files, may leave the datasets nil).
	Pair dataset.Pair
	// Described, when Pair has no datasets, describes for the reports the
	// datasets the mechanism was given by its caller rather than by the
	// audit (a program serving the d= and d_prime= of the Python
	// package's audit()): their names and sizes, and their adjacency as
	// the caller states it. Nothing checks it against the data.
	Described *DescribedPair
	// Exact, when known, is the true ε at Options.Delta of every release
	// point (the interim-region counterexample's closed form), so that
	// reports can set the lower bounds against it.
	Exact []float64
	// ExactSource says where Exact comes from, for the report's legend
	// ("" for the interim-region counterexample's closed form).
	ExactSource string
	// Accuracy, when set, measures every release on a held-out test set.
	Accuracy *Accuracy
	// ReportedTestSize > 0 says that the mechanism measures its releases
	// itself on a held-out test set of that many records and reports, per
	// trial, the records each release classifies correctly in
	// mechanisms.Info.Correct (a program sampler, say).
	ReportedTestSize int
	// Posterior, when set, is the law the releases on D and on D′ are
	// compared with in the utility figures: the exact posterior of a
	// conjugate model (ExactPosterior), or any law the releases should
	// follow. The features must store raw coordinates of θ (attacks.Theta
	// or attacks.Coords).
	Posterior *Posterior
	// Notes are assumptions the report must state (e.g. that precomputed
	// samples are independent runs).
	Notes []string
	// Canaries are the m canary records of a canary design
	// (Options.Canaries), added to Pair.D when included; empty for a
	// CanaryRunner, which holds its own.
	Canaries []dataset.Record
}

// Accuracy measures a released model on a held-out test set: the report
// gives, per release point, the mean fraction of test records the
// releases classify correctly.
type Accuracy struct {
	Model mechanisms.Classifier
	Test  *dataset.Dataset
}

// Audit is a prepared audit: the target checked, the options validated
// with their defaults resolved, the release points known.
type Audit struct {
	target   Target
	opts     Options
	exec     Execution
	points   []mechanisms.ReleasePoint
	features []string
	claims   []Claim
	// primary indexes the headline's estimator in opts.Estimators
	// (primaryEstimator: the region bound unless it is left out).
	primary int
	// design is what the analysis reads (Design); opts, points, features
	// and claims are its fields too.
	design Design
	// canaries makes the runs of a canary design (nil otherwise, and for
	// an audit of a design).
	canaries *canaryRuns
}

// New checks the target and the options (errors about the options are
// *FieldError) and prepares the audit, with the default Execution
// (WithExecution changes it).
func New(t Target, o Options) (*Audit, error) {
	if t.Mechanism == nil {
		return nil, fmt.Errorf("audit: no mechanism to audit")
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o = o.withDefaults(t.Mechanism.Dim())
	if o.Canaries != nil {
		return newCanaryAudit(t, o)
	}
	if ck, ok := t.Mechanism.(mechanisms.Checker); ok {
		for _, d := range []*dataset.Dataset{t.Pair.D, t.Pair.DPrime} {
			if err := ck.Check(d); err != nil {
				return nil, err
			}
		}
	}
	pd, err := t.Mechanism.Points(t.Pair.D)
	if err != nil {
		return nil, err
	}
	pp, err := t.Mechanism.Points(t.Pair.DPrime)
	if err != nil {
		return nil, err
	}
	if len(pd) != len(pp) {
		return nil, fmt.Errorf("release: D and D′ have different release points (%d vs %d): release the final state, or snapshots, with add/remove adjacency", len(pd), len(pp))
	}
	if len(pd) == 0 {
		return nil, fmt.Errorf("release: the mechanism has no release point")
	}
	return prepare(t, mechanisms.NameOf(t.Mechanism), t.Mechanism.Dim(), o, pd)
}

// prepare checks what the options and the release points imply for the
// audit of a mechanism called mech releasing points pd of dimension dim (o
// has its defaults resolved; t.Mechanism is nil for samples) and prepares
// it.
func prepare(t Target, mech string, dim int, o Options, pd []mechanisms.ReleasePoint) (*Audit, error) {
	a := &Audit{target: t, opts: o, exec: Execution{}.withDefaults(), points: pd, features: o.Features.Names(), primary: primaryEstimator(o.Estimators)}
	if len(a.features) == 0 {
		return nil, fieldErr("Features", "the feature map has no column")
	}
	if t.Accuracy != nil && t.ReportedTestSize > 0 {
		return nil, fmt.Errorf("audit: Target.Accuracy and Target.ReportedTestSize exclude each other")
	}
	if err := checkPosterior(t.Posterior, dim); err != nil {
		return nil, err
	}
	if t.Exact != nil && len(t.Exact) != len(pd) {
		return nil, fmt.Errorf("audit: Target.Exact has %d values for %d release points", len(t.Exact), len(pd))
	}
	if b := float64(o.Trials) * float64(len(pd)) * float64(len(a.features)) * 4; b > MaxFeatureBytes {
		return nil, fieldErr("Trials", "%d trials × %d release points × %d features need %.3g GB of features (limit %d GB): release fewer points or run fewer trials",
			o.Trials, len(pd), len(a.features), b/1e9, MaxFeatureBytes>>30)
	}
	nTr, _, _ := o.Split.Sizes(o.Trials)
	for _, c := range o.Attacks {
		if o.Canaries != nil {
			break // the canary design has no attack to fit
		}
		if err := attacks.CheckSize(c, nTr, len(a.features)); err != nil {
			return nil, fieldErr("Attacks", "%v (release %d features, or fewer with Features)", err, len(a.features))
		}
	}
	a.claims = append(a.claims, o.Claims...)
	if o.Theorems {
		if t.Mechanism == nil {
			return nil, fieldErr("Theorems", "the theorems need the sampler, which precomputed samples do not carry")
		}
		th, err := TheoremClaims(t.Mechanism, t.Pair, pd, o.Delta)
		if err != nil {
			return nil, err
		}
		a.claims = append(a.claims, th...)
	}
	if a.opts.ID == "" {
		a.opts.ID = a.defaultID(mech)
	}
	a.design = a.designOf(t, mech, dim)
	a.design.Convergence = ConvergenceLowerBounds(t.Mechanism, t.Pair, pd, o.Delta)
	a.design.IterationsUnknown = t.Mechanism != nil && !mechanisms.IterationsKnown(t.Mechanism)
	return a, nil
}

// DescribedPair describes datasets that a mechanism gets from its caller
// (Target.Described): D and D′ by name and number of records, their
// adjacency (replace-one, remove-one, add-one, or "" when not stated) and
// a note on how they differ.
type DescribedPair struct {
	D, DPrime       DatasetInfo
	Adjacency, Note string
}

// designOf gathers what the analysis needs to know about the target.
func (a *Audit) designOf(t Target, mech string, dim int) Design {
	d := Design{Options: a.opts, Name: t.Name, Mechanism: mech, Dim: dim,
		Adjacency: string(t.Pair.Adjacency), PairNote: t.Pair.Note, Notes: t.Notes, Exact: t.Exact, ExactSource: t.ExactSource, Posterior: t.Posterior,
		Points: a.points, Features: a.features, ThetaColumns: thetaColumns(a.opts.Features), Claims: a.claims}
	if p := t.Pair.D; p != nil {
		d.D = &DatasetInfo{p.Name, p.Len()}
	}
	if p := t.Pair.DPrime; p != nil {
		d.DPrime = &DatasetInfo{p.Name, p.Len()}
	}
	if x := t.Described; x != nil && t.Pair.D == nil {
		dd, dp := x.D, x.DPrime
		d.D, d.DPrime, d.Adjacency, d.PairNote = &dd, &dp, x.Adjacency, x.Note
	}
	return d
}

// Run prepares an audit, runs every trial and analyses them: the whole
// audit in one call.
func Run(ctx context.Context, t Target, o Options, x Execution) (*Report, error) {
	a, err := New(t, o)
	if err != nil {
		return nil, err
	}
	if a, err = a.WithExecution(x); err != nil {
		return nil, err
	}
	if err := a.CheckWork(0, a.opts.Trials, true); err != nil {
		return nil, err
	}
	tr, err := a.Simulate(ctx, 0, a.opts.Trials)
	if err != nil {
		return nil, err
	}
	return a.AnalyzeContext(ctx, tr)
}

// Options returns the options with their defaults resolved.
func (a *Audit) Options() Options { return a.opts }

// Target returns the audited target.
func (a *Audit) Target() Target { return a.target }

// Points returns the release points.
func (a *Audit) Points() []mechanisms.ReleasePoint { return a.points }

// Claims returns every claim tested: the options' and the theorems'.
func (a *Audit) Claims() []Claim { return a.claims }

// FeatureNames labels the feature columns.
func (a *Audit) FeatureNames() []string { return a.features }

// ID identifies the configuration in trials files and checkpoints.
func (a *Audit) ID() string { return a.opts.ID }

// defaultID digests what determines the trials and their analysis that
// can be named: the options, the mechanism's name, the datasets' names and
// sizes, the release points, the features, attacks and claims.
func (a *Audit) defaultID(mech string) string {
	o := a.opts
	var attackNames, claimNames []string
	for _, c := range o.Attacks {
		attackNames = append(attackNames, c.Name())
	}
	for _, c := range a.claims {
		claimNames = append(claimNames, c.Name)
	}
	desc := struct {
		Name, Mechanism     string
		D, DPrime           string
		Trials              int
		Seed                uint64
		Assignment          Assignment
		Sides               []dataset.Side
		Split               Split
		Delta, Confidence   float64
		AttackSel, PointSel Selection
		Points              []mechanisms.ReleasePoint
		Features, Attacks   []string
		Claims              []string
		Theorems, HasExact  bool
		Accuracy            bool
		// Estimators is absent for the default, so that IDs stay as they
		// were before estimators could be chosen.
		Estimators []string `json:",omitempty"`
		// Canaries and CanaryData are absent in the multi-run design.
		Canaries   *CanaryDesign `json:",omitempty"`
		CanaryData string        `json:",omitempty"`
	}{a.target.Name, mech, describe(a.target.Pair.D), describe(a.target.Pair.DPrime),
		o.Trials, o.Seed, o.Assignment, o.Sides, o.Split, o.Delta, o.Confidence, o.AttackSelection, o.PointSelection,
		a.points, a.features, attackNames, claimNames, o.Theorems, a.target.Exact != nil, a.target.Accuracy != nil,
		estimatorNames(o.Estimators), o.Canaries, digestRecords(a.target.Canaries)}
	b, _ := json.Marshal(desc)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// digestRecords is a SHA-256 of the records' values ("" for none).
func digestRecords(rs []dataset.Record) string {
	if len(rs) == 0 {
		return ""
	}
	b, _ := json.Marshal(rs)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func describe(d *dataset.Dataset) string {
	if d == nil {
		return ""
	}
	return fmt.Sprintf("%s (%d records)", d.Name, d.Len())
}

// Execution returns the execution settings, defaults resolved.
func (a *Audit) Execution() Execution { return a.exec }

// WithExecution returns a copy of the audit carried out as x says, after
// checking x (errors are *FieldError); results never depend on it.
func (a *Audit) WithExecution(x Execution) (*Audit, error) {
	if err := x.Validate(); err != nil {
		return nil, err
	}
	b := *a
	b.exec = x.withDefaults()
	return &b, nil
}

// WithProgress returns a copy of the audit that reports progress to p
// (any p is valid: nil reports nothing).
func (a *Audit) WithProgress(p Progress) *Audit {
	b := *a
	b.exec.Progress = p
	return &b
}
