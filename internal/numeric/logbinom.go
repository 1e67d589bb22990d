package numeric

import (
	"math"
	"sync"
)

// logFactTableSize is how many ln n! values LogFactorial keeps: enough for
// the Rényi orders (≤ 2·10⁴) the accountants sum over.
const logFactTableSize = 1 << 15

// logFactTable holds ln n! = ln Γ(n+1) for n < logFactTableSize, built once.
var logFactTable = sync.OnceValue(func() []float64 {
	t := make([]float64, logFactTableSize)
	for n := range t {
		t[n], _ = math.Lgamma(float64(n) + 1)
	}
	return t
})

// LogFactorial returns ln n! = ln Γ(n+1) for n ≥ 0 (math.Lgamma, tabulated
// for small n).
func LogFactorial(n int) float64 {
	if n < 0 {
		panic("numeric: LogFactorial of a negative number")
	}
	if n < logFactTableSize {
		return logFactTable()[n]
	}
	v, _ := math.Lgamma(float64(n) + 1)
	return v
}

// LogBinomial returns ln C(n, k) for 0 ≤ k ≤ n through LogFactorial, so it
// stays finite where C(n, k) itself overflows. It is −Inf when k < 0 or
// k > n (the coefficient is zero there).
func LogBinomial(n, k int) float64 {
	if k < 0 || k > n {
		return math.Inf(-1)
	}
	if k == 0 || k == n {
		return 0
	}
	return LogFactorial(n) - LogFactorial(k) - LogFactorial(n-k)
}

// Log1pExp returns ln(1 + eˣ) (the softplus) without overflow for large x
// and without losing the small result for very negative x.
func Log1pExp(x float64) float64 {
	switch {
	case x > 36:
		// e^{−x} < 2.4e-16: ln(1 + eˣ) = x + ln(1 + e^{−x}) = x to float64 precision.
		return x + math.Exp(-x)
	case x > 0:
		return x + math.Log1p(math.Exp(-x))
	default:
		return math.Log1p(math.Exp(x))
	}
}

// LogExpm1 returns ln(eˣ − 1) for x > 0, accurate for tiny x (where eˣ − 1 ≈ x)
// and for large x (where eˣ overflows). It is −Inf at 0 and NaN for x < 0.
func LogExpm1(x float64) float64 {
	switch {
	case x < 0 || math.IsNaN(x):
		return math.NaN()
	case x > 36:
		return x + Log1mExp(-x)
	default:
		return math.Log(math.Expm1(x))
	}
}
