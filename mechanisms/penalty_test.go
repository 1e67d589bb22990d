package mechanisms

import (
	"fmt"
	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/integrate/quad"

	"github.com/mcmcaudit/mcmcaudit/internal/numeric"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// penaltyProb is the acceptance probability of the penalty test, accept iff
// ln u < ΔH + ξ − σ²/2 with ξ ~ N(0, σ²): with Z ~ N(ΔH − σ²/2, σ²),
// E[min(1, e^Z)] = P(Z ≥ 0) + E[e^Z; Z < 0] = Φ(ΔH/σ − σ/2) + e^{ΔH}Φ(−ΔH/σ − σ/2)
// (the Gaussian moment generating function restricted to a half-line).
// σ = 0 gives min(1, e^{ΔH}).
func penaltyProb(dH, s float64) float64 {
	if s == 0 {
		return math.Min(1, math.Exp(dH))
	}
	return numeric.NormCDF(dH/s-s/2) + math.Exp(dH+numeric.LogNormCDF(-dH/s-s/2))
}

// uncorrectedProb is the acceptance probability of the test without the
// −σ²/2 penalty: Z ~ N(ΔH, σ²), E[min(1, e^Z)] = Φ(ΔH/σ) + e^{ΔH+σ²/2}Φ(−ΔH/σ − σ).
func uncorrectedProb(dH, s float64) float64 {
	return numeric.NormCDF(dH/s) + math.Exp(dH+s*s/2+numeric.LogNormCDF(-dH/s-s))
}

// penaltyProb against two independent evaluations: Gauss–Legendre
// quadrature of E[min(1, e^Z)] over ±12 SD, and values computed with mpmath
// at 30 digits (/usr/bin/python3: mp.quad of min(1, exp(z))·φ over the
// real line, split at 0):
//
//	(ΔH, σ) = (0, 1)      → 0.6170750774519738
//	(ΔH, σ) = (−1, 0.5)   → 0.3653669735856269
//	(ΔH, σ) = (0.7, 2)    → 0.4360793181957068
func TestPenaltyProbReference(t *testing.T) {
	mp := []struct{ dH, s, want float64 }{
		{0, 1, 0.6170750774519738},
		{-1, 0.5, 0.3653669735856269},
		{0.7, 2, 0.4360793181957068},
	}
	for _, c := range mp {
		if got := penaltyProb(c.dH, c.s); math.Abs(got-c.want) > 1e-13 {
			t.Errorf("penaltyProb(%g, %g) = %.16g, mpmath %.16g", c.dH, c.s, got, c.want)
		}
	}
	for _, dH := range []float64{-3, -0.5, 0, 0.4, 2} {
		for _, s := range []float64{0.1, 0.8, 1.5, 3} {
			m := dH - s*s/2
			f := func(z float64) float64 {
				return math.Min(1, math.Exp(z)) * math.Exp(-0.5*(z-m)*(z-m)/(s*s)) / (s * math.Sqrt(2*math.Pi))
			}
			// Split at the kink z = 0 where it lies inside the range.
			lo, hi := m-12*s, m+12*s
			var q float64
			if lo < 0 && hi > 0 {
				q = quad.Fixed(f, lo, 0, 200, nil, 0) + quad.Fixed(f, 0, hi, 200, nil, 0)
			} else {
				q = quad.Fixed(f, lo, hi, 200, nil, 0)
			}
			if got := penaltyProb(dH, s); math.Abs(got-q) > 1e-10 {
				t.Errorf("penaltyProb(%g, %g) = %.14g, quadrature %.14g", dH, s, got, q)
			}
		}
	}
}

// penaltyAccept's acceptance frequency over N = 100000 draws against the
// exact probability, binomial SE sqrt(P(1−P)/N), 4.5-SE band. Power: the
// test without the −σ²/2 penalty (the bug a copied MH test would have) is
// asserted ≥ 10 SE away for every σ ≥ 0.5 used here; for σ = 0 (noise off)
// the exact value is min(1, e^{ΔH}), the plain Metropolis–Hastings test.
func TestPenaltyAcceptFrequency(t *testing.T) {
	const N = 100000
	rng := rand.New(rand.NewPCG(21, 22))
	for _, c := range []struct {
		dH, s float64
		noise bool
	}{
		{-0.7, 0, false}, {0.3, 0, false}, {-2, 0, false},
		{0, 0.5, true}, {-0.5, 1, true}, {1, 1.5, true}, {2.5, 2.5, true},
	} {
		k := 0
		for i := 0; i < N; i++ {
			if penaltyAccept(c.dH, c.s, c.noise, rng) {
				k++
			}
		}
		p := penaltyProb(c.dH, c.s)
		se := math.Sqrt(p * (1 - p) / N)
		if p == 1 {
			if k != N {
				t.Errorf("ΔH = %g, σ = %g: %d of %d accepted, want all", c.dH, c.s, k, N)
			}
			continue
		}
		checkMoment(t, fmt.Sprintf("acceptance(ΔH=%g, σ=%g)", c.dH, c.s), float64(k)/N, p, se)
		if c.noise {
			if z := math.Abs(uncorrectedProb(c.dH, c.s)-p) / se; z < 10 {
				t.Errorf("σ = %g: the uncorrected test is only %.1f SE away", c.s, z)
			}
		}
	}
	if penaltyAccept(math.NaN(), 0, false, rng) || penaltyAccept(0, math.Inf(1), true, rng) {
		t.Error("NaN log acceptance ratio accepted")
	}
}

// hideRatio hides a model's LogLikRatio so that the samplers take the
// cached LogLik-difference path.
type hideRatio struct{ Model }

// Property test of the clipping (Räisä et al. §2.1 and Alg. 1): over random
// θ, θ′ and datasets with outliers, every clipped ratio satisfies
// |r| ≤ b_l‖θ′−θ‖ and every clipped gradient ‖g‖ ≤ b_g; replacing one record
// (by an outlier or an ordinary record) changes the clipped sums by at most
// 2b_l‖θ′−θ‖ and 2b_g. Float tolerance: a relative 1e-12 (each clipped
// gradient is b_g·g/‖g‖ up to a few roundings; the sums of n = 30 terms
// differ from the exact difference by ≤ 30 ulps of the largest partial sum).
// The test asserts that clipping happened and that the unclipped sums
// violate the bounds, so it is not vacuous.
func TestClipSensitivityProperty(t *testing.T) {
	g := mustGauss(t, []float64{0, 0}, 2, testCov2)
	models := []Model{g, LinReg{D: 2, Alpha: 1, Beta: 2}, Banana{A: 2, PriorVar: 4, Var1: 1, Var2: 1}, hideRatio{g}}
	rng := rand.New(rand.NewPCG(31, 32))
	var info Info
	unclippedViolations := 0
	const n = 30
	for trial := 0; trial < 2000; trial++ {
		m := models[trial%len(models)]
		randRecord := func(scale float64) dataset.Record {
			return dataset.Record{X: []float64{scale * rng.NormFloat64(), scale * rng.NormFloat64()}, Y: scale * rng.NormFloat64()}
		}
		d := &dataset.Dataset{Name: "prop", Records: make([]dataset.Record, n)}
		for i := range d.Records {
			scale := 1.0
			if rng.IntN(5) == 0 {
				scale = math.Pow(10, float64(1+rng.IntN(6))) // outliers up to 1e6
			}
			d.Records[i] = randRecord(scale)
		}
		idx := rng.IntN(n)
		var repl dataset.Record
		if trial%2 == 0 {
			repl = randRecord(math.Pow(10, float64(rng.IntN(7))))
		} else {
			repl = randRecord(1)
		}
		pair, err := dataset.Neighbour(d, dataset.ReplaceOne, idx, repl)
		if err != nil {
			t.Fatal(err)
		}
		theta := []float64{2 * rng.NormFloat64(), 2 * rng.NormFloat64()}
		thetaNew := []float64{theta[0] + rng.NormFloat64()*math.Pow(10, -float64(rng.IntN(4))), theta[1] + 0.3*rng.NormFloat64()}
		bl := math.Pow(10, rng.Float64()*4-2) // 0.01 … 100
		bg := math.Pow(10, rng.Float64()*4-2)
		c := bl * distance(theta, thetaNew)

		// Per-record bounds.
		for _, r := range pair.DPrime.Records {
			var raw float64
			if lr, ok := m.(LogLikRatioModel); ok {
				raw = lr.LogLikRatio(theta, thetaNew, r)
			} else {
				raw = m.LogLik(thetaNew, r) - m.LogLik(theta, r)
			}
			if v, _ := clipLLR(raw, c); math.Abs(v) > c {
				t.Fatalf("clipped ratio %g exceeds c = %g", v, c)
			}
			gr := make([]float64, 2)
			m.GradLogLik(theta, r, gr)
			clipGrad(gr, bg)
			if nn := floats.Norm(gr, 2); nn > bg*(1+1e-12) {
				t.Fatalf("clipped gradient norm %g exceeds b_g = %g", nn, bg)
			}
		}
		// Sensitivity of the sums, with the sampler's own functions.
		R := newLLRSum(m, pair.D, theta).sum(m, pair.D, theta, thetaNew, c, &info)
		R2 := newLLRSum(m, pair.DPrime, theta).sum(m, pair.DPrime, theta, thetaNew, c, &info)
		if math.Abs(R-R2) > 2*c*(1+1e-12)+1e-12*math.Abs(R) {
			t.Fatalf("%s: |R(D) − R(D′)| = %g > 2c = %g", m.Name(), math.Abs(R-R2), 2*c)
		}
		G, G2 := make([]float64, 2), make([]float64, 2)
		newGradSum(m, pair.D).sum(m, pair.D, theta, bg, G, &info)
		newGradSum(m, pair.DPrime).sum(m, pair.DPrime, theta, bg, G2, &info)
		if dist := distance(G, G2); dist > 2*bg*(1+1e-12)+1e-12*floats.Norm(G, 2) {
			t.Fatalf("%s: ‖G(D) − G(D′)‖ = %g > 2b_g = %g", m.Name(), dist, 2*bg)
		}
		// Without clipping, the outliers break the bounds.
		gd, gd2 := make([]float64, 2), make([]float64, 2)
		m.GradLogLik(theta, pair.D.Records[idx], gd)
		m.GradLogLik(theta, pair.DPrime.Records[idx], gd2)
		if distance(gd, gd2) > 2*bg {
			unclippedViolations++
		}
	}
	if info.ClippedLLRs == 0 || info.ClippedGrads == 0 || unclippedViolations < 100 {
		t.Errorf("vacuous: %d clipped ratios, %d clipped gradients, %d unclipped violations", info.ClippedLLRs, info.ClippedGrads, unclippedViolations)
	}
	// Non-finite inputs stay within the bounds.
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if r, cl := clipLLR(v, 0.5); !(math.Abs(r) <= 0.5) || !cl {
			t.Errorf("clipLLR(%g) = %g", v, r)
		}
	}
	for _, gv := range [][]float64{{math.NaN(), 1}, {math.Inf(1), 3}, {math.Inf(-1), math.Inf(1)}, {1e300, 1e300}} {
		gr := append([]float64(nil), gv...)
		if !clipGrad(gr, 2) || !(floats.Norm(gr, 2) <= 2*(1+1e-15)) {
			t.Errorf("clipGrad(%v) = %v", gv, gr)
		}
	}
}

