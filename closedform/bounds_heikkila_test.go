package closedform

import (
	"math"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/stats"
)

// Heikkilä et al. eq. (21) and (22): references from mpmath at 50 digits
// evaluating the printed formulas (exact binomials, no log-space tricks).
func TestHeikkilaFormulas(t *testing.T) {
	for _, c := range []struct {
		b     int
		alpha float64
		want  float64
	}{
		{1000, 2, 0.35813916224712742},
		{1000, 29, 0.085511274999322273},
		{1000, 150.5, 1.2256498833105571},
		{100, 3, 0.3095047628085477},
		{1000, 199, 79.617629960977545},
	} {
		if got := HeikkilaStepRDP(c.b, c.alpha); !withinRel(got, c.want, 1e-13) {
			t.Errorf("eq. 21 (b=%d, α=%g) = %.17g, want %.17g", c.b, c.alpha, got, c.want)
		}
	}
	if !math.IsInf(HeikkilaStepRDP(1000, 200), 1) {
		t.Error("eq. 21 at α = b/5 must be +Inf (outside Thm 2)")
	}
	for _, c := range []struct {
		b     int
		q     float64
		alpha int
		want  float64
	}{
		{1000, 1e-3, 2, 1.7226573207930949e-6},
		{1000, 1e-3, 29, 2.5350423958797305e-5},
		{1000, 1e-3, 199, 72.678487772407417},
		{200, 0.05, 10, 0.027293478932252022},
		{60, 0.5, 11, 3.9074221776317581},
	} {
		if got := HeikkilaAmplifiedRDP(c.b, c.q, c.alpha); !withinRel(got, c.want, 1e-11) {
			t.Errorf("eq. 22 (b=%d, q=%g, α=%d) = %.17g, want %.17g", c.b, c.q, c.alpha, got, c.want)
		}
	}
}

// Done-when: N = 10⁶, b = 1000, T = 20 000, δ = 10⁻⁶, C = 2, tempered to
// N0 = 100 (their §4), |llr| ≤ √b/N0. Reference: mpmath, min over all integer
// α ∈ [2, 199] of 20000·ε′(α) + ln(10⁶)/(α−1) = 1.000419570531813 at α = 29
// (Mironov's conversion, as in the paper). The paper's Fig. 3 range ends at
// 1.22 = this ≈ 1.00 plus the (0.22, 10⁻⁶) spent on the DPVI initialisation
// (which, composed, makes δ = 2·10⁻⁶). The guarantee itself converts by the
// better of Mironov and Balle et al. 2020, Thm 21: mpmath, min over the same
// orders of 20000·ε′(α) + ln((α−1)/α) − (ln 10⁻⁶ + ln α)/(α−1) =
// 0.83684317744292935 at α = 25.
func TestHeikkilaDoneWhen(t *testing.T) {
	c := BarkerSubsampled{N: 1000000, BatchSize: 1000, Iterations: 20000, C: 2,
		LLRBound: math.Sqrt(1000) / 100, N0: 100}
	tab, err := c.RDPTable()
	if err != nil {
		t.Fatal(err)
	}
	if e, o, _ := tab.Epsilon(1e-6, stats.Mironov); o != 29 || !withinRel(e, 1.000419570531813, 1e-12) {
		t.Errorf("Mironov ε(1e-6) = %.17g at α = %d; want 1.000419570531813 at 29", e, o)
	}
	eps, order, err := c.EpsilonOrder(1e-6)
	if err != nil || order != 25 || !withinRel(eps, 0.83684317744292935, 1e-12) {
		t.Fatalf("ε(1e-6) = %.17g at α = %d (%v); want 0.83684317744292935 at 25", eps, order, err)
	}
	g, err := c.Guarantee()
	if err != nil || !g.Applies {
		t.Fatalf("%v %s", err, g.Reason)
	}
	if e, _ := g.Epsilon(1e-6); e != eps {
		t.Errorf("Guarantee.Epsilon = %.17g, EpsilonOrder = %.17g", e, eps)
	}
	if d := g.Profile(eps); !withinRel(d, 1e-6, 1e-9) {
		t.Errorf("profile(ε(1e-6)) = %g", d)
	}
	// The RDP curve at a tabulated order is T·eq. 22.
	if got, want := g.RDP(29), 20000*HeikkilaAmplifiedRDP(1000, 1e-3, 29); got != want {
		t.Errorf("RDP(29) = %g, want %g", got, want)
	}
	if !math.IsInf(g.RDP(200), 1) {
		t.Errorf("RDP at α ≥ b/5 must be +Inf, got %g", g.RDP(200))
	}
	// A second configuration: N = 50 000, b = 500, T = 1000, δ = 1e-5,
	// mpmath (α = 2…99): Mironov 2.1744822078163424 at α = 12, improved
	// 1.8454705275343830 at α = 11.
	c2 := BarkerSubsampled{N: 50000, BatchSize: 500, Iterations: 1000, C: 2, LLRBound: 0.01, N0: 50000}
	eps, order, err = c2.EpsilonOrder(1e-5)
	if err != nil || order != 11 || !withinRel(eps, 1.8454705275343830, 1e-12) {
		t.Errorf("c2: ε = %.17g at α = %d (%v)", eps, order, err)
	}
	tab2, _ := c2.RDPTable()
	if e, o, _ := tab2.Epsilon(1e-5, stats.Mironov); o != 12 || !withinRel(e, 2.1744822078163424, 1e-12) {
		t.Errorf("c2 Mironov: ε = %.17g at α = %d", e, o)
	}
}

