package numeric

import (
	"math"
	"testing"
)

// References: mpmath at 50 digits, log(binomial(n, k)), log1p(exp(x)) and
// log(expm1(x)).
func TestLogBinomial(t *testing.T) {
	cases := []struct {
		n, k int
		want float64
		tol  float64 // absolute: lgamma's error grows with ln Γ(n+1)
	}{
		{10, 3, 4.7874917427820459942, 1e-14},
		{1000, 29, 128.65795122059509961, 1e-12},
		{20000, 10000, 13857.766063569993402, 1e-9},
		{200, 0, 0, 0},
		{5, 5, 0, 0},
	}
	for _, c := range cases {
		if got := LogBinomial(c.n, c.k); math.Abs(got-c.want) > c.tol {
			t.Errorf("LogBinomial(%d, %d) = %.17g, want %.17g", c.n, c.k, got, c.want)
		}
	}
	// Exact small values, computed by Pascal's rule.
	row := []float64{1}
	for n := 1; n <= 60; n++ {
		next := make([]float64, n+1)
		next[0], next[n] = 1, 1
		for k := 1; k < n; k++ {
			next[k] = row[k-1] + row[k]
		}
		row = next
		for k, c := range row {
			if got := LogBinomial(n, k); math.Abs(got-math.Log(c)) > 1e-13*math.Max(1, math.Log(c)) {
				t.Fatalf("LogBinomial(%d, %d) = %.17g, want ln %g", n, k, got, c)
			}
		}
	}
	if !math.IsInf(LogBinomial(3, 4), -1) || !math.IsInf(LogBinomial(3, -1), -1) {
		t.Error("LogBinomial outside 0 ≤ k ≤ n must be −Inf")
	}
}

func TestLog1pExp(t *testing.T) {
	cases := []struct{ x, want float64 }{
		{-800, 0}, // 3.7e-348 underflows
		{-40, 4.2483542552915889863e-18},
		{-1e-3, 0.69264730555994010107},
		{0, 0.69314718055994530942},
		{1e-3, 0.69364730555994010109},
		{20, 20.00000000206115362},
		{40, 40.000000000000000004},
		{800, 800},
	}
	for _, c := range cases {
		got := Log1pExp(c.x)
		if d := math.Abs(got - c.want); d > 1e-15*math.Max(math.Abs(c.want), 1e-300) && d > 1e-320 {
			t.Errorf("Log1pExp(%g) = %.17g, want %.17g", c.x, got, c.want)
		}
	}
}

func TestLogExpm1(t *testing.T) {
	cases := []struct{ x, want float64 }{
		{1e-20, -46.05170185988091368},
		{1e-3, -6.9072552373154707326},
		{0.5, -0.43275212956718857189},
		{30, 29.999999999999906424},
		{40, 39.999999999999999996},
		{800, 800},
	}
	for _, c := range cases {
		if got := LogExpm1(c.x); math.Abs(got-c.want) > 2e-15*math.Abs(c.want) {
			t.Errorf("LogExpm1(%g) = %.17g, want %.17g", c.x, got, c.want)
		}
	}
	if !math.IsInf(LogExpm1(0), -1) || !math.IsNaN(LogExpm1(-1)) {
		t.Error("LogExpm1 at 0 must be −Inf and NaN below")
	}
}

// LogFactorial is ln Γ(n+1) inside and beyond its table; mpmath:
// log(factorial(40000)) = 383871.60658182602.
func TestLogFactorial(t *testing.T) {
	if LogFactorial(0) != 0 || LogFactorial(1) != 0 {
		t.Error("ln 0! and ln 1! must be 0")
	}
	if got := LogFactorial(5); math.Abs(got-math.Log(120)) > 1e-15 {
		t.Errorf("ln 5! = %.17g", got)
	}
	if got := LogFactorial(40000); math.Abs(got-383871.60658182602) > 1e-9 {
		t.Errorf("ln 40000! = %.17g", got)
	}
	a, b := LogFactorial(logFactTableSize-1), LogFactorial(logFactTableSize)
	if d := b - a; math.Abs(d-math.Log(logFactTableSize)) > 1e-9 {
		t.Errorf("table edge: ln(n!) − ln((n−1)!) = %.17g, want ln n", d)
	}
}
