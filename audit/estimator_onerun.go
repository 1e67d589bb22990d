package audit

import "github.com/mcmcaudit/mcmcaudit/stats"

// The canary (one-run) design's estimators: each turns the guesses of one
// (k₊, k₋) pair on the canaries' score ranking into a bound, reported per
// release point beside the multi-run design's bounds in the same form
// (PointResult.Estimates, stats.Estimate with Guesses set).

// registeredGuess lists every estimator of the canary design, in the
// order reports give them: its default Options.Estimators.
var registeredGuess = []Estimator{
	OneRunEstimator{},
	OneRunFDPEstimator{},
}

// CanaryEstimators returns every registered estimator of the canary
// design, in report order: the default of Options.Estimators when
// Options.Canaries is set.
func CanaryEstimators() []Estimator { return append([]Estimator(nil), registeredGuess...) }

// OneRunEstimator is the one-run ε lower bound of Steinke, Nasr &
// Jagielski (2023), Thm 3.1 for δ = 0 and App. D for δ > 0
// (stats.OneRunEpsilon): of r guesses about canaries each included with
// probability ½, v correct. It assumes nothing about the mechanism's
// trade-off curve; the headline ε of a canary design is its bound.
type OneRunEstimator struct{}

// Name returns "one-run".
func (OneRunEstimator) Name() string { return "one-run" }

// BoundGuesses returns stats.OneRunEpsilon as an Estimate.
func (OneRunEstimator) BoundGuesses(c stats.OneRunCounts, delta, confidence float64) (stats.Estimate, error) {
	e, err := stats.OneRunEpsilon(c, delta, confidence)
	return e.Estimate(), err
}

// Value returns the bound's ε.
func (OneRunEstimator) Value(e stats.Estimate) float64 { return e.Epsilon }

// Doc documents the one-run bound.
func (OneRunEstimator) Doc() string {
	return "one-run (canary design: the ε lower bound of Steinke, Nasr & Jagielski 2023 Thm 3.1 from the correct guesses, assuming nothing about the trade-off curve)"
}

// OneRunFDPEstimator is the μ lower bound of the f-DP "audit with cap"
// test of Mahloujifar, Melis & Chaudhuri (2024) on the guesses, with the
// ε(δ) it implies when the mechanism is μ-GDP (stats.OneRunFDP; the
// Estimate states that assumption).
type OneRunFDPEstimator struct{}

// Name returns "one-run-fdp".
func (OneRunFDPEstimator) Name() string { return "one-run-fdp" }

// BoundGuesses returns stats.OneRunFDP as an Estimate.
func (OneRunFDPEstimator) BoundGuesses(c stats.OneRunCounts, delta, confidence float64) (stats.Estimate, error) {
	e, err := stats.OneRunFDP(c, delta, confidence)
	return e.Estimate(), err
}

// Value returns the bound's μ.
func (OneRunFDPEstimator) Value(e stats.Estimate) float64 { return e.Mu }

// Doc documents the one-run f-DP bound.
func (OneRunFDPEstimator) Doc() string {
	return "one-run-fdp (canary design: the μ of the f-DP audit with cap of Mahloujifar, Melis & Chaudhuri 2024 from the guesses, with the ε it implies if the mechanism is μ-GDP)"
}
