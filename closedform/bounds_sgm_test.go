package closedform

import (
	"math"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/stats"
)

// Mixtures used below, with C = 1 and noise σ = z: φ_w = N(w, z²),
// mix(w) = (1−q)φ_0 + q·φ_w. "Exact" divergences are
// D_α(P‖Q) = log1p(∫Q((P/Q)^α − 1))/(α−1) by mpmath quadrature at 50 digits
// (1-D, break points at 0, ±1, ±5z, 5z + 2α/z², …) or, in 2-D, by scipy's
// dblquad at relative tolerance 1e-11.

// The closed form of Mironov, Talwar & Zhang is exact for the add/remove pair
// D_α(mix(1) ‖ φ_0): reference = mpmath quadrature of that divergence (it
// agrees with the closed form to all 17 printed digits). The other direction,
// D_α(φ_0 ‖ mix(1)), also by quadrature, must not exceed it.
func TestPoissonSGMAddRemoveExact(t *testing.T) {
	cases := []struct {
		q, z          float64
		alpha         int
		quad, reverse float64
	}{
		{0.01, 1, 2, 0.00017181342207454793, 0.00016022264981855362},
		{0.01, 1, 8, 0.00089364390760603185, 0.00057238889490204334},
		{0.1, 2, 5, 0.0077369684897958643, 0.0061403058794232708},
		{0.5, 0.7, 3, 2.0503607218796765, 0.36274636462741813},
		{0.001, 0.8, 20, 8.3536786538375143, 3.2969382334156309e-5},
	}
	for _, c := range cases {
		got := PoissonSGMAddRemoveRDP(c.q, c.z, c.alpha)
		if !withinRel(got, c.quad, 1e-12) {
			t.Errorf("q=%g z=%g α=%d: %.17g, quadrature %.17g", c.q, c.z, c.alpha, got, c.quad)
		}
		if c.reverse > got {
			t.Errorf("q=%g z=%g α=%d: reverse direction %g exceeds %g", c.q, c.z, c.alpha, c.reverse, got)
		}
	}
	// q = 1: the Gaussian mechanism with sensitivity C, α/(2z²).
	if got := PoissonSGMAddRemoveRDP(1, 2, 6); !withinRel(got, 6.0/8, 1e-15) {
		t.Errorf("q = 1: %g, want 0.75", got)
	}
}

