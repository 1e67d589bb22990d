package closedform

import (
	"math"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/stats"
)

func withinRel(got, want, tol float64) bool {
	if got == want {
		return true
	}
	return math.Abs(got-want) <= tol*math.Abs(want)
}

func epsOrFatal(t *testing.T, g Guarantee, delta float64) float64 {
	t.Helper()
	e, err := g.Epsilon(delta)
	if err != nil {
		t.Fatalf("%s: Epsilon(%g): %v", g.Source, delta, err)
	}
	return e
}

// checkProfileEpsilonAgree asserts that a guarantee's closed-form ε(δ) and its
// profile agree: the profile crosses δ at ε(δ) (or is ≤ δ at ε = 0), and
// InvertProfile finds the same ε.
func checkProfileEpsilonAgree(t *testing.T, g Guarantee) {
	t.Helper()
	for _, d := range []float64{1e-12, 1e-5, 1e-2, 0.3} {
		e := epsOrFatal(t, g, d)
		// ε(δ) must bracket the crossing of the profile: a relative step
		// of 1e-9 in ε either way crosses δ (up to 1e-9 relative), which
		// stays meaningful where the profile is steep and ε cannot be
		// represented finely enough for Profile(ε(δ)) = δ to hold exactly.
		lo, hi := g.Profile(e*(1-1e-9)), g.Profile(e*(1+1e-9))
		if e > 0 && (hi > d*(1+1e-9) || lo < d*(1-1e-9)) || e == 0 && g.Profile(0) > d {
			t.Errorf("%s %s: ε(%g) = %g but Profile there is in [%g, %g]", g.Source, g.Variant, d, e, hi, lo)
		}
		inv, err := InvertProfile(g.Profile, d)
		if err != nil || !withinRel(inv, e, 1e-9) && math.Abs(inv-e) > 1e-12 {
			t.Errorf("%s %s: InvertProfile(%g) = %g, %v; closed form %g", g.Source, g.Variant, d, inv, err, e)
		}
	}
}

func TestBertazziThm52PaperConstant(t *testing.T) {
	// c = L = a = 1, γ = 0.1: a − γL²/2 = 0.95, C₃ = (2·2/0.95 + 1)² =
	// 27.14958448753462604 (mpmath, 30 digits; docs/derivations/paper-readings.md §1).
	// Conservative: 4·(2/0.95 + 1)² = 38.57063711911357341. ε(δ) = C/4 +
	// sqrt(C ln(1/δ)) from mpmath: printed 24.46707775391250040 (δ = 1e-5),
	// 20.48201862730303193 (δ = 1e-3); conservative 30.71541112401479315,
	// 25.96554267007623476.
	p := ULAParams{Gamma: 0.1, N: 100, GradBound: 1, Lipschitz: 1, Convexity: 1}
	cases := []struct {
		v           Variant
		c, e5, e3   float64
		description string
	}{
		{Printed, 27.14958448753462604, 24.46707775391250040, 20.48201862730303193, "printed"},
		{Conservative, 38.57063711911357341, 30.71541112401479315, 25.96554267007623476, "conservative"},
	}
	for _, c := range cases {
		g, err := BertazziThm52(p, c.v)
		if err != nil || !g.Applies {
			t.Fatalf("%s: %v %+v", c.description, err, g)
		}
		if got := 4 * g.RDP(1); !withinRel(got, c.c, 1e-14) {
			t.Errorf("%s: C₃ = %.17g, want %.17g", c.description, got, c.c)
		}
		if got := g.RDP(7.5); !withinRel(got, 7.5*c.c/4, 1e-14) {
			t.Errorf("%s: RDP(7.5) = %g", c.description, got)
		}
		if got := epsOrFatal(t, g, 1e-5); !withinRel(got, c.e5, 1e-13) {
			t.Errorf("%s: ε(1e-5) = %.17g, want %.17g", c.description, got, c.e5)
		}
		if got := epsOrFatal(t, g, 1e-3); !withinRel(got, c.e3, 1e-13) {
			t.Errorf("%s: ε(1e-3) = %.17g, want %.17g", c.description, got, c.e3)
		}
		if g.Variant != string(c.v) || g.Release != relFinalState {
			t.Errorf("%s: variant %q release %q", c.description, g.Variant, g.Release)
		}
		checkProfileEpsilonAgree(t, g)
	}
}

