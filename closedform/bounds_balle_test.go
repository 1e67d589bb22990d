package closedform

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/stats"
)

func TestBalleThm5Values(t *testing.T) {
	// C = 1, σ = 2, n = 10, η = 0.1, β = 2, ρ = 1 (2/(β+ρ) = 2/3 ≥ η).
	// 1 − 2ηβρ/(β+ρ) = 1 − 0.4/3 = 0.8666…; references by mpmath (30 digits):
	//   ε_10 = 2/4 = 0.5
	//   ε_9  = 2/(1·4)·0.8666…^1   = 0.43333333333333333333
	//   ε_7  = 2/(3·4)·0.8666…^2   = 0.12518518518518518519
	//   ε_1  = 2/(9·4)·0.8666…^5   = 0.027163639689071787837
	// and for i = 7, ε(1e-5) = ε_7 + 2·sqrt(ε_7 ln 1e5) = 2.5262247153516772991.
	p := NoisySGDParams{Eta: 0.1, Sigma: 2, N: 10, Lipschitz: 1, Smoothness: 2, StrongConvexity: 1}
	for _, c := range []struct {
		i    int
		want float64
	}{{10, 0.5}, {0, 0.5}, {9, 0.43333333333333333333}, {7, 0.12518518518518518519}, {1, 0.027163639689071787837}} {
		g, err := BalleThm5(p, c.i)
		if err != nil || !g.Applies {
			t.Fatalf("i = %d: %v %s", c.i, err, g.Reason)
		}
		if got := g.RDP(3) / 3; !withinRel(got, c.want, 1e-14) {
			t.Errorf("i = %d: ε_i = %.17g, want %.17g", c.i, got, c.want)
		}
		if g.Variant != string(Printed) {
			t.Errorf("i = %d: variant %q", c.i, g.Variant)
		}
		checkProfileEpsilonAgree(t, g)
	}
	g, _ := BalleThm5(p, 7)
	if got := epsOrFatal(t, g, 1e-5); !withinRel(got, 2.5262247153516772991, 1e-13) {
		t.Errorf("ε_7(1e-5) = %.17g", got)
	}
	// The profile is the Mironov conversion of the linear curve: compare
	// with stats.RDPCurve.Epsilon (Mironov), an independent numerical minimisation.
	for _, d := range []float64{1e-8, 1e-3} {
		want, _, err := g.RDP.Epsilon(d, stats.Mironov, nil)
		if err != nil || !withinRel(epsOrFatal(t, g, d), want, 1e-9) {
			t.Errorf("δ = %g: ε = %g, RDPCurve.Epsilon %g (%v)", d, epsOrFatal(t, g, d), want, err)
		}
	}
	// Gradient-difference reading: G = 1 < 2C = 2 gives ε_n = G²/(2σ²) = 1/8.
	p.GradDiff = 1
	g, _ = BalleThm5(p, 0)
	if !g.Applies || !withinRel(g.RDP(2)/2, 0.125, 1e-15) || !strings.Contains(g.Variant, "gradient-difference") {
		t.Errorf("G reading: %v %g %q", g.Applies, g.RDP(2)/2, g.Variant)
	}
	p.GradDiff = 3 // larger than 2C: 2C is kept
	g, _ = BalleThm5(p, 0)
	if !withinRel(g.RDP(2)/2, 0.5, 1e-15) || g.Variant != string(Printed) {
		t.Errorf("G > 2C: %g %q", g.RDP(2)/2, g.Variant)
	}
}

