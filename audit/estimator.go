package audit

import (
	"fmt"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// Estimator turns an attack's errors into a lower bound. The engine asks
// it two things: on the threshold-selection runs, which rule to apply to an
// attack's scores (Objective, maximised by the exact threshold search of
// attacks.Chooser), and on the evaluation runs, what bound the rule's error
// counts give (Bound). The Estimate it returns carries its own label
// (Estimate.Estimator), confidence, δ, counts and the assumptions it rests
// on beyond the runs' independence (Estimate.Assumption).
//
// Adding an estimator is a file with its implementation and a line in
// registered.
type Estimator interface {
	// Name is the estimator's key in reports ("region", "gdp"); it is
	// unique among the registered estimators.
	Name() string
	// Objective is the criterion a rule is chosen to maximise on the
	// selection runs; it must be non-increasing in each error rate.
	Objective() attacks.Objective
	// Bound is the lower bound that counts c give at confidence
	// confidence, for δ = delta.
	Bound(c stats.Counts, delta, confidence float64) (stats.Estimate, error)
	// Value is the figure bounds of this estimator are ranked by (the
	// larger, the stronger the evidence of leakage).
	Value(e stats.Estimate) float64
}

// registered lists every estimator, in the order reports give them.
var registered = []Estimator{
	RegionEstimator{},
	GDPEstimator{},
}

// Estimators returns every registered estimator, in report order: the
// default of Options.Estimators.
func Estimators() []Estimator { return append([]Estimator(nil), registered...) }

// EstimatorByName returns the registered estimator with this name.
func EstimatorByName(name string) (Estimator, error) {
	for _, e := range registered {
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

// checkEstimators validates Options.Estimators (nil is the default).
func checkEstimators(es []Estimator) error {
	if len(es) == 0 {
		return nil
	}
	seen := map[string]bool{}
	region := false
	for i, e := range es {
		if e == nil {
			return fieldErr("Estimators", "estimator %d is nil", i)
		}
		n := e.Name()
		if n == "" || seen[n] {
			return fieldErr("Estimators", "estimator %d: names must be unique and non-empty, got %q", i, n)
		}
		seen[n] = true
		region = region || n == (RegionEstimator{}).Name()
	}
	if !region {
		return fieldErr("Estimators", "must include the region bound (RegionEstimator): the headline ε rests on it")
	}
	return nil
}

// primaryEstimator returns the index of the region bound in es.
func primaryEstimator(es []Estimator) int {
	for i, e := range es {
		if e.Name() == (RegionEstimator{}).Name() {
			return i
		}
	}
	return -1
}

// estimatorNames returns the names of es, or nil when they are the
// registered estimators in order (so that the default leaves audit IDs as
// they were).
func estimatorNames(es []Estimator) []string {
	var names []string
	same := len(es) == len(registered)
	for i, e := range es {
		names = append(names, e.Name())
		same = same && e.Name() == registered[i].Name()
	}
	if same {
		return nil
	}
	return names
}
