package mechanisms

import (
	"fmt"
	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"gonum.org/v1/gonum/mat"
)

// invert returns the inverse of the d×d symmetric positive-definite a.
func invert(a []float64, d int) []float64 {
	var ch mat.Cholesky
	if !ch.Factorize(mat.NewSymDense(d, append([]float64(nil), a...))) {
		panic("not positive definite")
	}
	var inv mat.SymDense
	if err := ch.InverseTo(&inv); err != nil {
		panic(err)
	}
	out := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			out[i*d+j] = inv.At(i, j)
		}
	}
	return out
}

// refHMC is plain (optionally noisy) HMC on a Gaussian target N(m, S),
// written independently of the sampler from the closed-form target:
// U(θ) = ½(θ−m)ᵀP(θ−m) with P = S⁻¹, ∇ ln π = −P(θ−m), the textbook
// leapfrog (Neal 2011, eqs. 5.18–5.20) with diagonal mass. sigmaG adds
// N(0, σ_g² I) to every gradient evaluation (Räisä et al. §3). flip and
// fullFirst plant bugs (momentum step against the gradient; a full first
// momentum step) for the power checks.
type refHMC struct {
	mean, prec      []float64
	d               int
	invMass         []float64
	eta             float64
	L               int
	sigmaG          float64
	flip, fullFirst bool
}

func newRefHMC(mean, cov []float64, mass []float64, eta float64, L int) *refHMC {
	d := len(mean)
	r := &refHMC{mean: mean, prec: invert(cov, d), d: d, invMass: make([]float64, d), eta: eta, L: L}
	for k := range r.invMass {
		r.invMass[k] = 1
		if len(mass) > 0 {
			r.invMass[k] = 1 / mass[min(k, len(mass)-1)]
		}
	}
	return r
}

func (r *refHMC) U(th []float64) float64 {
	var q float64
	for i := 0; i < r.d; i++ {
		for j := 0; j < r.d; j++ {
			q += (th[i] - r.mean[i]) * r.prec[i*r.d+j] * (th[j] - r.mean[j])
		}
	}
	return 0.5 * q
}

func (r *refHMC) K(p []float64) float64 {
	var s float64
	for k, v := range p {
		s += v * v * r.invMass[k]
	}
	return 0.5 * s
}

// force returns ∇ ln π(θ) (+ noise).
func (r *refHMC) force(th []float64, rng *rand.Rand) []float64 {
	f := make([]float64, r.d)
	for i := 0; i < r.d; i++ {
		for j := 0; j < r.d; j++ {
			f[i] -= r.prec[i*r.d+j] * (th[j] - r.mean[j])
		}
		if r.sigmaG > 0 {
			f[i] += r.sigmaG * rng.NormFloat64()
		}
		if r.flip {
			f[i] = -f[i]
		}
	}
	return f
}

// trajectory returns the end (θ′, p′) of the leapfrog from (θ, p).
func (r *refHMC) trajectory(th0, p0 []float64, rng *rand.Rand) (th, p []float64) {
	th = append([]float64(nil), th0...)
	p = append([]float64(nil), p0...)
	first := r.eta / 2
	if r.fullFirst {
		first = r.eta
	}
	f := r.force(th, rng)
	for k := range p {
		p[k] += first * f[k]
	}
	for j := 0; j < r.L; j++ {
		for k := range th {
			th[k] += r.eta * r.invMass[k] * p[k]
		}
		f = r.force(th, rng)
		s := r.eta
		if j == r.L-1 {
			s = r.eta / 2
		}
		for k := range p {
			p[k] += s * f[k]
		}
	}
	return th, p
}

// gaussTarget is the test posterior: the Gauss model with an informative
// prior, 20 records, correlated Σ (posterior SDs 0.20 and 0.14,
// correlation 0.82).
func gaussTarget(t testing.TB) (Model, *dataset.Dataset, []float64, []float64) {
	g := mustGauss(t, []float64{1, -1}, 0.5, testCov2)
	d, err := syntheticGauss(20, []float64{0.3, 0.8}, testCov2, 4)
	if err != nil {
		t.Fatal(err)
	}
	mean, cov, err := g.Posterior(d)
	if err != nil {
		t.Fatal(err)
	}
	return g, d, mean, cov
}