// Replace-one, Poisson. "bound" is the formula of PoissonSGMReplaceOneRDP
// evaluated by mpmath at 50 digits (alternating sums exact, no rounding-error
// allowance); the Go value may exceed it by that allowance only. Every exact
// divergence of a replace-one pair must lie below the Go value: the
// antipodal pair mix(1)‖mix(−1), the pair mix(1)‖mix(−½), the add/remove pair
// mix(1)‖φ_0 (g′ = 0 is a valid record), and 2-D pairs ‖u‖ = ‖v‖ = 1 at angles
// 60°…170° (scipy dblquad).
func TestPoissonSGMReplaceOneValid(t *testing.T) {
	cases := []struct {
		q, z         float64
		alpha        int
		bound        float64
		anti, half   float64
		angles       []float64 // D at 60°, 90°, 120°, 150°, 170° (nil if not computed)
		boundSlackRe float64
	}{
		{0.01, 1, 2, 0.00047471606960315326, 0.00045755438253754163, 0.00027952675841582491,
			[]float64{0.00020507487543138005, 0.0003320360718930469, 0.00040995220845602685, 0.0004470114939157212, 0.00045642798785498095}, 1e-12},
		{0.01, 1, 8, 0.013965142070966372, 0.0019844545230564625, 0.0013554667155234214, nil, 1e-9},
		{0.01, 2, 16, 0.00096425280911806263, 0.000808125800317565, 0.00048283130641459311,
			[]float64{0.0002406346584951727, 0.00045380409767861344, 0.0006420934665602015, 0.0007656756523429374, 0.0008033842145281536}, 1e-9},
		{0.1, 3, 4, 0.010222734898583123, 0.0088243185164598933, 0.00517211006964237,
			[]float64{0.0023713456269480876, 0.00463147092756018, 0.006781723166889908, 0.00828741154775712, 0.008763814521518405}, 1e-12},
		{0.001, 0.8, 8, 0.00048373876574077849, 3.8176058614045956e-5, 2.4036781948477964e-5, nil, 1e-9},
		{0.1, 3, 32, 0.36318273060307778, 0.084311953765861643, 0.061318614368975571, nil, 1e-9},
		{0.05, 5, 12, 0.0025628826192625689, 0.0023974311972872126, 0.0013780680433872946,
			[]float64{0.0006163827459522206, 0.001221489895482941, 0.0018152003000977495, 0.002242552044657335, 0.00237991004674613}, 1e-12},
	}
	for _, c := range cases {
		got := PoissonSGMReplaceOneRDP(c.q, c.z, c.alpha)
		if got < c.bound*(1-1e-12) || got > c.bound*(1+c.boundSlackRe) {
			t.Errorf("q=%g z=%g α=%d: %.17g, formula %.17g", c.q, c.z, c.alpha, got, c.bound)
		}
		exact := append([]float64{c.anti, c.half, PoissonSGMAddRemoveRDP(c.q, c.z, c.alpha)}, c.angles...)
		for i, e := range exact {
			if e > got {
				t.Errorf("q=%g z=%g α=%d: replace-one pair #%d has D = %g above the bound %g", c.q, c.z, c.alpha, i, e, got)
			}
		}
	}
	if got := PoissonSGMReplaceOneRDP(1, 2, 6); !withinRel(got, 3, 1e-15) { // 2α/z²
		t.Errorf("q = 1: %g, want 3", got)
	}
}

// The alternating sum M_j = Σ_k C(j,k)(−1)^{j−k}e^{ρk(k−1)} plus its
// rounding allowance never falls below the exact value (mpmath, 60 digits)
// and is close to it when the sum is well conditioned.
func TestAltSumLogM(t *testing.T) {
	cases := []struct {
		l         int
		rho, want float64
		tight     bool
	}{
		{4, 0.005, -8.0490248819006791895, true},
		{10, 0.5, 44.998767000588988569, true},
		{40, 0.03, 43.182875847011345367, true},
		{6, 2, 59.999999987633081668, true},
		{20, 0.005, -21.69725187572618681, false},  // 6 digits of cancellation lost
		{100, 0.005, 12.996693181860398094, false}, // hopeless in float64
	}
	for _, c := range cases {
		row := []float64{1}
		for n := 1; n <= c.l; n++ {
			next := make([]float64, n+1)
			next[0], next[n] = 1, 1
			for k := 1; k < n; k++ {
				next[k] = row[k-1] + row[k]
			}
			row = next
		}
		got := altSumLogM(row, c.rho)
		if got < c.want-1e-13*math.Abs(c.want) {
			t.Errorf("l=%d ρ=%g: ln(S+E) = %.17g below the exact %.17g", c.l, c.rho, got, c.want)
		}
		if c.tight && got-c.want > 1e-9 {
			t.Errorf("l=%d ρ=%g: ln(S+E) = %.17g, exact %.17g: allowance too large", c.l, c.rho, got, c.want)
		}
	}
}

