package closedform

import (
	"math"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/stats"
)

// thm24Delta evaluates Räisä et al. Thm 2.4 exactly as printed, in the PLD
// parametrisation m: δ(ε) = ½(erfc((ε−m)/(2√m)) − e^ε erfc((ε+m)/(2√m))).
// It is a second, independent route to the profile (erfc instead of ln Φ),
// usable where neither term underflows.
func thm24Delta(m, eps float64) float64 {
	s := 2 * math.Sqrt(m)
	return 0.5 * (math.Erfc((eps-m)/s) - math.Exp(eps)*math.Erfc((eps+m)/s))
}

// The guarantees carry μ_GDP = √(2m): their profile must be Thm 2.4's erfc
// expression in m. References for the erfc expression: mpmath at 50 digits.
func TestRaisaParametrisation(t *testing.T) {
	refs := []struct{ m, eps, want float64 }{
		{0.5, 1, 0.12693673750664395}, // = δ(ε = 1) of 1-GDP, docs/derivations/references.md §3
		{2, 3, 0.18381307654447216},
		{10, 20, 0.007893946536811112},
		{0.02, 0.5, 0.00051253608315833247},
	}
	for _, r := range refs {
		if got := thm24Delta(r.m, r.eps); !withinRel(got, r.want, 1e-12) {
			t.Fatalf("erfc form m=%g ε=%g: %.17g, want %.17g", r.m, r.eps, got, r.want)
		}
		if got := stats.GDPDelta(math.Sqrt(2*r.m), r.eps); !withinRel(got, r.want, 1e-12) {
			t.Errorf("GDPDelta(√(2m)) m=%g ε=%g: %.17g, want %.17g", r.m, r.eps, got, r.want)
		}
	}
	// The HMC guarantee: m = k/(2τ_l²) + k(L+1)/(2τ_g²) (Thm 3.5 by hand).
	c := RaisaHMC{TauL: 3, TauG: 5, Leapfrog: 4, Iterations: 7}
	m := 7.0/(2*9) + 7.0*5/(2*25)
	if !withinRel(c.MuPLD(), m, 1e-15) || !withinRel(c.MuGDP(), math.Sqrt(2*m), 1e-15) {
		t.Fatalf("MuPLD = %g, MuGDP = %g; want %g, %g", c.MuPLD(), c.MuGDP(), m, math.Sqrt(2*m))
	}
	g, err := c.Guarantee()
	if err != nil || !g.Applies {
		t.Fatal(err, g.Reason)
	}
	for _, eps := range []float64{0, 0.3, 1, 2.5, 6} {
		want := thm24Delta(m, eps)
		if got := g.Profile(eps); !withinRel(got, want, 1e-11) {
			t.Errorf("profile(%g) = %.17g, Thm 2.4 gives %.17g", eps, got, want)
		}
	}
	if got := g.RDP(3); !withinRel(got, 3*m, 1e-15) { // α·μ²/2 = α·m
		t.Errorf("RDP(3) = %g, want %g", got, 3*m)
	}
	// The penalty algorithm: m = k/(2τ²).
	p := RaisaPenalty{TauL: 10, Iterations: 50}
	gp, _ := p.Guarantee()
	if got := gp.Profile(1.5); !withinRel(got, thm24Delta(50.0/200, 1.5), 1e-11) {
		t.Errorf("penalty profile(1.5) = %g, want %g", got, thm24Delta(0.25, 1.5))
	}
	// ε(1e-5) for μ = √50/10: mpmath bisection of the GDP profile.
	if e, err := gp.Epsilon(1e-5); err != nil || !withinRel(e, 2.9432252398013643, 1e-9) {
		t.Errorf("penalty ε(1e-5) = %.17g, %v", e, err)
	}
}

