package mechanisms

import (
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// Balle, Barthe, Gaboardi & Geumlek (2019) wired to the samplers: which
// configuration satisfies which theorem, with every assumption checked on
// numbers (docs/derivations/balle-wiring.md).
//
//   - Thm 5 (one-pass noisy projected SGD on a smooth, strongly convex
//     loss): SGLD without clipping, with a constant step, visiting the
//     records in a shuffled order (cyclic or reshuffle), released within
//     its first epoch. ULA uses every record at every iteration, so it is
//     one pass only when it runs a single iteration.
//   - Cor 7 (Ornstein–Uhlenbeck mechanism): ULA without projection, and
//     full-batch SGLD, on a target whose exact posterior is Gaussian with
//     the same isotropic precision on D and D′: the chain is then exactly
//     an OU process sampled at unit times (closedform.OUChain).
//   - Thm 1 (amplification by mixing) needs a data-independent kernel
//     after a DP release; no sampler here has one.
//
// Projected ULA, for which none of them holds beyond one iteration, gets
// the adaptive composition of its Gaussian steps instead.

const (
	balleThm5Source = "Balle et al. 2019, Thm 5 (one-pass noisy projected SGD)"
	balleCor7Source = "Balle et al. 2019, Cor 7 (Ornstein–Uhlenbeck mechanism)"
)

// balleMixing says why Thm 1 does not apply to the sampler's release.
func balleMixing(s Sampler) closedform.Guarantee {
	return uncovered("Balle et al. 2019, Thm 1 (amplification by mixing)",
		fmt.Sprintf("%s uses D in every transition up to the release; Thm 1 amplifies a DP release followed by a data-independent Markov kernel (γ-Dobrushin, Doeblin or ultra-mixing), and none follows it", s.Name()))
}

// balleAcceptReject says why Thm 5 and Cor 7 do not apply to an
// accept/reject sampler.
func balleAcceptReject() closedform.Guarantee {
	return uncovered("Balle et al. 2019, Thm 5 and Cor 7",
		"an accept/reject step is neither a noisy gradient step on a convex loss (Thm 5) nor an Ornstein–Uhlenbeck kernel (Cor 7)")
}

// differing returns the two records that differ between D and D′
// (replace-one adjacency only).
func differing(p dataset.Pair) (z, z2 dataset.Record, err error) {
	if p.Adjacency != dataset.ReplaceOne {
		return z, z2, fmt.Errorf("Thm 5 changes one record in place (replace-one adjacency); the pair is %s", p.Adjacency)
	}
	if p.D == nil || p.DPrime == nil || p.D.Virtual > 0 || p.Index < 0 || p.Index >= len(p.D.Records) || p.Index >= len(p.DPrime.Records) {
		return z, z2, fmt.Errorf("the differing records of D and D′ are not materialised")
	}
	return p.D.Records[p.Index], p.DPrime.Records[p.Index], nil
}

// lossCurvature returns β and ρ of the step loss
// −ln p(θ) − scale·Σ_{i∈B} ln p(x_i | θ) with scale·|B| = n: the prior's
// L and a plus n times the records' curvature bounds.
func lossCurvature(st Setting) (beta, rho float64, detail string, err error) {
	cm, ok := st.Model.(CurvatureModel)
	if !ok {
		return 0, 0, "", fmt.Errorf("no curvature bound is known for %s", st.Model.Name())
	}
	c, ok := cm.LikCurvature(st.Records)
	k := st.constants()
	if !ok || k.PriorLipschitz == 0 {
		return 0, 0, "", fmt.Errorf("no curvature bound is known for %s", st.Model.Name())
	}
	nf := float64(st.N)
	beta, rho = k.PriorLipschitz+nf*c.Smooth, k.PriorConvexity+nf*c.Convex
	detail = fmt.Sprintf("β = L + n·%.4g = %.6g, ρ = a + n·%.4g = %.6g (prior L = %g, a = %g, n = %d)", c.Smooth, beta, c.Convex, rho, k.PriorLipschitz, k.PriorConvexity, st.N)
	if !(rho > 0) {
		return beta, rho, detail, fmt.Errorf("the loss is not strongly convex: %s", detail)
	}
	return beta, rho, detail, nil
}

// isotropicPosterior returns the common isotropic posterior precision p of
// D and D′ and the distance between their posterior means, or why they
// do not have one.
func isotropicPosterior(st Setting) (p, shift float64, detail string, err error) {
	gp, ok := st.Model.(GaussianPosterior)
	if !ok {
		return 0, 0, "", fmt.Errorf("the exact posterior of %s is not known to be Gaussian", st.Model.Name())
	}
	pr := st.Pair
	if pr.D == nil || pr.DPrime == nil || pr.D.Virtual > 0 || pr.DPrime.Virtual > 0 {
		return 0, 0, "", fmt.Errorf("the datasets are not materialised")
	}
	m1, c1, err := gp.Posterior(pr.D)
	if err != nil {
		return 0, 0, "", err
	}
	m2, c2, err := gp.Posterior(pr.DPrime)
	if err != nil {
		return 0, 0, "", err
	}
	d := len(m1)
	iso := func(c []float64) (float64, bool) {
		v := c[0]
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				want := 0.0
				if i == j {
					want = v
				}
				if math.Abs(c[i*d+j]-want) > 1e-12*v {
					return v, false
				}
			}
		}
		return v, true
	}
	v1, ok1 := iso(c1)
	v2, ok2 := iso(c2)
	detail = fmt.Sprintf("posterior covariance %.6g·I on D, %.6g·I on D′", v1, v2)
	if !ok1 || !ok2 {
		return 0, 0, "", fmt.Errorf("the posterior covariance is not a multiple of the identity on D and D′ (OU processes of Cor 7 have a scalar rate)")
	}
	if math.Abs(v1-v2) > 1e-12*v1 {
		return 0, 0, detail, fmt.Errorf("the posterior precisions of D and D′ differ (%s): the two chains contract at different rates", detail)
	}
	for i := range m1 {
		shift += (m1[i] - m2[i]) * (m1[i] - m2[i])
	}
	return 1 / v1, math.Sqrt(shift), detail, nil
}