func TestBertazziOtherTheorems(t *testing.T) {
	// References (mpmath, 30 digits), ε at δ = 1e-5, ln(1e5) = 11.5129…:
	//  Thm 5.4: c = 2·GradBound = 2, γ = 0.1, n = 100: C₅ = 40,
	//           ε = 10 + sqrt(40·ln 1e5) = 31.45966026289347240.
	//  Thm 5.6: c = 0.5, β = 3, L = 2, a = 1, γ = 0.2: a − γL²/2 = 0.6,
	//           printed C₆ = 0.25·3·(2·3/0.6 + 1)² = 90.75, ε = 55.01083500655599475;
	//           conservative 4·0.25·3·(3/0.6 + 1)² = 108, ε = 62.26182000715199427.
	//  Thm 5.7: same with s = 4: C₇ = 90.75/16 = 5.671875, printed
	//           ε = C₇ + sqrt(C₇ ln 1e5) = 13.75270875163899869; conservative
	//           constant 108/16 = 6.75, whose common form 10.50295500178799857
	//           is smaller, so the conservative ε is the printed one.
	//  Thm 5.8: c = 0.7, β = 3, n = 10, γ = 0.2, s = 4: C₈ = 3·0.49·2/16 =
	//           0.18375, printed ε = 1.638225869235471184 (common form would
	//           be 1.500413369235471184).
	ula := ULAParams{Gamma: 0.1, N: 100, GradBound: 1}
	sgld := SGLDParams{Gamma: 0.2, N: 10, Beta: 3, BatchSize: 4, DatasetSize: 50,
		GradBound: 0.5, ConstantGrad: true, Lipschitz: 2, Convexity: 1, DiffBound: 0.7}
	type tc struct {
		name string
		g    func(Variant) (Guarantee, error)
		v    Variant
		c    float64 // RDP slope ×4
		eps  float64
	}
	cases := []tc{
		{"5.4", func(v Variant) (Guarantee, error) { return BertazziThm54(ula, v) }, Printed, 40, 31.45966026289347240},
		{"5.4c", func(v Variant) (Guarantee, error) { return BertazziThm54(ula, v) }, Conservative, 40, 31.45966026289347240},
		{"5.6", func(v Variant) (Guarantee, error) { return BertazziThm56(sgld, v) }, Printed, 90.75, 55.01083500655599475},
		{"5.6c", func(v Variant) (Guarantee, error) { return BertazziThm56(sgld, v) }, Conservative, 108, 62.26182000715199427},
		{"5.7", func(v Variant) (Guarantee, error) { return BertazziThm57(sgld, v) }, Printed, 5.671875, 13.75270875163899869},
		{"5.7c", func(v Variant) (Guarantee, error) { return BertazziThm57(sgld, v) }, Conservative, 6.75, 13.75270875163899869},
		{"5.8", func(v Variant) (Guarantee, error) { return BertazziThm58(sgld, v) }, Printed, 0.18375, 1.638225869235471184},
		{"5.8c", func(v Variant) (Guarantee, error) { return BertazziThm58(sgld, v) }, Conservative, 0.18375, 1.638225869235471184},
	}
	for _, c := range cases {
		g, err := c.g(c.v)
		if err != nil || !g.Applies {
			t.Fatalf("Thm %s: %v, applies %v (%s)", c.name, err, g.Applies, g.Reason)
		}
		if got := 4 * g.RDP(1); !withinRel(got, c.c, 1e-14) {
			t.Errorf("Thm %s: C = %.17g, want %.17g", c.name, got, c.c)
		}
		if got := epsOrFatal(t, g, 1e-5); !withinRel(got, c.eps, 1e-13) {
			t.Errorf("Thm %s: ε(1e-5) = %.17g, want %.17g", c.name, got, c.eps)
		}
		checkProfileEpsilonAgree(t, g)
		// Second method: Mironov's conversion of the RDP curve, minimised
		// numerically over α by stats.RDPCurve.Epsilon with Mironov's conversion, equals the common
		// form; the printed form of Thms 5.7–5.8 lies above it.
		for _, d := range []float64{1e-9, 1e-3} {
			conv, _, err := g.RDP.Epsilon(d, stats.Mironov, nil)
			e := epsOrFatal(t, g, d)
			printedForm := strings.HasPrefix(c.name, "5.7") || strings.HasPrefix(c.name, "5.8")
			if err != nil || printedForm && !(e > conv) || !printedForm && !withinRel(e, conv, 1e-9) {
				t.Errorf("Thm %s δ = %g: ε = %.12g, RDP conversion %.12g (%v)", c.name, d, e, conv, err)
			}
		}
	}
}