func TestHeikkilaSubsampledChecks(t *testing.T) {
	base := BarkerSubsampled{N: 100000, BatchSize: 1000, Iterations: 10, C: 2, LLRBound: 0.3, N0: 100}
	cases := []struct {
		mod    func(*BarkerSubsampled)
		reason string
	}{
		{func(c *BarkerSubsampled) { c.C = 1.5 }, "C = 2"},
		{func(c *BarkerSubsampled) { c.LLRBound = 0.33 }, "|llr| ≤ √b/N0"},        // √1000/100 = 0.316
		{func(c *BarkerSubsampled) { c.N0 = 100000 }, "|llr| ≤ √b/N0"},            // untempered: √b/N = 3.2e-4
		{func(c *BarkerSubsampled) { c.BatchSize, c.LLRBound = 10, 0.01 }, "b/5"}, // α = 2 is not < 2
	}
	for _, tc := range cases {
		c := base
		tc.mod(&c)
		g, err := c.Guarantee()
		if err != nil {
			t.Fatal(err)
		}
		if g.Applies || !strings.Contains(g.Reason, tc.reason) || g.Profile != nil {
			t.Errorf("%+v: applies = %v, reason %q; want not applicable for %q", c, g.Applies, g.Reason, tc.reason)
		}
		if _, err := g.Epsilon(1e-5); err == nil {
			t.Error("Epsilon of a guarantee that does not apply must fail")
		}
	}
	if g, _ := base.Guarantee(); !g.Applies {
		t.Errorf("base config: %s", g.Reason)
	}
	bad := []struct {
		c    BarkerSubsampled
		want string
	}{
		{BarkerSubsampled{N: 0}, "N: must be ≥ 1"},
		{BarkerSubsampled{N: 10, BatchSize: 11}, "BatchSize: must be in [1, N = 10], got 11"},
		{BarkerSubsampled{N: 10, BatchSize: 5, Iterations: -2}, "Iterations"},
		{BarkerSubsampled{N: 10, BatchSize: 5, C: 2, LLRBound: 1, N0: 11}, "N0: must be in (0, N = 10], got 11"},
		{BarkerSubsampled{N: 10, BatchSize: 5, C: 2, LLRBound: -1, N0: 1}, "LLRBound"},
	}
	for _, b := range bad {
		if _, err := b.c.Guarantee(); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%+v: %v, want %q", b.c, err, b.want)
		}
	}
}

