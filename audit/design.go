package audit

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// Design is everything an audit's analysis depends on — the statistics
// (Options, defaults resolved), the release points and feature names, the
// claims tested, and what the report says about the target — and nothing
// about how trials are made. Analysis is a function of a design and its
// trials: a simulation (built-in sampler, Go mechanism, program), sample
// files, shard parts and checkpoints only produce trials. A design with
// claims given as data (PureClaim, GDPClaim, and theorem claims, whose
// profiles are closedform.ProfileSpec), attacks known by name
// (attacks.ByName) and registered estimators is serializable (MarshalJSON),
// so that a trials file can carry it and a merge needs nothing else.
type Design struct {
	// Options are the audit's statistics, defaults resolved (ID included;
	// Claims are the options' own, Theorems already expanded into Claims
	// below). Options.Features may be nil in a decoded design: analysis
	// needs only the feature names and ThetaColumns.
	Options Options
	// Name identifies the audit, Mechanism names what ran and Dim is the
	// dimension of its releases.
	Name      string
	Mechanism string
	Dim       int
	// D and DPrime describe the datasets (nil when the mechanism owns
	// its data); Adjacency and PairNote how they differ.
	D, DPrime           *DatasetInfo
	Adjacency, PairNote string
	// Notes are assumptions the report must state (Target.Notes).
	Notes []string
	// Exact and Posterior are Target.Exact and Target.Posterior.
	Exact       []float64
	ExactSource string
	Posterior   *Posterior
	// Convergence is Prop. 3.3's lower bound per release point
	// (ConvergenceLowerBounds), nil where no release's law is known.
	Convergence []ConvergenceBound
	// Points are the release points and Features the feature names.
	// IterationsUnknown says that Points[k].Iteration is the release's
	// rank, not its iteration (a program that declared labels only): the
	// utility figures then give no iterations between releases.
	IterationsUnknown bool
	Points            []mechanisms.ReleasePoint
	Features          []string
	// ThetaColumns maps coordinate j of a release to the feature column
	// holding it, when the features store raw coordinates (the utility
	// figures compare them with Posterior).
	ThetaColumns map[int]int
	// Claims are every claim tested: the options' and the theorems'.
	Claims []Claim
}

// Design returns the audit's design.
func (a *Audit) Design() Design { return a.design }

// FromDesign prepares the analysis of a design, with the default
// Execution: an audit that analyses trials and cannot make them (Simulate
// refuses).
func FromDesign(d Design) (*Audit, error) {
	o := d.Options
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if len(o.Attacks) == 0 || len(o.Estimators) == 0 || o.Confidence == 0 || o.Split == (Split{}) || o.ID == "" {
		return nil, fmt.Errorf("audit: design: options must have their defaults resolved (attacks, estimators, confidence, split, ID)")
	}
	if len(d.Points) == 0 || len(d.Features) == 0 {
		return nil, fmt.Errorf("audit: design: no release point or no feature")
	}
	if d.Exact != nil && len(d.Exact) != len(d.Points) {
		return nil, fmt.Errorf("audit: design: %d exact values for %d release points", len(d.Exact), len(d.Points))
	}
	if d.Convergence != nil && len(d.Convergence) != len(d.Points) {
		return nil, fmt.Errorf("audit: design: %d convergence bounds for %d release points", len(d.Convergence), len(d.Points))
	}
	if err := checkPosterior(d.Posterior, d.Dim); err != nil {
		return nil, err
	}
	for i, c := range d.Claims {
		if c.At == nil {
			return nil, fmt.Errorf("audit: design: claim %d (%q) has no profile", i, c.Name)
		}
		if s := c.Spec; s != nil && s.Kind == "theorem" && len(s.Points) != len(d.Points) {
			return nil, fmt.Errorf("audit: design: claim %d (%q) has %d profiles for %d release points", i, c.Name, len(s.Points), len(d.Points))
		}
	}
	return &Audit{opts: o, exec: Execution{}.withDefaults(), points: d.Points, features: d.Features,
		claims: d.Claims, primary: primaryEstimator(o.Estimators), design: d}, nil
}

// designJSON is a design as data.
type designJSON struct {
	Name         string                    `json:"name"`
	Mechanism    string                    `json:"mechanism"`
	Dim          int                       `json:"dim"`
	D            *DatasetInfo              `json:"d,omitempty"`
	DPrime       *DatasetInfo              `json:"d_prime,omitempty"`
	Adjacency    string                    `json:"adjacency,omitempty"`
	PairNote     string                    `json:"pair_note,omitempty"`
	Notes        []string                  `json:"notes,omitempty"`
	Exact        []stats.JSONFloat         `json:"exact,omitempty"`
	ExactSource  string                    `json:"exact_source,omitempty"`
	Posterior    *Posterior                `json:"posterior,omitempty"`
	Convergence  []ConvergenceBound        `json:"convergence_lb,omitempty"`
	Points       []mechanisms.ReleasePoint `json:"points"`
	ItersUnknown bool                      `json:"iterations_unknown,omitempty"`
	Features     []string                  `json:"features"`
	ThetaColumns map[int]int               `json:"theta_columns,omitempty"`
	Claims       []ClaimSpec               `json:"claims,omitempty"`
	// The options.
	ID              string         `json:"id"`
	Trials          int            `json:"trials"`
	Seed            uint64         `json:"seed"`
	Assignment      Assignment     `json:"assignment"`
	Sides           []dataset.Side `json:"sides,omitempty"`
	Split           Split          `json:"split"`
	Attacks         []string       `json:"attacks"`
	Estimators      []string       `json:"estimators"`
	AttackSelection Selection      `json:"attack_selection"`
	PointSelection  Selection      `json:"point_selection"`
	Delta           float64        `json:"delta"`
	Confidence      float64        `json:"confidence"`
	SelConfidence   float64        `json:"selection_confidence,omitempty"`
	Repeats         RepeatPolicy   `json:"repeats"`
	Canaries        *CanaryDesign  `json:"canaries,omitempty"`
}