func TestBalleThm5NotApplicableAndErrors(t *testing.T) {
	p := NoisySGDParams{Eta: 0.7, Sigma: 2, N: 10, Lipschitz: 1, Smoothness: 2, StrongConvexity: 1}
	g, err := BalleThm5(p, 0)
	if err != nil || g.Applies || !strings.Contains(g.Reason, "η ≤ 2/(β+ρ)") {
		t.Errorf("η too large: %v %v %q", err, g.Applies, g.Reason)
	}
	p.Eta, p.Lipschitz = 0.1, math.Inf(1)
	g, _ = BalleThm5(p, 0)
	if g.Applies || !strings.Contains(g.Reason, "sensitivity") {
		t.Errorf("unbounded gradient: %v %q", g.Applies, g.Reason)
	}
	p.GradDiff = 0.5
	if g, _ = BalleThm5(p, 0); !g.Applies {
		t.Errorf("C = +Inf with G: %q", g.Reason)
	}
	for _, c := range []struct {
		mod  func(*NoisySGDParams)
		i    int
		want string
	}{
		{func(p *NoisySGDParams) {}, 11, "index: must be in [0, n = 10]"},
		{func(p *NoisySGDParams) { p.StrongConvexity = 3 }, 0, "rho: strong convexity must be ≤ smoothness"},
		{func(p *NoisySGDParams) { p.Sigma = 0 }, 0, "sigma:"},
		{func(p *NoisySGDParams) { p.N = 0 }, 0, "n:"},
		{func(p *NoisySGDParams) { p.Lipschitz = -1 }, 0, "C:"},
	} {
		q := p
		c.mod(&q)
		if _, err := BalleThm5(q, c.i); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("err = %v, want prefix %q", err, c.want)
		}
	}
}

func TestBalleCor7(t *testing.T) {
	// θ = ρ = Δ = t = 1: Λ = 1/(2(e² − 1)) = 0.078258821374832825909 (mpmath).
	g, err := BalleCor7(OUParams{Theta: 1, Rho: 1, Sensitivity: 1, Time: 1})
	if err != nil || !g.Applies {
		t.Fatal(err)
	}
	if got := g.RDP(1); !withinRel(got, 0.078258821374832825909, 1e-15) {
		t.Errorf("Λ = %.17g", got)
	}
	// Second method: the OU kernel P_t(x) = N(e^{−θt}x, (ρ²/θ)(1 − e^{−2θt})).
	// (a) Its log density ratio has y-slope e^{−θt}(x−x′)/v, which must equal
	//     the proof's θe^{θt}(x−x′)/(ρ²(e^{2θt} − 1)); (b) its Rényi divergence
	//     (stats.RenyiGaussian, the 1-D closed form) must equal αΛ(t).
	for _, p := range []OUParams{{1, 1, 1, 1}, {0.3, 2, 1.5, 4}, {5, 0.5, 0.2, 0.01}} {
		v := p.Rho * p.Rho / p.Theta * -math.Expm1(-2*p.Theta*p.Time)
		slope := math.Exp(-p.Theta*p.Time) * p.Sensitivity / v
		proof := p.Theta * math.Exp(p.Theta*p.Time) * p.Sensitivity / (p.Rho * p.Rho * math.Expm1(2*p.Theta*p.Time))
		if !withinRel(slope, proof, 1e-12) {
			t.Errorf("%+v: kernel slope %g, proof's %g", p, slope, proof)
		}
		g, _ := BalleCor7(p)
		for _, a := range []float64{1.5, 2, 30} {
			m := math.Exp(-p.Theta*p.Time) * p.Sensitivity
			want := stats.RenyiGaussian(a, m, math.Sqrt(v), 0, math.Sqrt(v))
			if !withinRel(g.RDP(a), want, 1e-12) {
				t.Errorf("%+v α = %g: αΛ = %g, Rényi of the kernels %g", p, a, g.RDP(a), want)
			}
		}
		// The exact Gaussian ε is below the Mironov conversion of the curve.
		for _, d := range []float64{1e-6, 1e-2} {
			conv, _, _ := g.RDP.Epsilon(d, stats.Mironov, nil)
			if e := epsOrFatal(t, g, d); !(e <= conv) {
				t.Errorf("%+v δ = %g: GDP ε %g above RDP conversion %g", p, d, e, conv)
			}
		}
		checkProfileEpsilonAgree(t, g)
	}
	if _, err := BalleCor7(OUParams{Theta: 1, Rho: 0, Sensitivity: 1, Time: 1}); err == nil || !strings.HasPrefix(err.Error(), "rho:") {
		t.Errorf("rho = 0: %v", err)
	}
	// Long times: Λ underflows to 0 rather than NaN.
	if g, err := BalleCor7(OUParams{Theta: 1, Rho: 1, Sensitivity: 1, Time: 1000}); err != nil || g.RDP(2) != 0 || epsOrFatal(t, g, 1e-5) != 0 {
		t.Errorf("t = 1000: %v %v", err, g.RDP(2))
	}
}

