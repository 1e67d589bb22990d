package mechanisms

import (
	"math"
	"math/rand/v2"
	"sort"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// barkerPath accumulates DP-Barker's path statistic
// (docs/derivations/path-barker.md). What Heikkilä et al. (2019) release
// at each iteration is a sample of N_S = N(Δ*, C − s²_Δ*) (§3.3, the
// paragraph before Thm 2, which bounds the Rényi divergence between the
// N_S of neighbouring datasets; Cor. 2 composes it), for the full-data
// test a sample of N(Δ, C) (eq. 9, Thm 1): the test statistic plus the
// Gaussian part of the test noise. The batch's variance estimate s² is
// not released: it sets the variance of the noise. The correction V_cor
// and the decision Y + V_cor > 0 are post-processing, and so is the
// proposal, which does not depend on the data.
//
// With a gradient canary and inert ordinary records, every ordinary ratio
// is 0 and the canary's clipped ratio is x_h = clip(s_h·K·(θ′_c − θ_c)),
// ±clip unless θ_c barely moves; so under hypothesis h, given the past,
//
//	Y ~ (1 − q_h)·N(L, C) + q_h·N(L + (N0_h/b)·x_h, C − s²_h),
//
// q_h = b/n_h (the batch is drawn without replacement, afresh every
// iteration), L = ln p(θ′) − ln p(θ) and s²_h = (N0_h²/b)·x_h²·(b − 1)/b²,
// the population variance estimate of a batch holding the canary among
// b − 1 zeros (0 without it). With the full data the canary is always in
// and the other records' clipped sum S is the same, and known, under both
// hypotheses: Y ~ N(τ_h·(S + x_h) + L, C). Λ = Σ_t ln p_D(Y_t) − ln p_D′(Y_t)
// under the declared sampler: the declared C, clip and N0, whatever a
// planted bug changes.
type barkerPath struct {
	lr    *PathLR
	coord int
	slope float64
	full  bool
	// inert: the model has no parameters of its own (every ordinary
	// log-likelihood ratio is 0), so the fast loop runInert applies.
	inert bool
	c     float64 // declared C
	sdC   float64 // √C
	b     float64
	side  [2]barkerSide
	// ord is the full-data test's clipped sum of the ordinary records'
	// ratios at the current iteration, at the declared clip.
	ord     float64
	ordClip float64
	// observe, when set, receives the path of each iteration that releases
	// a statistic: the statistic y, the state θ and the proposal θ′ (tests
	// recompute Λ from them).
	observe func(y float64, theta, prop []float64)
}

// barkerSide holds the declared settings of one hypothesis.
type barkerSide struct {
	sign, clip, scale, n0, q float64
}

// newBarkerPath returns the path statistic of a run of s on model m.
func (s *DPBarker) newBarkerPath(lr *PathLR, m Model) (*barkerPath, error) {
	g := CanaryOf(m)
	p := &barkerPath{lr: lr, coord: g.Coord(), slope: g.Slope(), full: s.Batch == 0, inert: g.Coord() == 0,
		c: s.c(), b: float64(s.Batch)}
	p.sdC = math.Sqrt(p.c)
	for h := range p.side {
		r, err := s.resolve(lr.Spec.N[h])
		if err != nil {
			return nil, err
		}
		q := 1.0
		if !p.full {
			q = math.Min(1, p.b/float64(lr.Spec.N[h]))
		}
		p.side[h] = barkerSide{sign: lr.Spec.Sign[h], clip: r.clip, scale: r.scale, n0: r.n0, q: q}
		p.ordClip = r.clip
	}
	return p, nil
}

// record adds an ordinary record's ratio llr (full-data test) to the
// iteration's sum at the declared clip; the canary's own is left out.
func (p *barkerPath) record(rec dataset.Record, llr float64) {
	if rec.X[len(rec.X)-1] != 0 {
		return
	}
	x, _ := clipBarkerLLR(llr, p.ordClip)
	p.ord += x
}

// mixLogRatio returns ln of the density ratio of y under
// (1 − q)·N(0, v0) + q·N(mu, v1) against N(0, v0).
func mixLogRatio(y, q, mu, v1, v0 float64) float64 {
	if mu == 0 && v1 == v0 {
		return 0
	}
	e := -0.5*math.Log(v1/v0) - (y-mu)*(y-mu)/(2*v1) + y*y/(2*v0)
	return logMix(q, e)
}

// term returns ln p_D(y) − ln p_D′(y) for a released statistic y, the
// canary coordinate's proposed move dth, the log-prior ratio lpd and the
// ordinary records' sum ord (full data).
func (p *barkerPath) term(y, dth, lpd, ord float64) float64 {
	var l [2]float64
	var mean [2]float64
	for h, sd := range p.side {
		x := 0.0
		if sd.sign != 0 {
			x, _ = clipBarkerLLR(sd.sign*p.slope*dth, sd.clip)
		}
		if p.full {
			mean[h] = sd.scale*(ord+x) + lpd
			continue
		}
		s2 := sd.n0 * sd.n0 / p.b * x * x * (p.b - 1) / (p.b * p.b)
		l[h] = mixLogRatio(y-lpd, sd.q, sd.scale*x, p.c-s2, p.c)
	}
	if p.full {
		return GaussShift(y, mean[0], mean[1], p.sdC)
	}
	return l[0] - l[1]
}

// step adds the term of one released statistic y at state theta and
// proposal prop (log-prior ratio lpd) and resets the iteration's ordinary
// sum.
func (p *barkerPath) step(y float64, theta, prop []float64, lpd float64) {
	if p.observe != nil {
		p.observe(y, theta, prop)
	}
	p.lr.add(p.term(y, prop[p.coord]-theta[p.coord], lpd, p.ord))
	p.ord = 0
}

// test draws the test noise of a path run, in this order: V_cor's
// component, the normal of the released statistic Y = delta + N(0, sdY²),
// the normal of V_cor's component (both noises × the planted factor); it
// adds Y's term to Λ and reports whether Y + V_cor > 0.
func (p *barkerPath) test(bp *barkerParams, delta, sdY float64, theta, prop []float64, lpd float64, rng *rand.Rand) bool {
	v := bp.vcor
	u := rng.Float64()
	// The first component whose cumulative weight exceeds u, as
	// VCor.component finds it by a linear scan.
	j := min(sort.Search(len(v.cum), func(i int) bool { return u < v.cum[i] }), len(v.cum)-1)
	f := 1.0
	if bp.noise != 0 {
		f = bp.noise
	}
	y := delta + f*sdY*rng.NormFloat64()
	rest := f * (v.means[j] + vcorSD*rng.NormFloat64())
	p.step(y, theta, prop, lpd)
	return y+rest > 0
}

// decide draws the test noise and reports whether the proposal of
// log-posterior ratio delta is accepted (accept), drawing the released
// statistic apart from V_cor under the path threat model. Only the
// full-data test comes here under the path model (the subsampled one
// needs inert records: runInert).
func (p *barkerParams) decide(delta, sd float64, rng *rand.Rand, path *barkerPath, prop, theta []float64, lpd float64) bool {
	if path == nil {
		return p.accept(delta, sd, rng)
	}
	return path.test(p, delta, math.Sqrt(p.c), theta, prop, lpd, rng)
}

// runInert is the loop of a path run on inert records with a gradient
// canary (θ = (θ_c)): every ordinary ratio is 0, so an iteration draws the
// proposal (one normal), the canary's inclusion in the minibatch (one
// uniform, probability b/n: a batch of b drawn without replacement holds
// a given record with that probability, independently across iterations;
// none with the full data, which always holds it), then the test noise
// (test). Its law is that of run's general loop; only its draws differ.
func (s *DPBarker) runInert(p *barkerParams, d *dataset.Dataset, theta []float64, rng *rand.Rand, rel *releaser, info *Info, path *barkerPath) (Info, error) {
	sign := 0.0
	for _, r := range d.Records {
		if v := r.X[len(r.X)-1]; v != 0 {
			sign = v
		}
	}
	q, evals := 1.0, p.n
	if !p.full {
		q, evals = float64(p.b)/float64(p.n), p.b
	}
	bf := float64(p.b)
	prop := []float64{0}
	for t := 1; t <= info.Iterations; t++ {
		prop[0] = theta[0] + s.Step*rng.NormFloat64()
		if prop[0]-prop[0] != 0 {
			return *info, &DivergedError{Iteration: t, Theta: []float64{prop[0]}}
		}
		dth := prop[0] - theta[0]
		info.Proposals++
		info.LLREvals += evals
		var x, s2 float64
		if in := p.full || rng.Float64() < q; in && sign != 0 {
			var c bool
			x, c = clipBarkerLLR(sign*path.slope*dth, p.clip)
			if c {
				info.ClippedLLRs++
			}
			if !p.full {
				s2 = p.n0 * p.n0 / bf * x * x * (bf - 1) / (bf * bf)
			}
		}
		reject, err := p.varianceCheck(t, s2, info)
		if err != nil {
			return *info, err
		}
		// A failed variance check (a planted clip only: checkPath refuses
		// declared settings under which it can fail) releases no Y.
		if !reject && path.test(p, p.scale*x, math.Sqrt(p.c-s2), theta, prop, 0, rng) {
			theta[0] = prop[0]
			info.Accepted++
		}
		if rel.due(t) {
			if err := rel.release(theta, info); err != nil {
				return *info, err
			}
		}
	}
	return *info, nil
}

// runPath implements pathSampler.
func (s *DPBarker) runPath(m Model, d *dataset.Dataset, theta []float64, rng *rand.Rand, at []int, emit Emit, lr *PathLR) (Info, error) {
	path, err := s.newBarkerPath(lr, m)
	if err != nil {
		return Info{}, err
	}
	return s.run(m, d, theta, rng, at, emit, path)
}

// checkPath implements pathSampler: the statistic is exact for the
// full-data test with clipping (any model: the ordinary records' part of
// Δ is the same, and known, under D and D′) and for the subsampled test on
// inert records (the canary's inclusion is then the only unknown).
func (s *DPBarker) checkPath(spec *PathSpec, m Model, _ *dataset.Dataset) error {
	switch {
	case s.Exact:
		return field.Errorf(field.At("Exact", "exact"), "under the path threat model the test must be the private one (exact false): the exact logistic test adds no privacy noise and has no guarantee")
	case s.NoClip:
		return field.Errorf(field.At("NoClip", "no_clip"), "under the path threat model the ratios must be clipped: without it the canary's ratio is K·|θ′_c − θ_c| and no guarantee applies")
	case s.Batch == 0 && s.Clip == 0:
		return field.Errorf(field.At("Clip", "clip"), "under the path threat model the full-data test must clip (clip > 0): without it the canary's ratio is K·|θ′_c − θ_c| and no guarantee applies")
	case s.Batch > 0 && CanaryOf(m).Coord() != 0:
		return field.Errorf(field.At("Model", "model"), "under the path threat model the subsampled test (batch ≥ 2) needs model: {inert: {}}: with other records the minibatch's sum of their ratios is random and unknown to the adversary, and the exact likelihood ratio of the released statistic is intractable (batch 0, the full-data test, takes any model)")
	}
	if s.Batch == 0 {
		return nil
	}
	for h, n := range spec.N {
		p, err := s.resolve(n)
		if err != nil {
			return err
		}
		b := float64(p.b)
		if s2 := p.n0 * p.n0 / b * p.clip * p.clip * (b - 1) / (b * b); spec.Sign[h] != 0 && s2 > p.limit {
			return field.Errorf(field.At("VarianceLimit", "variance_limit"), "under the path threat model the variance check must not fail: the canary at the clip bound gives s² = %.6g above the limit %g; lower clip or raise the limit", s2, p.limit)
		}
	}
	return nil
}

// PathStepPair returns the laws of one iteration's released statistic
// under D (P) and D′ (Q) when the canary's clipped ratio is at its bound
// (a move up of θ_c; a move down mirrors both laws, which leaves the pair's
// privacy profile unchanged), with the log-prior ratio and (full data) the
// ordinary records' sum taken as 0, which shifts both laws alike. ok is
// false when the pair differs from step to step: the full-data test on a
// model with parameters whose scaling τ = N0/n differs between D and D′
// (the ordinary sum then enters the two means differently), or settings
// checkPath refuses. The T-fold composition of the pair is the path's
// exact privacy profile for T iterations at which the canary's ratio is
// clipped (closedform.MixturePLD); a ratio below the bound (|θ′_c − θ_c| <
// clip/K, probability about 10⁻⁵ per iteration at the default K) only
// brings the two laws closer.
func (s *DPBarker) PathStepPair(spec *PathSpec, m Model) (p, q closedform.GaussMix2, ok bool) {
	if s.checkPath(spec, m, nil) != nil {
		return p, q, false
	}
	path, err := s.newBarkerPath(NewPathLR(spec), m)
	if err != nil {
		return p, q, false
	}
	if path.full && !path.inert && path.side[0].scale != path.side[1].scale {
		return p, q, false
	}
	var laws [2]closedform.GaussMix2
	for h, sd := range path.side {
		x := sd.sign * sd.clip
		s2 := 0.0
		if !path.full {
			s2 = sd.n0 * sd.n0 / path.b * x * x * (path.b - 1) / (path.b * path.b)
		}
		w := sd.q
		if sd.sign == 0 {
			w = 0
		}
		laws[h] = closedform.GaussMix2{W: w, V0: path.c, M1: sd.scale * x, V1: path.c - s2}
	}
	return laws[0], laws[1], true
}
