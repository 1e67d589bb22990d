package closedform

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/internal/numeric"
	"github.com/mcmcaudit/mcmcaudit/stats"

	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
)

// The four bounds are ordered — Chernoff ≤ Tail (Φ(−z) ≤ e^(−z²/2) for
// z ≥ 0), Tail ≤ Threshold (the paper's event is one half-line),
// Threshold ≤ Profile (the profile is the supremum over all events) — and
// finite, for n from 2 to 10⁶ (to 10⁹ under -tags slow) and step sizes
// from the paper's 2/s² to ones where λ^n is tiny. The comparisons allow
// the stated errors.
func TestCurvesOrderedAndFinite(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	type stepSize struct {
		name string
		eta  func(c Counterexample) float64
	}
	steps := []stepSize{
		{"2/s²", func(c Counterexample) float64 { return c.EtaScaled(2) }},
		{"1/s²", func(c Counterexample) float64 { return c.EtaScaled(1) }},
		{"λ^n = e^-1.5", func(c Counterexample) float64 { return 3 / c.S() / float64(c.N) }},
		{"λ = 0.75", func(c Counterexample) float64 { return 0.5 / c.S() }},
	}
	checked := 0
	ns := []int{2, 3, 10, 100, 10000, 1000000}
	if testutil.SlowSuite {
		ns = append(ns, 17864389, 1000000000) // the paper's n and beyond: seconds each
	}
	for _, n := range ns {
		for _, st := range steps {
			for _, cScale := range []float64{1, 1e3, 1e7, 1e10} {
				c := Counterexample{N: n, Alpha: 2, Beta: 1, XH: 1.8, C: cScale}
				c.Eta = st.eta(c)
				if c.Validate() != nil {
					continue // η = 2/s² needs s > 1
				}
				for _, e := range []int{1, 4, 25} {
					ec, err := c.Curves(e, 1e-3)
					if err != nil {
						t.Fatal(err)
					}
					tag := fmt.Sprintf("n=%d η=%s c=%g epoch %d", n, st.name, cScale, e)
					bs := []Bound{ec.Chernoff, ec.Tail, ec.Threshold, ec.Profile}
					for i, b := range bs {
						if math.IsNaN(b.Epsilon) || math.IsInf(b.Epsilon, 0) || b.Epsilon < 0 ||
							math.IsNaN(b.Err) || math.IsInf(b.Err, 0) || b.Err > 1e-9*math.Max(1, b.Epsilon) {
							t.Errorf("%s: bound %d = %g ± %g", tag, i, b.Epsilon, b.Err)
						}
					}
					for i := 0; i+1 < len(bs); i++ {
						if bs[i].Epsilon > bs[i+1].Epsilon+bs[i].Err+bs[i+1].Err {
							t.Errorf("%s: bound %d = %.15g above bound %d = %.15g", tag, i, bs[i].Epsilon, i+1, bs[i+1].Epsilon)
						}
					}
					checked++
				}
			}
		}
	}
	if checked < 200 {
		t.Errorf("only %d configurations checked", checked)
	}
}

// When every component of the mixture is the same Gaussian shifted by μσ,
// the pair is μ-GDP: half-lines are optimal and both Threshold and Profile
// must equal the GDP ε(δ) — SciPy brentq values (Dong, Roth & Su 2019's
// profile; docs/derivations/interim-region.md), and stats.GDPEpsilon in
// between.
func TestCurvesGDPLimit(t *testing.T) {
	cases := []struct{ mu, delta, want float64 }{
		{0.5, 1e-5, 1.993091404},
		{1, 1e-5, 4.377178096},
		{2, 1e-5, 9.997256146},
		{4, 1e-5, 24.38161088},
		{8.41, 1e-3, 0},
		{30, 1e-3, 0},
	}
	const sd = 0.37
	for _, c := range cases {
		want := c.want
		if want == 0 {
			want, _ = stats.GDPEpsilon(c.mu, c.delta)
		}
		q := mixture{grid: geomGrid{n: 5000, L: 2e-4}, d0: c.mu * sd, v0: sd * sd, v: sd * sd,
			uMin: math.Exp(-4999 * 2e-4), logN: math.Log(5000)}
		th := q.thresholdBound(c.delta)
		pr, exact := q.profileBound(c.delta, Bound{})
		if !exact {
			t.Errorf("μ = %g: equal variances not recognised as concave", c.mu)
		}
		for _, b := range []struct {
			name string
			eps  float64
		}{{"Threshold", th.Epsilon}, {"Profile", pr.Epsilon}} {
			if relDiff(b.eps, want) > 2e-9 {
				t.Errorf("μ = %g, δ = %g: %s = %.12g, GDP ε(δ) = %.12g", c.mu, c.delta, b.name, b.eps, want)
			}
		}
	}
}