func TestMixingValues(t *testing.T) {
	// ε = 1, δ = 1e-3, γ = 0.5 (mpmath, 30 digits):
	//   Thm 13 order ε′ = ln(1 + (e − 1)/1e-3) = 7.4496619410191567190
	//   Thm 14: ε′ = ln(1 + 0.5(e − 1)) = 0.62011450695827752463,
	//           δ′ = 0.5(1 − e^{ε′−1}(1 − 1e-3)) = 0.15837210956743228018
	//   Thm 15: δ′ = 0.5·1e-3·e^{ε′−1} = 0.00034196986029286058039
	if o, _ := MixingDobrushinOrder(1, 1e-3); !withinRel(o, 7.4496619410191567190, 1e-14) {
		t.Errorf("order = %.17g", o)
	}
	if e, d, _ := MixingDobrushin(1, 1e-3, 0.5); e != 1 || d != 5e-4 {
		t.Errorf("Dobrushin: %g %g", e, d)
	}
	if e, d, _ := MixingDoeblin(1, 1e-3, 0.5); !withinRel(e, 0.62011450695827752463, 1e-14) || !withinRel(d, 0.15837210956743228018, 1e-13) {
		t.Errorf("Doeblin: %.17g %.17g", e, d)
	}
	if e, d, _ := MixingUltra(1, 1e-3, 0.5); !withinRel(e, 0.62011450695827752463, 1e-14) || !withinRel(d, 0.00034196986029286058039, 1e-13) {
		t.Errorf("ultra: %.17g %.17g", e, d)
	}
	// Edge cases: γ = 1 changes nothing; γ = 0 makes the output independent.
	if e, d, _ := MixingUltra(2, 0.1, 1); !withinRel(e, 2, 1e-15) || !withinRel(d, 0.1, 1e-15) {
		t.Errorf("γ = 1: %g %g", e, d)
	}
	if e, d, _ := MixingDoeblin(2, 0.1, 0); e != 0 || d != 0 {
		t.Errorf("γ = 0: %g %g", e, d)
	}
	if o, _ := MixingDobrushinOrder(1, 0); !math.IsInf(o, 1) {
		t.Errorf("δ = 0 order %g", o)
	}
	// Large ε: no overflow.
	if o, _ := MixingDobrushinOrder(800, 1e-10); !withinRel(o, 800+10*math.Ln10, 1e-15) {
		t.Errorf("order(800) = %g", o)
	}
	if e, _, _ := MixingUltra(800, 0, 0.25); !withinRel(e, 800+math.Log(0.25), 1e-15) {
		t.Errorf("ε′(800) = %g", e)
	}
	for _, c := range []struct{ e, d, g float64 }{{-1, 0, 0.5}, {1, 2, 0.5}, {1, 0, 1.5}, {math.NaN(), 0, 0}} {
		if _, _, err := MixingDoeblin(c.e, c.d, c.g); err == nil {
			t.Errorf("(%g, %g, %g): no error", c.e, c.d, c.g)
		}
	}
}

// hockey returns D_{e^ε}(p‖q) = Σ max(0, p − e^ε q) on a finite space.
func hockeyFinite(p, q []float64, eps float64) float64 {
	s := 0.0
	for i := range p {
		s += math.Max(0, p[i]-math.Exp(eps)*q[i])
	}
	return s
}

func pushThrough(p []float64, k [][]float64) []float64 {
	out := make([]float64, len(k[0]))
	for x, px := range p {
		for y, kxy := range k[x] {
			out[y] += px * kxy
		}
	}
	return out
}

