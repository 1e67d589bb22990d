package attacks

import (
	"fmt"
	"math"
)

// Limits on the number of features an attack fits. An attack whose memory
// or time grows faster than linearly in the features refuses a release
// beyond its limit before anything is allocated, with a message naming the
// limit, instead of exhausting memory: the least-squares attack factorises
// an n × (f+1) design and keeps its (f+1) × (f+1) right singular vectors,
// QDA two f × f covariances and their Cholesky factors, logistic
// regression runs L-BFGS over n·f products per evaluation. The threshold
// attack is linear in f and bounded only by what a trials file can hold.
// The memory behind each limit and the cost estimates are derived in
// docs/derivations/work-limits.md.
const (
	MaxFeaturesThreshold = 1 << 20
	MaxFeaturesLinear    = 1000
	MaxFeaturesLogistic  = 10000
	MaxFeaturesQDA       = 1000
	// MaxDesignValues bounds the least-squares design (runs × (features
	// + 1)): gonum's thin SVD holds it and its left singular vectors, two
	// matrices of that size, in float64.
	MaxDesignValues = 1 << 26
)

// Sized is implemented by classifiers with limits on the shape of their
// training data: CheckSize reports, as an error naming the limit, whether
// the classifier can be fitted on n runs of f features.
type Sized interface {
	CheckSize(n, f int) error
}

// Coster is implemented by classifiers that estimate their work, in the
// units of mechanisms.RunCost (one unit per multiply-add, roughly): fitting
// on n runs of f features, and scoring one run.
type Coster interface {
	FitCost(n, f int) float64
	ScoreCost(f int) float64
}

// CheckSize applies c's limits (none unless c is Sized).
func CheckSize(c Classifier, n, f int) error {
	if s, ok := c.(Sized); ok {
		return s.CheckSize(n, f)
	}
	return nil
}

// Cost estimates the work of fitting c on nFit runs of f features and
// scoring nScore runs; a classifier that is not a Coster is costed as one
// pass over its data per fit and f units per score.
func Cost(c Classifier, nFit, nScore, f int) float64 {
	if co, ok := c.(Coster); ok {
		return co.FitCost(nFit, f) + float64(nScore)*co.ScoreCost(f)
	}
	return float64(nFit)*float64(f) + float64(nScore)*float64(f)
}

func featureLimit(name string, f, limit int, why string) error {
	if f > limit {
		return fmt.Errorf("%s: at most %d features (%s), got %d", name, limit, why, f)
	}
	return nil
}

// log2p returns log₂(n + 2), the depth of a sort of n values.
func log2p(n int) float64 { return math.Log2(float64(n) + 2) }

// CheckSize implements Sized.
func (BestCoordinate) CheckSize(n, f int) error {
	return featureLimit(NameThreshold, f, MaxFeaturesThreshold, "one sort of the runs per feature")
}

// FitCost implements Coster: one sort and one scan of the runs per feature.
func (BestCoordinate) FitCost(n, f int) float64 { return float64(f) * float64(n) * (log2p(n) + 1) }

// ScoreCost implements Coster: the score is one feature.
func (BestCoordinate) ScoreCost(int) float64 { return 1 }

// CheckSize implements Sized.
func (LinearLS) CheckSize(n, f int) error {
	if err := featureLimit(NameLinear, f, MaxFeaturesLinear, "its SVD keeps (f+1)² right singular vectors"); err != nil {
		return err
	}
	if v := float64(n) * float64(f+1); v > MaxDesignValues {
		return fmt.Errorf("%s: at most %d values in the design, training runs × (features + 1) (its thin SVD holds two such matrices), got %d × %d", NameLinear, MaxDesignValues, n, f+1)
	}
	return nil
}

// FitCost implements Coster: a thin SVD of the n × (f+1) design, of order
// n·k² + k³ operations with k = f + 1.
func (LinearLS) FitCost(n, f int) float64 {
	k := float64(f + 1)
	return 4*float64(n)*k*k + 8*k*k*k + float64(n)*k
}

// ScoreCost implements Coster: standardise and one dot product.
func (LinearLS) ScoreCost(f int) float64 { return 2 * float64(f+1) }

// CheckSize implements Sized.
func (Logistic) CheckSize(n, f int) error {
	return featureLimit(NameLogistic, f, MaxFeaturesLogistic, "L-BFGS passes over runs × features per step")
}

// logisticEvals is the budget of function and gradient evaluations the
// cost estimate assumes for L-BFGS on a regularised convex problem.
const logisticEvals = 100

// FitCost implements Coster: each evaluation of the loss and its gradient
// passes over the n × f standardised features twice.
func (Logistic) FitCost(n, f int) float64 {
	return logisticEvals * 2 * float64(n) * float64(f+1)
}

// ScoreCost implements Coster.
func (Logistic) ScoreCost(f int) float64 { return 2 * float64(f+1) }

// CheckSize implements Sized.
func (QDA) CheckSize(n, f int) error {
	return featureLimit(NameQDA, f, MaxFeaturesQDA, "it keeps two f × f covariance matrices and factorises them")
}

// FitCost implements Coster: two covariances (n·f² together) and two
// Cholesky factorisations (f³/3 each).
func (QDA) FitCost(n, f int) float64 {
	ff := float64(f)
	return float64(n)*ff*ff + ff*ff*ff
}

// ScoreCost implements Coster: two triangular solves.
func (QDA) ScoreCost(f int) float64 { return 2 * float64(f) * float64(f) }
