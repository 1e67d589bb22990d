package stats

import (
	"math"
	"strings"
	"testing"
)

// Wang, Balle & Kasiviswanathan 2019, Thm 9 for the Gaussian mechanism with
// replace-one sensitivity 2 and noise z (ε(j) = 2j/z²). References: the
// formula evaluated by mpmath at 50 digits with exact binomials.
func TestWORSubsampledRDPGaussianReferences(t *testing.T) {
	cases := []struct {
		q, z  float64
		alpha int
		want  float64
	}{
		{0.01, 1, 2, 0.010860441335991564},
		{0.01, 1, 8, 10.835969384744052},
		{0.01, 2, 16, 3.1340609222758499},
		{0.1, 3, 4, 0.051632238339488505},
		{0.001, 0.8, 8, 17.204443564100407},
		{0.05, 5, 12, 0.018253819778071834},
	}
	for _, c := range cases {
		base := func(j int) float64 { return 2 * float64(j) / (c.z * c.z) }
		got := WORSubsampledRDP(base, c.q, c.alpha)
		if !relClose(got, c.want, 1e-12) {
			t.Errorf("WORSubsampledRDP(q=%g, z=%g, α=%d) = %.17g, want %.17g", c.q, c.z, c.alpha, got, c.want)
		}
	}
	if got := WORSubsampledRDP(func(int) float64 { return 1 }, 0, 5); got != 0 {
		t.Errorf("q = 0 must give 0, got %g", got)
	}
	if got := WORSubsampledRDP(func(j int) float64 {
		if j == 4 {
			return math.Inf(1)
		}
		return 1
	}, 0.1, 5); !math.IsInf(got, 1) {
		t.Errorf("an infinite base RDP at j ≤ α must give +Inf, got %g", got)
	}
}

// At small q the bound is dominated by its first terms, which are checked by
// hand: with ε(j) = 0.02j, 4(e^{0.04}−1) < 2e^{0.04}, so
// ε′(α) = ln(1 + q²C(α,2)·4(e^{0.04}−1) + Σ_{j=3..6} 2q^jC(α,j)e^{0.02j(j−1)} + …)/(α−1),
// the omitted terms (j ≥ 7) being below 1e-10 of the sum for q ≤ 1e-3, α ≤ 20.
func TestWORSubsampledRDPLeadingTerms(t *testing.T) {
	base := func(j int) float64 { return float64(j) * 0.02 }
	binom := func(n, k int) float64 {
		r := 1.0
		for i := 0; i < k; i++ {
			r = r * float64(n-i) / float64(i+1)
		}
		return r
	}
	for _, q := range []float64{1e-4, 1e-3} {
		for _, a := range []int{2, 5, 20} {
			s := q * q * binom(a, 2) * 4 * math.Expm1(0.04)
			for j := 3; j <= min(a, 6); j++ {
				s += 2 * math.Pow(q, float64(j)) * binom(a, j) * math.Exp(0.02*float64(j*(j-1)))
			}
			want := math.Log1p(s) / float64(a-1)
			if got := WORSubsampledRDP(base, q, a); !relClose(got, want, 1e-9) {
				t.Errorf("q=%g α=%d: ε′ = %.15g, hand expansion %.15g", q, a, got, want)
			}
		}
	}
}