func randSimplex(r *rand.Rand, n int) []float64 {
	p := make([]float64, n)
	s := 0.0
	for i := range p {
		p[i] = r.ExpFloat64()
		s += p[i]
	}
	for i := range p {
		p[i] /= s
	}
	return p
}

// TestMixingBruteForce checks Thms 10, 13, 14 and 15 on random finite
// mechanisms and kernels, against exact hockey-stick divergences: the
// kernel's coefficients are computed from their definitions (TV, the best
// Doeblin minorisation 1 − Σ_y min_x K(x, y), the ultra-mixing ratio), the
// mechanism's δ at each ε exactly, and the amplified claim is compared with
// the exact divergence of the post-processed pair in both directions.
func TestMixingBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const nx, ny = 4, 5
	for trial := 0; trial < 300; trial++ {
		mu, nu := randSimplex(r, nx), randSimplex(r, nx)
		// Kernel: a mixture of a common law and random rows, so that every
		// coefficient is non-trivial.
		w := r.Float64()
		omega := randSimplex(r, ny)
		k := make([][]float64, nx)
		for x := range k {
			row := randSimplex(r, ny)
			k[x] = make([]float64, ny)
			for y := range row {
				k[x][y] = (1-w)*omega[y] + w*row[y]
			}
		}
		tv, doeblin, ultra := 0.0, 1.0, 0.0
		for y := 0; y < ny; y++ {
			m := math.Inf(1)
			for x := 0; x < nx; x++ {
				m = math.Min(m, k[x][y])
			}
			doeblin -= m
		}
		for x := range k {
			for x2 := range k {
				tv = math.Max(tv, hockeyFinite(k[x], k[x2], 0))
				for y := range k[x] {
					ultra = math.Max(ultra, 1-k[x][y]/k[x2][y])
				}
			}
		}
		for _, eps := range []float64{0, 0.1, 0.5, 1, 2} {
			for _, dir := range [][2][]float64{{mu, nu}, {nu, mu}} {
				p, q := dir[0], dir[1]
				pq, qq := pushThrough(p, k), pushThrough(q, k)
				delta := math.Max(hockeyFinite(p, q, eps), hockeyFinite(q, p, eps))
				const slack = 1e-12
				if _, d, _ := MixingDobrushin(eps, delta, tv); hockeyFinite(pq, qq, eps) > d+slack {
					t.Fatalf("Thm 10 violated: trial %d ε %g: %g > %g", trial, eps, hockeyFinite(pq, qq, eps), d)
				}
				if delta > 0 {
					order, _ := MixingDobrushinOrder(eps, delta)
					g := 0.0
					for x := range k {
						for x2 := range k {
							g = math.Max(g, hockeyFinite(k[x], k[x2], order))
						}
					}
					if _, d, _ := MixingDobrushin(eps, delta, g); hockeyFinite(pq, qq, eps) > d+slack {
						t.Fatalf("Thm 13 violated: trial %d ε %g: %g > %g (γ = %g)", trial, eps, hockeyFinite(pq, qq, eps), d, g)
					}
				}
				if e2, d, _ := MixingDoeblin(eps, delta, doeblin); hockeyFinite(pq, qq, e2) > d+slack {
					t.Fatalf("Thm 14 violated: trial %d ε %g: %g > %g", trial, eps, hockeyFinite(pq, qq, e2), d)
				}
				if e2, d, _ := MixingUltra(eps, delta, ultra); hockeyFinite(pq, qq, e2) > d+slack {
					t.Fatalf("Thm 15 violated: trial %d ε %g: %g > %g", trial, eps, hockeyFinite(pq, qq, e2), d)
				}
			}
		}
	}
}