// balleCor7 is Cor 7 for a chain x ← x + h·∇ln π(x) + N(0, v·I) on an
// exact, isotropic Gaussian target.
func balleCor7(st Setting, h, v float64, what string) closedform.Guarantee {
	p, shift, detail, err := isotropicPosterior(st)
	if err != nil {
		return uncovered(balleCor7Source, err.Error())
	}
	a := 1 - h*p
	g, err := closedform.BalleCor7Chain(closedform.OUChain{A: a, NoiseVar: v, Steps: st.Iterations, MeanShift: shift})
	if err != nil {
		return uncovered(balleCor7Source, err.Error())
	}
	g.Checks = append([]closedform.Check{
		{Name: "exact Gaussian posterior with the same isotropic precision p on D and D′", Holds: true, Detail: detail},
		{Name: what + ": x ← A·x + (1 − A)·m_D + N(0, v·I)", Holds: true,
			Detail: fmt.Sprintf("A = 1 − %g·p = %.6g, v = %g, T = %d, ‖m_D − m_D′‖ = %.6g", h, a, v, st.Iterations, shift)},
	}, g.Checks...)
	if !g.Applies {
		g.Reason = "the step is too large for an OU process (A = 1 − h·p must be in (0, 1)): " + fmt.Sprintf("A = %.6g", a)
	}
	g.Release = "final state"
	return g
}

// initBall returns a ball that contains the projection ball and the
// chain's starting point, or the whole space when the start is random.
func initBall(u *ULA, init Init, dim int) Ball {
	if init.FromPrior {
		return Whole
	}
	r := u.Radius
	x0 := init.Theta
	if len(x0) == 0 {
		x0 = make([]float64, dim)
	}
	s := 0.0
	for i, x := range x0 {
		c := 0.0
		if len(u.Center) > 0 {
			c = u.Center[i]
		}
		s += (x - c) * (x - c)
	}
	return Ball{Center: u.Center, Radius: math.Max(r, math.Sqrt(s))}
}

// balleULA: Cor 7 (unprojected, exact isotropic Gaussian target), Thm 5
// (one iteration only) and, for projected ULA, the Gaussian composition.
func balleULA(u *ULA, st Setting) []closedform.Guarantee {
	var out []closedform.Guarantee
	if u.Radius > 0 {
		out = append(out, uncovered(balleCor7Source, "the projection makes the chain non-linear: it is no longer an Ornstein–Uhlenbeck process"))
	} else {
		out = append(out, balleCor7(st, u.Gamma, 2*u.Gamma, "ULA on the exact target"))
	}
	dom := Whole
	if u.Radius > 0 {
		dom = initBall(u, st.Init, st.Model.Dim())
	}
	z, z2, derr := differing(st.Pair)
	G := math.Inf(1)
	if derr == nil {
		if cm, ok := st.Model.(CurvatureModel); ok {
			G = cm.LikGradDiff(z, z2, dom)
		}
	}
	if st.Iterations != 1 {
		out = append(out, uncovered(balleThm5Source, fmt.Sprintf("not one pass: each of the %d iterations uses all %d records (the full gradient), and Thm 5 needs every record to enter exactly one step, which only a single iteration does", st.Iterations, st.N)))
	} else {
		out = append(out, ulaThm5(u, st, G, derr))
	}
	if u.Radius > 0 {
		out = append(out, projectedULAComposition(u, st, G, dom, derr))
	}
	return out
}