// DP-penalty, one iteration from a fixed state, many trials: the
// acceptance frequency against E_{θ′}[P(ΔH(θ′), σ_l(θ′))], where ΔH is the
// log posterior ratio from the closed-form Gaussian posterior (nothing is
// clipped: asserted), σ_l = 2τb_l‖θ′−θ‖ and P is penaltyProb; the
// expectation is a Monte Carlo average over independent proposals. SE:
// binomial sqrt(a(1−a)/N) for the frequency plus sqrt(Var P/M) for the
// average. Power: with σ_l halved or doubled (a noise-scale slip) the
// expectation moves by ≥ 10 SE (asserted).
func TestPenaltyAcceptanceEndToEnd(t *testing.T) {
	g := mustGauss(t, []float64{1, -1}, 0.5, testCov2)
	d, _ := syntheticGauss(20, []float64{0.3, 0.8}, testCov2, 4)
	mean, cov, _ := g.Posterior(d)
	logPost := gaussLogDensity(mean, cov)
	s := &DPPenalty{Iters: 1, ProposalSD: []float64{0.15}, ClipLLR: 15, Tau: 0.3}
	theta0 := []float64{mean[0] + 0.2, mean[1] - 0.1}
	const N, M = 40000, 200000
	acc := 0
	var info Info
	for k := 0; k < N; k++ {
		th := append([]float64(nil), theta0...)
		in, err := s.Run(g, d, th, TrialRNG(5, dataset.SideD, k, 0), []int{1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		info.Add(in)
		acc += in.Accepted
		if (in.Accepted == 1) == (th[0] == theta0[0] && th[1] == theta0[1]) {
			t.Fatal("Accepted counter disagrees with the state")
		}
	}
	if info.ClippedLLRs != 0 {
		t.Fatalf("%d ratios clipped", info.ClippedLLRs)
	}
	rng := rand.New(rand.NewPCG(41, 42))
	ps := map[float64][]float64{0.5: make([]float64, M), 1: make([]float64, M), 2: make([]float64, M)}
	prop := make([]float64, 2)
	for i := 0; i < M; i++ {
		prop[0] = theta0[0] + 0.15*rng.NormFloat64()
		prop[1] = theta0[1] + 0.15*rng.NormFloat64()
		dH := logPost(prop) - logPost(theta0)
		sig := 2 * s.Tau * s.ClipLLR * distance(theta0, prop)
		for f, v := range ps {
			v[i] = penaltyProb(dH, f*sig)
		}
	}
	a := float64(acc) / N
	ref, _, seRef, _ := testutil.SampleMoments(ps[1])
	se := math.Hypot(math.Sqrt(a*(1-a)/N), seRef)
	checkMoment(t, "DP-penalty acceptance rate", a, ref, se)
	t.Logf("DP-penalty acceptance %.4f, reference %.4f, SE %.4f", a, ref, se)
	for _, f := range []float64{0.5, 2} {
		alt, _, _, _ := testutil.SampleMoments(ps[f])
		t.Logf("σ_l × %g: reference %.4f (%.0f SE)", f, alt, math.Abs(alt-ref)/se)
		if z := math.Abs(alt-ref) / se; z < 10 {
			t.Errorf("σ_l × %g moves the acceptance rate only %.1f SE", f, z)
		}
	}
}

// gaussLogDensity returns ln N(·; mean, cov) up to a constant.
func gaussLogDensity(mean, cov []float64) func([]float64) float64 {
	d := len(mean)
	prec := invert(cov, d)
	return func(th []float64) float64 {
		var q float64
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				q += (th[i] - mean[i]) * prec[i*d+j] * (th[j] - mean[j])
			}
		}
		return -0.5 * q
	}
}