// Replace-one without replacement: "bound" = min(direct, Thm 9) by mpmath at
// 50 digits. Exact divergences of realisable replace-one instances must lie
// below it: others' gradients 0 and g_i = 1 vs g′_i = −1 (the antipodal
// mixtures), and others all 1 with g_i = 1 vs g′_i = −1, which gives the pair
// φ_0 vs mix(−2) in both directions (a shift of 2C).
func TestWORSGMReplaceOneValid(t *testing.T) {
	cases := []struct {
		q, z                float64
		alpha               int
		bound, thm9         float64
		anti, remove2, add2 float64
		directSlack, thmSlk float64
	}{
		{0.01, 1, 2, 0.0094919987992163733, 0.010860441335991564, 0.00045755438253754163, 0.0015696028545577497, 0.0053455023143452553, 1e-12, 1e-12},
		{0.01, 1, 8, 10.835969384744052, 10.835969384744052, 0.0019844545230564625, 0.0032788605821703393, 10.736948358948984, 1e-9, 1e-12},
		{0.01, 2, 16, 3.1340609222758499, 3.1340609222758499, 0.000808125800317565, 0.0010158469305050764, 3.0878507836962446, 1e-9, 1e-12},
		{0.1, 3, 4, 0.038802368011814929, 0.051632238339488505, 0.0088243185164598933, 0.0088830491426126701, 0.012622656591918593, 1e-12, 1e-12},
		{0.001, 0.8, 8, 17.204443564100407, 17.204443564100407, 3.8176058614045956e-5, 0.00022754858029475535, 17.105422538306129, 1e-9, 1e-12},
		{0.05, 5, 12, 0.007935748979819494, 0.018253819778071834, 0.0023974311972872126, 0.0023479441225549464, 0.0028574792445694481, 1e-9, 1e-12},
		{0.01, 1.1, 2, 0.0044442270152747812, 0.0054391695559843164, 0.00036262951712454406, 0.0011396502743122972, 0.0026235498287514093, 1e-12, 1e-12},
	}
	for _, c := range cases {
		got := WORSGMReplaceOneRDP(c.q, c.z, c.alpha)
		if got < c.bound*(1-1e-12) || got > c.bound*(1+c.directSlack) {
			t.Errorf("q=%g z=%g α=%d: %.17g, formula %.17g", c.q, c.z, c.alpha, got, c.bound)
		}
		if th := WORSGMThm9RDP(c.q, c.z, c.alpha); !withinRel(th, c.thm9, c.thmSlk) {
			t.Errorf("q=%g z=%g α=%d: Thm 9 %.17g, want %.17g", c.q, c.z, c.alpha, th, c.thm9)
		}
		for i, e := range []float64{c.anti, c.remove2, c.add2} {
			if e > got {
				t.Errorf("q=%g z=%g α=%d: instance #%d has D = %g above the bound %g", c.q, c.z, c.alpha, i, e, got)
			}
		}
	}
	if got := WORSGMReplaceOneRDP(1, 2, 6); !withinRel(got, 3, 1e-15) {
		t.Errorf("q = 1: %g, want 2α/z² = 3", got)
	}
}