func TestAmplifyGuarantees(t *testing.T) {
	// Input: randomized response with ε₀ = 1.2 (the exact profile of an
	// ε₀-DP mechanism, PureDPProfile); kernel on {0, 1}: K(x) = (1 − w)·ω +
	// w·1{x}, whose ultra-mixing coefficient 1 − min ratio is computed from
	// its definition, and TV coefficient is w.
	in, _ := Posterior4B(0.3)
	p := math.Exp(1.2) / (1 + math.Exp(1.2))
	mu, nu := []float64{p, 1 - p}, []float64{1 - p, p}
	w, om := 0.4, []float64{0.3, 0.7}
	k := [][]float64{{(1-w)*om[0] + w, (1 - w) * om[1]}, {(1 - w) * om[0], (1-w)*om[1] + w}}
	ultra := 0.0
	for x := range k {
		for x2 := range k {
			for y := range k[x] {
				ultra = math.Max(ultra, 1-k[x][y]/k[x2][y])
			}
		}
	}
	dob, err := AmplifyDobrushin(in, w)
	if err != nil {
		t.Fatal(err)
	}
	um, err := AmplifyUltraMixing(in, ultra)
	if err != nil {
		t.Fatal(err)
	}
	pk, qk := pushThrough(mu, k), pushThrough(nu, k)
	for eps := 0.0; eps < 1.3; eps += 0.01 {
		exact := math.Max(hockeyFinite(pk, qk, eps), hockeyFinite(qk, pk, eps))
		if exact > dob.Profile(eps)+1e-14 || exact > um.Profile(eps)+1e-14 {
			t.Fatalf("ε = %g: exact %g above amplified %g / %g", eps, exact, dob.Profile(eps), um.Profile(eps))
		}
		if !withinRel(dob.Profile(eps), w*in.Profile(eps), 1e-15) {
			t.Errorf("Dobrushin profile at %g", eps)
		}
		if um.Profile(eps) > ultra*in.Profile(eps) {
			t.Errorf("ultra-mixing profile above the Thm 10 one at %g", eps)
		}
		if eps > 0 && um.Profile(eps) > um.Profile(eps-0.01)+1e-15 {
			t.Errorf("ultra-mixing profile increases at %g", eps)
		}
	}
	// Thm 15 must improve on Thm 10 with the same coefficient: by hand,
	// ultra = 1 − 0.18/0.58, ε = ln(1 + (e^0.5 − 1)/ultra) ≈ 0.663 and
	// γe^{0.5−ε}δ(ε) ≈ 0.187 < γδ(0.5) ≈ 0.267.
	if !(um.Profile(0.5) < ultra*in.Profile(0.5)) {
		t.Errorf("Thm 15 gives no gain: %g vs %g", um.Profile(0.5), ultra*in.Profile(0.5))
	}
	// ε(δ) of the Dobrushin guarantee: Profile(ε(δ)) = δ.
	for _, d := range []float64{1e-3, 0.1} {
		e := epsOrFatal(t, dob, d)
		if !withinRel(dob.Profile(e), d, 1e-9) {
			t.Errorf("Dobrushin ε(%g) = %g, profile there %g", d, e, dob.Profile(e))
		}
		e = epsOrFatal(t, um, d)
		if !withinRel(um.Profile(e), d, 1e-9) {
			t.Errorf("ultra ε(%g) = %g, profile there %g", d, e, um.Profile(e))
		}
	}
	if _, err := AmplifyDobrushin(in, 2); err == nil {
		t.Error("γ = 2: no error")
	}
}