func TestPenaltyCheckErrors(t *testing.T) {
	g := mustGauss(t, nil, 1, testCov2)
	d, _ := syntheticGauss(5, []float64{0, 0}, testCov2, 1)
	ok := DPPenalty{Iters: 10, ProposalSD: []float64{0.1}, ClipLLR: 1, Tau: 0.5}
	if err := ok.Check(g, d); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		mod  func(*DPPenalty)
		want string
	}{
		{func(s *DPPenalty) { s.Iters = 0 }, "sampler.iterations: must be in [1, 2^40], got 0"},
		{func(s *DPPenalty) { s.ProposalSD = nil }, "sampler.proposal_sd: must have 1 or 2 values"},
		{func(s *DPPenalty) { s.ProposalSD = []float64{1, 2, 3} }, "sampler.proposal_sd: must have 1 or 2 values"},
		{func(s *DPPenalty) { s.ProposalSD = []float64{0.1, -1} }, "sampler.proposal_sd[1]: must be finite and > 0, got -1"},
		{func(s *DPPenalty) { s.ClipLLR = 0 }, "sampler.clip_llr: must be finite and > 0, got 0"},
		{func(s *DPPenalty) { s.TauScale = "code" }, `sampler.tau_scale: must be one of paper, sqrt-n, got "code"`},
		{func(s *DPPenalty) { s.ClipLLR = math.Inf(1) }, "sampler.clip_llr: must be finite and > 0, got +Inf"},
		{func(s *DPPenalty) { s.Tau = 0 }, "sampler.tau: must be finite and > 0 (or set no_noise), got 0"},
		{func(s *DPPenalty) { s.Tau = math.NaN() }, "sampler.tau: must be finite and > 0"},
		{func(s *DPPenalty) { s.NoNoise = true }, "sampler.tau: must be 0 (unset) when no_noise is true, got 0.5"},
		{func(s *DPPenalty) { s.NoNoise, s.Tau, s.ClipLLR = true, 0, math.NaN() }, "sampler.clip_llr: must be > 0"},
	}
	for _, b := range bad {
		s := ok
		s.ProposalSD = append([]float64(nil), ok.ProposalSD...)
		b.mod(&s)
		err := s.Check(g, d)
		if err == nil || !contains(yamlText(err, "sampler"), b.want) {
			t.Errorf("%s: error %v, want %q", s.Name(), err, b.want)
		}
	}
	nn := DPPenalty{Iters: 1, ProposalSD: []float64{0.1}, ClipLLR: math.Inf(1), NoNoise: true}
	if err := nn.Check(g, d); err != nil {
		t.Errorf("no-noise, unclipped: %v", err)
	}
}

