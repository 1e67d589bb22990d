package mechanisms

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/stats"
	"gonum.org/v1/gonum/mat"
)

// numHessian is the Hessian of −ln p(r | θ) by central differences of the
// model's gradient (step 1e-5: error O(h²) on these smooth likelihoods).
func numHessian(m Model, theta []float64, r dataset.Record) *mat.SymDense {
	d := len(theta)
	h := mat.NewSymDense(d, nil)
	gp, gm := make([]float64, d), make([]float64, d)
	const eps = 1e-5
	for j := 0; j < d; j++ {
		tp := append([]float64(nil), theta...)
		tm := append([]float64(nil), theta...)
		tp[j] += eps
		tm[j] -= eps
		m.GradLogLik(tp, r, gp)
		m.GradLogLik(tm, r, gm)
		for i := 0; i <= j; i++ {
			h.SetSym(i, j, -(gp[i]-gm[i])/(2*eps))
		}
	}
	return h
}

// The curvature bounds hold at random θ (eigenvalues of the numerical
// Hessian, to the 1e-6 of the differences), and reach their values (the
// Gaussian's exactly, the others' within 2% somewhere); the gradient
// difference bound holds at random θ in its domain and is attained for the
// Gaussian (where it does not depend on θ).
func TestCurvatureModels(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	gm, err := NewGauss([]float64{0, 0}, 5, []float64{1, 0.4, 0.4, 0.5})
	if err != nil {
		t.Fatal(err)
	}
	recs := []dataset.Record{{X: []float64{1.5, -0.5}, Y: 1}, {X: []float64{-2, 1}, Y: 0}, {X: []float64{0.3, 0.8}, Y: 1}}
	lin1 := []dataset.Record{{X: []float64{1.5}, Y: 2}, {X: []float64{-0.7}, Y: -1}}
	cases := []struct {
		name string
		m    interface {
			Model
			CurvatureModel
		}
		recs  []dataset.Record
		dom   Ball
		exact bool
	}{
		{"logistic", Logistic{D: 2, Alpha: 1}, recs, Whole, false},
		{"gauss", gm, recs, Whole, true},
		{"linreg", LinReg{D: 2, Alpha: 1, Beta: 2}, recs, Ball{Center: []float64{0.5, -0.2}, Radius: 1.5}, false},
		{"linreg-1d", LinReg{D: 1, Alpha: 1, Beta: 2}, lin1, Ball{Radius: 2}, false},
	}
	for _, c := range cases {
		cv, ok := c.m.LikCurvature(c.recs)
		if !ok {
			t.Fatalf("%s: no curvature", c.name)
		}
		var lo, hi float64 = math.Inf(1), math.Inf(-1)
		for k := 0; k < 400; k++ {
			theta := make([]float64, c.m.Dim())
			for i := range theta {
				theta[i] = 3 * rng.NormFloat64()
			}
			for _, r := range c.recs {
				var es mat.EigenSym
				es.Factorize(numHessian(c.m, theta, r), false)
				for _, v := range es.Values(nil) {
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
			}
		}
		if lo < cv.Convex-1e-6 || hi > cv.Smooth+1e-6 || hi < 0.98*cv.Smooth || (c.exact && math.Abs(lo-cv.Convex) > 1e-6) {
			t.Errorf("%s: Hessian eigenvalues in [%.6g, %.6g], bounds [%.6g, %.6g]", c.name, lo, hi, cv.Convex, cv.Smooth)
		}
		z, z2 := c.recs[0], c.recs[1]
		G := c.m.LikGradDiff(z, z2, c.dom)
		worst := 0.0
		g1, g2 := make([]float64, c.m.Dim()), make([]float64, c.m.Dim())
		for k := 0; k < 4000; k++ {
			theta := make([]float64, c.m.Dim())
			var nn float64
			for i := range theta {
				theta[i] = rng.NormFloat64()
				nn += theta[i] * theta[i]
			}
			// A point of the domain: on its boundary half the time.
			rad := 3.0
			if k%2 == 1 {
				rad = 30
			}
			if !math.IsInf(c.dom.Radius, 1) {
				rad = c.dom.Radius
				if k%2 == 0 {
					rad *= rng.Float64()
				}
			}
			for i := range theta {
				theta[i] *= rad / math.Sqrt(nn)
				if len(c.dom.Center) > 0 {
					theta[i] += c.dom.Center[i]
				}
			}
			c.m.GradLogLik(theta, z, g1)
			c.m.GradLogLik(theta, z2, g2)
			var d2 float64
			for i := range g1 {
				d2 += (g1[i] - g2[i]) * (g1[i] - g2[i])
			}
			worst = math.Max(worst, math.Sqrt(d2))
		}
		if worst > G*(1+1e-12) || (c.exact && math.Abs(worst-G) > 1e-12*G) || worst < 0.5*G {
			t.Errorf("%s: gradient difference up to %.6g, bound %.6g", c.name, worst, G)
		}
	}
	if g := (LinReg{D: 2, Alpha: 1, Beta: 1}).LikGradDiff(recs[0], recs[1], Whole); !math.IsInf(g, 1) {
		t.Errorf("linear regression on the whole space: %g", g)
	}
}

// isoGauss is the two-dimensional Gauss model with identity covariance on
// 30 records, D′ replacing record 0 by a canary.
func isoGauss(t *testing.T) (*Gauss, dataset.Pair) {
	g, err := NewGauss([]float64{0, 0}, 10, []float64{1, 0, 0, 1})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := syntheticGauss(30, []float64{0.5, -0.5}, []float64{1, 0, 0, 1}, 5)
	p, err := dataset.Neighbour(d, dataset.ReplaceOne, 0, dataset.Record{X: []float64{4, 4}})
	if err != nil {
		t.Fatal(err)
	}
	return g, p
}

// find returns the first guarantee whose source and variant contain the
// given strings.
func find(t *testing.T, gs []closedform.Guarantee, source, variant string) closedform.Guarantee {
	t.Helper()
	for _, g := range gs {
		if strings.Contains(g.Source, source) && strings.Contains(g.Variant, variant) {
			return g
		}
	}
	t.Fatalf("no guarantee %q [%q] among %d", source, variant, len(gs))
	return closedform.Guarantee{}
}

func guaranteesAt(c *Chain, p dataset.Pair, it int) []closedform.Guarantee {
	return c.Guarantees(p, ReleasePoint{Iteration: it})
}

func allChecksHold(t *testing.T, g closedform.Guarantee) {
	t.Helper()
	if !g.Applies {
		t.Fatalf("%s [%s] does not apply: %s", g.Source, g.Variant, g.Reason)
	}
	for _, c := range g.Checks {
		if !c.Holds || c.Detail == "" {
			t.Errorf("%s: check %q (%s)", g.Source, c.Name, c.Detail)
		}
	}
}

// Balle et al. Thm 5 on SGLD's first shuffled epoch: both forms apply,
// their values follow from the step's sensitivity (n/b)·G, σ = 2/√η, and
// they refuse, with the reason, every configuration outside the theorem.
func TestBalleThm5OnSGLD(t *testing.T) {
	g, p := isoGauss(t)
	const eta = 0.02
	s := &SGLD{Step: StepSchedule{Eta: eta}, Batch: 6, Scheme: Reshuffle, Epochs: 2}
	c := &Chain{Model: g, Sampler: s, Init: Init{Theta: []float64{0, 0}}}
	gs := guaranteesAt(c, p, 5)
	worst := find(t, gs, "Thm 5", "gradient-difference")
	mix := find(t, gs, "Thm 5", "random visiting order")
	allChecksHold(t, worst)
	allChecksHold(t, mix)
	// G = ‖Σ⁻¹(z − z′)‖ = ‖z − z′‖ (identity covariance), sensitivity
	// (30/6)·G, ε_n = sens²/(2σ²) = sens²·η/8.
	z, z2 := p.D.Records[0], p.DPrime.Records[0]
	G := math.Hypot(z.X[0]-z2.X[0], z.X[1]-z2.X[1])
	sens := 5 * G
	if want := sens * sens * eta / 8; !closeRel(worst.RDP(2)/2, want, 1e-12) {
		t.Errorf("worst position: ε_n = %.15g, want %.15g", worst.RDP(2)/2, want)
	}
	// The mixture over five equally likely batches at α = 2, from Thm 5's
	// ε_i with L² = 1 − 2(η/2)βρ/(β+ρ), β = ρ = 0.01 + 30:
	rho := 0.01 + 30.0
	l2 := 1 - 2*(eta/2)*rho*rho/(2*rho)
	sum := 0.0
	for i := 1; i <= 5; i++ {
		e := sens * sens * eta / 8
		if r := 5 - i; r > 0 {
			e = e / float64(r) * math.Pow(l2, float64(r+1)/2)
		}
		sum += 0.2 * math.Exp(2*e)
	}
	if want := math.Log(sum); !closeRel(mix.RDP(2), want, 1e-12) {
		t.Errorf("mixture RDP(2) = %.15g, want %.15g", mix.RDP(2), want)
	}
	// Mid-epoch: 3 of 5 steps, two batches not yet visited.
	allChecksHold(t, find(t, guaranteesAt(c, p, 3), "Thm 5", "random visiting order"))
	for _, bad := range []struct {
		c    *Chain
		p    dataset.Pair
		it   int
		want string
	}{
		{c, p, 6, "not one pass"},
		{&Chain{Model: g, Sampler: &SGLD{Step: StepSchedule{Eta: eta}, Batch: 6, Scheme: WithoutReplacement, Epochs: 1}}, p, 5, "cyclic or reshuffle"},
		{&Chain{Model: g, Sampler: &SGLD{Step: StepSchedule{Eta: eta}, Batch: 6, Scheme: Cyclic, Epochs: 1, Clip: 1}}, p, 5, "clipped gradients"},
		{&Chain{Model: g, Sampler: &SGLD{Step: StepSchedule{Eta: eta, B: 10, Gamma: 0.5}, Batch: 6, Scheme: Cyclic, Epochs: 1}}, p, 5, "constant step"},
		{&Chain{Model: g, Sampler: &SGLD{Step: StepSchedule{Eta: 0.2}, Batch: 6, Scheme: Cyclic, Epochs: 1}}, p, 5, "η ≤ 2/(β+ρ)"},
		{&Chain{Model: LinReg{D: 2, Alpha: 1, Beta: 1}, Sampler: s}, linPair(t), 5, "without bound"},
	} {
		gs := guaranteesAt(bad.c, bad.p, bad.it)
		g := find(t, gs, "Thm 5", "")
		if g.Applies || !strings.Contains(g.Reason, bad.want) {
			t.Errorf("%s at %d: applies %v, reason %q; want %q", bad.c.Sampler.Name(), bad.it, g.Applies, g.Reason, bad.want)
		}
	}
	rm, _ := dataset.Neighbour(p.D, dataset.RemoveOne, 0, dataset.Record{})
	if g := find(t, guaranteesAt(&Chain{Model: g, Sampler: &SGLD{Step: StepSchedule{Eta: eta}, Batch: 6, Scheme: Cyclic, Epochs: 1}}, rm, 5), "Thm 5", ""); g.Applies || !strings.Contains(g.Reason, "replace-one") {
		t.Errorf("remove-one: %q", g.Reason)
	}
}

func linPair(t *testing.T) dataset.Pair {
	d, _ := syntheticLinReg(30, []float64{0.8, -0.5}, 1, 1, 3)
	p, err := dataset.Neighbour(d, dataset.ReplaceOne, 0, dataset.Record{X: []float64{2, 2}, Y: -3})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func closeRel(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Abs(b) }

// exactLinearMu is μ of the final state of x ← A·x + (1 − A)·m + N(0, vI)
// from x₀ on D and D′, by iterating the mean difference and the variance
// step by step (independent of OUChain's closed form).
func exactLinearMu(a, v float64, steps int, m1, m2 []float64) float64 {
	var md2, vr float64
	diff := make([]float64, len(m1))
	for k := 0; k < steps; k++ {
		for i := range diff {
			diff[i] = a*diff[i] + (1-a)*(m1[i]-m2[i])
		}
		vr = a*a*vr + v
	}
	for _, x := range diff {
		md2 += x * x
	}
	return math.Sqrt(md2 / vr)
}

// Balle et al. Cor 7 on ULA and on full-batch SGLD over an isotropic
// Gaussian target: it applies and gives the exact μ of the final state;
// it refuses a non-isotropic posterior, a projection, minibatches and a
// step too large for an OU process.
func TestBalleCor7OnLangevin(t *testing.T) {
	g, p := isoGauss(t)
	m1, _, _ := g.Posterior(p.D)
	m2, c2, _ := g.Posterior(p.DPrime)
	prec := 1 / c2[0]
	for _, c := range []struct {
		s    Sampler
		h, v float64
	}{
		{&ULA{Gamma: 0.01, Iters: 40}, 0.01, 0.02},
		{&SGLD{Step: StepSchedule{Eta: 0.02}, Batch: 30, Scheme: WithoutReplacement, Iters: 40}, 0.01, 0.02},
		{&SGLD{Step: StepSchedule{Eta: 0.04}, Batch: 30, Scheme: Cyclic, Iters: 40}, 0.02, 0.04},
	} {
		gu := find(t, guaranteesAt(&Chain{Model: g, Sampler: c.s}, p, 25), "Cor 7", "")
		allChecksHold(t, gu)
		mu := exactLinearMu(1-c.h*prec, c.v, 25, m1, m2)
		e, _ := gu.Epsilon(1e-5)
		want, _ := stats.GDPEpsilon(mu, 1e-5)
		if !closeRel(e, want, 1e-9) {
			t.Errorf("%s: Cor 7 ε = %.12g, exact %.12g (μ = %.6g)", c.s.Name(), e, want, mu)
		}
	}
	aniso, _ := NewGauss([]float64{0, 0}, 10, []float64{1, 0.3, 0.3, 1})
	for _, bad := range []struct {
		m    Model
		s    Sampler
		want string
	}{
		{aniso, &ULA{Gamma: 0.01, Iters: 40}, "multiple of the identity"},
		{g, &ULA{Gamma: 0.01, Iters: 40, Radius: 3}, "projection"},
		{g, &ULA{Gamma: 0.05, Iters: 40}, "A = 1 − h·p must be in (0, 1)"},
		{g, &SGLD{Step: StepSchedule{Eta: 0.02}, Batch: 10, Scheme: Cyclic, Iters: 40}, "random minibatch"},
		{Logistic{D: 2, Alpha: 1}, &ULA{Gamma: 0.01, Iters: 40}, "not known to be Gaussian"},
	} {
		gu := find(t, guaranteesAt(&Chain{Model: bad.m, Sampler: bad.s}, p, 25), "Cor 7", "")
		if gu.Applies || !strings.Contains(gu.Reason, bad.want) {
			t.Errorf("%s on %s: applies %v, %q; want %q", bad.s.Name(), bad.m.Name(), gu.Applies, gu.Reason, bad.want)
		}
	}
}

// ULA is one pass only for a single iteration; projected ULA gets the
// composition of its Gaussian steps, with the gradient difference taken
// on the ball that holds the start and every state; every list ends with
// Thm 1 not applying, and accept/reject samplers say why Thm 5 and Cor 7
// do not apply to them.
func TestBalleOnULAAndOthers(t *testing.T) {
	g, p := isoGauss(t)
	gs := guaranteesAt(&Chain{Model: g, Sampler: &ULA{Gamma: 0.01, Iters: 40}}, p, 25)
	if th := find(t, gs, "Thm 5", ""); th.Applies || !strings.Contains(th.Reason, "not one pass") {
		t.Errorf("ULA, 25 iterations: %q", th.Reason)
	}
	one := find(t, guaranteesAt(&Chain{Model: g, Sampler: &ULA{Gamma: 0.01, Iters: 1}}, p, 1), "Thm 5", "")
	allChecksHold(t, one)
	z, z2 := p.D.Records[0], p.DPrime.Records[0]
	G := math.Hypot(z.X[0]-z2.X[0], z.X[1]-z2.X[1])
	if want := G * G * 0.01 / 4; !closeRel(one.RDP(2)/2, want, 1e-12) { // sens G, σ² = 2/γ
		t.Errorf("one ULA step: ε = %.15g, want %.15g", one.RDP(2)/2, want)
	}
	lp := linPair(t)
	lin := LinReg{D: 2, Alpha: 1, Beta: 1}
	u := &ULA{Gamma: 0.005, Iters: 60, Radius: 2}
	comp := find(t, guaranteesAt(&Chain{Model: lin, Sampler: u, Init: Init{Theta: []float64{0, 0}}}, lp, 60), "composition", "")
	allChecksHold(t, comp)
	Gb := lin.LikGradDiff(lp.D.Records[0], lp.DPrime.Records[0], Ball{Radius: 2})
	mu := Gb * math.Sqrt(60*0.005/2)
	if e, _ := comp.Epsilon(1e-5); !closeRel(e, must(stats.GDPEpsilon(mu, 1e-5)), 1e-9) {
		t.Errorf("projected ULA: ε = %g, μ = %g", e, mu)
	}
	// A start outside the ball widens the domain; a prior draw leaves it
	// unbounded.
	far := find(t, guaranteesAt(&Chain{Model: lin, Sampler: u, Init: Init{Theta: []float64{3, 4}}}, lp, 60), "composition", "")
	if e1, _ := comp.Epsilon(1e-5); !far.Applies || must(far.Epsilon(1e-5)) <= e1 || !strings.Contains(far.Checks[0].Detail, "≤ 5 of") {
		t.Errorf("start at (3, 4): %+v", far.Checks)
	}
	if pr := find(t, guaranteesAt(&Chain{Model: lin, Sampler: u, Init: Init{FromPrior: true}}, lp, 60), "composition", ""); pr.Applies || !strings.Contains(pr.Reason, "prior draw") {
		t.Errorf("prior start: %q", pr.Reason)
	}
	for _, c := range []*Chain{
		{Model: g, Sampler: &DPPenalty{Iters: 10, ProposalSD: []float64{0.1}, ClipLLR: 1, Tau: 1}},
		{Model: g, Sampler: &DPHMC{Iters: 10, Step: 0.1, LeapfrogSteps: 2, ClipLLR: 1, ClipGrad: 1, TauL: 1, TauG: 1}},
		{Model: NewLinReg1D(1, 1), Sampler: &DPBarker{Step: 0.1, Iters: 10, Clip: 1}},
	} {
		pr := p
		if _, ok := c.Model.(LinReg); ok {
			d, _ := syntheticLinReg(30, []float64{1}, 1, 1, 1)
			pr, _ = dataset.Neighbour(d, dataset.ReplaceOne, 0, dataset.Record{X: []float64{2}, Y: 1})
		}
		gs := guaranteesAt(c, pr, 10)
		if ar := find(t, gs, "Thm 5 and Cor 7", ""); ar.Applies || !strings.Contains(ar.Reason, "accept/reject") {
			t.Errorf("%s: %q", c.Sampler.Name(), ar.Reason)
		}
		if last := gs[len(gs)-1]; last.Applies || !strings.Contains(last.Source, "Thm 1 (amplification by mixing)") || !strings.Contains(last.Reason, "data-independent") {
			t.Errorf("%s: last entry %q %q", c.Sampler.Name(), last.Source, last.Reason)
		}
	}
}

func must(x float64, err error) float64 {
	if err != nil {
		panic(err)
	}
	return x
}