func TestBertazziThm57ConservativeExceedsPrinted(t *testing.T) {
	// a = L = 10, γ = 0.001, c = 0.1, β = 1, s = 1: a − γL²/2 = 9.95,
	// C₇ = 0.01·(22/9.95 + 1)² = 0.1031087598798010151, conservative
	// constant 0.04·(11/9.95 + 1)² = 0.1773298654074392061 (mpmath). At
	// δ = 1e-5 the printed ε is 1.192642360684136804 and the common form with
	// the conservative constant 1.473173088376951180, which the conservative
	// variant must report; at δ = 1e-2: 0.7921903130450738222 and
	// 0.9480106221460673326.
	p := SGLDParams{Gamma: 0.001, N: 1000, Beta: 1, BatchSize: 1, DatasetSize: 1,
		GradBound: 0.1, ConstantGrad: true, Lipschitz: 10, Convexity: 10}
	pr, _ := BertazziThm57(p, Printed)
	co, _ := BertazziThm57(p, Conservative)
	for _, c := range []struct{ d, pr, co float64 }{
		{1e-5, 1.192642360684136804, 1.473173088376951180},
		{1e-2, 0.7921903130450738222, 0.9480106221460673326},
	} {
		if got := epsOrFatal(t, pr, c.d); !withinRel(got, c.pr, 1e-13) {
			t.Errorf("printed ε(%g) = %.17g, want %.17g", c.d, got, c.pr)
		}
		if got := epsOrFatal(t, co, c.d); !withinRel(got, c.co, 1e-13) {
			t.Errorf("conservative ε(%g) = %.17g, want %.17g", c.d, got, c.co)
		}
	}
	// Conservative is never below printed, profile and curve alike.
	for eps := 0.0; eps < 5; eps += 0.01 {
		if co.Profile(eps) < pr.Profile(eps) {
			t.Fatalf("conservative profile below printed at ε = %g", eps)
		}
	}
	for _, a := range []float64{1.01, 2, 50} {
		if co.RDP(a) < pr.RDP(a) {
			t.Fatalf("conservative RDP below printed at α = %g", a)
		}
	}
	checkProfileEpsilonAgree(t, pr)
	checkProfileEpsilonAgree(t, co)
}

func TestBertazziProps(t *testing.T) {
	// Prop 4.6: c = 0.5, β = 2, T = 3: C₁ = 0.25·2·3 = 1.5.
	// Prop 4.5: c = 0.5, L = 2, C = 1.5, β = 2: C₂ = 2·(1.5·3 + 0.5)² = 50.
	g, err := BertazziProp46(0.5, 2, 3)
	if err != nil || !withinRel(4*g.RDP(1), 1.5, 1e-15) {
		t.Errorf("Prop 4.6: %v, C = %v", err, 4*g.RDP(1))
	}
	checkProfileEpsilonAgree(t, g)
	g, err = BertazziProp45(0.5, 2, 1.5, 2)
	if err != nil || !withinRel(4*g.RDP(1), 50, 1e-15) {
		t.Errorf("Prop 4.5: %v, C = %v", err, 4*g.RDP(1))
	}
	// Thm 5.2 is Prop 4.5 with β = 1, drift constant c (printed) or 2c
	// (conservative) and C = 2c/(a − γL²/2) (App. C.1).
	p := ULAParams{Gamma: 0.3, N: 7, GradBound: 0.8, Lipschitz: 1.5, Convexity: 0.9}
	bigC := 2 * p.GradBound / (p.Convexity - p.Gamma*p.Lipschitz*p.Lipschitz/2)
	for _, c := range []struct {
		v     Variant
		drift float64
	}{{Printed, p.GradBound}, {Conservative, 2 * p.GradBound}} {
		want, _ := BertazziProp45(c.drift, p.Lipschitz, bigC, 1)
		got, _ := BertazziThm52(p, c.v)
		if !withinRel(got.RDP(3), want.RDP(3), 1e-14) {
			t.Errorf("Thm 5.2 %s = %g, Prop 4.5 with drift %g = %g", c.v, got.RDP(3), c.drift, want.RDP(3))
		}
	}
}