// hideLinear hides the linear-gradient fast path but keeps LogLikRatio.
type hideLinear struct{ Model }

func (h hideLinear) LogLikRatio(theta, thetaNew []float64, r dataset.Record) float64 {
	return h.Model.(LogLikRatioModel).LogLikRatio(theta, thetaNew, r)
}

// The Gauss model's O(d) fast path (precomputed Σ⁻¹xᵢ) against the generic
// paths — per-record GradLogLik and LogLikRatio, and cached LogLik
// differences — for clipped gradient and ratio sums: equal to 1e-11 of the
// sum of absolute terms, with identical clip counts, over random states
// and clip bounds that clip some records and not others.
func TestLinearFastPathAgrees(t *testing.T) {
	cov, _ := raisaCovariance(5, 0.5, 2)
	for i := 0; i < 5; i++ {
		cov[i*5+i] += 0.1
	}
	g := mustGauss(t, nil, 3, cov)
	d, _ := syntheticGauss(40, []float64{0, 3, 0, -1, 0}, cov, 3)
	if newLinearCache(g, d) == nil || newLinearCache(hideLinear{g}, d) != nil {
		t.Fatal("fast path not selected as intended")
	}
	rng := rand.New(rand.NewPCG(81, 82))
	for trial := 0; trial < 200; trial++ {
		theta := make([]float64, 5)
		thetaNew := make([]float64, 5)
		for k := range theta {
			theta[k] = rng.NormFloat64()
			thetaNew[k] = theta[k] + 0.2*rng.NormFloat64()
		}
		b := math.Pow(10, rng.Float64()*2)
		c := math.Pow(10, rng.Float64()*2) * distance(theta, thetaNew)
		var infos [3]Info
		var R [3]float64
		var G [3][]float64
		for k, m := range []Model{g, hideLinear{g}, hideRatio{g}} {
			R[k] = newLLRSum(m, d, theta).sum(m, d, theta, thetaNew, c, &infos[k])
			G[k] = make([]float64, 5)
			newGradSum(m, d).sum(m, d, theta, b, G[k], &infos[k])
		}
		for k := 1; k < 3; k++ {
			if !reflect.DeepEqual(infos[k], infos[0]) {
				t.Fatalf("counters differ: %+v vs %+v", infos[k], infos[0])
			}
			if math.Abs(R[k]-R[0]) > 1e-11*float64(d.Len())*c {
				t.Fatalf("ratio sums %.15g vs %.15g", R[k], R[0])
			}
			for i := range G[0] {
				if math.Abs(G[k][i]-G[0][i]) > 1e-11*float64(d.Len())*b {
					t.Fatalf("gradient sums %v vs %v", G[k], G[0])
				}
			}
		}
	}
}