// Full-data Barker, B = 0.1, C = 2, T = 100: ρ = 2TB²/C = 1, so Cor. 1 gives
// (α, α)-RDP; Mironov's conversion gives ε(δ) = 1 + 2√(ln(1/δ)) (7.7861404244
// at δ = 1e-5), the better of it and Balle et al. 2020, Thm 21 gives, by
// mpmath findroot on dε/dα of α + ln((α−1)/α) − (ln δ + ln α)/(α−1):
// 2.8549818830344634 (δ = 0.1), 5.4199191682194510 (1e-3),
// 7.0771966958063398 (1e-5), 10.984167343741939 (1e-12). The GDP variant has
// μ = 2B√(T/C) = √2 and, by mpmath bisection, ε(1e-5) = 6.5729700670303315.
func TestBarkerFull(t *testing.T) {
	c := BarkerFull{LLRBound: 0.1, C: 2, Iterations: 100}
	gs, err := c.Guarantees()
	if err != nil || len(gs) != 2 {
		t.Fatal(err, len(gs))
	}
	rdp, gdp := gs[0], gs[1]
	if rdp.Variant != BarkerVariantRDP || gdp.Variant != BarkerVariantGDP {
		t.Fatalf("variants %q, %q", rdp.Variant, gdp.Variant)
	}
	if e, _ := rdp.Epsilon(1e-5); !withinRel(e, 7.0771966958063398, 1e-10) {
		t.Errorf("Cor. 1 ε(1e-5) = %.17g", e)
	}
	if e, _ := gdp.Epsilon(1e-5); !withinRel(e, 6.5729700670303315, 1e-10) {
		t.Errorf("GDP ε(1e-5) = %.17g", e)
	}
	// The RDP variant against mpmath at four δ, below Mironov's closed form.
	for _, c := range []struct{ d, want float64 }{
		{0.1, 2.8549818830344634}, {1e-3, 5.4199191682194510}, {1e-5, 7.0771966958063398}, {1e-12, 10.984167343741939},
	} {
		d := c.d
		got, _ := rdp.Epsilon(d)
		if !withinRel(got, c.want, 1e-10) || got > 1+2*math.Sqrt(-math.Log(d)) {
			t.Errorf("δ=%g: %.15g, mpmath %.15g", d, got, c.want)
		}
		if inv, _ := InvertProfile(rdp.Profile, d); !withinRel(inv, got, 1e-9) {
			t.Errorf("δ=%g: profile inverts to %.15g, ε = %.15g", d, inv, got)
		}
		if eg, _ := gdp.Epsilon(d); eg > got {
			t.Errorf("δ=%g: the exact GDP composition (%g) must not exceed the RDP route (%g)", d, eg, got)
		}
	}
	if got := rdp.RDP(7); !withinRel(got, 7, 1e-15) || !withinRel(gdp.RDP(7), 7, 1e-14) {
		t.Errorf("RDP(7) = %g / %g, want 7 (= 2·7·T·B²/C)", got, gdp.RDP(7))
	}
	// C at or above π²/3: the Barker decomposition does not exist.
	gs, _ = BarkerFull{LLRBound: 0.1, C: 3.3, Iterations: 1}.Guarantees()
	for _, g := range gs {
		if g.Applies || !strings.Contains(g.Reason, "π²/3") {
			t.Errorf("C = 3.3: applies = %v, %q", g.Applies, g.Reason)
		}
	}
	if _, err := (BarkerFull{LLRBound: 0, C: 1}).Guarantees(); err == nil || !strings.Contains(err.Error(), "LLRBound") {
		t.Errorf("B = 0 accepted: %v", err)
	}
	// T = 0 releases nothing.
	gs, _ = BarkerFull{LLRBound: 0.1, C: 2}.Guarantees()
	for _, g := range gs {
		if e, _ := g.Epsilon(1e-6); e != 0 || g.Profile(0) != 0 {
			t.Errorf("%s with T = 0: ε = %g, δ(0) = %g", g.Variant, e, g.Profile(0))
		}
	}
}
