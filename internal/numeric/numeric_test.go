package numeric

import (
	"math"
	"testing"
)

func TestLogNormCDF(t *testing.T) {
	// Reference values from mpmath at 50 digits: log(ncdf(x)).
	cases := []struct{ x, want float64 }{
		{0, -0.69314718055994530942},
		{-1, -1.8410216450092635058},
		{1, -0.17275377902344988953},
		{6, -9.8658764552437573169e-10},
		{-10, -53.231285150512470578},
		{-36.9, -685.33288316535061216},
		{-37.1, -692.73828071562329266},
		{-50, -1254.8313611394199013},
		{-1000, -500007.82669481218431},
		{-1e10, -5.0000000000000000e+19},
	}
	for _, c := range cases {
		got := LogNormCDF(c.x)
		if rel := math.Abs(got-c.want) / math.Abs(c.want); rel > 2e-14 {
			t.Errorf("LogNormCDF(%g) = %.17g, want %.17g (rel err %.2g)", c.x, got, c.want, rel)
		}
	}
	if LogNormCDF(math.Inf(1)) != 0 || !math.IsInf(LogNormCDF(math.Inf(-1)), -1) {
		t.Error("LogNormCDF at ±Inf")
	}
	// Continuity across the switch points.
	for _, x0 := range []float64{-37, 0} {
		a, b := LogNormCDF(math.Nextafter(x0, -10)), LogNormCDF(math.Nextafter(x0, 10))
		if math.Abs(a-b) > 1e-13*math.Abs(a) {
			t.Errorf("LogNormCDF jumps at %g: %.17g vs %.17g", x0, a, b)
		}
	}
}

func TestLogSpace(t *testing.T) {
	if got := LogAddExp(1000, 1000); math.Abs(got-(1000+math.Ln2)) > 1e-12 {
		t.Errorf("LogAddExp(1000,1000) = %v", got)
	}
	if got := LogSumExp([]float64{-1e4, -1e4 + math.Log(3)}); math.Abs(got-(-1e4+math.Log(4))) > 1e-9 {
		t.Errorf("LogSumExp = %v", got)
	}
	if got := Log1mExp(-1e-20); math.Abs(got-math.Log(1e-20)) > 1e-12 {
		t.Errorf("Log1mExp(-1e-20) = %v", got)
	}
	if got := Log1mExp(-50); math.Abs(got+math.Exp(-50)) > 1e-30 {
		t.Errorf("Log1mExp(-50) = %v", got)
	}
	if got := LogSubExp(math.Log(5), math.Log(3)); math.Abs(got-math.Log(2)) > 1e-15 {
		t.Errorf("LogSubExp = %v", got)
	}
	if !math.IsNaN(LogSubExp(1, 2)) || !math.IsInf(LogSubExp(2, 2), -1) {
		t.Error("LogSubExp edge cases")
	}
	var acc, acc2 LogSumAcc
	xs := []float64{-3, 700, 2, 710, -1e6}
	for i, x := range xs {
		if i < 2 {
			acc.Add(x)
		} else {
			acc2.Add(x)
		}
	}
	acc.Merge(acc2)
	if got, want := acc.Log(), LogSumExp(xs); math.Abs(got-want) > 1e-12 {
		t.Errorf("LogSumAcc = %v, want %v", got, want)
	}
	var empty LogSumAcc
	if !math.IsInf(empty.Log(), -1) {
		t.Error("empty LogSumAcc")
	}
}

func TestRoot(t *testing.T) {
	x, err := Root(func(x float64) float64 { return x*x*x - 2 }, 0, 2, 1e-15)
	if err != nil || math.Abs(x-math.Cbrt(2)) > 1e-14 {
		t.Errorf("Root cbrt 2 = %v, %v", x, err)
	}
	x, err = Root(math.Cos, 0, 3, 0)
	if err != nil || math.Abs(x-math.Pi/2) > 1e-15 {
		t.Errorf("Root cos = %v, %v", x, err)
	}
	// A step: any point of the jump is a sign change.
	x, err = Root(func(x float64) float64 {
		if x < 0.3 {
			return -1
		}
		return 1
	}, 0, 1, 1e-12)
	if err != nil || math.Abs(x-0.3) > 1e-11 {
		t.Errorf("Root step = %v, %v", x, err)
	}
	if _, err := Root(func(x float64) float64 { return x*x + 1 }, -1, 1, 0); err != ErrNoBracket {
		t.Errorf("unbracketed: err = %v", err)
	}
	if _, err := Root(func(x float64) float64 { return math.NaN() }, -1, 1, 0); err == nil {
		t.Error("NaN function: no error")
	}
}

func TestGolden(t *testing.T) {
	// A unimodal function with its maximum at 1/e: x·ln(1/x).
	x, fx := GoldenMax(func(x float64) float64 { return -x * math.Log(x) }, 0.01, 1, 200, 1e-15)
	if math.Abs(x-1/math.E) > 1e-7 || math.Abs(fx-1/math.E) > 1e-14 {
		t.Errorf("GoldenMax = (%g, %g), want (1/e, 1/e)", x, fx)
	}
	x, fx = GoldenMin(func(x float64) float64 { return (x - 2) * (x - 2) }, -5, 10, 200, 0)
	if math.Abs(x-2) > 1e-7 || fx > 1e-14 {
		t.Errorf("GoldenMin = (%g, %g), want (2, 0)", x, fx)
	}
	// NaN regions are never chosen.
	x, _ = GoldenMax(func(x float64) float64 {
		if x < 0.5 {
			return math.NaN()
		}
		return -math.Abs(x - 0.7)
	}, 0, 1, 100, 0)
	if math.Abs(x-0.7) > 1e-6 {
		t.Errorf("GoldenMax with NaN region: %g", x)
	}
}
