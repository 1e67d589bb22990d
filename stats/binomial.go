package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Interval is a two-sided confidence interval [Lo, Hi] for a probability.
type Interval struct {
	Lo, Hi float64
}

// checkBinomial validates k successes out of n trials; the names are used in
// the error so that it names the offending field.
func checkBinomial(kName string, k int, nName string, n int) error {
	if n < 1 {
		return fmt.Errorf("%s: must be ≥ 1, got %d", nName, n)
	}
	if k < 0 || k > n {
		return fmt.Errorf("%s: must be in [0, %s=%d], got %d", kName, nName, n, k)
	}
	return nil
}

// CheckConfidence returns an error unless confidence lies in (0, 1).
func CheckConfidence(confidence float64) error {
	if !(confidence > 0 && confidence < 1) {
		return fmt.Errorf("confidence: must be in (0, 1), got %g", confidence)
	}
	return nil
}

// CheckDelta returns an error unless δ lies in [0, 1).
func CheckDelta(delta float64) error {
	if !(delta >= 0 && delta < 1) {
		return fmt.Errorf("delta: must be in [0, 1), got %g", delta)
	}
	return nil
}

// ClopperPearsonUpper returns the exact one-sided upper confidence bound U
// for the success probability p of a binomial with k successes in n trials:
// P(p ≤ U) ≥ confidence for every p (Clopper & Pearson 1934).
//
// With a = 1 − confidence, U = Beta⁻¹(1−a; k+1, n−k) (gonum's inverse
// regularised incomplete beta). At the edges it is closed form: U = 1 when
// k = n and U = 1 − a^{1/n} when k = 0 (computed as −expm1(ln a / n)).
func ClopperPearsonUpper(k, n int, confidence float64) (float64, error) {
	if err := checkBinomial("k", k, "n", n); err != nil {
		return math.NaN(), err
	}
	if err := CheckConfidence(confidence); err != nil {
		return math.NaN(), err
	}
	return cpUpper(k, n, 1-confidence), nil
}

// ClopperPearsonUpperTail is ClopperPearsonUpper with the tail level
// a = 1 − confidence given directly, so that callers splitting α (α/2 per
// rate, α/m for m tests) get exactly the bound stats.RegionBound uses.
func ClopperPearsonUpperTail(k, n int, a float64) (float64, error) {
	if err := checkBinomial("k", k, "n", n); err != nil {
		return math.NaN(), err
	}
	if !(a > 0 && a < 1) {
		return math.NaN(), fmt.Errorf("tail level: must be in (0, 1), got %g", a)
	}
	return cpUpper(k, n, a), nil
}

// cpUpper is ClopperPearsonUpper for validated arguments, at tail level a.
func cpUpper(k, n int, a float64) float64 {
	switch k {
	case n:
		return 1
	case 0:
		return -math.Expm1(math.Log(a) / float64(n))
	}
	return distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - a)
}

// cpLower is the one-sided lower Clopper–Pearson bound at tail level a.
func cpLower(k, n int, a float64) float64 {
	switch k {
	case 0:
		return 0
	case n:
		return math.Exp(math.Log(a) / float64(n))
	}
	return distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(a)
}

// ClopperPearsonLower returns the exact one-sided lower confidence bound L:
// P(p ≥ L) ≥ confidence. L = Beta⁻¹(a; k, n−k+1) with a = 1 − confidence;
// L = 0 when k = 0 and L = a^{1/n} when k = n.
func ClopperPearsonLower(k, n int, confidence float64) (float64, error) {
	if err := checkBinomial("k", k, "n", n); err != nil {
		return math.NaN(), err
	}
	if err := CheckConfidence(confidence); err != nil {
		return math.NaN(), err
	}
	return cpLower(k, n, 1-confidence), nil
}

// ClopperPearson returns the exact two-sided interval at the given
// confidence: each one-sided bound at tail level (1 − confidence)/2.
func ClopperPearson(k, n int, confidence float64) (Interval, error) {
	if err := checkBinomial("k", k, "n", n); err != nil {
		return Interval{math.NaN(), math.NaN()}, err
	}
	if err := CheckConfidence(confidence); err != nil {
		return Interval{math.NaN(), math.NaN()}, err
	}
	a := (1 - confidence) / 2
	return Interval{cpLower(k, n, a), cpUpper(k, n, a)}, nil
}

// Jeffreys returns the two-sided Jeffreys interval: the equal-tailed
// credible interval of the Beta(k+½, n−k+½) posterior under the Jeffreys
// prior (Brown, Cai & DasGupta 2001, §4.1.2), with the usual edge convention
// Lo = 0 when k = 0 and Hi = 1 when k = n. It is not a guaranteed-coverage
// interval; the ε estimators use Clopper–Pearson.
func Jeffreys(k, n int, confidence float64) (Interval, error) {
	if err := checkBinomial("k", k, "n", n); err != nil {
		return Interval{math.NaN(), math.NaN()}, err
	}
	if err := CheckConfidence(confidence); err != nil {
		return Interval{math.NaN(), math.NaN()}, err
	}
	a := (1 - confidence) / 2
	b := distuv.Beta{Alpha: float64(k) + 0.5, Beta: float64(n-k) + 0.5}
	iv := Interval{0, 1}
	if k > 0 {
		iv.Lo = b.Quantile(a)
	}
	if k < n {
		iv.Hi = b.Quantile(1 - a)
	}
	return iv, nil
}