// Whole accountants: mpmath evaluation of the same bounds at every integer
// order 2…64, composed over T and converted by Mironov's Prop. 3 (mironov,
// at order mOrder) and by the better of Mironov and Balle et al. 2020,
// Thm 21 (want, at order); the script is
// docs/derivations/pld-reference/rdp_reference.py. The
// optimal orders are well inside that range, so the Go grid (2…10⁴) has the
// same minimum.
func TestSGMAccountants(t *testing.T) {
	cases := []struct {
		m       SGM
		addRm   bool
		delta   float64
		want    float64
		order   int
		mironov float64
		mOrder  int
		slackRe float64
	}{
		{SGM{Poisson, 0.01, 1.1, 10000}, false, 1e-5, 10.871698466512498, 3, 11.826469718954719, 3, 1e-12},
		{SGM{Poisson, 0.01, 1.1, 10000}, true, 1e-5, 5.654308000149489, 5, 6.2798110295722246, 5, 1e-12},
		{SGM{WithoutReplacement, 0.01, 2, 1000}, false, 1e-5, 3.3773990247778346, 5, 4.0029020542005694, 5, 1e-12},
		{SGM{Poisson, 0.001, 4, 100000}, false, 1e-6, 0.70455773490376504, 30, 0.84918084077815622, 34, 1e-8},
	}
	for _, c := range cases {
		var g Guarantee
		var err error
		if c.addRm {
			g, err = c.m.AddRemove()
		} else {
			g, err = c.m.ReplaceOne()
			if e, o, _ := c.m.EpsilonOrder(c.delta); o != c.order || !withinRel(e, c.want, c.slackRe) {
				t.Errorf("%+v: EpsilonOrder = %.17g at %d, want %.17g at %d", c.m, e, o, c.want, c.order)
			}
			tab, _ := c.m.ReplaceOneTable()
			if e, o, _ := tab.Epsilon(c.delta, stats.Mironov); o != c.mOrder || !withinRel(e, c.mironov, c.slackRe) {
				t.Errorf("%+v: Mironov conversion %.17g at %d, want %.17g at %d", c.m, e, o, c.mironov, c.mOrder)
			}
		}
		if err != nil || !g.Applies {
			t.Fatal(err)
		}
		e, err := g.Epsilon(c.delta)
		if err != nil || e < c.want*(1-1e-12) || e > c.want*(1+c.slackRe) {
			t.Errorf("%+v add/remove=%v: ε(%g) = %.17g, want %.17g", c.m, c.addRm, c.delta, e, c.want)
		}
		if d := g.Profile(e); !withinRel(d, c.delta, 1e-9) {
			t.Errorf("%+v: profile(ε(δ)) = %g, want %g", c.m, d, c.delta)
		}
	}
	if _, err := (SGM{WithoutReplacement, 0.1, 1, 1}).AddRemove(); err == nil || !strings.Contains(err.Error(), "Poisson") {
		t.Errorf("add/remove without replacement accepted: %v", err)
	}
}