func TestBertazziNotApplicable(t *testing.T) {
	base := ULAParams{Gamma: 0.1, N: 100, GradBound: 1, Lipschitz: 1, Convexity: 1}
	cases := []struct {
		name   string
		mod    func(*ULAParams)
		reason string
	}{
		{"step too large", func(p *ULAParams) { p.Gamma = 2 }, "γ < 2a/L²"},
		{"step at the limit", func(p *ULAParams) { p.Gamma = 2; p.N = 10 }, "γ < 2a/L²"},
		{"short horizon", func(p *ULAParams) { p.N = 9 }, "nγ ≥ 1"},
		{"unknown L", func(p *ULAParams) { p.Lipschitz = 0 }, "Assumption 5.1"},
	}
	for _, c := range cases {
		p := base
		c.mod(&p)
		g, err := BertazziThm52(p, Printed)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if g.Applies || g.Profile != nil || !strings.Contains(g.Reason, c.reason) {
			t.Errorf("%s: applies %v, reason %q", c.name, g.Applies, g.Reason)
		}
		if _, err := g.Epsilon(1e-5); err == nil {
			t.Errorf("%s: Epsilon of an inapplicable guarantee gave no error", c.name)
		}
	}
	sg := SGLDParams{Gamma: 0.1, N: 100, Beta: 1, BatchSize: 1, DatasetSize: 10, GradBound: 1, Lipschitz: 1, Convexity: 1}
	g, _ := BertazziThm57(sg, Printed)
	if g.Applies || !strings.Contains(g.Reason, "constant in x") {
		t.Errorf("Thm 5.7 without constant gradient: %v %q", g.Applies, g.Reason)
	}
	sg.GradBound = 0
	g, _ = BertazziThm58(sg, Printed)
	if g.Applies || !strings.Contains(g.Reason, "c known") {
		t.Errorf("Thm 5.8 without c: %v %q", g.Applies, g.Reason)
	}
}

func TestBertazziInputErrors(t *testing.T) {
	ok := ULAParams{Gamma: 0.1, N: 10, GradBound: 1, Lipschitz: 1, Convexity: 1}
	cases := []struct {
		mod  func(*ULAParams)
		want string
	}{
		{func(p *ULAParams) { p.Gamma = 0 }, "gamma: must be finite and > 0, got 0"},
		{func(p *ULAParams) { p.Gamma = math.NaN() }, "gamma:"},
		{func(p *ULAParams) { p.Gamma = math.Inf(1) }, "gamma:"},
		{func(p *ULAParams) { p.N = 0 }, "n: must be ≥ 1, got 0"},
		{func(p *ULAParams) { p.GradBound = -1 }, "c: must be finite and ≥ 0, got -1"},
		{func(p *ULAParams) { p.Lipschitz = 0.5 }, "L: must be ≥ a"},
		{func(p *ULAParams) { p.DiffBound = math.NaN() }, "c (Assumption 5.3)"},
	}
	for _, c := range cases {
		p := ok
		c.mod(&p)
		for _, f := range []func(ULAParams, Variant) (Guarantee, error){BertazziThm52, BertazziThm54} {
			if _, err := f(p, Printed); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%+v: err = %v, want %q", p, err, c.want)
			}
		}
	}
	if _, err := BertazziThm52(ok, "optimistic"); err == nil || !strings.HasPrefix(err.Error(), "variant:") {
		t.Errorf("bad variant: %v", err)
	}
	sg := SGLDParams{Gamma: 0.1, N: 10, Beta: 1, BatchSize: 5, DatasetSize: 4, GradBound: 1}
	if _, err := BertazziThm58(sg, Printed); err == nil || !strings.HasPrefix(err.Error(), "s: batch size must be in [1, m = 4], got 5") {
		t.Errorf("s > m: %v", err)
	}
	sg.BatchSize, sg.Beta = 1, 0
	if _, err := BertazziThm56(sg, Printed); err == nil || !strings.HasPrefix(err.Error(), "beta:") {
		t.Errorf("beta = 0: %v", err)
	}
	if _, err := BertazziProp46(1, 1, -1); err == nil || !strings.HasPrefix(err.Error(), "T:") {
		t.Errorf("T < 0: %v", err)
	}
	if _, err := BertazziThm52(ULAParams{Gamma: 0.1, N: 100, GradBound: 1e200, Lipschitz: 1, Convexity: 1}, Printed); err == nil {
		t.Error("overflowing constant: no error")
	}
}

