package mechanisms

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// canaryPair returns inner with a gradient canary (slope K) and the pair of
// datasets built from the ordinary records xs: under replace-one record 0
// is the canary, of sign −1 in D and +1 in D′; under add-one D′ appends a
// canary of sign +1.
func canaryPair(t *testing.T, inner Model, slope float64, xs [][]float64, addOne bool) (Model, *dataset.Dataset, *dataset.Dataset, *PathSpec) {
	t.Helper()
	m, err := NewGradientCanary(inner, slope)
	if err != nil {
		t.Fatal(err)
	}
	canary := func(s float64) dataset.Record {
		x := make([]float64, inner.DataDim()+1)
		x[len(x)-1] = s
		return dataset.Record{X: x}
	}
	d := &dataset.Dataset{Name: "D"}
	for _, x := range xs {
		d.Records = append(d.Records, dataset.Record{X: append(append([]float64(nil), x...), 0)})
	}
	dp := &dataset.Dataset{Name: "D′", Records: append([]dataset.Record(nil), d.Records...)}
	if addOne {
		dp.Records = append(dp.Records, canary(1))
	} else {
		d.Records[0], dp.Records[0] = canary(-1), canary(1)
	}
	spec, err := PathSpecOf(m, dataset.Pair{D: d, DPrime: dp})
	if err != nil {
		t.Fatal(err)
	}
	return m, d, dp, spec
}

// gaussTerm is ln N(y; mD, sd²) − ln N(y; mDp, sd²), written out.
func gaussTerm(y, mD, mDp, sd float64) float64 {
	return ((y-mDp)*(y-mDp) - (y-mD)*(y-mD)) / (2 * sd * sd)
}

func clamp(v, c float64) float64 { return math.Max(-c, math.Min(c, v)) }

// recomputeHMCPath recomputes Λ from the released quantities qs of a run
// on a dataset whose canary is record canary (−1: none), with the declared
// clip bounds and τ's, straight from the formulas of hmc_path.go's
// comment: each released value minus the ordinary records' part (from
// their log-likelihoods and gradients, evaluated here), a Gaussian term
// with the canary's part under D and D′ as means and the declared sd.
func recomputeHMCPath(m Model, d *dataset.Dataset, canary int, spec *PathSpec, qs []hmcReleased, bl, tauL, bg, tauG float64) (sum, abs float64) {
	g := CanaryOf(m)
	c0 := g.Coord()
	grad := make([]float64, m.Dim())
	for _, q := range qs {
		var term float64
		if !q.Ratio {
			// The ordinary records' clipped gradients and the prior's
			// gradient along θ_c (both 0 for a Dirac canary).
			y := q.Value
			for i, r := range d.Records {
				if i == canary {
					continue
				}
				m.GradLogLik(q.Theta, r, grad)
				var nn float64
				for _, v := range grad {
					nn += v * v
				}
				y -= grad[c0] * math.Min(1, bg/math.Sqrt(nn))
			}
			m.GradLogPrior(q.Theta, grad)
			y -= grad[c0]
			G := math.Min(g.Slope(), bg)
			term = gaussTerm(y, spec.Sign[0]*G, spec.Sign[1]*G, 2*bg*tauG)
		} else {
			var dist float64
			for k := range q.Theta {
				dist += (q.ThetaNew[k] - q.Theta[k]) * (q.ThetaNew[k] - q.Theta[k])
			}
			c := bl * math.Sqrt(dist)
			y := q.Value
			for i, r := range d.Records {
				if i != canary {
					y -= clamp(m.LogLik(q.ThetaNew, r)-m.LogLik(q.Theta, r), c)
				}
			}
			k := g.Slope() * (q.ThetaNew[c0] - q.Theta[c0])
			term = gaussTerm(y, clamp(spec.Sign[0]*k, c), clamp(spec.Sign[1]*k, c), 2*tauL*c)
		}
		sum += term
		abs += math.Abs(term)
	}
	return sum, abs
}

// recordPath runs run with the recorder on and returns the released
// quantities (copied).
func recordPath(t *testing.T, run func() error) []hmcReleased {
	t.Helper()
	var qs []hmcReleased
	hmcPathRecorder = func(q hmcReleased) {
		q.Theta = append([]float64(nil), q.Theta...)
		q.ThetaNew = append([]float64(nil), q.ThetaNew...)
		qs = append(qs, q)
	}
	defer func() { hmcPathRecorder = nil }()
	if err := run(); err != nil {
		t.Fatal(err)
	}
	return qs
}

func fptr(v float64) *float64 { return &v }