// Done-when: the DP-HMC Gauss settings of the authors' experiment code
// (τ_l = 0.1, τ_g = 0.25, L = 12, n = 100 000, δ = 0.1/n = 1e-6) and ε = 2.
// That code's τ is per √n (RaisaTauFromCode), so τ_l = 0.1√n, τ_g = 0.25√n
// and μ² per iteration = 1/(1000) + 13/6250 = 0.00308. Reference (mpmath, 50
// digits, Thm 2.4 in m = k·0.00154): δ(2) = 9.5558771324484338e-7 at k = 65
// and 1.1351356951670876e-6 at k = 66, so k = 65 (16 per chain with 4 chains);
// ε(1e-6) = 1.9956180711825768 at k = 65 and 2.0123624647677945 at k = 66.
func TestRaisaHMCDoneWhen(t *testing.T) {
	n := 100000
	c := RaisaHMC{TauL: RaisaTauFromCode(0.1, n), TauG: RaisaTauFromCode(0.25, n), Leapfrog: 12}
	k, err := c.MaxIterations(2, 1e-6)
	if err != nil || k != 65 {
		t.Fatalf("MaxIterations = %d, %v; want 65", k, err)
	}
	// Direct evaluation: scan k with stats.GDPEpsilon.
	scan := 0
	for kk := 1; kk < 1000; kk++ {
		c.Iterations = kk
		e, err := stats.GDPEpsilon(c.MuGDP(), 1e-6)
		if err != nil {
			t.Fatal(err)
		}
		if e > 2 {
			break
		}
		scan = kk
	}
	if scan != k {
		t.Errorf("scan with stats.GDPEpsilon gives %d, MaxIterations %d", scan, k)
	}
	for _, r := range []struct {
		k          int
		delta, eps float64
	}{{65, 9.5558771324484338e-7, 1.9956180711825768}, {66, 1.1351356951670876e-6, 2.0123624647677945}} {
		c.Iterations = r.k
		g, _ := c.Guarantee()
		if d := g.Profile(2); !withinRel(d, r.delta, 1e-9) {
			t.Errorf("k=%d: δ(2) = %.17g, want %.17g", r.k, d, r.delta)
		}
		if e, _ := g.Epsilon(1e-6); !withinRel(e, r.eps, 1e-10) {
			t.Errorf("k=%d: ε(1e-6) = %.17g, want %.17g", r.k, e, r.eps)
		}
	}
	// Read literally as the paper's τ (no √n), one iteration is already
	// μ ≈ 17.5-GDP with ε(1e-6) = 236.53788687729819 (mpmath): nothing fits.
	lit := RaisaHMC{TauL: 0.1, TauG: 0.25, Leapfrog: 12, Iterations: 1}
	if k, err := lit.MaxIterations(2, 1e-6); err != nil || k != 0 {
		t.Errorf("literal τ: MaxIterations = %d, %v; want 0", k, err)
	}
	g, _ := lit.Guarantee()
	if e, _ := g.Epsilon(1e-6); !withinRel(e, 236.53788687729819, 1e-10) {
		t.Errorf("literal τ, one iteration: ε(1e-6) = %.17g", e)
	}
}

// MaxIterations agrees with a direct scan over many budgets and noise levels.
func TestRaisaMaxIterationsScan(t *testing.T) {
	for _, tau := range []float64{3, 20, 70} {
		p := RaisaPenalty{TauL: tau}
		for _, b := range []struct{ eps, delta float64 }{{0.5, 1e-5}, {1, 1e-6}, {3, 1e-3}, {0, 0.2}} {
			k, err := p.MaxIterations(b.eps, b.delta)
			if err != nil {
				t.Fatal(err)
			}
			ok := func(kk int) bool {
				e, err := stats.GDPEpsilon(math.Sqrt(float64(kk))/tau, b.delta)
				return err == nil && e <= b.eps
			}
			if (k > 0 && !ok(k)) || ok(k+1) {
				t.Errorf("τ=%g ε=%g δ=%g: MaxIterations = %d is not the largest admissible k", tau, b.eps, b.delta, k)
			}
		}
	}
}

func TestRaisaValidation(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{RaisaPenalty{TauL: 0, Iterations: 1}.Validate(), "TauL: must be finite and > 0, got 0"},
		{RaisaPenalty{TauL: 1, Iterations: -1}.Validate(), "Iterations: must be ≥ 0, got -1"},
		{RaisaHMC{TauL: 1, TauG: math.Inf(1), Leapfrog: 1}.Validate(), "TauG: must be finite and > 0"},
		{RaisaHMC{TauL: 1, TauG: 1, Leapfrog: 0}.Validate(), "Leapfrog: must be ≥ 1, got 0"},
		{RaisaHMC{TauL: 1e-200, TauG: 1, Leapfrog: 1, Iterations: 1}.Validate(), "too large"},
	}
	for _, c := range cases {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("got %v, want %q", c.err, c.want)
		}
	}
	if _, err := (RaisaPenalty{TauL: 1}).MaxIterations(1, 1); err == nil || !strings.Contains(err.Error(), "delta") {
		t.Errorf("δ = 1 accepted: %v", err)
	}
	if _, err := (RaisaPenalty{TauL: 1}).MaxIterations(-1, 0.1); err == nil || !strings.Contains(err.Error(), "eps") {
		t.Errorf("ε < 0 accepted: %v", err)
	}
	// No iterations: nothing is released.
	g, _ := RaisaPenalty{TauL: 1}.Guarantee()
	if e, _ := g.Epsilon(1e-9); e != 0 || g.Profile(0) != 0 {
		t.Errorf("k = 0: ε = %g, δ(0) = %g", e, g.Profile(0))
	}
}
