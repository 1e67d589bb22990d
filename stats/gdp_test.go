package stats

import (
	"math"
	"testing"
)

// GDP references: docs/derivations/references.md §3, and mpmath at 50 digits (bisection of
// ncdf(−ε/μ+μ/2) − e^ε·ncdf(−ε/μ−μ/2) = δ to 250 halvings) for the rest.
func TestGDPEpsilonReferences(t *testing.T) {
	cases := []struct{ mu, delta, want float64 }{
		{0.5, 1e-5, 1.993091404},
		{1, 1e-5, 4.377178096},
		{2, 1e-5, 9.997256146},
		{4, 1e-5, 24.38161088},
		{1, 1e-100, 21.627508093648382},
		{0.1, 1e-300, 3.6937216583195968},
		{10, 1e-6, 96.717271963867699},
		{30, 1e-10, 639.93352320145039},
		{1, 0.3, 0.27661739889684955},
	}
	for _, c := range cases {
		got, err := GDPEpsilon(c.mu, c.delta)
		if err != nil || !relClose(got, c.want, sig8) {
			t.Errorf("GDPEpsilon(%g, %g) = %.15g, %v; want %.15g", c.mu, c.delta, got, err, c.want)
		}
	}
}

func TestGDPDeltaReferences(t *testing.T) {
	cases := []struct{ mu, eps, want, logWant float64 }{
		{1, 1, 0.1269367375, -2.0640664465003905},
		{1, 30, 4.7093263180975222e-193, -442.84937808230364},
		{0.5, 20, 0, -799.02292664378086}, // δ underflows float64; ln δ does not
		{3, 0, 0.86638559746228387, -0.1434252068611771},
	}
	for _, c := range cases {
		if got := GDPDelta(c.mu, c.eps); !relClose(got, c.want, sig8) {
			t.Errorf("GDPDelta(%g, %g) = %.15g, want %.15g", c.mu, c.eps, got, c.want)
		}
		if got := GDPLogDelta(c.mu, c.eps); !relClose(got, c.logWant, 1e-10) {
			t.Errorf("GDPLogDelta(%g, %g) = %.15g, want %.15g", c.mu, c.eps, got, c.logWant)
		}
	}
}

// ε(δ) is the inverse of δ(ε) and both are monotone.
func TestGDPMonotoneInverse(t *testing.T) {
	for _, mu := range []float64{0.01, 0.3, 1, 5, 50} {
		prev := math.Inf(1)
		for e := 0.0; e < 200; e += 0.5 {
			ld := GDPLogDelta(mu, e)
			if ld > prev+1e-12*math.Abs(prev) {
				t.Fatalf("μ=%g: ln δ(ε) increases at ε=%g: %g > %g", mu, e, ld, prev)
			}
			prev = ld
		}
		prevEps := -1.0
		for _, d := range []float64{0.5, 0.1, 1e-3, 1e-5, 1e-10, 1e-50, 1e-200} {
			eps, err := GDPEpsilon(mu, d)
			if err != nil {
				t.Fatal(err)
			}
			if eps < prevEps {
				t.Errorf("μ=%g: ε(δ) not monotone at δ=%g", mu, d)
			}
			prevEps = eps
			if eps > 0 {
				if back := GDPLogDelta(mu, eps); !relClose(back, math.Log(d), 1e-9) {
					t.Errorf("μ=%g δ=%g: δ(ε(δ)) = exp(%g)", mu, d, back)
				}
			}
		}
	}
	if e, _ := GDPEpsilon(0, 1e-5); e != 0 {
		t.Errorf("μ = 0: ε = %g", e)
	}
	if _, err := GDPEpsilon(-1, 1e-5); err == nil {
		t.Error("negative μ accepted")
	}
	if _, err := GDPEpsilon(1, 0); err == nil {
		t.Error("δ = 0 accepted by GDPEpsilon")
	}
}