// MarshalJSON writes the design as data; it fails for a design that holds
// what only Go code can express (a claim with no ClaimSpec, such as one
// built by hand around a Go function; an attack unknown to attacks.ByName;
// an unregistered estimator).
func (d Design) MarshalJSON() ([]byte, error) {
	o := d.Options
	j := designJSON{Name: d.Name, Mechanism: d.Mechanism, Dim: d.Dim, D: d.D, DPrime: d.DPrime, Adjacency: d.Adjacency,
		PairNote: d.PairNote, Notes: d.Notes, ExactSource: d.ExactSource, Posterior: d.Posterior, Convergence: d.Convergence, Points: d.Points, ItersUnknown: d.IterationsUnknown, Features: d.Features,
		ThetaColumns: d.ThetaColumns, ID: o.ID, Trials: o.Trials, Seed: o.Seed, Assignment: o.Assignment, Sides: o.Sides,
		Split: o.Split, AttackSelection: o.AttackSelection, PointSelection: o.PointSelection, Delta: o.Delta,
		Confidence: o.Confidence, SelConfidence: o.SelectionConfidence, Repeats: o.Repeats, Canaries: o.Canaries}
	for _, e := range d.Exact {
		j.Exact = append(j.Exact, stats.JSONFloat(e))
	}
	for _, c := range d.Claims {
		if c.Spec == nil {
			return nil, fmt.Errorf("audit: design: claim %q is Go code, not data", c.Name)
		}
		j.Claims = append(j.Claims, *c.Spec)
	}
	for _, c := range o.Attacks {
		if b, err := attacks.ByName(c.Name()); err != nil || !reflect.DeepEqual(b, c) {
			return nil, fmt.Errorf("audit: design: attack %q is not one attacks.ByName builds", c.Name())
		}
		j.Attacks = append(j.Attacks, c.Name())
	}
	for _, e := range o.Estimators {
		if r, err := EstimatorByName(e.Name()); err != nil || !reflect.DeepEqual(r, e) {
			return nil, fmt.Errorf("audit: design: estimator %q is not registered", e.Name())
		}
		j.Estimators = append(j.Estimators, e.Name())
	}
	return json.Marshal(j)
}

// canaryEstimatorNames maps the estimators of a canary design written
// before the design had estimators of its own: such files list the
// multi-run default (region, gdp), which the canary design never used (it
// reported the one-run ε and f-DP bounds, its default now). They read as
// that default (registeredGuess); every other list is read as written.
func canaryEstimatorNames(c *CanaryDesign, names []string) []string {
	def := Estimators()
	if c == nil || len(names) != len(def) {
		return names
	}
	for i, e := range def {
		if names[i] != e.Name() {
			return names
		}
	}
	names = nil
	for _, e := range registeredGuess {
		names = append(names, e.Name())
	}
	return names
}

// UnmarshalJSON reads what MarshalJSON writes.
func (d *Design) UnmarshalJSON(b []byte) error {
	var j designJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	o := Options{ID: j.ID, Trials: j.Trials, Seed: j.Seed, Assignment: j.Assignment, Sides: j.Sides, Split: j.Split,
		AttackSelection: j.AttackSelection, PointSelection: j.PointSelection, Delta: j.Delta, Confidence: j.Confidence, SelectionConfidence: j.SelConfidence,
		Repeats: j.Repeats, Canaries: j.Canaries}
	for _, n := range j.Attacks {
		c, err := attacks.ByName(n)
		if err != nil {
			return fmt.Errorf("design: %w", err)
		}
		o.Attacks = append(o.Attacks, c)
	}
	for _, n := range canaryEstimatorNames(j.Canaries, j.Estimators) {
		e, err := EstimatorByName(n)
		if err != nil {
			return fmt.Errorf("design: %w", err)
		}
		o.Estimators = append(o.Estimators, e)
	}
	*d = Design{Options: o, Name: j.Name, Mechanism: j.Mechanism, Dim: j.Dim, D: j.D, DPrime: j.DPrime,
		Adjacency: j.Adjacency, PairNote: j.PairNote, Notes: j.Notes, ExactSource: j.ExactSource, Posterior: j.Posterior, Convergence: j.Convergence,
		Points: j.Points, IterationsUnknown: j.ItersUnknown, Features: j.Features, ThetaColumns: j.ThetaColumns}
	for _, e := range j.Exact {
		d.Exact = append(d.Exact, float64(e))
	}
	for _, s := range j.Claims {
		c, err := s.Claim()
		if err != nil {
			return fmt.Errorf("design: %w", err)
		}
		d.Claims = append(d.Claims, c)
		o.Claims = append(o.Claims, c)
	}
	d.Options.Claims = o.Claims
	return nil
}