// DP-SGLD as an SGM: with drift h = η/2, noise variance v = η and scale
// s = n/b, θ′ = θ + h(∇ln p(θ) + s·Σclip) + √v·ξ, so (θ′ − θ − h∇ln p(θ))/(h·s)
// = Σclip + (√v/(h·s))·ξ: z = √v/(h·s·C) = 2b/(n·C·√η). For n = 10⁴, b = 100,
// C = 1, η = 10⁻⁴: z = 200/(10⁴·10⁻²) = 2 exactly.
func TestDPSGLDMapping(t *testing.T) {
	eta := 1e-4
	c := DPSGLD{N: 10000, Sampling: WithoutReplacement, BatchSize: 100, Clip: 1, Drift: eta / 2, NoiseVar: eta, Steps: 1000}
	m, err := c.SGM()
	if err != nil || !withinRel(m.NoiseMultiplier, 2, 1e-15) || m.Rate != 0.01 || m.Steps != 1000 {
		t.Fatalf("SGM() = %+v, %v", m, err)
	}
	gs, err := c.Guarantees()
	if err != nil || len(gs) != 1 {
		t.Fatal(err)
	}
	// The guarantee is the smaller of the PLD accountant and the RDP one
	// (3.3773990247778346 at δ = 1e-5, TestSGMAccountants); here the PLD.
	pld, err := m.ReplaceOnePLD()
	if err != nil {
		t.Fatal(err)
	}
	ep, _ := pld.Epsilon(1e-5)
	if e, _ := gs[0].Epsilon(1e-5); e != ep || !(ep < 3.3773990247778346) {
		t.Errorf("ε(1e-5) = %.17g, PLD %.17g", e, ep)
	}
	// Poisson with q = 0.01 and the scale 1/q: the same z.
	p := DPSGLD{N: 10000, Sampling: Poisson, Rate: 0.01, Clip: 1, Drift: eta / 2, NoiseVar: eta, Steps: 1}
	if z := p.NoiseMultiplier(); !withinRel(z, 2, 1e-15) {
		t.Errorf("Poisson z = %g", z)
	}
	// A different clip and noise: z = √v/(h·s·C) = 0.3/(0.01·50·4) = 0.15.
	q := DPSGLD{N: 5000, Sampling: WithoutReplacement, BatchSize: 100, Clip: 4, Drift: 0.01, NoiseVar: 0.09}
	if z := q.NoiseMultiplier(); !withinRel(z, 0.15, 1e-14) {
		t.Errorf("z = %.17g, want 0.15", z)
	}
	bad := []struct {
		c    DPSGLD
		want string
	}{
		{DPSGLD{N: 10, Sampling: Poisson, Rate: 0.1, BatchSize: 2, Clip: 1, Drift: 1, NoiseVar: 1}, "BatchSize: must be 0 for Poisson"},
		{DPSGLD{N: 10, Sampling: WithoutReplacement, BatchSize: 2, Rate: 0.2, Clip: 1, Drift: 1, NoiseVar: 1}, "Rate: must be 0"},
		{DPSGLD{N: 10, Sampling: WithoutReplacement, BatchSize: 20, Clip: 1, Drift: 1, NoiseVar: 1}, "BatchSize: must be in [1, N = 10], got 20"},
		{DPSGLD{N: 10, Sampling: Poisson, Rate: 1.5, Clip: 1, Drift: 1, NoiseVar: 1}, "Rate: must be in (0, 1], got 1.5"},
		{DPSGLD{N: 10, Sampling: Poisson, Rate: 0.5, Clip: 0, Drift: 1, NoiseVar: 1}, "Clip: must be finite and > 0, got 0"},
		{DPSGLD{N: 10, Sampling: Poisson, Rate: 0.5, Clip: 1, Drift: 1, NoiseVar: math.NaN()}, "NoiseVar"},
		{DPSGLD{N: 10, Sampling: 7, Clip: 1, Drift: 1, NoiseVar: 1}, "Sampling"},
		{DPSGLD{N: 10, Sampling: Poisson, Rate: 0.5, Clip: 1, Drift: 1, NoiseVar: 1, Steps: -1}, "Steps"},
	}
	for _, b := range bad {
		if _, err := b.c.Guarantees(); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%+v: %v, want %q", b.c, err, b.want)
		}
	}
	if _, err := (SGM{Poisson, 0.1, 0, 1}).ReplaceOne(); err == nil || !strings.Contains(err.Error(), "NoiseMultiplier") {
		t.Errorf("z = 0 accepted: %v", err)
	}
	if _, err := (SGM{Poisson, 0.1, 1e-200, 1}).ReplaceOne(); err == nil || !strings.Contains(err.Error(), "NoiseMultiplier: must be in [1e-100, 1e+100]") {
		t.Errorf("z = 1e-200 accepted: %v", err)
	}
	tiny := DPSGLD{N: 10, Sampling: Poisson, Rate: 0.5, Clip: 1, Drift: 1e300, NoiseVar: 1e-300}
	if _, err := tiny.Guarantees(); err == nil || !strings.Contains(err.Error(), "DP-SGLD noise multiplier") {
		t.Errorf("derived z = %g accepted: %v", tiny.NoiseMultiplier(), err)
	}
}