// A small configuration where the variances differ enough that the optimal
// event is two half-lines, against an independent evaluation with mpmath
// at 25 digits: moments by the per-step recursion, the hockey-stick integral
// by mp.quad split at the level-set roots, ε(δ) by 45 bisection steps on
// [0, 1] (/usr/bin/python3, mpmath 1.2). Reference values:
// tail 0.040438368463148149; profile 0.5511163908079908 (D2 over D1;
// 0.05855049963848558 in the other direction); Chernoff 0.
func TestCurvesMpmathReference(t *testing.T) {
	c := Counterexample{N: 5, Alpha: 2, Beta: 1, XH: 1.8, C: 1, Eta: 0.05}
	ec, err := c.Curves(3, 1e-3)
	if err != nil {
		t.Fatal(err)
	}
	if ec.Chernoff.Epsilon != 0 {
		t.Errorf("Chernoff = %g, want 0", ec.Chernoff.Epsilon)
	}
	if d := math.Abs(ec.Tail.Epsilon - 0.040438368463148149); d > 1e-13 {
		t.Errorf("Tail = %.17g, mpmath 0.040438368463148149", ec.Tail.Epsilon)
	}
	// The mpmath bisection resolves ε to 2^-45 ≈ 3e-14.
	if d := math.Abs(ec.Profile.Epsilon - 0.5511163908079908); d > 1e-12 {
		t.Errorf("Profile = %.17g, mpmath 0.5511163908079908", ec.Profile.Epsilon)
	}
	if len(ec.Profile.Set) != 2 || ec.Profile.D1First {
		t.Errorf("Profile event = %v (D1 first %v), want two half-lines, D2 first", ec.Profile.Set, ec.Profile.D1First)
	}
	if !(ec.Threshold.Epsilon < ec.Profile.Epsilon-0.005) {
		t.Errorf("Threshold %.6g should be well below Profile %.6g here", ec.Threshold.Epsilon, ec.Profile.Epsilon)
	}
}

// Heller & Fetaya's Fig. 1 parameters with c = 2e7, η = 1/s²: Chernoff and
// Tail at epochs 48 and 50 against a NumPy/SciPy evaluation that sums all
// 17,864,389 orders directly (scipy.special.log_ndtr; /usr/bin/python3).
func TestCurvesFig1Reference(t *testing.T) {
	c := fig1()
	ref := map[int][2]float64{
		48: {34.670584719241148, 37.732638533030091},
		50: {35.059561760857342, 38.126940911856110},
	}
	for e, r := range ref {
		ec, err := c.Curves(e, 1e-3)
		if err != nil {
			t.Fatal(err)
		}
		if d := math.Abs(ec.Chernoff.Epsilon - r[0]); d > 1e-11 {
			t.Errorf("epoch %d: Chernoff = %.15g, NumPy %.15g", e, ec.Chernoff.Epsilon, r[0])
		}
		if d := math.Abs(ec.Tail.Epsilon - r[1]); d > 1e-11 {
			t.Errorf("epoch %d: Tail = %.15g, NumPy %.15g", e, ec.Tail.Epsilon, r[1])
		}
	}
}

