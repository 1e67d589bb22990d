package numeric

import "math"

const (
	halfLog2Pi = 0.91893853320467274178032973640561763986139747363778 // ½·ln(2π)
	// logCDFAsymptotic is where LogNormCDF switches to the asymptotic series:
	// below it erfc(−x/√2) would leave the normal float64 range.
	logCDFAsymptotic = -37.0
)

// NormCDF returns Φ(x), the standard normal CDF, accurate in relative terms
// in the lower tail down to the float64 underflow (x ≈ −38).
func NormCDF(x float64) float64 {
	return 0.5 * math.Erfc(-x/math.Sqrt2)
}

// LogNormCDF returns ln Φ(x) for every x, including far in the lower tail
// where Φ(x) underflows: for x < −37 it uses the asymptotic (Laplace) series
// ln Φ(x) = −x²/2 − ln(−x) − ½ln(2π) + ln(1 − 1/x² + 3/x⁴ − 15/x⁶ + …),
// Abramowitz & Stegun 26.2.12, truncated where its terms stop decreasing;
// at |x| ≥ 37 the truncation error is below 1e-20.
func LogNormCDF(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return math.NaN()
	case math.IsInf(x, 1):
		return 0
	case math.IsInf(x, -1):
		return math.Inf(-1)
	case x > 0:
		// Φ(x) = 1 − Φ(−x) with Φ(−x) < ½: log1p keeps full precision.
		return math.Log1p(-0.5 * math.Erfc(x/math.Sqrt2))
	case x >= logCDFAsymptotic:
		return math.Log(0.5 * math.Erfc(-x/math.Sqrt2))
	}
	x2 := x * x
	// Series 1 − 1/x² + 3/x⁴ − … : term_k = term_{k−1}·(−(2k−1)/x²).
	sum, term := 1.0, 1.0
	for k := 1; k < 40; k++ {
		next := -term * float64(2*k-1) / x2
		if math.Abs(next) >= math.Abs(term) {
			break
		}
		term = next
		sum += term
		if math.Abs(term) < 1e-18 {
			break
		}
	}
	return -0.5*x2 - math.Log(-x) - halfLog2Pi + math.Log(sum)
}

// LogNormPDF returns ln φ(x) = −x²/2 − ½ln(2π).
func LogNormPDF(x float64) float64 { return -0.5*x*x - halfLog2Pi }