func gaussianTable(t *testing.T, rho float64, orders []int) RDPTable {
	t.Helper()
	tab, err := NewRDPTable(orders, func(a int) float64 { return float64(a) * rho })
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// The interpolated curve is an upper bound for a curve with convex (α−1)ε(α)
// (here the Gaussian's α·ρ), exact at the tabulated orders, +Inf beyond.
func TestRDPTableCurve(t *testing.T) {
	const rho = 0.3
	tab := gaussianTable(t, rho, []int{2, 5, 9})
	c := tab.Curve()
	for _, a := range []int{2, 5, 9} {
		if got := c(float64(a)); got != float64(a)*rho {
			t.Errorf("curve(%d) = %g, want %g", a, got, float64(a)*rho)
		}
	}
	for a := 1.01; a < 9; a += 0.07 {
		got, want := c(a), a*rho
		if got < want*(1-1e-15) {
			t.Fatalf("curve(%g) = %g understates the true RDP %g", a, got, want)
		}
	}
	// By hand at α = 3: K(2) = 1·0.6, K(5) = 4·1.5; K(3) ≤ 0.6 + (6 − 0.6)/3 = 2.4,
	// so ε(3) ≤ 2.4/2 = 1.2, below the monotone bound ε(5) = 1.5.
	if got := c(3); !relClose(got, 1.2, 1e-15) {
		t.Errorf("curve(3) = %.17g, want 1.2", got)
	}
	if got := c(1.5); got != 2*rho {
		t.Errorf("curve(1.5) = %g, want ε(2) = %g", got, 2*rho)
	}
	if !math.IsInf(c(9.5), 1) {
		t.Errorf("curve beyond the largest order must be +Inf, got %g", c(9.5))
	}
}

// ε(δ) over integer orders for the Gaussian α·ρ, ρ = 0.01, δ = 1e-5:
// α = 35 minimises 35ρ + ln(1e5)/34 (α = 34 gives 0.34 + ln(1e5)/33, larger).
func TestRDPTableEpsilonAndProfile(t *testing.T) {
	orders := make([]int, 0, 199)
	for a := 2; a <= 200; a++ {
		orders = append(orders, a)
	}
	tab := gaussianTable(t, 0.01, orders)
	eps, order, err := tab.Epsilon(1e-5, Mironov)
	want := 0.35 + math.Log(1e5)/34
	if err != nil || order != 35 || !relClose(eps, want, 1e-14) {
		t.Fatalf("Epsilon(1e-5) = %.17g at α = %d (%v), want %.17g at 35", eps, order, err, want)
	}
	// The profile is the inverse: δ(ε(δ)) = δ, and δ is non-increasing.
	if d := math.Exp(tab.LogDelta(eps, Mironov)); !relClose(d, 1e-5, 1e-10) {
		t.Errorf("Delta(Epsilon(1e-5)) = %g", d)
	}
	prev := 1.0
	for e := 0.0; e < 5; e += 0.01 {
		d := math.Exp(tab.LogDelta(e, Mironov))
		if d > prev || d < 0 || d > 1 {
			t.Fatalf("Delta(%g) = %g after %g", e, d, prev)
		}
		prev = d
	}
	if math.Exp(tab.LogDelta(0, Mironov)) != 1 {
		t.Errorf("Delta(0) = %g, want 1 (capped)", math.Exp(tab.LogDelta(0, Mironov)))
	}
	if _, _, err := tab.Epsilon(0, Mironov); err == nil || !strings.Contains(err.Error(), "delta") {
		t.Errorf("δ = 0 accepted: %v", err)
	}
	// Composition multiplies every value; k = 0 releases nothing.
	c := tab.Compose(10)
	if c.Eps[0] != 10*tab.Eps[0] || c.Orders[0] != 2 {
		t.Errorf("Compose(10) = %v", c.Eps[:2])
	}
	inf := RDPTable{Orders: []int{2}, Eps: []float64{math.Inf(1)}}
	if z := inf.Compose(0); z.Eps[0] != 0 {
		t.Errorf("Compose(0) of +Inf = %g, want 0", z.Eps[0])
	}
	if e, o, _ := inf.Epsilon(0.1, Mironov); !math.IsInf(e, 1) || o != 0 {
		t.Errorf("all-infinite table: ε = %g at %d", e, o)
	}
	// A table of zeros is not taken as "identical outputs" (a zero may be a
	// rounded tiny value): ε(δ) = ln(1/δ)/(α_max − 1) = ln(1e9)/199.
	zero := tab.Compose(0)
	if e, o, _ := zero.Epsilon(1e-9, Mironov); o != 200 || !relClose(e, math.Log(1e9)/199, 1e-15) {
		t.Errorf("zero table: ε = %g at %d", e, o)
	}
}

func TestRDPTableValidate(t *testing.T) {
	bad := []struct {
		tab  RDPTable
		want string
	}{
		{RDPTable{}, "orders"},
		{RDPTable{Orders: []int{1}, Eps: []float64{0}}, "≥ 2"},
		{RDPTable{Orders: []int{3, 3}, Eps: []float64{0, 0}}, "increasing"},
		{RDPTable{Orders: []int{2}, Eps: []float64{math.NaN()}}, "ε_RDP(2)"},
		{RDPTable{Orders: []int{2, 3}, Eps: []float64{0}}, "values"},
	}
	for _, b := range bad {
		if err := b.tab.Validate(); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("Validate(%v) = %v, want an error mentioning %q", b.tab, err, b.want)
		}
	}
}

func TestIntegerOrders(t *testing.T) {
	o := IntegerOrders(256, 10000, 1.05)
	if o[0] != 2 || o[254] != 256 || o[len(o)-1] != 10000 {
		t.Fatalf("grid ends: %d … %d … %d", o[0], o[254], o[len(o)-1])
	}
	for i := 1; i < len(o); i++ {
		if o[i] <= o[i-1] {
			t.Fatalf("not increasing at %d: %d, %d", i, o[i-1], o[i])
		}
		if i > 254 && float64(o[i]) > 1.06*float64(o[i-1])+1 {
			t.Fatalf("gap too wide at %d: %d → %d", i, o[i-1], o[i])
		}
	}
	small := IntegerOrders(256, 7, 1.05)
	if len(small) != 6 || small[5] != 7 {
		t.Errorf("IntegerOrders(256, 7) = %v", small)
	}
}