// At the paper's n the engine against the term-by-term sum over all
// 17,864,389 orders (compensated summation), for the mixture's upper tail
// at two thresholds.
func TestFig1TailMatchesDirectSum(t *testing.T) {
	testutil.Slow(t)
	if testing.Short() {
		t.Skip("sums 3.6e7 terms")
	}
	m, _ := fig1().Moments(48)
	q := m.mixture()
	for _, tau := range []float64{0, -q.d0} {
		got, e := q.logCDF(tau, true)
		want := q.grid.directLogSum(func(u float64) (float64, float64) {
			return numeric.LogNormCDF(-(tau + q.d0 + q.d1*u) / math.Sqrt(q.v0+q.v1*u*u)), 0
		}) - q.logN
		if d := math.Abs(got - want); d > e+1e-14 {
			t.Errorf("τ = %g: ln Q = %.16g, direct %.16g (diff %.2g, bound %.2g)", tau, got, want, d, e)
		}
	}
}

func TestCurvesInputErrors(t *testing.T) {
	good := fig1()
	cases := []struct {
		c    Counterexample
		want string
	}{
		{Counterexample{N: 0, Alpha: 2, Beta: 1, XH: 1.8, C: 1, Eta: 1e-3}, "n: must be"},
		{Counterexample{N: 10, Alpha: -1, Beta: 1, XH: 1.8, C: 1, Eta: 1e-3}, "alpha: must be"},
		{Counterexample{N: 10, Alpha: 2, Beta: 1, XH: 1.8, C: math.NaN(), Eta: 1e-3}, "c: must be"},
		{Counterexample{N: 10, Alpha: 2, Beta: 1, XH: 1.8, C: 1, Eta: 1}, "eta: must be in (0, 2/s)"},
		{Counterexample{N: 10, Alpha: 2, Beta: 1, XH: 1.8, C: 1, Eta: 0}, "eta: must be in (0, 2/s)"},
	}
	for _, c := range cases {
		if _, err := c.c.Curves(1, 1e-3); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want %q", c.c, err, c.want)
		}
	}
	if _, err := good.Curves(-1, 1e-3); err == nil || !strings.Contains(err.Error(), "epoch: must be ≥ 0") {
		t.Errorf("negative epoch: %v", err)
	}
	for _, d := range []float64{0, 1, -0.5, math.NaN()} {
		if _, err := good.Curves(3, d); err == nil || !strings.Contains(err.Error(), "delta: must be in (0, 1)") {
			t.Errorf("delta %g: %v", d, err)
		}
	}
	if _, err := good.CurveRange(5, 3, 1e-3); err == nil || !strings.Contains(err.Error(), "epochs: TO must be ≥ FROM") {
		t.Errorf("reversed range: %v", err)
	}
	// Epoch 0 is the prior draw on both sides: every bound is exactly 0.
	ec, err := good.Curves(0, 1e-3)
	if err != nil || ec.Chernoff.Epsilon != 0 || ec.Profile.Epsilon != 0 {
		t.Errorf("epoch 0: %+v, %v", ec, err)
	}
}

// δ ≥ 1/2 leaves nothing for the paper's event (P(θ > μ) = 1/2), but the
// other bounds still apply.
func TestCurvesLargeDelta(t *testing.T) {
	ec, err := fig1().Curves(48, 0.6)
	if err != nil {
		t.Fatal(err)
	}
	if ec.Chernoff.Epsilon != 0 || ec.Tail.Epsilon != 0 {
		t.Errorf("δ = 0.6: Chernoff %g, Tail %g, want 0", ec.Chernoff.Epsilon, ec.Tail.Epsilon)
	}
	if !(ec.Profile.Epsilon > 1) {
		t.Errorf("δ = 0.6: Profile = %g, want a positive bound", ec.Profile.Epsilon)
	}
}

