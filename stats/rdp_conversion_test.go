package stats

import (
	"math"
	"testing"
)

// Reference values of the Balle et al. 2020, Thm 21 conversion for the
// Gaussian curve α·μ²/2, from mpmath at 40 digits: ε(α) = αμ²/2 +
// ln((α−1)/α) − (ln δ + ln α)/(α−1), minimised by findroot on dε/dα (real
// orders) and by enumeration of α = 2…199 (integer orders). The profile form
// is exp((α−1)(αμ²/2 − ε) + (α−1)ln(1 − 1/α) − ln α), minimised over
// α = 2…399. Mironov's conversion at δ = 1e-5 gives 5.2985 (μ = 1) and
// 8.3228 (μ = 1.5; 8.3376 at integer orders); the exact GDP ε is 4.37718 and
// 7.05141.
func TestBBGHSReference(t *testing.T) {
	for _, c := range []struct {
		mu, real, integer float64
		order             float64
	}{
		{1, 4.728386984943313900, 4.752728336819822311, 5},
		{1.5, 7.587861607718193186, 7.587861628831665006, 4},
	} {
		e, _, err := GaussianRDP(c.mu).Epsilon(1e-5, Improved, nil)
		if err != nil || !relClose(e, c.real, 1e-10) {
			t.Errorf("μ = %g: continuous %.17g, %v; want %.17g", c.mu, e, err, c.real)
		}
		var orders []float64
		for a := 2; a < 200; a++ {
			orders = append(orders, float64(a))
		}
		e, a, err := GaussianRDP(c.mu).Epsilon(1e-5, Improved, orders)
		if err != nil || !relClose(e, c.integer, 1e-13) || a != c.order {
			t.Errorf("μ = %g: integer orders %.17g at %g, %v; want %.17g at %g", c.mu, e, a, err, c.integer, c.order)
		}
	}
	var ints []float64
	for a := 2; a < 400; a++ {
		ints = append(ints, float64(a))
	}
	for _, c := range []struct{ mu, eps, want float64 }{
		{1, 2, 0.054500657951324788385}, {1.5, 5, 0.0057443270861810385018},
	} {
		if got := math.Exp(GaussianRDP(c.mu).LogDelta(c.eps, Improved, ints)); !relClose(got, c.want, 1e-12) {
			t.Errorf("profile μ = %g, ε = %g: %.17g, want %.17g", c.mu, c.eps, got, c.want)
		}
	}
}

// The improved conversion is a valid bound: for the Gaussian mechanism
// (μ-GDP, exactly (α, αμ²/2)-RDP; Mironov 2017, Prop. 7) its δ(ε) at every
// single order is never below the exact profile stats.GDPDelta (Dong, Roth
// & Su 2019, Cor. 2.13, an independent closed form), and its ε(δ) never
// below stats.GDPEpsilon. Exact ε(1e-5) from mpmath bisection: μ = 0.5:
// 1.9930914044151196, 1: 4.3771780956812246, 1.5: 7.0514132237939579,
// 3: 16.675494402828164.
func TestImprovedConversionAboveExactGaussian(t *testing.T) {
	exact := map[float64]float64{0.5: 1.9930914044151196, 1: 4.3771780956812246, 1.5: 7.0514132237939579, 3: 16.675494402828164}
	for _, mu := range []float64{0.05, 0.5, 1, 1.5, 3, 10} {
		rho := mu * mu / 2
		for _, eps := range []float64{0, 0.05, 0.5, 1, 2, 5, 10, 30} {
			want := GDPDelta(mu, eps)
			for _, a := range DefaultOrders {
				got := math.Exp(Improved.OrderLogDelta(a*rho, a, eps))
				if got < want*(1-1e-12) {
					t.Fatalf("μ = %g, ε = %g, α = %g: δ = %.17g below the exact %.17g", mu, eps, a, got, want)
				}
			}
		}
		for _, d := range []float64{1e-12, 1e-5, 1e-2, 0.3} {
			e, _, err := GaussianRDP(mu).Epsilon(d, Improved, nil)
			ex, _ := GDPEpsilon(mu, d)
			if err != nil || e < ex*(1-1e-12) {
				t.Errorf("μ = %g, δ = %g: improved ε %.17g below the exact %.17g (%v)", mu, d, e, ex, err)
			}
			if d == 1e-5 && exact[mu] != 0 && !relClose(ex, exact[mu], 1e-10) {
				t.Errorf("μ = %g: GDPEpsilon %.17g, mpmath %.17g", mu, ex, exact[mu])
			}
		}
	}
}

