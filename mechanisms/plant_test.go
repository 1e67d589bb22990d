package mechanisms

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// flatModel has a zero log-likelihood and a flat prior, so that a
// sampler's update is its noise alone; with grad ≠ 0 every record's
// log-likelihood is grad·θ₀ instead (a constant gradient of norm |grad|).
type flatModel struct{ grad float64 }

func (flatModel) Name() string                                    { return "flat" }
func (flatModel) Dim() int                                        { return 1 }
func (flatModel) DataDim() int                                    { return 1 }
func (flatModel) LogPrior([]float64) float64                      { return 0 }
func (flatModel) GradLogPrior(_, g []float64)                     { g[0] = 0 }
func (m flatModel) LogLik(th []float64, _ dataset.Record) float64 { return m.grad * th[0] }
func (m flatModel) GradLogLik(_ []float64, _ dataset.Record, g []float64) {
	g[0] = m.grad
}

func records(n int) *dataset.Dataset {
	d := &dataset.Dataset{Name: "plant"}
	for i := 0; i < n; i++ {
		d.Records = append(d.Records, dataset.Record{X: []float64{1}, Y: 0})
	}
	return d
}

func fp(v float64) *float64 { return &v }

// plantRun runs s from θ = 0 once per seed and returns the state after
// the declared run, with the Info of the last run.
func plantRun(t *testing.T, s Sampler, m Model, d *dataset.Dataset, runs int) ([]float64, Info) {
	t.Helper()
	if err := s.Check(m, d); err != nil {
		t.Fatal(err)
	}
	out := make([]float64, runs)
	var info Info
	for r := range out {
		theta := make([]float64, m.Dim())
		var err error
		info, err = s.Run(m, d, theta, rand.New(rand.NewPCG(uint64(r)+1, 9)), []int{s.Iterations(d)}, func(_ int, th []float64) error {
			out[r] = th[0]
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out, info
}

// checkVariance asserts that the sample variance of xs (about their mean)
// is want within five standard errors of the chi-square law:
// s²/σ² ~ χ²_{N−1}/(N−1), of standard deviation sqrt(2/(N−1)).
func checkVariance(t *testing.T, what string, xs []float64, want float64) {
	t.Helper()
	var mean, ss float64
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	ratio := ss / float64(len(xs)-1) / want
	if tol := 5 * math.Sqrt(2/float64(len(xs)-1)); math.Abs(ratio-1) > tol {
		t.Errorf("%s: sample variance / expected = %.4f, want 1 ± %.4f", what, ratio, tol)
	}
}

const plantRuns = 3000

// SGLD's noise: one step from a deterministic drift is pure noise of
// variance f²·noise_variance·η, through the general loop (clipped) and
// through the affine one-dimensional path.
func TestPlantNoiseSGLD(t *testing.T) {
	eta := 0.04
	cases := []struct {
		name string
		s    *SGLD
		m    Model
		d    *dataset.Dataset
		want float64
	}{
		{"clipped full batch", &SGLD{Step: StepSchedule{Eta: eta}, Batch: 3, Scheme: WithoutReplacement, Iters: 1, Clip: 1,
			Plant: &Plant{Noise: fp(0.5)}}, flatModel{}, records(3), 0.25 * eta},
		{"noise_variance and plant combine", &SGLD{Step: StepSchedule{Eta: eta}, Batch: 3, Scheme: WithoutReplacement, Iters: 1, Clip: 1,
			NoiseVariance: 2, Plant: &Plant{Noise: fp(0.5)}}, flatModel{}, records(3), 0.5 * eta},
		{"affine batch-1 path", &SGLD{Step: StepSchedule{Eta: eta}, Batch: 1, Scheme: Cyclic, Iters: 1,
			Plant: &Plant{Noise: fp(0.5)}}, NewLinReg1D(1, 1), records(1), 0.25 * eta},
		{"affine path", &SGLD{Step: StepSchedule{Eta: eta}, Batch: 2, Scheme: WithoutReplacement, Iters: 1,
			Plant: &Plant{Noise: fp(2)}}, NewLinReg1D(1, 1), records(2), 4 * eta},
		{"unplanted", &SGLD{Step: StepSchedule{Eta: eta}, Batch: 3, Scheme: WithoutReplacement, Iters: 1, Clip: 1},
			flatModel{}, records(3), eta},
	}
	for _, c := range cases {
		xs, _ := plantRun(t, c.s, c.m, c.d, plantRuns)
		checkVariance(t, c.name, xs, c.want)
	}
}

// ULA's noise: one step on the flat model has variance 2γ·f².
func TestPlantNoiseULA(t *testing.T) {
	u := &ULA{Gamma: 0.01, Iters: 1, Plant: &Plant{Noise: fp(0.5)}}
	xs, _ := plantRun(t, u, flatModel{}, records(2), plantRuns)
	checkVariance(t, "ULA", xs, 2*0.01*0.25)
}

// DP-penalty's noise: on the flat model ΔH = 0, so a proposal at distance
// s|z| is accepted with probability 2Φ(−σ_l/2), σ_l = 2τ·f·b_l·s|z|;
// over z ~ N(0, 1) that is 2·arctan(1/a)/π with a = τ·f·b_l·s (the wedge
// {X < −a|Z|} of an isotropic normal pair), and the iterations' decisions
// are independent.
func TestPlantNoisePenalty(t *testing.T) {
	const iters = 20000
	for _, f := range []float64{1, 0.5} {
		s := &DPPenalty{Iters: iters, ProposalSD: []float64{0.5}, ClipLLR: 2, Tau: 1}
		if f != 1 {
			s.Plant = &Plant{Noise: fp(f)}
		}
		_, info := plantRun(t, s, flatModel{}, records(3), 1)
		a := 1 * f * 2 * 0.5
		want := 2 * math.Atan(1/a) / math.Pi
		got := float64(info.Accepted) / float64(info.Proposals)
		if tol := 5 * math.Sqrt(want*(1-want)/iters); math.Abs(got-want) > tol {
			t.Errorf("noise × %g: acceptance %.4f, want %.4f ± %.4f", f, got, want, tol)
		}
	}
}

// DP-HMC's noise: the noisy gradient of the flat model is pure noise of
// standard deviation f·2b_gτ_g, and the acceptance test's σ_l is f times
// the declared one.
func TestPlantNoiseHMC(t *testing.T) {
	d := records(3)
	decl := &DPHMC{Iters: 1, Step: 0.1, LeapfrogSteps: 1, ClipLLR: 2, ClipGrad: 1.5, TauL: 2, TauG: 3}
	pl := *decl
	pl.Plant = &Plant{Noise: fp(0.5)}
	theta := []float64{0}
	w := newHMCWork(&pl, flatModel{}, d, theta)
	rng := rand.New(rand.NewPCG(3, 4))
	xs := make([]float64, plantRuns)
	for i := range xs {
		w.noisyGrad(theta, rng)
		xs[i] = w.g[0]
	}
	sg := 2 * 1.5 * 3.0
	checkVariance(t, "DP-HMC gradient noise", xs, 0.25*sg*sg)
	w0 := newHMCWork(decl, flatModel{}, d, theta)
	w.thetaP[0], w0.thetaP[0] = 0.3, 0.3
	_, s1, _ := w.deltaH(theta, 0)
	_, s0, _ := w0.deltaH(theta, 0)
	if s0 == 0 || s1 != 0.5*s0 {
		t.Errorf("σ_l planted %g, declared %g: want half", s1, s0)
	}
}

// DP-Barker's noise: with the test noise Z (logistic, by V_cor's
// construction) scaled by f, a log-posterior ratio δ is accepted with
// probability P(δ + fZ > 0) = 1/(1 + e^{−δ/f}).
func TestPlantNoiseBarker(t *testing.T) {
	const draws = 20000
	s := &DPBarker{Step: 0.1, Iters: 1}
	for _, f := range []float64{1, 0.5} {
		p, err := s.resolve(10)
		if err != nil {
			t.Fatal(err)
		}
		p.noise = f
		rng := rand.New(rand.NewPCG(5, 6))
		acc := 0
		for i := 0; i < draws; i++ {
			if p.accept(1, p.sdFixed, rng) {
				acc++
			}
		}
		want := 1 / (1 + math.Exp(-1/f))
		got := float64(acc) / draws
		if tol := 5 * math.Sqrt(want*(1-want)/draws); math.Abs(got-want) > tol {
			t.Errorf("noise × %g: acceptance %.4f, want %.4f ± %.4f", f, got, want, tol)
		}
	}
}

// planted pairs a declared configuration with the same one carrying a
// plant of every field that applies to it.
func plantedPairs() []struct {
	name            string
	declared, plant Sampler
} {
	all := &Plant{Noise: fp(0.5), Clip: fp(2), Steps: 3}
	rate := &Plant{Noise: fp(0.5), Clip: fp(2), Rate: fp(1.5), Steps: 3}
	poisson := func(p *Plant) *SGLD {
		return &SGLD{Step: StepSchedule{Eta: 0.01}, Batch: 2, Scheme: Poisson, Iters: 5, Clip: 1, Plant: p}
	}
	full := func(p *Plant) *SGLD {
		return &SGLD{Step: StepSchedule{Eta: 0.01}, Batch: 6, Scheme: WithoutReplacement, Iters: 5, Clip: 1, Plant: p}
	}
	hmc := DPHMC{Iters: 5, Step: 0.1, LeapfrogSteps: 2, ClipLLR: 2, ClipGrad: 1, TauL: 2, TauG: 3}
	hmcP := hmc
	hmcP.Plant = all
	pen := DPPenalty{Iters: 5, ProposalSD: []float64{0.3}, ClipLLR: 2, Tau: 2}
	penP := pen
	penP.Plant = all
	bar := DPBarker{Step: 0.1, Iters: 5, Clip: 0.5}
	barP := bar
	barP.Plant = all
	ula := ULA{Gamma: 0.01, Iters: 5}
	ulaP := ula
	ulaP.Plant = &Plant{Noise: fp(0.5), Steps: 3}
	return []struct {
		name            string
		declared, plant Sampler
	}{
		{"sgld poisson", poisson(nil), poisson(rate)}, {"sgld full batch", full(nil), full(all)}, {"dp_hmc", &hmc, &hmcP},
		{"dp_penalty", &pen, &penP}, {"dp_barker", &bar, &barP}, {"ula", &ula, &ulaP},
	}
}

// A planted sampler declares exactly the guarantees of its declared
// configuration: the same entries, profiles and ε at δ (the name in a
// reason's text carries the [planted: …] suffix, removed here).
func TestPlantKeepsGuarantees(t *testing.T) {
	m := flatModel{}
	d := records(6)
	dp := &dataset.Dataset{Name: "plant′", Records: append(append([]dataset.Record(nil), d.Records[1:]...), dataset.Record{X: []float64{2}})}
	pair := dataset.Pair{D: d, DPrime: dp, Adjacency: dataset.ReplaceOne}
	for _, c := range plantedPairs() {
		if err := c.plant.Check(m, d); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		st := SettingOf(m, pair, 5)
		g0, g1 := SamplerGuarantees(c.declared, st), SamplerGuarantees(c.plant, st)
		j0, _ := json.Marshal(g0)
		j1, _ := json.Marshal(g1)
		suffix := c.plant.(Planter).Planted().suffix()
		if string(j0) != strings.ReplaceAll(string(j1), suffix, "") {
			t.Errorf("%s: guarantees differ:\n%s\n%s", c.name, j0, j1)
		}
		applied := 0
		for i := range g0 {
			if g0[i].Profile == nil {
				continue
			}
			applied++
			for _, e := range []float64{0.1, 1, 3} {
				if a, b := g0[i].Profile(e), g1[i].Profile(e); a != b {
					t.Errorf("%s, %s: δ(%g) = %g planted, %g declared", c.name, g0[i].Source, e, b, a)
				}
			}
		}
		if c.name != "ula" && applied == 0 {
			t.Errorf("%s: no guarantee with a profile to compare", c.name)
		}
		if !strings.Contains(c.plant.Name(), "[planted: ") || strings.Contains(c.declared.Name(), "planted") {
			t.Errorf("%s: names %q, %q", c.name, c.declared.Name(), c.plant.Name())
		}
		if c.plant.(Planter).PlantNote(6) == "" || c.declared.(Planter).PlantNote(6) != "" {
			t.Errorf("%s: notes %q, %q", c.name, c.declared.(Planter).PlantNote(6), c.plant.(Planter).PlantNote(6))
		}
	}
}

// steps adds exactly k iterations to the run (Info.Iterations and the
// release's snapshot), the release still being the declared last one.
func TestPlantSteps(t *testing.T) {
	m := flatModel{}
	d := records(6)
	for _, c := range plantedPairs() {
		_, i0 := plantRun(t, c.declared, m, d, 1)
		_, i1 := plantRun(t, c.plant, m, d, 1)
		k := c.plant.(Planter).Planted().Steps
		if i1.Iterations != i0.Iterations+k || i0.Iterations != c.declared.Iterations(d) {
			t.Errorf("%s: %d iterations planted, %d declared, want %d more", c.name, i1.Iterations, i0.Iterations, k)
		}
		if len(i1.PerRelease) != 1 || i1.PerRelease[0].Iterations != i0.Iterations+k {
			t.Errorf("%s: release snapshots %+v", c.name, i1.PerRelease)
		}
	}
}

// clip × f moves the clip bound: a constant per-record gradient of norm 3
// is clipped to 1 declared and to 2 with clip × 2 (the update, with noise
// × 1e-9, is then (η/2)·n·C·f), and a ratio beyond b_l is no longer
// clipped once b_l × f exceeds it.
func TestPlantClip(t *testing.T) {
	m := flatModel{grad: 3}
	d := records(4)
	for _, f := range []float64{1, 2} {
		s := &SGLD{Step: StepSchedule{Eta: 0.1}, Batch: 4, Scheme: WithoutReplacement, Iters: 1, Clip: 1,
			Plant: &Plant{Noise: fp(1e-9), Clip: fp(f)}}
		xs, _ := plantRun(t, s, m, d, 1)
		if want := 0.05 * 4 * f; math.Abs(xs[0]-want) > 1e-6 {
			t.Errorf("SGLD clip × %g: step %g, want %g", f, xs[0], want)
		}
		h := &DPHMC{Iters: 1, Step: 0.1, LeapfrogSteps: 1, ClipLLR: 2, ClipGrad: 1, TauL: 2, TauG: 3,
			Plant: &Plant{Noise: fp(1e-12), Clip: fp(f)}}
		w := newHMCWork(h, m, d, []float64{0})
		w.noisyGrad([]float64{0}, rand.New(rand.NewPCG(1, 1)))
		if want := 4 * f; math.Abs(w.g[0]-want) > 1e-6 {
			t.Errorf("DP-HMC clip × %g: gradient sum %g, want %g", f, w.g[0], want)
		}
	}
	// Ratios 3·(θ′ − θ) against the bound 2·|θ′ − θ|: all clipped as
	// declared, none at b_l × 2.
	for _, f := range []float64{1, 2} {
		s := &DPPenalty{Iters: 50, ProposalSD: []float64{0.1}, ClipLLR: 2, Tau: 1, Plant: &Plant{Clip: fp(f)}}
		_, info := plantRun(t, s, m, d, 1)
		if clipped := info.ClippedLLRs == info.LLREvals; clipped != (f == 1) || info.LLREvals == 0 {
			t.Errorf("DP-penalty clip × %g: %d of %d ratios clipped", f, info.ClippedLLRs, info.LLREvals)
		}
	}
}

// Plant fields that do not apply, and factors out of range, are one-line
// errors naming the field (by its Go path here; the scenario names it
// sampler.KEY.plant.FIELD).
func TestPlantErrors(t *testing.T) {
	m := flatModel{}
	d := records(6)
	for _, c := range []struct {
		s    Sampler
		want string
	}{
		{&SGLD{Step: StepSchedule{Eta: 0.1}, Batch: 2, Scheme: Cyclic, Iters: 1, Plant: &Plant{Clip: fp(2)}}, "Plant.Clip: does not apply"},
		{&SGLD{Step: StepSchedule{Eta: 0.1}, Batch: 2, Scheme: Cyclic, Iters: 1, Plant: &Plant{Rate: fp(2)}}, "Plant.Rate: does not apply"},
		{&SGLD{Step: StepSchedule{Eta: 0.1}, Batch: 4, Scheme: Poisson, Iters: 1, Plant: &Plant{Rate: fp(2)}}, "Plant.Rate"},
		{&SGLD{Step: StepSchedule{Eta: 0.1}, Batch: 2, Scheme: Cyclic, Iters: 1, Plant: &Plant{Noise: fp(0)}}, "Plant.Noise: must be a finite factor > 0"},
		{&SGLD{Step: StepSchedule{Eta: 0.1}, Batch: 2, Scheme: Cyclic, Iters: 1, Plant: &Plant{Noise: fp(math.Inf(1))}}, "Plant.Noise"},
		{&SGLD{Step: StepSchedule{Eta: 0.1}, Batch: 2, Scheme: Cyclic, Iters: 1, Plant: &Plant{Steps: -1}}, "Plant.Steps"},
		{&DPHMC{Iters: 1, Step: 0.1, LeapfrogSteps: 1, ClipLLR: 2, ClipGrad: 1, TauL: 2, TauG: 3, Plant: &Plant{Rate: fp(2)}}, "Plant.Rate: does not apply"},
		{&DPPenalty{Iters: 1, ProposalSD: []float64{0.1}, ClipLLR: 2, NoNoise: true, Plant: &Plant{Noise: fp(2)}}, "Plant.Noise: does not apply"},
		{&DPBarker{Step: 0.1, Iters: 1, Plant: &Plant{Clip: fp(2)}}, "Plant.Clip: does not apply"},
		{&DPBarker{Step: 0.1, Iters: 1, Batch: 2, Plant: &Plant{Rate: fp(2)}}, "Plant.Rate: does not apply"},
		{&ULA{Gamma: 0.1, Iters: 1, Plant: &Plant{Clip: fp(2)}}, "Plant.Clip: does not apply"},
	} {
		err := c.s.Check(m, d)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line with %q", c.s.Name(), err, c.want)
		}
	}
	// 1 is the declared value: accepted where the field does not apply,
	// and nothing is planted.
	u := &ULA{Gamma: 0.1, Iters: 1, Plant: &Plant{Clip: fp(1), Rate: fp(1)}}
	if err := u.Check(m, d); err != nil || u.Name() != "ULA(gamma=0.1)" || u.PlantNote(6) != "" {
		t.Errorf("factors of 1: %v, %q, %q", err, u.Name(), u.PlantNote(6))
	}
}

// The releases of a planted sampler, or of SGLD with another noise
// variance, do not follow the declared sampler's law: TransferOf (from
// which a lower bound on the releases' ε is computed) refuses them, while
// the declared sampler's Prop. 3.2 guarantee is unchanged.
func TestTransferRefusesPlantedLaw(t *testing.T) {
	g, p := transferPairAt(t, []float64{9, -6})
	half := 0.5
	const k = 3000
	for _, c := range []struct {
		s    Sampler
		want string
	}{
		{&ULA{Gamma: 1e-3, Iters: k, Plant: &Plant{Noise: &half}}, "planted bug (noise × 0.5)"},
		{&SGLD{Step: StepSchedule{Eta: 2e-3}, Batch: p.D.Len(), Scheme: WithoutReplacement, Iters: k, NoiseVariance: 0.25}, "noise_variance 0.25"},
	} {
		ch := &Chain{Model: g, Sampler: c.s, Init: Init{FromPrior: true}}
		if tr, reason := TransferOf(ch, p, ReleasePoint{Iteration: k}); tr != nil || !strings.Contains(reason, c.want) {
			t.Errorf("%s: transfer %v, reason %q; want none, saying %q", c.s.Name(), tr, reason, c.want)
		}
	}
	declared := &Chain{Model: g, Sampler: &ULA{Gamma: 1e-3, Iters: k}, Init: Init{FromPrior: true}}
	if tr, reason := TransferOf(declared, p, ReleasePoint{Iteration: k}); tr == nil {
		t.Fatalf("the declared ULA has no transfer: %s", reason)
	}
}