// linregTarget is 2-D Bayesian linear regression with 20 records.
func linregTarget(t testing.TB) (Model, *dataset.Dataset, []float64, []float64) {
	m := LinReg{D: 2, Alpha: 2, Beta: 1}
	d, err := syntheticLinReg(20, []float64{0.7, -0.4}, 1, 1, 6)
	if err != nil {
		t.Fatal(err)
	}
	mean, cov, err := m.Posterior(d)
	if err != nil {
		t.Fatal(err)
	}
	return m, d, mean, cov
}

// With the noise off and clip bounds that never bind, DP-HMC's leapfrog and
// log acceptance ratio equal plain HMC's on the posterior, computed by
// refHMC from the closed-form posterior density (not from per-record
// likelihoods): θ′ and p′ to 1e-9 and ΔH to 1e-8 (relative to the energy
// scale), over 200 random starts and momenta, with unit and non-unit mass,
// for the Gauss model (fast and generic paths) and linear regression.
func TestHMCMatchesReferenceNoiseOff(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	gaussGeneric := func(tb testing.TB) (Model, *dataset.Dataset, []float64, []float64) {
		m, d, mean, cov := gaussTarget(tb)
		return hideRatio{m}, d, mean, cov
	}
	for _, tg := range []func(testing.TB) (Model, *dataset.Dataset, []float64, []float64){gaussTarget, gaussGeneric, linregTarget} {
		m, d, mean, cov := tg(t)
		for _, mass := range [][]float64{nil, {0.5, 2}} {
			for _, clip := range []float64{math.Inf(1), 1e6} {
				h := &DPHMC{Iters: 1, Step: 0.03, LeapfrogSteps: 7, Mass: mass, ClipLLR: clip, ClipGrad: clip, NoNoise: true}
				if err := h.Check(m, d); err != nil {
					t.Fatal(err)
				}
				ref := newRefHMC(mean, cov, mass, h.Step, h.LeapfrogSteps)
				for trial := 0; trial < 50; trial++ {
					theta := []float64{mean[0] + 0.5*rng.NormFloat64(), mean[1] + 0.5*rng.NormFloat64()}
					w := newHMCWork(h, m, d, theta)
					for k := range w.p0 {
						w.p0[k] = w.sqrtMass[k] * rng.NormFloat64()
					}
					if !w.leapfrog(theta, h.Step, nil) {
						t.Fatal("trajectory diverged")
					}
					dH, _, _ := w.deltaH(theta, m.LogPrior(theta))
					thR, pR := ref.trajectory(theta, w.p0, nil)
					for k := range thR {
						if math.Abs(w.thetaP[k]-thR[k]) > 1e-9*(1+math.Abs(thR[k])) || math.Abs(w.p[k]-pR[k]) > 1e-9*(1+math.Abs(pR[k])) {
							t.Fatalf("%s: leapfrog end (%v, %v), reference (%v, %v)", m.Name(), w.thetaP, w.p, thR, pR)
						}
					}
					h0 := ref.U(theta) + ref.K(w.p0)
					h1 := ref.U(thR) + ref.K(pR)
					if math.Abs(dH-(h0-h1)) > 1e-8*(1+h0+h1) {
						t.Fatalf("%s: ΔH = %.12g, reference H(θ,p) − H(θ′,p′) = %.12g", m.Name(), dH, h0-h1)
					}
					if w.info.ClippedGrads != 0 || w.info.ClippedLLRs != 0 {
						t.Fatalf("clipping with bound %g", clip)
					}
					if w.info.GradEvals != (h.LeapfrogSteps+1)*d.Len() || w.info.LLREvals != d.Len() {
						t.Fatalf("%d gradient and %d ratio evaluations for L = %d, n = %d", w.info.GradEvals, w.info.LLREvals, h.LeapfrogSteps, d.Len())
					}
				}
			}
		}
	}
}