func TestFinalStateIsMinOfPathAndFinal(t *testing.T) {
	// ULA, c = 1 (DiffBound 2), L = a = 1, γ = 0.1. For n = 20 the path
	// constant nγ·4 = 8 is below C₃ = 27.15; for n = 200 it is 80, above.
	// For n = 5 (nγ < 1) only the path theorem applies.
	for _, c := range []struct {
		n        int
		wantPath bool
		finalOK  bool
	}{{20, true, true}, {200, false, true}, {5, true, false}} {
		p := ULAParams{Gamma: 0.1, N: c.n, GradBound: 1, Lipschitz: 1, Convexity: 1}
		gs, err := ULAGuarantees(p, Printed)
		if err != nil || len(gs) != 3 {
			t.Fatalf("n = %d: %v, %d guarantees", c.n, err, len(gs))
		}
		path, fin, best := gs[0], gs[1], gs[2]
		if fin.Applies != c.finalOK || !path.Applies || !best.Applies {
			t.Fatalf("n = %d: applies path %v final %v best %v", c.n, path.Applies, fin.Applies, best.Applies)
		}
		for _, d := range []float64{1e-9, 1e-5, 0.1} {
			want := epsOrFatal(t, path, d)
			if c.finalOK {
				want = math.Min(want, epsOrFatal(t, fin, d))
			}
			if got := epsOrFatal(t, best, d); got != want {
				t.Errorf("n = %d δ = %g: min ε = %g, want %g", c.n, d, got, want)
			}
		}
		if c.finalOK {
			if pathBelow := path.RDP(2) < fin.RDP(2); pathBelow != c.wantPath {
				t.Errorf("n = %d: path below final = %v", c.n, pathBelow)
			}
		}
		if best.Release != relFinalState || !strings.Contains(best.Note, "Thm 5.4") {
			t.Errorf("n = %d: release %q note %q", c.n, best.Release, best.Note)
		}
		checkProfileEpsilonAgree(t, best)
	}
	// SGLD: min over 5.6, 5.7 and 5.8.
	sg := SGLDParams{Gamma: 0.05, N: 40, Beta: 2, BatchSize: 3, DatasetSize: 30,
		GradBound: 1, ConstantGrad: true, Lipschitz: 2, Convexity: 1}
	best, err := SGLDFinalState(sg, Conservative)
	if err != nil || !best.Applies {
		t.Fatal(err, best.Reason)
	}
	var parts []Guarantee
	for _, f := range []func(SGLDParams, Variant) (Guarantee, error){BertazziThm56, BertazziThm57, BertazziThm58} {
		g, _ := f(sg, Conservative)
		parts = append(parts, g)
	}
	for eps := 0.0; eps < 30; eps += 0.25 {
		want := 1.0
		for _, g := range parts {
			want = math.Min(want, g.Profile(eps))
		}
		if got := best.Profile(eps); got != want {
			t.Errorf("SGLD min profile at ε = %g: %g, want %g", eps, got, want)
		}
	}
	// No theorem applies: γ too large and c unknown for the path.
	none := CombineMin("x", relFinalState, NotApplicable("a", "", "", []Check{{Name: "p", Detail: "q"}}))
	if none.Applies || !strings.Contains(none.Reason, "p fails: q") {
		t.Errorf("empty min: %+v", none)
	}
}