func TestBalleThm5ShuffledValues(t *testing.T) {
	// η = 0.1, σ = 2, N = 4 steps before the release, G = 1, β = 2, ρ = 1;
	// five positions with weights 0.1, 0.2, 0.3, 0.25, 0.15 (the last one
	// after the release). References by mpmath (30 digits) of
	// (1/(α−1))·ln(0.15 + Σ_{k≤4} w_k e^{(α−1)αε_k}):
	p := NoisySGDParams{Eta: 0.1, Sigma: 2, N: 4, Lipschitz: math.Inf(1), GradDiff: 1, Smoothness: 2, StrongConvexity: 1}
	w := []float64{0.1, 0.2, 0.3, 0.25, 0.15}
	g, err := BalleThm5Shuffled(p, w)
	if err != nil || !g.Applies || !strings.Contains(g.Variant, "random visiting order") {
		t.Fatalf("%v %+v", err, g)
	}
	for _, c := range []struct{ a, want float64 }{{1.5, 0.116627806445758952361880339195}, {2, 0.158086449445372637828135239517}, {8, 0.858621406339466226847543724712}} {
		if got := g.RDP(c.a); !withinRel(got, c.want, 1e-13) {
			t.Errorf("RDP(%g) = %.17g, want %.17g", c.a, got, c.want)
		}
	}
	checkProfileEpsilonAgree(t, g)
	// All the weight on the last step before the release: the worst
	// position of Thm 5, exactly.
	g, _ = BalleThm5Shuffled(p, []float64{0, 0, 0, 1})
	worst, _ := BalleThm5(p, 0)
	for _, a := range []float64{1.1, 2, 30} {
		if !withinRel(g.RDP(a), worst.RDP(a), 1e-14) {
			t.Errorf("point mass on step N: RDP(%g) = %g, Thm 5 worst %g", a, g.RDP(a), worst.RDP(a))
		}
	}
	// The mixture never exceeds the worst position, and is below it.
	g, _ = BalleThm5Shuffled(p, w)
	for _, d := range []float64{1e-8, 1e-3, 0.1} {
		e, _ := g.Epsilon(d)
		ew, _ := worst.Epsilon(d)
		if !(e < ew) {
			t.Errorf("δ = %g: mixture ε %g, worst position %g", d, e, ew)
		}
	}
	// Errors and a failed assumption.
	for _, ws := range [][]float64{{0.5, 0.5}, {0.5, 0.2, 0.2, 0.2}, {-0.1, 0.5, 0.3, 0.3}} {
		if _, err := BalleThm5Shuffled(p, ws); err == nil {
			t.Errorf("weights %v: no error", ws)
		}
	}
	p.Eta = 1
	if g, err := BalleThm5Shuffled(p, w); err != nil || g.Applies || !strings.Contains(g.Reason, "η ≤ 2/(β+ρ)") {
		t.Errorf("η too large: %v %+v", err, g)
	}
}

func TestBalleCor7Chain(t *testing.T) {
	// Through OUParams, Cor 7 as printed gives the same Λ as the stable
	// form, for chains short enough that A^{−T} does not overflow.
	for _, c := range []OUChain{{A: 0.5, NoiseVar: 0.02, Steps: 5, MeanShift: 0.09}, {A: 0.97, NoiseVar: 0.3, Steps: 40, MeanShift: 1.7}, {A: 0.01, NoiseVar: 2, Steps: 3, MeanShift: 0.4}} {
		g, err := BalleCor7Chain(c)
		if err != nil || !g.Applies {
			t.Fatalf("%+v: %v %s", c, err, g.Reason)
		}
		want := OULambda(c.OUParams())
		if got := g.RDP(2) / 2; !withinRel(got, want, 1e-12) {
			t.Errorf("%+v: Λ = %.17g, Cor 7 through OUParams %.17g", c, got, want)
		}
		checkProfileEpsilonAgree(t, g)
	}
	// A long chain: A^{−T} overflows, the stable form does not; Λ tends
	// to (1 − A²)·shift²/(2v).
	g, _ := BalleCor7Chain(OUChain{A: 0.5, NoiseVar: 0.02, Steps: 1 << 20, MeanShift: 0.09})
	if want := 0.75 * 0.09 * 0.09 / 0.04; !withinRel(g.RDP(2)/2, want, 1e-15) {
		t.Errorf("long chain: Λ = %.17g, want %.17g", g.RDP(2)/2, want)
	}
	for _, a := range []float64{0, -0.3, 1, 1.2} {
		if g, err := BalleCor7Chain(OUChain{A: a, NoiseVar: 1, Steps: 3, MeanShift: 1}); err != nil || g.Applies {
			t.Errorf("A = %g: applies %v (%v)", a, g.Applies, err)
		}
	}
	for _, c := range []OUChain{{A: 0.5, NoiseVar: 0, Steps: 3}, {A: 0.5, NoiseVar: 1, Steps: 0}, {A: 0.5, NoiseVar: 1, Steps: 3, MeanShift: -1}} {
		if _, err := BalleCor7Chain(c); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}