// ulaThm5 is Thm 5 for a single ULA iteration: one step of size γ on the
// loss U_D with noise N(0, 2γI) = N(0, γ²σ²I), σ = sqrt(2/γ).
func ulaThm5(u *ULA, st Setting, G float64, derr error) closedform.Guarantee {
	if derr != nil {
		return uncovered(balleThm5Source, derr.Error())
	}
	beta, rho, detail, err := lossCurvature(st)
	if err != nil {
		return uncovered(balleThm5Source, err.Error())
	}
	if math.IsInf(G, 1) {
		return uncovered(balleThm5Source, "the gradient difference of the two differing records is unbounded on the domain")
	}
	p := closedform.NoisySGDParams{Eta: u.Gamma, Sigma: math.Sqrt(2 / u.Gamma), N: 1, Lipschitz: math.Inf(1), GradDiff: G, Smoothness: beta, StrongConvexity: rho}
	g, err := closedform.BalleThm5(p, 0)
	if err != nil {
		return uncovered(balleThm5Source, err.Error())
	}
	g.Checks = append([]closedform.Check{{Name: "one pass (a single iteration)", Holds: true, Detail: fmt.Sprintf("T = 1, step η = γ = %g, σ = sqrt(2/γ) = %.6g", u.Gamma, p.Sigma)},
		{Name: "smooth, strongly convex loss U_D", Holds: true, Detail: detail}}, g.Checks...)
	return g
}

// projectedULAComposition: each projected-ULA step is a Gaussian mechanism
// x_{k−1} − γ∇U_D(x_{k−1}) + N(0, 2γI) followed by the data-independent
// projection; between D and D′ the drift moves by γ·‖∇ln p(z | x) −
// ∇ln p(z′ | x)‖ ≤ γG with x in the ball (the start included), so each step
// is G·sqrt(γ/2)-GDP and T adaptive steps are μ = G·sqrt(Tγ/2)-GDP (Dong,
// Roth & Su 2019, Thm 2.7 and Cor 3.3).
func projectedULAComposition(u *ULA, st Setting, G float64, dom Ball, derr error) closedform.Guarantee {
	const src = "Gaussian mechanism composition (Dong, Roth & Su 2019, Cor. 3.3), projected ULA"
	if derr != nil {
		return uncovered(src, derr.Error())
	}
	if math.IsInf(G, 1) || math.IsNaN(G) {
		reason := "the gradient difference of the two differing records is unbounded"
		if math.IsInf(dom.Radius, 1) {
			reason += " on the whole space (the chain starts from a prior draw, outside any ball)"
		}
		return uncovered(src, reason)
	}
	mu := G * math.Sqrt(float64(st.Iterations)*u.Gamma/2)
	return closedform.Guarantee{
		Source: src, Release: "path (hence every state)", Applies: true,
		Checks: []closedform.Check{{Name: "bounded gradient difference on the ball holding every state", Holds: true,
			Detail: fmt.Sprintf("sup over ‖θ − c‖ ≤ %.6g of ‖∇ln p(z|θ) − ∇ln p(z′|θ)‖ ≤ G = %.6g; γ = %g, T = %d: μ = G·sqrt(Tγ/2) = %.6g", dom.Radius, G, u.Gamma, st.Iterations, mu)}},
		Profile: func(e float64) float64 { return stats.GDPDelta(mu, e) },
		Spec:    gdpSpec(mu),
		RDP:     stats.GaussianRDP(mu),
		Note:    fmt.Sprintf("μ = %.6g-GDP for the pair audited", mu),
	}
}

// balleSGLD: Thm 5 for one shuffled pass, Cor 7 for full batches.
func balleSGLD(s *SGLD, st Setting) []closedform.Guarantee {
	out := sgldThm5(s, st)
	if s.Batch != st.N || s.Scheme == WithReplacement || s.Scheme == Poisson {
		return append(out, uncovered(balleCor7Source, fmt.Sprintf("the drift depends on the random minibatch (batch %d of n = %d, %s): the chain is not an Ornstein–Uhlenbeck process", s.Batch, st.N, s.Scheme)))
	}
	if s.Clip > 0 || s.Step.Gamma != 0 {
		return append(out, uncovered(balleCor7Source, "clipping or a decreasing step makes the chain not an Ornstein–Uhlenbeck process"))
	}
	// Full batches: x ← x + (η/2)∇ln π(x) + N(0, η I) (nominal noise).
	return append(out, balleCor7(st, s.Step.Eta/2, s.Step.Eta, "full-batch SGLD on the exact target"))
}