// acceptanceFromFixed runs N one-iteration chains from theta0 and returns
// the acceptance frequency.
func acceptanceFromFixed(t *testing.T, s Sampler, m Model, d *dataset.Dataset, theta0 []float64, N int, seed uint64) (float64, Info) {
	t.Helper()
	var info Info
	for k := 0; k < N; k++ {
		th := append([]float64(nil), theta0...)
		in, err := s.Run(m, d, th, TrialRNG(seed, dataset.SideD, k, 0), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		info.Add(in)
	}
	return float64(info.Accepted) / float64(N), info
}

// The acceptance behaviour of whole DP-HMC iterations from a fixed state,
// against refHMC: the frequency over N runs versus the reference's mean
// acceptance probability over M independent momenta (and noise), with SE
// sqrt(a(1−a)/N + Var/M). Noise off: the probability is min(1, e^{ΔH}).
// Noise on: the reference adds N(0, σ_g²) to each of its L+1 gradients and
// uses penaltyProb(ΔH, σ_l) with σ_l = 2τ_l b_l‖θ′−θ‖. Power (asserted ≥ 10
// SE): the momentum step against the gradient, a full first momentum step,
// and (noise on) σ_l doubled or σ_g tripled.
func TestHMCAcceptanceFromFixedState(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	m, d, mean, cov := gaussTarget(t)
	theta0 := []float64{mean[0] + 0.25, mean[1] + 0.05}
	const N, M = 20000, 100000
	for _, noise := range []bool{false, true} {
		h := &DPHMC{Iters: 1, Step: 0.06, LeapfrogSteps: 6, Mass: []float64{1, 0.5}, ClipLLR: 15, ClipGrad: 15, TauL: 0.3, TauG: 0.15}
		if !noise {
			h.TauL, h.TauG, h.NoNoise = 0, 0, true
		}
		if err := h.Check(m, d); err != nil {
			t.Fatal(err)
		}
		a, info := acceptanceFromFixed(t, h, m, d, theta0, N, 17)
		if info.ClippedGrads != 0 || info.ClippedLLRs != 0 {
			t.Fatalf("clipping: %+v", info)
		}
		refProb := func(mod func(*refHMC), sigScale float64) (float64, float64) {
			ref := newRefHMC(mean, cov, h.Mass, h.Step, h.LeapfrogSteps)
			if noise {
				ref.sigmaG = 2 * h.ClipGrad * h.TauG
			}
			if mod != nil {
				mod(ref)
			}
			rng := rand.New(rand.NewPCG(61, 62))
			ps := make([]float64, M)
			p := make([]float64, 2)
			for i := range ps {
				for k := range p {
					p[k] = rng.NormFloat64() / math.Sqrt(ref.invMass[k])
				}
				th, p1 := ref.trajectory(theta0, p, rng)
				dH := ref.U(theta0) + ref.K(p) - ref.U(th) - ref.K(p1)
				sig := 0.0
				if noise {
					sig = sigScale * 2 * h.TauL * h.ClipLLR * distance(theta0, th)
				}
				if dH != dH {
					ps[i] = 0
					continue
				}
				ps[i] = penaltyProb(dH, sig)
			}
			mu, _, s, _ := testutil.SampleMoments(ps)
			return mu, s
		}
		want, seRef := refProb(nil, 1)
		se := math.Hypot(math.Sqrt(a*(1-a)/N), seRef)
		name := "HMC noise off"
		if noise {
			name = "DP-HMC"
		}
		checkMoment(t, name+" acceptance rate", a, want, se)
		t.Logf("%s: acceptance %.4f, reference %.4f, SE %.4f", name, a, want, se)
		if a < 0.2 || a > 0.95 {
			t.Errorf("%s: acceptance %g is too extreme for a sharp test", name, a)
		}
		alts := map[string]func() (float64, float64){
			"momentum step against the gradient": func() (float64, float64) { return refProb(func(r *refHMC) { r.flip = true }, 1) },
			"full first momentum step":           func() (float64, float64) { return refProb(func(r *refHMC) { r.fullFirst = true }, 1) },
		}
		if noise {
			alts["σ_l doubled"] = func() (float64, float64) { return refProb(nil, 2) }
			alts["σ_g tripled"] = func() (float64, float64) { return refProb(func(r *refHMC) { r.sigmaG *= 3 }, 1) }
		}
		for what, f := range alts {
			alt, _ := f()
			t.Logf("%s: with %s the reference would be %.4f (%.0f SE)", name, what, alt, math.Abs(alt-want)/se)
			if z := math.Abs(alt-want) / se; z < 10 {
				t.Errorf("%s: %s moves the acceptance rate only %.1f SE", name, what, z)
			}
		}
	}
}

// posteriorDraw returns a sampler of N(mean, cov).
func posteriorDraw(mean, cov []float64) func(*rand.Rand, []float64) {
	d := len(mean)
	var ch mat.Cholesky
	if !ch.Factorize(mat.NewSymDense(d, append([]float64(nil), cov...))) {
		panic("not positive definite")
	}
	var l mat.TriDense
	ch.LTo(&l)
	return func(rng *rand.Rand, th []float64) {
		z := make([]float64, d)
		for i := range z {
			z[i] = rng.NormFloat64()
		}
		for i := 0; i < d; i++ {
			th[i] = mean[i]
			for j := 0; j <= i; j++ {
				th[i] += l.At(i, j) * z[j]
			}
		}
	}
}

// runFromPosterior runs N independent chains; chain k starts from an exact
// posterior draw (stream 1 of trial k's RNG) and runs on stream 0. It
// returns the start and final states per coordinate, [coord][chain].
func runFromPosterior(t *testing.T, s Sampler, m Model, d *dataset.Dataset, draw func(*rand.Rand, []float64), N int, seed uint64) (start, final [][]float64, info Info) {
	t.Helper()
	if err := s.Check(m, d); err != nil {
		t.Fatal(err)
	}
	dim := m.Dim()
	start, final = make([][]float64, dim), make([][]float64, dim)
	for i := range start {
		start[i], final[i] = make([]float64, N), make([]float64, N)
	}
	th := make([]float64, dim)
	for k := 0; k < N; k++ {
		draw(TrialRNG(seed, dataset.SideD, k, 1), th)
		for i, v := range th {
			start[i][k] = v
		}
		in, err := s.Run(m, d, th, TrialRNG(seed, dataset.SideD, k, 0), []int{s.Iterations(d)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		info.Add(in)
		for i, v := range th {
			final[i][k] = v
		}
	}
	return start, final, info
}

func correlation(a, b []float64) float64 {
	ma, va, _, _ := testutil.SampleMoments(a)
	mb, vb, _, _ := testutil.SampleMoments(b)
	var c float64
	for k := range a {
		c += (a[k] - ma) * (b[k] - mb)
	}
	return c / float64(len(a)) / math.Sqrt(va*vb)
}

// checkStationary is the exactness test of a sampler whose invariant law is
// the posterior (mean, cov): chains started from exact posterior draws
// must still be posterior-distributed after any number of iterations, so
// the final states' means, variances and covariance are compared with the
// exact values (4.5 delta-method SEs, independent chains). Power: the
// chains must forget their start (|corr(start, final)| ≤ 0.3 per
// coordinate, measured), so a kernel with another invariant law would carry
// the final law at least 70% of the way towards it; and the plausible wrong
// laws given (alt: name → mean, cov) must be ≥ 10 SE away after that 0.7
// factor (asserted).
func checkStationary(t *testing.T, name string, start, final [][]float64, mean, cov []float64, alts map[string][2][]float64) {
	t.Helper()
	dim := len(mean)
	sem, sev := make([]float64, dim), make([]float64, dim)
	for i := 0; i < dim; i++ {
		m, v, se1, se2 := testutil.SampleMoments(final[i])
		sem[i], sev[i] = se1, se2
		checkMoment(t, fmt.Sprintf("%s: mean[%d]", name, i), m, mean[i], se1)
		checkMoment(t, fmt.Sprintf("%s: var[%d]", name, i), v, cov[i*dim+i], se2)
		t.Logf("%s: mean[%d] %.5f (exact %.5f, %.1f SE), var[%d] %.5f (exact %.5f, %.1f SE)", name, i, m, mean[i], (m-mean[i])/se1, i, v, cov[i*dim+i], (v-cov[i*dim+i])/se2)
		if c := correlation(start[i], final[i]); math.Abs(c) > 0.3 {
			t.Errorf("%s: coordinate %d keeps correlation %.2f with its start: the test cannot see the invariant law", name, i, c)
		}
	}
	for i := 0; i < dim; i++ {
		for j := i + 1; j < dim; j++ {
			checkCovariance(t, fmt.Sprintf("%s: cov[%d][%d]", name, i, j), final[i], final[j], cov[i*dim+j])
		}
	}
	for what, alt := range alts {
		best := 0.0
		for i := 0; i < dim; i++ {
			best = math.Max(best, 0.7*math.Abs(alt[0][i]-mean[i])/sem[i])
			best = math.Max(best, 0.7*math.Abs(alt[1][i*dim+i]-cov[i*dim+i])/sev[i])
		}
		t.Logf("%s: wrong law %q is %.0f SE away", name, what, best)
		if best < 10 {
			t.Errorf("%s: the wrong law %q is only %.1f SE away", name, what, best)
		}
	}
}

// wrongLaws returns the plausible wrong targets of a conjugate model: the
// tempered posterior π² (half the covariance) and the posterior without
// the prior (the likelihood's Gaussian, from flat-prior variants of m).
func wrongLaws(t *testing.T, flat GaussianPosterior, d *dataset.Dataset, mean, cov []float64) map[string][2][]float64 {
	fm, fc, err := flat.Posterior(d)
	if err != nil {
		t.Fatal(err)
	}
	half := make([]float64, len(cov))
	for i, c := range cov {
		half[i] = c / 2
	}
	return map[string][2][]float64{"tempered π²": {mean, half}, "prior dropped": {fm, fc}}
}

// DP-HMC with noise ON and clip bounds that never bind (counters asserted
// 0) targets the posterior exactly (Räisä et al. Thm 3.3): the Gauss model
// and 2-D linear regression, 10000 chains of 12 iterations each from exact
// posterior draws, constant and Halton-jittered steps.
func TestDPHMCTargetsPosterior(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	testDPHMCTargetsPosterior(t, 10000)
}

func testDPHMCTargetsPosterior(t *testing.T, chains int) {
	gm, gd, gmean, gcov := gaussTarget(t)
	lm, ld, lmean, lcov := linregTarget(t)
	flatG := mustGauss(t, nil, 1e8, testCov2)
	flatL := LinReg{D: 2, Alpha: 1e-12, Beta: 1}
	cases := []struct {
		name      string
		m         Model
		d         *dataset.Dataset
		mean, cov []float64
		flat      GaussianPosterior
		h         *DPHMC
		minAccept float64
	}{
		{"gauss", gm, gd, gmean, gcov, flatG, &DPHMC{Iters: 12, Step: 0.04, LeapfrogSteps: 8, ClipLLR: 15, ClipGrad: 15, TauL: 0.1, TauG: 0.1}, 0.4},
		{"gauss halton", gm, gd, gmean, gcov, flatG, &DPHMC{Iters: 12, Step: 0.08, LeapfrogSteps: 8, StepJitter: JitterHalton, ClipLLR: 15, ClipGrad: 15, TauL: 0.1, TauG: 0.1}, 0.4},
		{"linreg", lm, ld, lmean, lcov, flatL, &DPHMC{Iters: 12, Step: 0.06, LeapfrogSteps: 8, Mass: []float64{1.2, 0.8}, ClipLLR: 10, ClipGrad: 10, TauL: 0.1, TauG: 0.1}, 0.4},
	}
	for _, c := range cases {
		start, final, info := runFromPosterior(t, c.h, c.m, c.d, posteriorDraw(c.mean, c.cov), chains, 3)
		if info.ClippedGrads != 0 || info.ClippedLLRs != 0 {
			t.Errorf("%s: %d gradients and %d ratios clipped", c.name, info.ClippedGrads, info.ClippedLLRs)
		}
		t.Logf("%s: acceptance rate %.3f", c.name, info.AcceptanceRate())
		if a := info.AcceptanceRate(); a < c.minAccept || a > 0.97 {
			t.Errorf("%s: acceptance rate %.3f", c.name, a)
		}
		checkStationary(t, c.name, start, final, c.mean, c.cov, wrongLaws(t, c.flat, c.d, c.mean, c.cov))
	}
}

// DP-HMC on the banana posterior (non-Gaussian, strongly curved), noise on,
// no clipping: the final states of chains started from exact Ban(μ, Σ, a)
// draws keep the exact banana moments of BananaLaw. Wrong laws for the
// power check: the tempered law and the unbent Gaussian's moments.
func TestDPHMCTargetsBanana(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	testDPHMCTargetsBanana(t, 10000)
}

func testDPHMCTargetsBanana(t *testing.T, chains int) {
	b := Banana{A: 2, PriorVar: 4, Var1: 1, Var2: 1}
	d, err := syntheticBanana(10, [2]float64{0.5, 1}, b, 3)
	if err != nil {
		t.Fatal(err)
	}
	law, err := b.BananaPosterior(d)
	if err != nil {
		t.Fatal(err)
	}
	mv, cv := law.Mean(), law.Cov()
	mean := mv[:]
	cov := []float64{cv[0][0], cv[0][1], cv[1][0], cv[1][1]}
	tempered := BananaLaw{Mu: law.Mu, Var: [2]float64{law.Var[0] / 2, law.Var[1] / 2}, A: law.A}
	tm, tc := tempered.Mean(), tempered.Cov()
	unbent := BananaLaw{Mu: law.Mu, Var: law.Var}
	um, uc := unbent.Mean(), unbent.Cov()
	alts := map[string][2][]float64{
		"tempered": {tm[:], []float64{tc[0][0], tc[0][1], tc[1][0], tc[1][1]}},
		"unbent":   {um[:], []float64{uc[0][0], uc[0][1], uc[1][0], uc[1][1]}},
	}
	h := &DPHMC{Iters: 30, Step: 0.05, LeapfrogSteps: 10, ClipLLR: 200, ClipGrad: 200, TauL: 0.005, TauG: 0.003, StepJitter: JitterHalton}
	start, final, info := runFromPosterior(t, h, b, d, law.Sample, chains, 4)
	if info.ClippedGrads != 0 || info.ClippedLLRs != 0 {
		t.Errorf("%d gradients and %d ratios clipped", info.ClippedGrads, info.ClippedLLRs)
	}
	if a := info.AcceptanceRate(); a < 0.4 || a > 0.97 {
		t.Errorf("acceptance rate %.3f", a)
	}
	checkStationary(t, "banana", start, final, mean, cov, alts)
}

// DP-penalty with noise ON and no clipping targets the posterior exactly
// (the penalty method is exact for Gaussian noise of known variance), on
// the Gauss model and 2-D linear regression; same design as
// TestDPHMCTargetsPosterior with longer random-walk chains.
func TestDPPenaltyTargetsPosterior(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	testDPPenaltyTargetsPosterior(t, 10000)
}

func testDPPenaltyTargetsPosterior(t *testing.T, chains int) {
	gm, gd, gmean, gcov := gaussTarget(t)
	lm, ld, lmean, lcov := linregTarget(t)
	cases := []struct {
		name      string
		m         Model
		d         *dataset.Dataset
		mean, cov []float64
		flat      GaussianPosterior
		s         *DPPenalty
	}{
		{"gauss", gm, gd, gmean, gcov, mustGauss(t, nil, 1e8, testCov2), &DPPenalty{Iters: 80, ProposalSD: []float64{0.15, 0.12}, ClipLLR: 15, Tau: 0.1}},
		{"linreg", lm, ld, lmean, lcov, LinReg{D: 2, Alpha: 1e-12, Beta: 1}, &DPPenalty{Iters: 80, ProposalSD: []float64{0.2}, ClipLLR: 20, Tau: 0.1}},
		{"linreg cached", hideRatio{lm}, ld, lmean, lcov, LinReg{D: 2, Alpha: 1e-12, Beta: 1}, &DPPenalty{Iters: 80, ProposalSD: []float64{0.2}, ClipLLR: 20, Tau: 0.1}},
	}
	for _, c := range cases {
		start, final, info := runFromPosterior(t, c.s, c.m, c.d, posteriorDraw(c.mean, c.cov), chains, 5)
		if info.ClippedLLRs != 0 {
			t.Errorf("%s: %d ratios clipped", c.name, info.ClippedLLRs)
		}
		if a := info.AcceptanceRate(); a < 0.2 || a > 0.9 {
			t.Errorf("%s: acceptance rate %.3f", c.name, a)
		}
		checkStationary(t, c.name, start, final, c.mean, c.cov, wrongLaws(t, c.flat, c.d, c.mean, c.cov))
	}
}

// haltonPoint against the digit-by-digit definition: digit j of i in base
// 2, permuted by π_j (identity or swap, from bit j of the mask), placed at
// 2^{−(j+1)}, for 53 digits. Mask 0 gives the van der Corput sequence
// 0, 1/2, 1/4, 3/4, 1/8, ….
func TestHaltonPoint(t *testing.T) {
	for i, want := range []float64{0, 0.5, 0.25, 0.75, 0.125, 0.625, 0.375, 0.875} {
		if got := haltonPoint(uint64(i), 0); got != want {
			t.Errorf("van der Corput %d = %g, want %g", i, got, want)
		}
	}
	rng := rand.New(rand.NewPCG(71, 72))
	for trial := 0; trial < 1000; trial++ {
		mask := rng.Uint64() >> 11
		i := rng.Uint64() >> uint(rng.IntN(64))
		if trial < 100 {
			i = uint64(trial)
		}
		var want float64
		w := 0.5
		for j := 0; j < 53; j++ {
			digit := (i >> uint(j)) & 1
			perm := (mask >> uint(52-j)) & 1 // π_j swaps 0 and 1 iff this bit is set
			want += float64(digit^perm) * w
			w /= 2
		}
		if got := haltonPoint(i, mask); got != want || got < 0 || got >= 1 {
			t.Fatalf("haltonPoint(%d, %x) = %.17g, want %.17g", i, mask, got, want)
		}
	}
}

// A trajectory that overflows is rejected, the state stays finite and
// equal to the start, and no error is returned; a non-finite start is a
// *DivergedError.
func TestHMCDivergentTrajectories(t *testing.T) {
	m, d, mean, _ := gaussTarget(t)
	h := &DPHMC{Iters: 20, Step: 1000, LeapfrogSteps: 200, ClipLLR: 15, ClipGrad: math.Inf(1), NoNoise: true}
	th := append([]float64(nil), mean...)
	info, err := h.Run(m, d, th, TrialRNG(1, dataset.SideD, 0, 0), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if info.Accepted != 0 || th[0] != mean[0] || th[1] != mean[1] {
		t.Errorf("divergent proposals accepted: %+v, θ = %v", info, th)
	}
	if info.GradEvals >= h.Iters*(h.LeapfrogSteps+1)*d.Len() {
		t.Errorf("divergent trajectories were not abandoned early (%d gradient evaluations)", info.GradEvals)
	}
	_, err = h.Run(m, d, []float64{math.NaN(), 0}, TrialRNG(1, dataset.SideD, 0, 0), nil, nil)
	if _, ok := err.(*DivergedError); !ok {
		t.Errorf("NaN start: err = %v", err)
	}
	_, err = (&DPPenalty{Iters: 1, ProposalSD: []float64{1}, ClipLLR: 1, Tau: 1}).Run(m, d, []float64{math.Inf(1), 0}, TrialRNG(1, dataset.SideD, 0, 0), nil, nil)
	if _, ok := err.(*DivergedError); !ok {
		t.Errorf("Inf start: err = %v", err)
	}
}

func TestHMCCheckErrors(t *testing.T) {
	m, d, _, _ := gaussTarget(t)
	ok := DPHMC{Iters: 10, Step: 0.1, LeapfrogSteps: 3, ClipLLR: 1, ClipGrad: 1, TauL: 0.5, TauG: 0.5}
	if err := ok.Check(m, d); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		mod  func(*DPHMC)
		want string
	}{
		{func(h *DPHMC) { h.Iters = 0 }, "sampler.iterations: must be in [1, 2^40], got 0"},
		{func(h *DPHMC) { h.Step = 0 }, "sampler.step: must be finite and > 0, got 0"},
		{func(h *DPHMC) { h.Step = math.Inf(1) }, "sampler.step: must be finite and > 0, got +Inf"},
		{func(h *DPHMC) { h.LeapfrogSteps = 0 }, "sampler.leapfrog_steps: must be in [1, 100000], got 0"},
		{func(h *DPHMC) { h.Mass = []float64{1, 2, 3} }, "sampler.mass: must have 0, 1 or 2 values"},
		{func(h *DPHMC) { h.Mass = []float64{1, 0} }, "sampler.mass[1]: must be finite and > 0, got 0"},
		{func(h *DPHMC) { h.StepJitter = "uniform" }, `sampler.step_jitter: must be one of none, halton, got "uniform"`},
		{func(h *DPHMC) { h.TauScale = "n" }, `sampler.tau_scale: must be one of paper, sqrt-n, got "n"`},
		{func(h *DPHMC) { h.ClipLLR = -1 }, "sampler.clip_llr: must be finite and > 0, got -1"},
		{func(h *DPHMC) { h.ClipGrad = math.Inf(1) }, "sampler.clip_grad: must be finite and > 0, got +Inf"},
		{func(h *DPHMC) { h.TauL = 0 }, "sampler.tau_l: must be finite and > 0 (or set no_noise), got 0"},
		{func(h *DPHMC) { h.TauG = -2 }, "sampler.tau_g: must be finite and > 0 (or set no_noise), got -2"},
		{func(h *DPHMC) { h.NoNoise = true }, "sampler.tau_l: must be 0 (unset) when no_noise is true, got 0.5"},
		{func(h *DPHMC) { h.NoNoise, h.TauL = true, 0 }, "sampler.tau_g: must be 0 (unset) when no_noise is true, got 0.5"},
	}
	for _, b := range bad {
		h := ok
		b.mod(&h)
		err := h.Check(m, d)
		if err == nil || !contains(yamlText(err, "sampler"), b.want) {
			t.Errorf("%s: error %v, want %q", h.Name(), err, b.want)
		}
	}
	plain := DPHMC{Iters: 1, Step: 0.1, LeapfrogSteps: 1, ClipLLR: math.Inf(1), ClipGrad: math.Inf(1), NoNoise: true, StepJitter: JitterNone}
	if err := plain.Check(m, d); err != nil {
		t.Errorf("plain HMC: %v", err)
	}
}

// TauScale "sqrt-n" (the authors' code) is the paper's τ = tau·√n: with
// n = 16 (√n = 4, so tau·4 is exact) both readings give bit-identical runs
// of DP-HMC and DP-penalty, and PaperTau(s) report the paper's values.
func TestTauScale(t *testing.T) {
	g := mustGauss(t, nil, 2, testCov2)
	d, _ := syntheticGauss(16, []float64{0.2, -0.1}, testCov2, 8)
	pairs := [][2]Sampler{
		{&DPHMC{Iters: 40, Step: 0.05, LeapfrogSteps: 4, ClipLLR: 2, ClipGrad: 2, TauL: 0.4, TauG: 0.2},
			&DPHMC{Iters: 40, Step: 0.05, LeapfrogSteps: 4, ClipLLR: 2, ClipGrad: 2, TauL: 0.1, TauG: 0.05, TauScale: TauSqrtN}},
		{&DPPenalty{Iters: 80, ProposalSD: []float64{0.2}, ClipLLR: 2, Tau: 0.4},
			&DPPenalty{Iters: 80, ProposalSD: []float64{0.2}, ClipLLR: 2, Tau: 0.1, TauScale: TauSqrtN}},
	}
	for _, p := range pairs {
		var out [2][]float64
		for i, s := range p {
			if err := s.Check(g, d); err != nil {
				t.Fatal(err)
			}
			th := []float64{0, 0}
			if _, err := s.Run(g, d, th, TrialRNG(3, dataset.SideD, 0, 0), []int{s.Iterations(d)}, nil); err != nil {
				t.Fatal(err)
			}
			out[i] = th
		}
		if out[0][0] != out[1][0] || out[0][1] != out[1][1] || out[0][0] == 0 {
			t.Errorf("%s vs %s: %v vs %v", p[0].Name(), p[1].Name(), out[0], out[1])
		}
	}
	if tl, tg := pairs[0][1].(*DPHMC).PaperTaus(16); tl != 0.4 || tg != 0.2 {
		t.Errorf("PaperTaus = %g, %g", tl, tg)
	}
	if tau := pairs[1][1].(*DPPenalty).PaperTau(16); tau != 0.4 {
		t.Errorf("PaperTau = %g", tau)
	}
	if tl, tg := (&DPHMC{NoNoise: true}).PaperTaus(16); tl != 0 || tg != 0 {
		t.Error("no-noise taus")
	}
}
