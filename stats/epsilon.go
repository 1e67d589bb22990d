package stats

import (
	"fmt"
	"math"
)

// Counts are the error counts of an attack on evaluation runs.
type Counts struct {
	// FP is the number of runs on D that the attack attributed to D′.
	FP int `json:"fp"`
	// Negatives is the number of evaluation runs on D.
	Negatives int `json:"negatives"`
	// FN is the number of runs on D′ that the attack attributed to D.
	FN int `json:"fn"`
	// Positives is the number of evaluation runs on D′.
	Positives int `json:"positives"`
}

// Validate checks 0 ≤ FP ≤ Negatives, 0 ≤ FN ≤ Positives and at least one
// run on each side; the error names the offending field and its range.
func (c Counts) Validate() error {
	if err := checkBinomial("fp", c.FP, "negatives", c.Negatives); err != nil {
		return err
	}
	return checkBinomial("fn", c.FN, "positives", c.Positives)
}

// FPR returns the observed false-positive rate FP/Negatives.
func (c Counts) FPR() float64 { return float64(c.FP) / float64(c.Negatives) }

// FNR returns the observed false-negative rate FN/Positives.
func (c Counts) FNR() float64 { return float64(c.FN) / float64(c.Positives) }

// Direction names the inequality of Heller & Fetaya eq. 10 that gives an ε
// bound.
type Direction string

const (
	// DirNone: neither inequality gives ε > 0.
	DirNone Direction = "none"
	// DirFNR: FPR + e^ε·FNR ≥ 1−δ, so ε ≥ ln((1−δ−FPR)/FNR).
	DirFNR Direction = "ln((1-δ-FPR)/FNR)"
	// DirFPR: FNR + e^ε·FPR ≥ 1−δ, so ε ≥ ln((1−δ−FNR)/FPR).
	DirFPR Direction = "ln((1-δ-FNR)/FPR)"
)

// Kind says what an Estimate's ε is.
type Kind string

const (
	// LowerBound: ε ≥ Epsilon holds with probability ≥ Confidence.
	LowerBound Kind = "lower-bound"
	// PointEstimate: plug-in value from observed rates, no guarantee.
	PointEstimate Kind = "point-estimate"
	// CeilingKind: the largest lower bound the run counts can give.
	CeilingKind Kind = "ceiling"
)

// Names of the estimators, as they appear in reports.
const (
	EstimatorRegion  = "Clopper-Pearson region bound (Heller-Fetaya eq. 12)"
	EstimatorPoint   = "plug-in point estimate (Heller-Fetaya eq. 11)"
	EstimatorCeiling = "ceiling: region bound at zero errors"
	EstimatorGDP     = "GDP mu lower bound, converted to epsilon(delta)"
)

// Estimate is an ε together with everything needed to state what it means.
// Its String method always prints the provenance with the number.
type Estimate struct {
	Kind      Kind   `json:"kind"`
	Estimator string `json:"estimator"`
	// Epsilon is the value; +Inf only for a point estimate with a zero rate.
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// Confidence is 1−α for bounds; 0 for point estimates.
	Confidence float64 `json:"confidence"`
	Counts     Counts  `json:"counts"`
	// FPR and FNR are the rates the formula used: the one-sided
	// Clopper–Pearson upper bounds at level α/2 each for bounds, the observed
	// rates for a point estimate.
	FPR       float64   `json:"fpr"`
	FNR       float64   `json:"fnr"`
	Direction Direction `json:"direction,omitempty"`
	// Mu is the GDP parameter for GDP estimators (else 0).
	Mu float64 `json:"mu,omitempty"`
	// Assumption is non-empty when Epsilon holds only under it.
	Assumption string `json:"assumption,omitempty"`
	// Guesses are the outcome of a one-run (canary) audit when the bound
	// comes from guesses rather than error counts (OneRunEpsilon,
	// OneRunFDP); Counts and the rates are then unused and absent from
	// the JSON.
	Guesses *OneRunCounts `json:"guesses,omitempty"`
}

// String renders the estimate with its provenance, e.g.
// "ε ≥ 4.9056 [Clopper-Pearson region bound (Heller-Fetaya eq. 12); confidence 0.95; δ = 1e-05; FP 0/500, FN 0/500]".
func (e Estimate) String() string {
	if e.Guesses != nil {
		return e.guessString()
	}
	rel := "≥"
	switch e.Kind {
	case PointEstimate:
		rel = "≈"
	case CeilingKind:
		rel = "≤"
	}
	conf := "no confidence level"
	if e.Confidence > 0 {
		conf = fmt.Sprintf("confidence %g", e.Confidence)
	}
	s := fmt.Sprintf("ε %s %s [%s; %s; δ = %g; FP %d/%d, FN %d/%d",
		rel, FormatFloat(e.Epsilon), e.Estimator, conf, e.Delta,
		e.Counts.FP, e.Counts.Negatives, e.Counts.FN, e.Counts.Positives)
	if e.Mu != 0 || e.Estimator == EstimatorGDP {
		s += fmt.Sprintf("; μ_lb = %s", FormatFloat(e.Mu))
	}
	if e.Assumption != "" {
		s += "; assumes " + e.Assumption
	}
	return s + "]"
}

