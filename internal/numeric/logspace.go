package numeric

import "math"

// LogAddExp returns log(eᵃ + eᵇ) without overflow or underflow.
func LogAddExp(a, b float64) float64 {
	if math.IsInf(a, -1) {
		return b
	}
	if math.IsInf(b, -1) {
		return a
	}
	if a < b {
		a, b = b, a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// LogSumExp returns log Σ exp(xs[i]); it is −Inf for an empty slice.
func LogSumExp(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		if x > m {
			m = x
		}
	}
	if math.IsInf(m, 0) {
		return m
	}
	var s float64
	for _, x := range xs {
		s += math.Exp(x - m)
	}
	return m + math.Log(s)
}

// Log1mExp returns log(1 − eˣ) for x ≤ 0, choosing between log(−expm1(x))
// and log1p(−eˣ) so that neither branch loses precision (Mächler 2012).
// It returns −Inf at x = 0 and NaN for x > 0.
func Log1mExp(x float64) float64 {
	switch {
	case x > 0:
		return math.NaN()
	case x > -math.Ln2:
		return math.Log(-math.Expm1(x))
	default:
		return math.Log1p(-math.Exp(x))
	}
}

// LogSubExp returns log(eᵃ − eᵇ) for a ≥ b; −Inf when a = b and NaN when a < b.
func LogSubExp(a, b float64) float64 {
	if math.IsInf(b, -1) {
		return a
	}
	if a < b {
		return math.NaN()
	}
	if a == b {
		return math.Inf(-1)
	}
	return a + Log1mExp(b-a)
}

// LogSumAcc accumulates log Σ exp(xᵢ) one term at a time, keeping a running
// maximum so that no term under- or overflows. The zero value is an empty sum.
type LogSumAcc struct {
	max float64
	sum float64 // Σ exp(xᵢ − max)
	n   int
}

// Add adds exp(x) to the sum.
func (a *LogSumAcc) Add(x float64) {
	if math.IsInf(x, -1) {
		return
	}
	if a.n == 0 {
		a.max, a.sum, a.n = x, 1, 1
		return
	}
	a.n++
	if x <= a.max {
		a.sum += math.Exp(x - a.max)
		return
	}
	a.sum = a.sum*math.Exp(a.max-x) + 1
	a.max = x
}

// Merge adds another accumulator's sum into a.
func (a *LogSumAcc) Merge(b LogSumAcc) {
	if b.n == 0 {
		return
	}
	if a.n == 0 {
		*a = b
		return
	}
	if b.max <= a.max {
		a.sum += b.sum * math.Exp(b.max-a.max)
	} else {
		a.sum = a.sum*math.Exp(a.max-b.max) + b.sum
		a.max = b.max
	}
	a.n += b.n
}

// Log returns log of the accumulated sum (−Inf when empty).
func (a LogSumAcc) Log() float64 {
	if a.n == 0 {
		return math.Inf(-1)
	}
	return a.max + math.Log(a.sum)
}