// Every sampler configuration offers Guarantees(); with nothing released
// (zero steps) each certifies ε = 0 and δ(0) = 0.
func TestGuaranteesZeroSteps(t *testing.T) {
	type lister interface{ Guarantees() ([]Guarantee, error) }
	for _, c := range []lister{
		RaisaPenalty{TauL: 1},
		RaisaHMC{TauL: 1, TauG: 1, Leapfrog: 3},
		BarkerFull{LLRBound: 0.1, C: 2},
		BarkerSubsampled{N: 1000, BatchSize: 100, C: 2, LLRBound: 0.001, N0: 1000},
		DPSGLD{N: 100, Sampling: Poisson, Rate: 0.1, Clip: 1, Drift: 0.01, NoiseVar: 0.02},
		DPSGLD{N: 100, Sampling: WithoutReplacement, BatchSize: 10, Clip: 1, Drift: 0.01, NoiseVar: 0.02},
	} {
		gs, err := c.Guarantees()
		if err != nil || len(gs) == 0 {
			t.Fatalf("%T: %v", c, err)
		}
		for _, g := range gs {
			if !g.Applies {
				t.Errorf("%T %s: %s", c, g.Variant, g.Reason)
				continue
			}
			if e, err := g.Epsilon(1e-9); err != nil || e != 0 || g.Profile(0) != 0 {
				t.Errorf("%T %s: ε = %g (%v), δ(0) = %g", c, g.Variant, e, err, g.Profile(0))
			}
		}
	}
}

// Extreme noise multipliers give finite numbers (no NaN, no +Inf) that fall
// as z grows. Monotonicity is only approximate (1e-3): at huge z the direct
// bound is dominated by the rounding allowance of its alternating sums, which
// does not shrink with z. At z = 1e8 nothing leaks in truth; the bound is
// then limited by the order grid and by Thm 9's ε(∞) = ∞ terms (2(1+q)^α),
// which stop the useful orders near 700: ε ≈ 0.02 for q = 0.01, T = 100.
func TestSGMExtremeNoise(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	for _, s := range []Sampling{Poisson, WithoutReplacement} {
		prev := math.Inf(1)
		for _, z := range []float64{1e-6, 0.01, 0.3, 1, 10, 1e4, 1e8} {
			e, _, err := SGM{s, 0.01, z, 100}.EpsilonOrder(1e-6)
			if err != nil || math.IsNaN(e) || math.IsInf(e, 0) || e < 0 || e > prev*(1+1e-3) {
				t.Fatalf("%v z=%g: ε = %g (%v) after %g", s, z, e, err, prev)
			}
			prev = e
		}
		if prev > 0.025 {
			t.Errorf("%v z = 1e8: ε = %g, want < 0.025", s, prev)
		}
	}
}

// Replace-one neighbours include add/remove-like pairs (g′ = 0), so the
// replace-one bounds can never be below the exact add/remove RDP, and a
// replace-one guarantee is never more optimistic than the add/remove one.
func TestSGMReplaceOneDominatesAddRemove(t *testing.T) {
	for _, q := range []float64{1e-3, 0.02, 0.3} {
		for _, z := range []float64{0.6, 1, 3, 20} {
			for _, a := range []int{2, 3, 7, 30, 200} {
				ar := PoissonSGMAddRemoveRDP(q, z, a)
				if ro := PoissonSGMReplaceOneRDP(q, z, a); ro < ar {
					t.Errorf("q=%g z=%g α=%d: Poisson replace-one %g < add/remove %g", q, z, a, ro, ar)
				}
				if wo := WORSGMReplaceOneRDP(q, z, a); wo < ar {
					t.Errorf("q=%g z=%g α=%d: WOR replace-one %g < add/remove %g", q, z, a, wo, ar)
				}
			}
		}
	}
}

func BenchmarkSGMPoissonReplaceOneTable(b *testing.B) {
	m := SGM{Poisson, 0.01, 1.1, 10000}
	for b.Loop() {
		if _, err := m.ReplaceOneTable(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSGMWithoutReplacementTable(b *testing.B) {
	m := SGM{WithoutReplacement, 0.01, 1.1, 10000}
	for b.Loop() {
		if _, err := m.ReplaceOneTable(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHeikkilaDoneWhen(b *testing.B) {
	c := BarkerSubsampled{N: 1000000, BatchSize: 1000, Iterations: 20000, C: 2, LLRBound: 0.3, N0: 100}
	for b.Loop() {
		if _, _, err := c.EpsilonOrder(1e-6); err != nil {
			b.Fatal(err)
		}
	}
}