// μ_lb for FP = 3/500, FN = 7/500 at 95% (α/2 per rate): docs/derivations/references.md §3.
func TestGDPMuLowerBound(t *testing.T) {
	c := Counts{FP: 3, Negatives: 500, FN: 7, Positives: 500}
	e, err := GDPBound(c, 1e-5, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if !relClose(e.Mu, 4.011191777, sig8) {
		t.Errorf("μ_lb = %.12g, want 4.011191777", e.Mu)
	}
	if !relClose(e.Epsilon, 24.47361963, sig8) {
		t.Errorf("ε(μ_lb) = %.12g, want 24.47361963", e.Epsilon)
	}
	if e.Assumption == "" || e.Kind != LowerBound {
		t.Errorf("GDP estimate not labelled: %+v", e)
	}
	// Symmetric in the two rates.
	e2, _ := GDPBound(Counts{FP: 7, Negatives: 500, FN: 3, Positives: 500}, 1e-5, 0.95)
	if !relClose(e2.Mu, e.Mu, 1e-14) {
		t.Errorf("μ_lb not symmetric: %g vs %g", e.Mu, e2.Mu)
	}
	// Worse than chance must give 0, never |·|.
	for _, c := range []Counts{{490, 500, 495, 500}, {250, 500, 250, 500}, {500, 500, 500, 500}} {
		mu, _, _, err := GDPMuLowerBound(c, 0.95)
		if err != nil || mu != 0 {
			t.Errorf("μ_lb(%+v) = %g, %v; want 0", c, mu, err)
		}
	}
	// Trade-off function inverts the bound: at μ_lb the CP rates sit on the curve.
	if got := GDPTradeoff(e.Mu, e.FPR); !relClose(got, e.FNR, 1e-9) {
		t.Errorf("G_μ(FPR_ub) = %g, want FNR_ub = %g", got, e.FNR)
	}
	// δ = 0 with μ_lb > 0: no finite ε.
	if z, _ := GDPBound(c, 0, 0.95); !math.IsInf(z.Epsilon, 1) {
		t.Errorf("GDP ε at δ = 0 = %g, want +Inf", z.Epsilon)
	}
}

func TestRDPCurveEpsilonMironov(t *testing.T) {
	// Gaussian, μ = 1, δ = 1e-5: ρ + 2·sqrt(ρ ln(1/δ)) with ρ = ½ (docs/derivations/references.md §4).
	eps, order, err := GaussianRDP(1).Epsilon(1e-5, Mironov, nil)
	rho := 0.5
	want := rho + 2*math.Sqrt(rho*math.Log(1e5))
	if err != nil || !relClose(eps, 5.2985259, 1e-8) || !relClose(eps, want, 1e-12) {
		t.Errorf("Epsilon(Gauss μ=1) = %.15g, %v; want %.15g", eps, err, want)
	}
	if wantOrder := 1 + math.Sqrt(math.Log(1e5)/rho); !relClose(order, wantOrder, 1e-5) {
		t.Errorf("optimal order = %g, want %g", order, wantOrder)
	}
	// Integer orders only: the minimum over the list, checked by hand.
	orders := []float64{2, 3, 4, 5, 6, 7, 8}
	eps, order, err = GaussianRDP(1).Epsilon(1e-5, Mironov, orders)
	best := math.Inf(1)
	for _, a := range orders {
		best = math.Min(best, a*rho+math.Log(1e5)/(a-1))
	}
	if err != nil || eps != best || order != 6 {
		t.Errorf("Epsilon at integer orders = %g at %g, want %g at 6", eps, order, best)
	}
	if _, _, err := GaussianRDP(1).Epsilon(1e-5, Mironov, []float64{1}); err == nil {
		t.Error("order 1 accepted")
	}
	if _, _, err := GaussianRDP(1).Epsilon(0, Mironov, orders); err == nil {
		t.Error("δ = 0 accepted")
	}
}

// Rényi divergence references: mpmath quadrature of
// ln ∫ p^ν q^{1−ν} / (ν−1) at 50 digits.
func TestRenyiGaussian(t *testing.T) {
	cases := []struct{ nu, m1, s1, m2, s2, want float64 }{
		{2, 0, 1, 1, 1, 1.0},
		{3.5, 0.3, 1.2, -0.4, 1.5, 0.29535756940136825},
		{1.5, 1, 1, 1, 0.9, 0.019391189314650484},
		{10, 0, 1, 0, 1.0000001, 9.9999863450306779e-14},
	}
	for _, c := range cases {
		if got := RenyiGaussian(c.nu, c.m1, c.s1, c.m2, c.s2); !relClose(got, c.want, 1e-9) {
			t.Errorf("RenyiGaussian%v = %.17g, want %.17g", c, got, c.want)
		}
	}
	// σ*² ≤ 0: infinite divergence (ν = 3, σ1 = 2, σ2 = 1: 3 − 2·4 < 0).
	if got := RenyiGaussian(3, 0, 2, 0, 1); !math.IsInf(got, 1) {
		t.Errorf("σ*² < 0 gives %g", got)
	}
}