// FormatFloat prints a reported number: four decimals in the usual range,
// scientific notation for very large or very small magnitudes, and "+Inf"
// spelled out.
func FormatFloat(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "+Inf"
	case math.IsInf(x, -1):
		return "-Inf"
	case math.IsNaN(x):
		return "NaN"
	case x == 0:
		return "0"
	case math.Abs(x) >= 1e6 || math.Abs(x) < 1e-3:
		return fmt.Sprintf("%.4e", x)
	}
	return fmt.Sprintf("%.4f", x)
}

// EpsilonFromRates returns the ε lower bound of Heller & Fetaya eq. 11
// (Kairouz, Oh & Viswanath 2015): for an (ε, δ)-DP mechanism every test has
// FPR + e^ε·FNR ≥ 1−δ and FNR + e^ε·FPR ≥ 1−δ, so
// ε ≥ max{ln((1−δ−FPR)/FNR), ln((1−δ−FNR)/FPR)}, a term being absent when
// its numerator is ≤ 0. The result is clamped at 0 (ε is never negative);
// it is +Inf when a positive numerator meets a zero rate.
func EpsilonFromRates(fpr, fnr, delta float64) (float64, Direction) {
	best, dir := 0.0, DirNone
	if num := 1 - delta - fpr; num > 0 {
		if e := math.Log(num) - math.Log(fnr); e > best {
			best, dir = e, DirFNR
		}
	}
	if num := 1 - delta - fnr; num > 0 {
		if e := math.Log(num) - math.Log(fpr); e > best {
			best, dir = e, DirFPR
		}
	}
	return best, dir
}

func checkCountsDeltaConf(c Counts, delta, confidence float64) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if err := CheckDelta(delta); err != nil {
		return err
	}
	return CheckConfidence(confidence)
}

// RegionBound returns the high-confidence ε lower bound of Heller & Fetaya
// eq. 12: eq. 11 evaluated at the one-sided Clopper–Pearson upper bounds of
// FPR and FNR, each at tail level α/2 with α = 1 − confidence, so that by the
// union bound ε ≥ Epsilon holds with probability ≥ confidence.
func RegionBound(c Counts, delta, confidence float64) (Estimate, error) {
	if err := checkCountsDeltaConf(c, delta, confidence); err != nil {
		return Estimate{}, err
	}
	a := (1 - confidence) / 2
	fpr := cpUpper(c.FP, c.Negatives, a)
	fnr := cpUpper(c.FN, c.Positives, a)
	eps, dir := EpsilonFromRates(fpr, fnr, delta)
	return Estimate{
		Kind: LowerBound, Estimator: EstimatorRegion, Epsilon: eps, Delta: delta,
		Confidence: confidence, Counts: c, FPR: fpr, FNR: fnr, Direction: dir,
	}, nil
}

// Point returns the plug-in estimate: eq. 11 at the observed rates. It is
// not a bound and may be +Inf when an error count is zero.
func Point(c Counts, delta float64) (Estimate, error) {
	if err := c.Validate(); err != nil {
		return Estimate{}, err
	}
	if err := CheckDelta(delta); err != nil {
		return Estimate{}, err
	}
	fpr, fnr := c.FPR(), c.FNR()
	eps, dir := EpsilonFromRates(fpr, fnr, delta)
	return Estimate{
		Kind: PointEstimate, Estimator: EstimatorPoint, Epsilon: eps, Delta: delta,
		Counts: c, FPR: fpr, FNR: fnr, Direction: dir,
	}, nil
}

// Ceiling returns the largest RegionBound that negatives and positives
// evaluation runs can produce at this δ and confidence: the bound at zero
// errors, max over directions of ln((1−δ−u₁)/u₂) with uᵢ = 1 − (α/2)^{1/nᵢ}.
// (With 500 runs per side, δ = 1e-5 and 95% confidence this is 4.9056, the
// "about 4.89" cap quoted in Heller & Fetaya §V.B.)
func Ceiling(negatives, positives int, delta, confidence float64) (Estimate, error) {
	e, err := RegionBound(Counts{Negatives: negatives, Positives: positives}, delta, confidence)
	if err != nil {
		return Estimate{}, err
	}
	e.Kind, e.Estimator = CeilingKind, EstimatorCeiling
	return e, nil
}