// sgldThm5 is Thm 5 for SGLD's first epoch: an epoch of a shuffled order
// is one pass over m = ⌈n/b⌉ minibatches, step t being a gradient step of
// size η/2 on ℓ_t(θ) = −ln p(θ) − (n/|B_t|)·Σ_{i∈B_t} ln p(x_i | θ) with
// noise N(0, ηI) = N(0, (η/2)²σ²I), σ = 2/√η. The changed record lies in
// batch t with probability |B_t|/n; the sensitivity of that step is
// (n/|B_t|)·G, bounded by n/min|B|·G.
func sgldThm5(s *SGLD, st Setting) []closedform.Guarantee {
	fail := func(reason string) []closedform.Guarantee {
		return []closedform.Guarantee{uncovered(balleThm5Source, reason)}
	}
	n, b := st.N, s.Batch
	if b < 1 || b > n {
		return fail(fmt.Sprintf("batch %d outside [1, n = %d]", b, n))
	}
	m := (n + b - 1) / b
	switch {
	case s.Scheme != Cyclic && s.Scheme != Reshuffle:
		return fail(fmt.Sprintf("scheme %s can use a record in several steps of an epoch: Thm 5 needs one pass in an order independent of the data (cyclic or reshuffle)", s.Scheme))
	case st.Iterations > m:
		return fail(fmt.Sprintf("not one pass: the release follows %d iterations, more than one epoch of %d (batch %d, n = %d), so records enter several steps", st.Iterations, m, b, n))
	case s.Clip > 0:
		return fail("clipped gradients are not the gradient of a convex loss, so Lemma 18's contraction is not established")
	case s.Step.Gamma != 0:
		return fail("Thm 5 uses a constant step size (sampler.step.gamma must be 0)")
	}
	z, z2, err := differing(st.Pair)
	if err != nil {
		return fail(err.Error())
	}
	beta, rho, cdetail, err := lossCurvature(st)
	if err != nil {
		return fail(err.Error())
	}
	G := st.Model.(CurvatureModel).LikGradDiff(z, z2, Whole)
	if math.IsInf(G, 1) || math.IsNaN(G) {
		return fail(fmt.Sprintf("the gradients of the differing records (%v and %v) differ without bound in θ", z.X, z2.X))
	}
	minB := n - (m-1)*b
	w := make([]float64, m)
	for k := range w {
		size := b
		if k == m-1 {
			size = minB
		}
		w[k] = float64(size) / float64(n)
	}
	eta := s.Step.Eta
	sens := float64(n) / float64(minB) * G
	p := closedform.NoisySGDParams{Eta: eta / 2, Sigma: 2 / math.Sqrt(eta), N: st.Iterations, Lipschitz: math.Inf(1), GradDiff: sens, Smoothness: beta, StrongConvexity: rho}
	pre := []closedform.Check{
		{Name: "one pass in an order independent of the data", Holds: true,
			Detail: fmt.Sprintf("%s order, release after %d of the %d steps of the first epoch (batch %d, n = %d)", s.Scheme, st.Iterations, m, b, n)},
		{Name: "smooth, strongly convex step loss on R^d (no projection: K = R^d)", Holds: true, Detail: cdetail},
		{Name: "sensitivity of a step from the gradient difference (ℓ is not Lipschitz on R^d)", Holds: true,
			Detail: fmt.Sprintf("‖∇ln p(z|θ) − ∇ln p(z′|θ)‖ ≤ G = %.6g for the differing records; step sensitivity n/min|B|·G = %.6g; η_Balle = η/2 = %g, σ = 2/√η = %.6g (nominal noise)", G, sens, eta/2, p.Sigma)},
	}
	worst, err := closedform.BalleThm5(p, 0)
	if err != nil {
		return fail(err.Error())
	}
	mix, err := closedform.BalleThm5Shuffled(p, w)
	if err != nil {
		return fail(err.Error())
	}
	for _, g := range []*closedform.Guarantee{&worst, &mix} {
		g.Checks = append(append([]closedform.Check(nil), pre...), g.Checks...)
	}
	return []closedform.Guarantee{worst, mix}
}
