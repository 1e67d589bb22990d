package report

import (
	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// The region bound and the GDP estimator have columns of their own in
// every report (ε_lb, μ_lb, the Gaussian table); any further estimator of
// the audit gets, after them, a column with its figure (Estimator.Value)
// in the tables and its own group of columns in the CSV.

// bestAttack returns the index of the attack the named estimator reports
// at pr.
func bestAttack(pr audit.PointResult, estimator string) int {
	e, _ := pr.Estimate(estimator)
	return e.Best
}

// extraEstimators returns the names of the report's estimators beyond the
// ε and μ bounds of its design (region and GDP, or one-run and one-run
// f-DP) and the one its headline rests on, in the report's order.
func extraEstimators(r *audit.Report) []string {
	if len(r.Points) == 0 {
		return nil
	}
	var out []string
	primary := r.Points[0].Primary()
	for _, e := range r.Points[0].Estimates {
		switch e.Estimator {
		case audit.RegionEstimator{}.Name(), audit.GDPEstimator{}.Name(), audit.OneRunEstimator{}.Name(), audit.OneRunFDPEstimator{}.Name(), primary:
		default:
			out = append(out, e.Estimator)
		}
	}
	return out
}

// estimatorValue returns the named estimator's figure at pr, and its
// bound.
func estimatorValue(pr audit.PointResult, name string) (float64, stats.Estimate) {
	e, _ := pr.Estimate(name)
	est, err := audit.EstimatorByName(name)
	if err != nil {
		return e.Bound.Epsilon, e.Bound
	}
	return est.Value(e.Bound), e.Bound
}