// The Λ accumulated inside the loop equals Λ recomputed, by independent
// formulas, from the saved path, on both sides, with and without a planted
// bug (the statistic keeps the declared values), for DP-HMC and
// DP-penalty on the Gauss model with a canary.
func TestHMCPathRecomputed(t *testing.T) {
	inner, err := NewGauss(nil, 10, []float64{1, 0.3, 0.3, 1})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	xs := make([][]float64, 8)
	for i := range xs {
		xs[i] = []float64{0.5 + rng.NormFloat64(), -0.5 + rng.NormFloat64()}
	}
	plants := []*Plant{nil, {Noise: fptr(0.7), Clip: fptr(0.5)}}
	for _, addOne := range []bool{false, true} {
		m, d, dp, spec := canaryPair(t, inner, 0, xs, addOne)
		for _, plant := range plants {
			h := &DPHMC{Iters: 6, Step: 0.03, LeapfrogSteps: 3, ClipLLR: 3, ClipGrad: 3, TauL: 2, TauG: 2, Plant: plant}
			p := &DPPenalty{Iters: 6, ProposalSD: []float64{0.2}, ClipLLR: 3, Tau: 3, Plant: plant}
			for side, ds := range []*dataset.Dataset{d, dp} {
				canary := -1
				for i, r := range ds.Records {
					if CanaryOf(m).Sign(r) != 0 {
						canary = i
					}
				}
				for seed := uint64(0); seed < 3; seed++ {
					for _, s := range []struct {
						name   string
						ps     pathSampler
						bg, tg float64
						tl     float64
					}{{"dp_hmc", h, 3, 2, 2}, {"dp_penalty", p, 0, 0, 3}} {
						lr := NewPathLR(spec)
						var terms []float64
						lr.Observe = func(v float64) { terms = append(terms, v) }
						var emitted []float64
						emit := func(_ int, th []float64) error { emitted = append(emitted, th...); return nil }
						theta := []float64{0.5, -0.5, 0}
						qs := recordPath(t, func() error {
							_, err := s.ps.runPath(m, ds, theta, rand.New(rand.NewPCG(seed, 77)), []int{6 + plant.steps()}, emit, lr)
							return err
						})
						if len(qs) != len(terms) || len(qs) == 0 {
							t.Fatalf("%s: %d released quantities, %d terms", s.name, len(qs), len(terms))
						}
						got, abs := recomputeHMCPath(m, ds, canary, spec, qs, 3, s.tl, s.bg, s.tg)
						if math.Abs(got-lr.L) > 1e-12*math.Max(1, abs) {
							t.Errorf("%s side %d seed %d plant %v add-one %v: Λ %.17g in the loop, %.17g recomputed", s.name, side, seed, plant != nil, addOne, lr.L, got)
						}
						if len(emitted) != 1 || emitted[0] != lr.L {
							t.Errorf("%s: released %v, Λ = %v", s.name, emitted, lr.L)
						}
					}
				}
			}
		}
	}
}

// pathMoments returns the mean and variance of Λ over runs of ps on ds.
func pathMoments(t *testing.T, ps pathSampler, m Model, ds *dataset.Dataset, spec *PathSpec, k, runs int, seed uint64) (mean, variance float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	var s, s2 float64
	for i := 0; i < runs; i++ {
		lr := NewPathLR(spec)
		theta := make([]float64, m.Dim())
		if _, err := ps.runPath(m, ds, theta, rng, []int{k}, nil, lr); err != nil {
			t.Fatal(err)
		}
		s += lr.L
		s2 += lr.L * lr.L
	}
	mean = s / float64(runs)
	return mean, (s2 - float64(runs)*mean*mean) / float64(runs-1)
}

// theoremMu returns the GDP μ of a sampler's first guarantee.
func theoremMu(t *testing.T, g SamplerGuarantor, n, k int) float64 {
	t.Helper()
	gs := g.Guarantees(Setting{N: n, Iterations: k})
	if len(gs) == 0 || gs[0].Spec == nil || gs[0].Spec.Kind != "gdp" {
		t.Fatalf("no GDP guarantee first: %+v", gs)
	}
	return float64(gs[0].Spec.Params["mu"])
}

