package mechanisms

import (
	"math"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"math/rand/v2"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// sgldPath accumulates SGLD's path statistic. What SGLD releases is every
// state θ_{t+1} = θ_t + (η_t/2)(∇ ln p(θ_t) + (n/b)·Σ_{i∈B_t} clip_C(g_i)) + σ_t·ξ
// (Heller & Fetaya eq. 3 and eq. 66). Along the canary's coordinate no
// ordinary record and not the (flat) prior contributes, so the increment
// y_t = θ_{t+1,c} − θ_{t,c} is (η_t/2)·(n_h/b)·s_h·G·k + σ_t·ξ, where k is
// the number of times the canary is in B_t under hypothesis h, s_h its sign
// and G = min(K, C) the norm of its clipped gradient; every other
// coordinate has the same law under D and D′ given the past. So
//
//	Λ = Σ_t ln p_D(y_t) − ln p_D′(y_t),
//
// with p_h a Gaussian (full batches: k = 1), a two-component mixture
// (Poisson or uniform subsets: k ~ Bernoulli(b/n_h)) or a binomial mixture
// (with replacement: k ~ Bin(b, 1/n_h)). The declared sampler is what the
// adversary assumes: the declared noise, clip bound and rate, whatever a
// planted bug changes.
type sgldPath struct {
	lr    *PathLR
	coord int
	// sdScale is sqrt(NoiseVariance): σ_t = sdScale·sqrt(η_t).
	sdScale float64
	// g[h] is (n_h/b)·s_h·G, the canary's drift per unit of η/2.
	g [2]float64
	// q[h] is the canary's inclusion probability (Bernoulli), or 1/n_h
	// with binom (b draws).
	q     [2]float64
	binom bool
	b     int
	// antipodal: the canary has the same inclusion probability on both
	// sides and opposite drifts (replace-one), so a step's ratio is
	// ((1−q)·u + q·c)/(u·((1−q) + q·c·u)) with u = e^{y·a/σ²} and
	// c = e^{−a²/(2σ²)}: one exponential a step (see step).
	antipodal bool

	eta, sd float64 // the last step size and its σ
	// For the antipodal form at step size eta: a/σ² and q·c.
	aOverV, qc float64
}

// newPath returns the path statistic of a run of s on model m.
func (s *SGLD) newPath(lr *PathLR, m Model) *sgldPath {
	g := CanaryOf(m)
	p := &sgldPath{lr: lr, coord: g.Coord(), sdScale: math.Sqrt(s.noiseVar()), b: s.Batch, binom: s.Scheme == WithReplacement}
	mag := g.Slope()
	if s.Clip > 0 {
		mag = math.Min(mag, s.Clip)
	}
	for h := range p.g {
		n := float64(s.sizeOf(lr.Spec.N[h]))
		p.g[h] = n / float64(s.Batch) * lr.Spec.Sign[h] * mag
		switch {
		case p.binom:
			p.q[h] = 1 / n
		default:
			p.q[h] = math.Min(1, float64(s.Batch)/n)
		}
	}
	p.antipodal = !p.binom && p.q[0] == p.q[1] && p.q[0] <= 0.5 && p.g[0] == -p.g[1] && p.g[0] != 0
	return p
}

// step adds the term of one increment y of the canary's coordinate made
// with step size eta.
func (p *sgldPath) step(y, eta float64) {
	half := eta / 2
	mD, mDp := half*p.g[0], half*p.g[1]
	p.at(eta)
	if p.antipodal {
		// a = mDp = −mD. With |z| < 10 and q ≤ 1/2, the numerator and
		// denominator lie in [2e-5, 5e8], as mulRatio needs; beyond, the
		// general form is used.
		if z := y * p.aOverV; math.Abs(z) < 10 {
			u, q1 := fastExp(z), 1-p.q[0]
			p.lr.mulRatio(q1*u+p.qc, u*(q1+p.qc*u))
			return
		}
	}
	if p.binom {
		p.lr.add(BinomialShiftLogLik(y, p.b, p.q[0], mD, p.sd) - BinomialShiftLogLik(y, p.b, p.q[1], mDp, p.sd))
		return
	}
	p.lr.add(BernoulliShiftLogLik(y, p.q[0], mD, p.sd) - BernoulliShiftLogLik(y, p.q[1], mDp, p.sd))
}

// at sets the constants of a step of size eta.
func (p *sgldPath) at(eta float64) {
	if eta != p.eta {
		a := eta / 2 * p.g[1]
		p.eta, p.sd = eta, p.sdScale*math.Sqrt(eta)
		v := p.sd * p.sd
		p.aOverV, p.qc = a/v, p.q[0]*math.Exp(-a*a/(2*v))
	}
}

// checkPath implements pathSampler: schemes that visit every record once
// per epoch tie the canary's inclusions together across steps, which the
// per-step statistic does not model, unless every batch is the whole
// dataset.
func (s *SGLD) checkPath(spec *PathSpec, m Model, _ *dataset.Dataset) error {
	switch s.Scheme {
	case Reshuffle, Cyclic:
		if s.Batch < spec.N[0] || s.Batch < spec.N[1] {
			return field.Errorf(field.At("Scheme", "scheme"), "under the path threat model, scheme %s ties the canary's inclusions across the steps of an epoch, which the per-step statistic does not model: use poisson, without-replacement or with-replacement, or batch = n (%d and %d records)", s.Scheme, spec.N[0], spec.N[1])
		}
	}
	if g := CanaryOf(m); (s.Scheme == WithoutReplacement || s.Scheme == WithReplacement) && g != nil && g.Inner().Dim() > 0 &&
		(s.Batch < spec.N[0] || s.Batch < spec.N[1]) {
		// The number of ordinary records in a fixed-size batch is b minus
		// the canary's count, so the other coordinates carry information
		// about the canary's inclusion that the per-step statistic of θ_c
		// leaves out: it would be valid, but not the exact ratio.
		return field.Errorf(field.At("Scheme", "scheme"), "under the path threat model, fixed-size batches smaller than n (%d of %d and %d records) make the ordinary records' part depend on the canary's inclusion, so the statistic would not be exact: use poisson, batch = n, or model inert", s.Batch, spec.N[0], spec.N[1])
	}
	if s.Clip == 0 {
		return field.Errorf(field.At("Clip", "clip"), "under the path threat model SGLD must clip (clip > 0): without it the canary's gradient is its slope, and no guarantee applies")
	}
	return nil
}

// runAffine1DSparse is runAffine1D for Poisson minibatches of a dataset in
// which some records have a zero gradient (a gradient canary among inert
// records): only the inclusion of the others is drawn, the rest adding 0
// to the minibatch sum whether drawn or not, so an iteration costs one
// uniform per active record and one normal. GradEvals counts the active
// records included.
func (s *SGLD) runAffine1DSparse(k *affineCoefs, n int, theta []float64, rng *rand.Rand, rel *releaser, info *Info, path *sgldPath) (Info, error) {
	h, j, shift, prec, active := k.h, k.j, k.shift, k.prec, k.active
	q := float64(s.Batch) / float64(s.sizeOf(n)) * s.Plant.rate()
	sc := float64(s.sizeOf(n)) / float64(s.Batch)
	if path != nil && path.antipodal && s.Step.Gamma == 0 && path.lr.Observe == nil && len(active) == 1 {
		return s.runAntipodal(k, q, sc, theta, rng, rel, info, path)
	}
	fn := newFastNormal(rng)
	th := theta[0]
	next := rel.nextAt()
	for t := 0; t < info.Iterations; t++ {
		eta := s.Step.At(t)
		half, sd := eta/2, s.noiseSD(eta)
		var sh, sj float64
		for _, i := range active {
			if rng.Float64() < q {
				sh += h[i]
				sj += j[i]
				info.GradEvals++
				if k.clipped != nil && k.clipped[i] {
					info.ClippedGrads++
				}
			}
		}
		before := th
		th += half*(shift-prec*th+sc*(sh-sj*th)) + sd*fn.norm()
		if th-th != 0 {
			return *info, &DivergedError{Iteration: t + 1, Theta: []float64{th}}
		}
		if path != nil {
			path.step(th-before, eta)
		}
		if t+1 == next {
			var err error
			if next, err = rel.release1D(theta, th, info); err != nil {
				return *info, err
			}
		}
	}
	theta[0] = th
	return *info, nil
}

// pathMu implements pathGaussian: with full batches on both sides (the
// canary in every step) the increments of θ_c are Gaussian shifts of
// (η_t/2)·|g_D − g_D′| against σ_t, so μ² = Σ_t (η_t/4)·(g_D − g_D′)²/NoiseVariance.
func (s *SGLD) pathMu(spec *PathSpec, m Model, _ *dataset.Dataset, it int) (float64, bool) {
	if s.Plant != nil || s.Scheme == WithReplacement || CanaryOf(m) == nil {
		return 0, false
	}
	p := s.newPath(NewPathLR(spec), m)
	if p.q[0] != 1 || p.q[1] != 1 {
		return 0, false
	}
	d := p.g[0] - p.g[1]
	var sum float64
	for t := 0; t < it; t++ {
		sum += s.Step.At(t) / 4 * d * d
	}
	return math.Sqrt(sum / s.noiseVar()), true
}

// runAntipodal is runAffine1DSparse for the path threat model's common case,
// the one whose statistic dominates the cost: one canary (the only active
// record), a constant step, and the antipodal pair of sgldPath.step, whose
// products of ratios are kept in the loop (as PathLR.mulRatio keeps them,
// in the same groups, so Λ is the same to the last bit).
func (s *SGLD) runAntipodal(k *affineCoefs, q, sc float64, theta []float64, rng *rand.Rand, rel *releaser, info *Info, path *sgldPath) (Info, error) {
	i := k.active[0]
	hc, jc, shift, prec := k.h[i], k.j[i], k.shift, k.prec
	clipped := k.clipped != nil && k.clipped[i]
	eta := s.Step.Eta
	half, sd := eta/2, s.noiseSD(eta)
	path.at(eta)
	lr := path.lr
	aOverV, qc, q1 := path.aOverV, path.qc, 1-path.q[0]
	fn := newFastNormal(rng)
	th := theta[0]
	next := rel.nextAt()
	for t := 0; t < info.Iterations; t++ {
		var sh, sj float64
		if rng.Float64() < q {
			sh, sj = hc, jc
			info.GradEvals++
			if clipped {
				info.ClippedGrads++
			}
		}
		before := th
		th += half*(shift-prec*th+sc*(sh-sj*th)) + sd*fn.norm()
		if th-th != 0 {
			return *info, &DivergedError{Iteration: t + 1, Theta: []float64{th}}
		}
		if z := (th - before) * aOverV; math.Abs(z) < 10 {
			u := fastExp(z)
			lr.num *= q1*u + qc
			lr.den *= u * (q1 + qc*u)
			if lr.held++; lr.held == maxHeld {
				lr.flush()
			}
		} else {
			path.step(th-before, eta)
		}
		if t+1 == next {
			var err error
			if next, err = rel.release1D(theta, th, info); err != nil {
				return *info, err
			}
		}
	}
	theta[0] = th
	return *info, nil
}

// PathStepPair returns the laws of the canary coordinate's increment y_t
// under D (p) and D′ (q), (1 − q_h)·N(0, σ²) + q_h·N((η/2)·g_h, σ²), when
// they are the same at every step and a two-component mixture: a constant
// step, Poisson or uniform-subset batches with the canary's inclusion
// probability below 1 on some side. The T-fold composition of the pair is
// then the path's exact privacy profile (closedform.MixturePLD). ok is
// false otherwise (full batches are μ-GDP paths, see pathMu).
func (s *SGLD) PathStepPair(spec *PathSpec, m Model) (p, q closedform.GaussMix2, ok bool) {
	if s.Step.Gamma != 0 || s.Scheme == WithReplacement || CanaryOf(m) == nil || s.checkPath(spec, m, nil) != nil {
		return p, q, false
	}
	path := s.newPath(NewPathLR(spec), m)
	if path.q[0] == 1 && path.q[1] == 1 {
		return p, q, false
	}
	v := s.noiseVar() * s.Step.Eta
	var laws [2]closedform.GaussMix2
	for h := range laws {
		w := path.q[h]
		if path.g[h] == 0 {
			w = 0
		}
		laws[h] = closedform.GaussMix2{W: w, V0: v, M1: s.Step.Eta / 2 * path.g[h], V1: v}
	}
	return laws[0], laws[1], true
}