// BenchmarkTailCurveFig1 computes the exact-tail curve (Tail) for the Fig. 1
// caption parameters (c = 2e7, η = 1/s²) over 70 epochs.
func BenchmarkTailCurveFig1(b *testing.B) {
	c := fig1()
	for i := 0; i < b.N; i++ {
		if _, err := c.TailCurve(1, 70, 1e-3); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCurveRangeFig1 computes all four curves over 70 epochs.
func BenchmarkCurveRangeFig1(b *testing.B) {
	c := fig1()
	for i := 0; i < b.N; i++ {
		if _, err := c.CurveRange(1, 70, 1e-3); err != nil {
			b.Fatal(err)
		}
	}
}

// Mixtures whose components are narrower than D1's Gaussian (not reachable
// with n x_h² β ≥ α, built directly here): ln p − ln q is not concave, the
// optimal events are unions of two half-lines or more, and the profile
// falls back to tabulating ℓ. The result must be valid — the hockey-stick
// integral (term-by-term quadrature) at ε_profile − 1e-7 is still ≥ δ —
// and, for these smooth cases, tight: at ε_profile + 1e-6 it is ≤ δ.
func TestProfileNotConcave(t *testing.T) {
	for _, cfg := range [][4]float64{{1, 0.5, 0.3, 0.1}, {0.2, 0.1, 0.5, 0.1}, {3, 1, 0.2, 0.3}} {
		q := mixture{grid: geomGrid{n: 3, L: 0.5}, d0: cfg[0], d1: cfg[1], v0: cfg[2], v1: cfg[3], v: 1,
			uMin: math.Exp(-1), logN: math.Log(3)}
		var ds, ss []float64
		for k := 0; k < 3; k++ {
			u := math.Exp(-0.5 * float64(k))
			ds = append(ds, cfg[0]+cfg[1]*u)
			ss = append(ss, math.Sqrt(cfg[2]+cfg[3]*u*u))
		}
		hs := hockeyStick(1, ds, ss)
		for _, d := range []float64{1e-3, 0.05} {
			th := q.thresholdBound(d)
			pr, exact := q.profileBound(d, Bound{})
			if exact {
				t.Errorf("%v: narrower components reported as concave", cfg)
			}
			if pr.Epsilon < th.Epsilon-1e-9 {
				t.Errorf("%v δ=%g: Profile %.10g below Threshold %.10g", cfg, d, pr.Epsilon, th.Epsilon)
			}
			if got := hs(pr.Epsilon - 1e-7); got < d {
				t.Errorf("%v δ=%g: δ(ε_profile − 1e-7) = %.10g < δ: Profile %.10g too large", cfg, d, got, pr.Epsilon)
			}
			if got := hs(pr.Epsilon + 1e-6); got > d {
				t.Errorf("%v δ=%g: δ(ε_profile + 1e-6) = %.10g > δ: Profile %.10g not tight", cfg, d, got, pr.Epsilon)
			}
		}
	}
}

// Beyond what float64 can carry (z > 1e100) the curves refuse with an
// error naming c instead of returning NaN; just below, they are finite with
// a relative error bound.
func TestCurvesHugeC(t *testing.T) {
	c := Counterexample{N: 100, Alpha: 2, Beta: 1, XH: 1.8, C: 1e100}
	c.Eta = c.EtaScaled(2)
	ec, err := c.Curves(2, 1e-3)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []Bound{ec.Chernoff, ec.Tail, ec.Threshold, ec.Profile} {
		if !(b.Epsilon > 1e190 && b.Epsilon < math.Inf(1)) || !(b.Err < 1e-12*b.Epsilon) {
			t.Errorf("c = 1e100: bound %g ± %g", b.Epsilon, b.Err)
		}
	}
	for _, cc := range []float64{1e150, 1e300} {
		c.C = cc
		if _, err := c.Curves(2, 1e-3); err == nil || !strings.HasPrefix(err.Error(), "c: too large for float64") {
			t.Errorf("c = %g: err = %v", cc, err)
		}
		if _, err := c.CurveRange(1, 3, 1e-3); err == nil {
			t.Errorf("c = %g: CurveRange accepted", cc)
		}
		if _, err := c.TailCurve(1, 3, 1e-3); err == nil {
			t.Errorf("c = %g: TailCurve accepted", cc)
		}
	}
}
