package mechanisms

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// runCanaryScores runs one trial of c with every second canary in and
// returns the final scores of the canaries in and out.
func runCanaryScores(t *testing.T, c *CanaryPaths, seed uint64) (in, out []float64, info Info) {
	t.Helper()
	inc := make([]bool, c.Count)
	for i := range inc {
		inc[i] = i%2 == 0
	}
	var last []float64
	for j := 0; j < c.Runs; j++ {
		tr := NewTrial(seed, dataset.SideD, j)
		lo, hi := RunRange(c.Count, c.Runs, j)
		got, err := c.RunCanaries(context.Background(), tr, inc, func(_ int, s []float64) error {
			last = append(last[:0], s...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		info.Add(got)
		for i := lo; i < hi; i++ {
			if inc[i] {
				in = append(in, last[i])
			} else {
				out = append(out, last[i])
			}
		}
	}
	return in, out, info
}

// meanSD returns the sample mean and standard deviation.
func meanSD(x []float64) (m, sd float64) {
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	for _, v := range x {
		sd += (v - m) * (v - m)
	}
	return m, math.Sqrt(sd / float64(len(x)-1))
}

// checkGaussianShift checks that scores in and out are the statistic of a
// μ-GDP Gaussian shift: N(μ²/2, μ²) in, N(−μ²/2, μ²) out. The tolerances
// are four standard errors of the mean (μ/√n) and of the standard
// deviation (≈ μ/√(2n)).
func checkGaussianShift(t *testing.T, in, out []float64, mu float64) {
	t.Helper()
	for _, c := range []struct {
		name string
		x    []float64
		mean float64
	}{{"in", in, mu * mu / 2}, {"out", out, -mu * mu / 2}} {
		m, sd := meanSD(c.x)
		n := float64(len(c.x))
		if math.Abs(m-c.mean) > 4*mu/math.Sqrt(n) || math.Abs(sd-mu) > 4*mu/math.Sqrt(2*n) {
			t.Errorf("%s: mean %.4f sd %.4f of %d scores, want %.4f and %.4f", c.name, m, sd, len(c.x), c.mean, mu)
		}
	}
}

// Full-batch DP-SGLD: each canary's path is a Gaussian shift with
// μ = C·sqrt(Tη)/2 (add/remove), so Λ_i is exactly N(±μ²/2, μ²); with a
// planted noise × 0.7 the declared statistic's law changes, its mean for
// the canaries in rising to (μ/0.7)²− μ²/2 ... checked through the
// difference of the means, (μ/0.7)² + ... = μ²/0.49·(in − out).
func TestCanaryPathsSGLDFullBatch(t *testing.T) {
	s := &SGLD{Step: StepSchedule{Eta: 0.5625}, Batch: 10, Scheme: WithoutReplacement, Iters: 4, Clip: 1}
	c := &CanaryPaths{Sampler: s, Release: ReleaseSpec{Mode: ReleaseFinal}, Base: &dataset.Dataset{Records: make([]dataset.Record, 10)}, Count: 20000, Runs: 1}
	in, out, info := runCanaryScores(t, c, 1)
	checkGaussianShift(t, in, out, 0.75)
	if info.GradEvals != 4*10000 || info.ClippedGrads != info.GradEvals {
		t.Errorf("info %+v: want 40000 gradient evaluations, all clipped", info)
	}
	// Planted noise × 0.7: the shift is unchanged, the noise smaller, so
	// the declared statistic (slope μ²/σ_decl² per unit) separates the two
	// groups by μ² still, each with sd 0.7μ.
	noise := 0.7
	s.Plant = &Plant{Noise: &noise}
	in, out, _ = runCanaryScores(t, c, 2)
	mi, si := meanSD(in)
	mo, so := meanSD(out)
	if math.Abs(mi-mo-0.5625) > 0.02 || math.Abs(si-0.525) > 0.02 || math.Abs(so-0.525) > 0.02 {
		t.Errorf("planted noise × 0.7: means %.4f − %.4f (want a gap of 0.5625), sd %.4f, %.4f (want 0.525)", mi, mo, si, so)
	}
}

// Poisson DP-SGLD: the scores equal, in law, an independent simulation of
// one canary's path with the mixture densities written out (two-sample
// comparison of means and standard deviations, five standard errors).
func TestCanaryPathsSGLDPoisson(t *testing.T) {
	const n, b, eta, clip, T = 1438, 32, 0.01, 0.2, 900
	s := &SGLD{Step: StepSchedule{Eta: eta}, Batch: b, Scheme: Poisson, Iters: T, Clip: clip}
	c := &CanaryPaths{Sampler: s, Release: ReleaseSpec{Mode: ReleaseFinal}, Base: &dataset.Dataset{Records: make([]dataset.Record, n)}, Count: 4000, Runs: 1}
	in, out, _ := runCanaryScores(t, c, 3)
	q, a, sd := float64(b)/n, eta/2*float64(n)/b*clip, math.Sqrt(eta)
	dens := func(y, m float64) float64 { return math.Exp(-(y - m) * (y - m) / (2 * sd * sd)) }
	rng := rand.New(rand.NewPCG(9, 9))
	ref := func(included bool) float64 {
		var l float64
		for t := 0; t < T; t++ {
			y := sd * rng.NormFloat64()
			if included && rng.Float64() < q {
				y += a
			}
			l += math.Log(((1-q)*dens(y, 0) + q*dens(y, a)) / dens(y, 0))
		}
		return l
	}
	for _, g := range []struct {
		name string
		x    []float64
		inc  bool
	}{{"in", in, true}, {"out", out, false}} {
		r := make([]float64, 2000)
		for i := range r {
			r[i] = ref(g.inc)
		}
		m1, s1 := meanSD(g.x)
		m2, s2 := meanSD(r)
		se := math.Sqrt(s1*s1/float64(len(g.x)) + s2*s2/float64(len(r)))
		if math.Abs(m1-m2) > 5*se || math.Abs(s1-s2) > 5*s2/math.Sqrt(float64(len(r))) {
			t.Errorf("%s: mean %.4f sd %.4f, reference %.4f sd %.4f (se %.4f)", g.name, m1, s1, m2, s2, se)
		}
	}
}

// DP-HMC: the gradients alone make each canary's score a Gaussian shift
// with μ = sqrt(k(L+1))/(2τ_g) (b_g against 2b_g·τ_g per evaluation).
// DP-penalty with one canary per run: a Gaussian shift with
// μ = sqrt(k)/(2τ).
func TestCanaryPathsHMCAndPenalty(t *testing.T) {
	base := &dataset.Dataset{Records: make([]dataset.Record, 50)}
	h := &DPHMC{Iters: 20, Step: 0.03, LeapfrogSteps: 4, ClipLLR: 3, ClipGrad: 3, TauL: 2, TauG: 2}
	c := &CanaryPaths{Sampler: h, Release: ReleaseSpec{Mode: ReleaseFinal}, Base: base, Count: 10000, Runs: 1}
	in, out, _ := runCanaryScores(t, c, 4)
	checkGaussianShift(t, in, out, 2.5)

	p := &DPPenalty{Iters: 20, ProposalSD: []float64{0.2}, ClipLLR: 3, Tau: 3}
	c = &CanaryPaths{Sampler: p, Release: ReleaseSpec{Mode: ReleaseFinal}, Base: base, Count: 4000, Runs: 4000}
	in, out, info := runCanaryScores(t, c, 5)
	checkGaussianShift(t, in, out, math.Sqrt(20)/6)
	if info.Proposals != 20*4000 || info.Accepted == 0 || info.Accepted == info.Proposals {
		t.Errorf("info %+v: want 80000 proposals, some accepted and some not", info)
	}
}

// The guarantees of one canary are the add/remove ones: μ halves against
// replace-one (full-batch SGLD 0.75, DP-HMC √30/2, DP-penalty √20/6).
func TestCanaryPathsGuarantees(t *testing.T) {
	base := &dataset.Dataset{Records: make([]dataset.Record, 10)}
	for _, c := range []struct {
		s  Sampler
		mu float64
	}{
		{&SGLD{Step: StepSchedule{Eta: 0.5625}, Batch: 10, Scheme: WithoutReplacement, Iters: 4, Clip: 1}, 0.75},
		{&DPHMC{Iters: 20, Step: 0.03, LeapfrogSteps: 4, ClipLLR: 3, ClipGrad: 3, TauL: 2, TauG: 2}, math.Sqrt(30) / 2},
		{&DPPenalty{Iters: 20, ProposalSD: []float64{0.2}, ClipLLR: 3, Tau: 3}, math.Sqrt(20) / 6},
	} {
		cp := &CanaryPaths{Sampler: c.s, Release: ReleaseSpec{Mode: ReleaseFinal}, Base: base, Count: 10, Runs: 1}
		pts, err := cp.Points(nil)
		if err != nil {
			t.Fatal(err)
		}
		best := math.Inf(1)
		for _, g := range cp.Guarantees(dataset.Pair{}, pts[len(pts)-1]) {
			if g.Variant != CanaryVariant {
				t.Errorf("%s: variant %q", g.Source, g.Variant)
			}
			if g.Applies && g.Spec != nil && g.Spec.Kind == "gdp" {
				best = math.Min(best, float64(g.Spec.Params["mu"]))
			}
		}
		if math.Abs(best-c.mu) > 1e-12 {
			t.Errorf("%s: μ %.15g, want %.15g", c.s.Name(), best, c.mu)
		}
	}
}

// Schemes whose batches tie canaries together, and unclipped SGLD, are
// refused with the field named.
func TestCanaryPathsRefused(t *testing.T) {
	base := &dataset.Dataset{Records: make([]dataset.Record, 10)}
	for _, s := range []*SGLD{
		{Step: StepSchedule{Eta: 0.1}, Batch: 5, Scheme: WithoutReplacement, Iters: 4, Clip: 1},
		{Step: StepSchedule{Eta: 0.1}, Batch: 10, Scheme: Reshuffle, Iters: 4, Clip: 1},
		{Step: StepSchedule{Eta: 0.1}, Batch: 10, Scheme: WithoutReplacement, Iters: 4},
	} {
		c := &CanaryPaths{Sampler: s, Release: ReleaseSpec{Mode: ReleaseFinal}, Base: base, Count: 10, Runs: 1}
		if err := c.Check(nil); err == nil {
			t.Errorf("%s accepted", s.Name())
		}
	}
}
