package audit

import (
	"fmt"

	"github.com/mcmcaudit/mcmcaudit/attacks"
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
// Adding an estimator is a file with its implementation and a line in
// registered (or registeredGuess).
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

// registered lists every estimator of the multi-run design, in the order
// reports give them (registeredGuess lists the canary design's).
var registered = []Estimator{
	RegionEstimator{},
	GDPEstimator{},
}

// Estimators returns every registered estimator of the multi-run design,
// in report order: the default of Options.Estimators.
func Estimators() []Estimator { return append([]Estimator(nil), registered...) }

// EstimatorByName returns the registered estimator with this name.
func EstimatorByName(name string) (Estimator, error) {
	for _, e := range append(Estimators(), CanaryEstimators()...) {
		if e.Name() == name {
			return e, nil
		}
	}
	return nil, fmt.Errorf("no estimator named %q", name)
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

// checkEstimators validates Options.Estimators (nil is the default) for
// the multi-run design, or for the canary design when canaries is set:
// each design takes its own kind of estimator (CountEstimator,
// GuessEstimator) and needs its headline estimator among them.
func checkEstimators(es []Estimator, canaries bool) error {
	if len(es) == 0 {
		return nil
	}
	seen := map[string]bool{}
	head, kind := RegionEstimator{}.Name(), "a CountEstimator (the multi-run design counts errors on runs)"
	if canaries {
		head, kind = OneRunEstimator{}.Name(), "a GuessEstimator (the canary design bounds from guesses)"
	}
	found := false
	for i, e := range es {
		if e == nil {
			return fieldErr("Estimators", "estimator %d is nil", i)
		}
		n := e.Name()
		if n == "" || seen[n] {
			return fieldErr("Estimators", "estimator %d: names must be unique and non-empty, got %q", i, n)
		}
		seen[n] = true
		found = found || n == head
		_, isCount := e.(CountEstimator)
		_, isGuess := e.(GuessEstimator)
		if (canaries && !isGuess) || (!canaries && !isCount) {
			return fieldErr("Estimators", "estimator %d (%q): must be %s", i, n, kind)
		}
	}
	if !found {
		return fieldErr("Estimators", "must include %q: the headline ε rests on it", head)
	}
	return nil
}

// primaryEstimator returns the index in es of the estimator the headline
// rests on: the region bound, or the one-run bound in a canary design.
func primaryEstimator(es []Estimator) int {
	for i, e := range es {
		if n := e.Name(); n == (RegionEstimator{}).Name() || n == (OneRunEstimator{}).Name() {
			return i
		}
	}
	return -1
}

// estimatorNames returns the names of es, or nil when they are a
// design's default estimators in order (so that the default leaves audit
// IDs as they were).
func estimatorNames(es []Estimator) []string {
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	for _, def := range [][]Estimator{registered, registeredGuess} {
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
