package audit

import (
	"fmt"
	"strings"
	"sync"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/internal/clip"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// Estimator turns what a design observed into a lower bound: an attack's
// error counts on evaluation runs (CountEstimator, the multi-run design) or
// the guesses of a one-run canary audit (GuessEstimator). The Estimate it
// returns carries its own label (Estimate.Estimator), confidence, δ,
// counts or guesses and the assumptions it rests on beyond the runs'
// independence (Estimate.Assumption); reports list every estimator's
// bound per release point in the same form, whatever the design.
//
// Adding an estimator is a file with its implementation and a call of
// RegisterEstimator in that file's init function (a built-in one that
// every audit runs by default is listed in registered instead).
type Estimator interface {
	// Name is the estimator's key in reports ("region", "gdp",
	// "one-run"); it is unique among the registered estimators.
	Name() string
	// Value is the figure bounds of this estimator are ranked by (the
	// larger, the stronger the evidence of leakage).
	Value(e stats.Estimate) float64
}

// CountEstimator is an estimator of the multi-run design. The engine asks
// it two things: on the threshold-selection runs, which rule to apply to
// an attack's scores (Objective, maximised by the exact threshold search
// of attacks.Chooser), and on the evaluation runs, what bound the rule's
// error counts give (Bound).
type CountEstimator interface {
	Estimator
	// Objective is the criterion a rule is chosen to maximise on the
	// selection runs; it must be non-increasing in each error rate.
	Objective() attacks.Objective
	// Bound is the lower bound that counts c give at confidence
	// confidence, for δ = delta.
	Bound(c stats.Counts, delta, confidence float64) (stats.Estimate, error)
}

// GuessEstimator is an estimator of the canary (one-run) design: the
// bound that c, the outcome of one guess pair (k₊, k₋) on the canaries'
// score ranking, gives at confidence confidence for δ = delta (the
// returned Estimate has Guesses set).
type GuessEstimator interface {
	Estimator
	BoundGuesses(c stats.OneRunCounts, delta, confidence float64) (stats.Estimate, error)
}

// The estimator registry: every estimator a design may name, by its Name.
// The built-in ones are registered here, in report order: the multi-run
// design's defaults, then the canary design's (registeredGuess);
// RegisterEstimator adds a user's, which a design then names (and
// serialises, and merges) like a built-in one, but which runs only where a
// design lists it.
var (
	registryMu sync.RWMutex
	// registered lists every registered estimator, in registration order.
	registered = append([]Estimator{RegionEstimator{}, GDPEstimator{}}, registeredGuess...)
	// defaults is how many of registered are the multi-run design's
	// default estimators.
	defaults = 2
)

// RegisterEstimator makes e known by its name: designs may then list it
// (Options.Estimators, audit.estimators in a scenario, --estimators), and
// a design holding it serialises and merges. A nil estimator, an empty
// name, a name with a comma or a space, or the name of an estimator
// already registered is refused. Register at initialisation (an init
// function), before any design that names it is decoded.
func RegisterEstimator(e Estimator) error {
	if e == nil {
		return fmt.Errorf("audit: RegisterEstimator: nil estimator")
	}
	n := e.Name()
	if n == "" || strings.ContainsAny(n, ", \t\n") {
		return fmt.Errorf("audit: RegisterEstimator: the name %q must be non-empty, without commas or spaces", n)
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	for _, r := range registered {
		if r.Name() == n {
			return fmt.Errorf("audit: RegisterEstimator: an estimator named %q is already registered", n)
		}
	}
	registered = append(registered, e)
	return nil
}

// Estimators returns the default estimators, in report order: the default
// of Options.Estimators (the region bound, then the GDP bound).
func Estimators() []Estimator {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return append([]Estimator(nil), registered[:defaults]...)
}

// RegisteredEstimators returns every registered estimator: the defaults,
// then those added by RegisterEstimator in the order they were.
func RegisteredEstimators() []Estimator {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return append([]Estimator(nil), registered...)
}

// EstimatorNames returns the names of the registered estimators, in the
// order of RegisteredEstimators.
func EstimatorNames() []string {
	var names []string
	for _, e := range RegisteredEstimators() {
		names = append(names, e.Name())
	}
	return names
}

// EstimatorByName returns the registered estimator with this name; the
// error lists the registered names.
func EstimatorByName(name string) (Estimator, error) {
	for _, e := range RegisteredEstimators() {
		if e.Name() == name {
			return e, nil
		}
	}
	return nil, fmt.Errorf("no estimator named %s (registered: %s)", clip.Quote(name), strings.Join(EstimatorNames(), ", "))
}

// EstimatorsByName returns the registered estimators of these names, in
// this order; a name given twice or not registered is an error naming the
// registered ones.
func EstimatorsByName(names []string) ([]Estimator, error) {
	var out []Estimator
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return nil, fmt.Errorf("%s is listed twice", clip.Quote(n))
		}
		seen[n] = true
		e, err := EstimatorByName(n)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// Documented is implemented by an estimator that documents itself: Doc is
// its entry in the scenario reference ("name (what it bounds, and what it
// assumes)"). The reference names an estimator without it by its name
// alone.
type Documented interface {
	Doc() string
}

// RegionEstimator is the Clopper–Pearson region bound of Heller & Fetaya
// (2023), eq. 12: ε at δ from the one-sided upper bounds of the two error
// rates. It assumes nothing about the mechanism's trade-off curve; the
// headline ε of a report is its bound.
type RegionEstimator struct{}

// Name returns "region".
func (RegionEstimator) Name() string { return "region" }

// Objective returns attacks.RegionObjective.
func (RegionEstimator) Objective() attacks.Objective { return attacks.RegionObjective }

// Bound returns stats.RegionBound.
func (RegionEstimator) Bound(c stats.Counts, delta, confidence float64) (stats.Estimate, error) {
	return stats.RegionBound(c, delta, confidence)
}

// Value returns the bound's ε.
func (RegionEstimator) Value(e stats.Estimate) float64 { return e.Epsilon }

// Doc documents the region bound.
func (RegionEstimator) Doc() string {
	return "region (the Clopper–Pearson region bound of Heller & Fetaya eq. 12: ε from the error rates' upper bounds, assuming nothing about the trade-off curve)"
}

// GDPEstimator is the μ lower bound of a Gaussian trade-off curve through
// the error rates' Clopper–Pearson upper bounds (Dong, Roth & Su 2019,
// Def. 2.7), with the ε it implies when the mechanism is μ-GDP
// (stats.GDPBound; the Estimate states that assumption).
type GDPEstimator struct{}

// Name returns "gdp".
func (GDPEstimator) Name() string { return "gdp" }

// Objective returns attacks.GDPObjective.
func (GDPEstimator) Objective() attacks.Objective { return attacks.GDPObjective }

// Bound returns stats.GDPBound.
func (GDPEstimator) Bound(c stats.Counts, delta, confidence float64) (stats.Estimate, error) {
	return stats.GDPBound(c, delta, confidence)
}

// Value returns the bound's μ.
func (GDPEstimator) Value(e stats.Estimate) float64 { return e.Mu }

// Doc documents the GDP bound.
func (GDPEstimator) Doc() string {
	return "gdp (the μ of the Gaussian trade-off curve through the error rates' upper bounds, Dong, Roth & Su 2019 Def. 2.7, with the ε it implies if the mechanism is μ-GDP)"
}

// checkEstimators validates Options.Estimators (nil is the design's
// default) for the multi-run design, or for the canary design when
// canaries is set: no nil estimator, names unique and non-empty, and each
// of the design's kind (CountEstimator, GuessEstimator). The region bound
// (the one-run bound) may be left out: the headline then rests on the
// first estimator listed (primaryEstimator).
func checkEstimators(es []Estimator, canaries bool) error {
	kind := "one of the multi-run design's estimators, which bound from error counts on runs"
	if canaries {
		kind = "one of the canary design's estimators, which bound from guesses"
	}
	var names []string
	for _, e := range RegisteredEstimators() {
		if _, guess := e.(GuessEstimator); guess == canaries {
			names = append(names, e.Name())
		}
	}
	kind += " (" + strings.Join(names, ", ") + ")"
	seen := map[string]bool{}
	for i, e := range es {
		if e == nil {
			return fieldErr("Estimators", "estimator %d is nil", i)
		}
		n := e.Name()
		if n == "" || seen[n] {
			return fieldErr("Estimators", "estimator %d: names must be unique and non-empty, got %q", i, n)
		}
		seen[n] = true
		_, isCount := e.(CountEstimator)
		_, isGuess := e.(GuessEstimator)
		if (canaries && !isGuess) || (!canaries && !isCount) {
			return fieldErr("Estimators", "estimator %d (%q): must be %s", i, n, kind)
		}
	}
	return nil
}

// primaryEstimator returns the index in es of the estimator the headline,
// the ceiling and the verdict's ranking rest on: the region bound (in a
// canary design the one-run bound) when es holds it — the bound that
// assumes nothing about the mechanism's trade-off curve — else the first
// estimator listed.
func primaryEstimator(es []Estimator) int {
	for i, e := range es {
		if n := e.Name(); n == (RegionEstimator{}).Name() || n == (OneRunEstimator{}).Name() {
			return i
		}
	}
	return 0
}

// estimatorNames returns the names of es, or nil when they are a design's
// default estimators in order (so that the default leaves audit IDs as
// they were).
func estimatorNames(es []Estimator) []string {
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	for _, def := range [][]Estimator{Estimators(), CanaryEstimators()} {
		same := len(es) == len(def)
		for i := 0; same && i < len(es); i++ {
			same = es[i].Name() == def[i].Name()
		}
		if same {
			return nil
		}
	}
	return names
}