func TestWellingTehMapping(t *testing.T) {
	// One SGLD step written as Welling & Teh do, on a logistic likelihood
	// log p(d|θ) = −ln(1 + e^{−dθ}) (gradient d/(1 + e^{dθ}), bounded by |d|)
	// and a N(0, 1/τ) prior, against the same step written as eq. 15 with the
	// parameters Params returns (k(θ) = τθ²/(2m), so ∇k(θ) = L·θ), driven by
	// the same batch and the same standard normal z.
	const tau = 2.0
	data := []float64{0.5, -1.2, 2, 0.3, -0.7, 1.1}
	batch := []int{1, 4, 5}
	w := WellingTehSGLD{Eta: 0.01, N: 100, BatchSize: len(batch), DatasetSize: len(data),
		LikGradBound: 2, PriorLipschitz: tau, PriorConvexity: tau}
	p := w.Params()
	grad := func(d, th float64) float64 { return d / (1 + math.Exp(d*th)) }
	for _, th := range []float64{-3, 0.2, 1.7} {
		for _, z := range []float64{-1.3, 0, 0.8} {
			m, s := float64(len(data)), float64(len(batch))
			sum := 0.0
			for _, i := range batch {
				sum += grad(data[i], th)
			}
			wt := th + w.Eta/2*(-tau*th+m/s*sum) + math.Sqrt(w.Eta)*z
			sumL := 0.0
			for _, i := range batch {
				sumL += -grad(data[i], th) + p.Lipschitz*th
			}
			eq15 := th - p.Gamma/s*sumL + math.Sqrt(2*p.Gamma/p.Beta)*z
			if !withinRel(eq15, wt, 1e-14) {
				t.Errorf("θ = %g z = %g: eq. 15 step %.17g, Welling–Teh %.17g", th, z, eq15, wt)
			}
		}
	}
	if p.Lipschitz != p.Convexity || !withinRel(p.Lipschitz, tau/6, 1e-15) || p.Beta != 6 || !withinRel(p.Gamma, 0.03, 1e-15) {
		t.Errorf("constants: %+v", p)
	}
	// γ < 2a/L² ⇔ η < 4a/L² for the prior's constants: here 4/τ = 2.
	w.Eta = 1.99
	if g, _ := BertazziThm56(w.Params(), Printed); !g.Applies {
		t.Errorf("η = 1.99 < 4a/L² = 2: %s", g.Reason)
	}
	w.Eta = 2.01
	if g, _ := BertazziThm56(w.Params(), Printed); g.Applies {
		t.Error("η = 2.01 > 4a/L² = 2 applies")
	}
}

// BenchmarkSGLDGuarantees measures what `audit bounds` will do per
// configuration: build every Bertazzi guarantee and evaluate ε at one δ.
func BenchmarkSGLDGuarantees(b *testing.B) {
	p := SGLDParams{Gamma: 0.05, N: 1000, Beta: 2, BatchSize: 10, DatasetSize: 1000,
		GradBound: 1, ConstantGrad: true, Lipschitz: 2, Convexity: 1}
	for b.Loop() {
		gs, err := SGLDGuarantees(p, Conservative)
		if err != nil {
			b.Fatal(err)
		}
		for _, g := range gs {
			if g.Applies {
				if _, err := g.Epsilon(1e-5); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}

// BenchmarkAmplifiedEpsilon measures ε(δ) of a guarantee without a closed
// form (numerical inversion of the ultra-mixing profile).
func BenchmarkAmplifiedEpsilon(b *testing.B) {
	in, _ := Posterior4B(1)
	g, _ := AmplifyUltraMixing(in, 0.3)
	for b.Loop() {
		if _, err := g.Epsilon(1e-5); err != nil {
			b.Fatal(err)
		}
	}
}