// The improved conversion is never worse than Mironov's, order by order and
// after minimisation, on the Gaussian curve and on a tabulated subsampled
// curve; at the 1.5-GDP of full-batch DP-SGLD it moves ε(1e-5) from 8.34
// (Mironov at integer orders) to 7.59 against the exact 7.05.
func TestImprovedConversionNeverWorse(t *testing.T) {
	for _, a := range DefaultOrders {
		for _, r := range []float64{0, 1e-6, 0.3, 5, 100} {
			for _, d := range []float64{1e-12, 1e-5, 0.1, 0.9} {
				imp := Improved.OrderEpsilon(r, a, d)
				mir := math.Max(0, Mironov.OrderEpsilon(r, a, d))
				if imp > mir {
					t.Fatalf("α = %g, r = %g, δ = %g: improved %g above Mironov %g", a, r, d, imp, mir)
				}
			}
			for _, e := range []float64{0, 0.5, 3} {
				mir := math.Min(0, -(a-1)*(e-r))
				if imp := Improved.OrderLogDelta(r, a, e); imp > mir {
					t.Fatalf("α = %g, r = %g, ε = %g: improved ln δ %g above Mironov %g", a, r, e, imp, mir)
				}
			}
		}
	}
	tab, err := NewRDPTable(IntegerOrders(256, 10000, 1.05), func(a int) float64 {
		return 900 * WORSubsampledRDP(func(j int) float64 { return 2 * float64(j) / 5 }, 0.02, a)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []float64{1e-10, 1e-5, 1e-2} {
		mir, _, _ := tab.Epsilon(d, Mironov)
		imp, _, _ := tab.Epsilon(d, Improved)
		if !(imp < mir) {
			t.Errorf("table δ = %g: improved %g, Mironov %g", d, imp, mir)
		}
		if back := math.Exp(tab.LogDelta(imp, Improved)); !relClose(back, d, 1e-9) {
			t.Errorf("table δ = %g: δ(ε(δ)) = %g", d, back)
		}
		prof := tab.Profile(Improved)
		for _, e := range []float64{0, imp / 2, imp, 2 * imp} {
			if got, want := prof(e), math.Exp(tab.LogDelta(e, Improved)); !relClose(got, want, 1e-13) {
				t.Errorf("Profile(%g) = %g, exp(LogDelta) %g", e, got, want)
			}
		}
		if math.Exp(tab.LogDelta(imp, Improved)) > math.Exp(tab.LogDelta(imp, Mironov)) {
			t.Errorf("table δ = %g: improved profile above Mironov's", d)
		}
	}
	var ints []float64
	for a := 2; a <= 256; a++ {
		ints = append(ints, float64(a))
	}
	mir, _, _ := GaussianRDP(1.5).Epsilon(1e-5, Mironov, ints)
	imp, _, _ := GaussianRDP(1.5).Epsilon(1e-5, Improved, ints)
	if !relClose(mir, 8.3376418216567428, 1e-12) || !relClose(imp, 7.5878616288316650, 1e-12) {
		t.Errorf("1.5-GDP at integer orders: Mironov %.17g, improved %.17g", mir, imp)
	}
	if _, _, err := GaussianRDP(1).Epsilon(1e-5, Improved, []float64{1}); err == nil {
		t.Error("order 1 accepted")
	}
	if _, _, err := GaussianRDP(1).Epsilon(0, Improved, ints); err == nil {
		t.Error("δ = 0 accepted")
	}
	if e, o, _ := (RDPTable{Orders: []int{2}, Eps: []float64{math.Inf(1)}}).Epsilon(0.1, Improved); !math.IsInf(e, 1) || o != 0 {
		t.Errorf("all-Inf table: %g at %d", e, o)
	}
}