// Under the inert model with a gradient canary every released quantity is
// a Gaussian whose mean moves by a fixed multiple of its sd between D and
// D′, so the path is exactly μ-GDP: Λ ~ N(μ²/2, μ²) on D and N(−μ²/2, μ²)
// on D′, with μ² = k/τ_l² + k(L+1)/τ_g² (DP-HMC) or k/τ_l² (DP-penalty)
// under replace-one and a quarter of that under add-one (the canary's
// part moves by half as much). The theorems' μ is the replace-one one.
func TestHMCPathGDP(t *testing.T) {
	const n, runs = 5, 3000
	xs := make([][]float64, n)
	for _, c := range []struct {
		name  string
		ps    pathSampler
		k     int
		mu2   float64
		g     SamplerGuarantor
		add   bool
		check bool
	}{
		{"dp_hmc", &DPHMC{Iters: 5, Step: 0.1, LeapfrogSteps: 2, ClipLLR: 3, ClipGrad: 3, TauL: 1.5, TauG: 2}, 5, 5/(1.5*1.5) + 5*3/4.0, nil, false, true},
		{"dp_penalty", &DPPenalty{Iters: 8, ProposalSD: []float64{0.5}, ClipLLR: 3, Tau: 1.2}, 8, 8 / (1.2 * 1.2), nil, false, true},
		{"dp_penalty add-one", &DPPenalty{Iters: 8, ProposalSD: []float64{0.5}, ClipLLR: 3, Tau: 1.2}, 8, 8 / (1.2 * 1.2) / 4, nil, true, false},
	} {
		m, d, dp, spec := canaryPair(t, Inert{}, 0, xs, c.add)
		for side, ds := range []*dataset.Dataset{d, dp} {
			mean, v := pathMoments(t, c.ps, m, ds, spec, c.k, runs, uint64(side)+11)
			want := c.mu2 / 2
			if side == 1 {
				want = -want
			}
			seMean := math.Sqrt(c.mu2 / runs)
			seVar := c.mu2 * math.Sqrt(2/float64(runs-1))
			if math.Abs(mean-want) > 4.5*seMean {
				t.Errorf("%s side %d: mean Λ %.4f, want %.4f ± %.4f", c.name, side, mean, want, 4.5*seMean)
			}
			if math.Abs(v-c.mu2) > 4.5*seVar {
				t.Errorf("%s side %d: var Λ %.4f, want %.4f ± %.4f", c.name, side, v, c.mu2, 4.5*seVar)
			}
		}
		if c.check {
			mu := theoremMu(t, c.ps.(SamplerGuarantor), n, c.k)
			if math.Abs(mu-math.Sqrt(c.mu2)) > 1e-12*mu {
				t.Errorf("%s: theorem μ %.15g, path μ %.15g", c.name, mu, math.Sqrt(c.mu2))
			}
		}
	}
}

// The hand case of docs/derivations/path-hmc.md: θ_c moves from 0.2 to
// 0.5, b_l = 3, τ_l = 2, b_g = 3, τ_g = 2, replace-one.
func TestHMCPathHandCase(t *testing.T) {
	for _, c := range []struct {
		slope, want float64
	}{{0, -1.0 / 24}, {2, -1.0 / 36}} {
		m, d, _, spec := canaryPair(t, Inert{}, c.slope, make([][]float64, 3), false)
		p := newHMCPath(NewPathLR(spec), m, d, 3, 2, 3, 2)
		var info Info
		r := p.ratio(d, []float64{0.2}, []float64{0.5}, 0.3, 0.9, &info)
		wantR := -0.9 // the canary's own clipped ratio, sign −1 in D
		if c.slope == 2 {
			wantR = -0.6
		}
		if math.Abs(r-wantR) > 1e-15 {
			t.Errorf("slope %g: R = %v, want %v", c.slope, r, wantR)
		}
		if got := p.ratioTerm(0.3); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("slope %g: ratio term %.17g, want %.17g", c.slope, got, c.want)
		}
	}
	m, d, _, spec := canaryPair(t, Inert{}, 0, make([][]float64, 3), false)
	p := newHMCPath(NewPathLR(spec), m, d, 3, 2, 3, 2)
	if got := p.gradTerm(1.5); math.Abs(got+0.0625) > 1e-15 {
		t.Errorf("gradient term %.17g, want -0.0625", got)
	}
}

// checkPath refuses, in one line naming the field, a sampler without noise
// and a noise scale that depends on n under add-one.
func TestHMCCheckPath(t *testing.T) {
	m, d, _, spec := canaryPair(t, Inert{}, 0, make([][]float64, 3), false)
	_, _, _, specAdd := canaryPair(t, Inert{}, 0, make([][]float64, 3), true)
	for _, c := range []struct {
		name  string
		ps    pathSampler
		spec  *PathSpec
		field string
	}{
		{"hmc no noise", &DPHMC{Iters: 1, Step: 0.1, LeapfrogSteps: 1, ClipLLR: 1, ClipGrad: 1, NoNoise: true}, spec, "no_noise"},
		{"penalty no noise", &DPPenalty{Iters: 1, ProposalSD: []float64{1}, ClipLLR: 1, NoNoise: true}, spec, "no_noise"},
		{"hmc sqrt-n add-one", &DPHMC{Iters: 1, Step: 0.1, LeapfrogSteps: 1, ClipLLR: 1, ClipGrad: 1, TauL: 1, TauG: 1, TauScale: TauSqrtN}, specAdd, "tau_scale"},
		{"penalty sqrt-n add-one", &DPPenalty{Iters: 1, ProposalSD: []float64{1}, ClipLLR: 1, Tau: 1, TauScale: TauSqrtN}, specAdd, "tau_scale"},
	} {
		err := c.ps.checkPath(c.spec, m, d)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if msg := yamlText(err, ""); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, c.field+": ") {
			t.Errorf("%s: %q, want one line naming %s", c.name, msg, c.field)
		}
	}
	for _, ps := range []pathSampler{
		&DPHMC{Iters: 1, Step: 0.1, LeapfrogSteps: 1, ClipLLR: 1, ClipGrad: 1, TauL: 1, TauG: 1, TauScale: TauSqrtN},
		&DPPenalty{Iters: 1, ProposalSD: []float64{1}, ClipLLR: 1, Tau: 1},
	} {
		if err := ps.checkPath(spec, m, d); err != nil {
			t.Errorf("%T: refused a valid setting: %v", ps, err)
		}
	}
}
