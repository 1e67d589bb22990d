package mechanisms

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"gonum.org/v1/gonum/floats"
)

// LogLikRatioModel is implemented by models that can form the per-record
// log-likelihood ratio ln p(x|θ′) − ln p(x|θ) directly, without subtracting
// two nearly equal log-likelihoods. The penalty samplers use it when
// present and fall back to LogLik differences otherwise.
type LogLikRatioModel interface {
	LogLikRatio(theta, thetaNew []float64, r dataset.Record) float64
}

// LogLikRatio implements LogLikRatioModel for linear regression:
// ln p(y|x,θ′) − ln p(y|x,θ) = β·((θ′−θ)ᵀx)·(y − (θ+θ′)ᵀx/2), the difference of
// the squared residuals factored as (e−e′)(e+e′)/2.
func (m LinReg) LogLikRatio(theta, thetaNew []float64, r dataset.Record) float64 {
	var dz, mz float64
	for i, x := range r.X {
		dz += (thetaNew[i] - theta[i]) * x
		mz += 0.5 * (theta[i] + thetaNew[i]) * x
	}
	return m.Beta * dz * (r.Y - mz)
}

// clipLLR clips one log-likelihood ratio to [−c, c] (Räisä et al. Alg. 1,
// clip_{c_l(θ,θ′)}). It is total: NaN maps to 0 and ±Inf to ±c, so the
// clipped value lies in [−c, c] whatever the model returns. It reports
// whether the value was changed.
func clipLLR(r, c float64) (float64, bool) {
	switch {
	case r > c:
		return c, true
	case r < -c:
		return -c, true
	case r != r:
		return 0, true
	}
	return r, false
}

// clipGrad clips g in place to Euclidean norm at most b (Räisä et al. §2.1:
// clip_b(y) = y·min{b/‖y‖₂, 1}) and reports whether it changed g. It is
// total: a vector holding NaN is replaced by 0 and one with infinite
// components by b times the normalised direction of those components, so
// the result has norm ≤ b (up to one rounding) whatever the model returns.
// b = +Inf disables clipping altogether.
func clipGrad(g []float64, b float64) bool {
	if math.IsInf(b, 1) {
		return false
	}
	var ss float64
	for _, v := range g {
		ss += v * v
	}
	if ss <= b*b {
		return false
	}
	if ss != ss || math.IsInf(ss, 1) {
		// Overflow, infinities or NaN: recompute with a scaled norm.
		hasNaN, nInf := false, 0
		for _, v := range g {
			if v != v {
				hasNaN = true
			} else if math.IsInf(v, 0) {
				nInf++
			}
		}
		switch {
		case hasNaN:
			for i := range g {
				g[i] = 0
			}
			return true
		case nInf > 0:
			s := b / math.Sqrt(float64(nInf))
			for i, v := range g {
				switch {
				case math.IsInf(v, 1):
					g[i] = s
				case math.IsInf(v, -1):
					g[i] = -s
				default:
					g[i] = 0
				}
			}
			return true
		}
		nn := floats.Norm(g, 2)
		if nn <= b {
			return false
		}
		floats.Scale(b/nn, g)
		return true
	}
	f := b / math.Sqrt(ss)
	for i := range g {
		g[i] *= f
	}
	return true
}

// linearGradModel is implemented by models whose per-record gradients
// share their linear part, ∇ ln p(xᵢ | θ) = aᵢ − Bθ with B symmetric and the
// same for every record; the log-likelihood ratio is then
// ln p(xᵢ|θ′) − ln p(xᵢ|θ) = δᵀaᵢ − δᵀB(θ+θ′)/2 with δ = θ′ − θ. The penalty
// samplers precompute the aᵢ once per run and spend O(d) per record
// instead of O(d²); the per-record values (and so the clipping) are the
// same functions, up to rounding.
type linearGradModel interface {
	// linearGrad returns the aᵢ (n×d, row-major) and B (d×d, row-major).
	linearGrad(d *dataset.Dataset) (a, b []float64)
}

// linearCache holds a linearGradModel's precomputed terms for one dataset.
type linearCache struct {
	dim  int
	a, b []float64
	v    []float64 // scratch: Bθ or B·midpoint
}

func newLinearCache(m Model, d *dataset.Dataset) *linearCache {
	lm, ok := m.(linearGradModel)
	if !ok {
		return nil
	}
	a, b := lm.linearGrad(d)
	return &linearCache{dim: m.Dim(), a: a, b: b, v: make([]float64, m.Dim())}
}

// mulB writes B·x into c.v.
func (c *linearCache) mulB(x []float64) {
	for i := 0; i < c.dim; i++ {
		row := c.b[i*c.dim : (i+1)*c.dim]
		var s float64
		for j, v := range row {
			s += v * x[j]
		}
		c.v[i] = s
	}
}

// llrSum evaluates R(θ, θ′) = Σ_{x∈D} clip_c(ln p(x|θ′) − ln p(x|θ)), the
// clipped log-likelihood ratio of Räisä et al. Alg. 1. It uses the model's
// linear-gradient form or LogLikRatio when available; otherwise the
// per-record log-likelihoods at the current state are cached, so each
// proposal costs n evaluations.
type llrSum struct {
	lin       *linearCache
	ratio     LogLikRatioModel
	cur, prop []float64
	delta     []float64
}

func newLLRSum(m Model, d *dataset.Dataset, theta []float64) *llrSum {
	s := &llrSum{}
	if s.lin = newLinearCache(m, d); s.lin != nil {
		s.delta = make([]float64, m.Dim())
		return s
	}
	if r, ok := m.(LogLikRatioModel); ok {
		s.ratio = r
		return s
	}
	s.cur = make([]float64, d.Len())
	s.prop = make([]float64, d.Len())
	for i, r := range d.Records {
		s.cur[i] = m.LogLik(theta, r)
	}
	return s
}

// sum returns R(θ, θ′) for the clip bound c, counting evaluations and clips.
func (s *llrSum) sum(m Model, d *dataset.Dataset, theta, thetaNew []float64, c float64, info *Info) float64 {
	var total float64
	nclip := 0
	switch {
	case s.lin != nil:
		lc := s.lin
		for k := range s.delta {
			s.delta[k] = 0.5 * (theta[k] + thetaNew[k]) // midpoint first
		}
		lc.mulB(s.delta)
		var off float64
		for k := range s.delta {
			s.delta[k] = thetaNew[k] - theta[k]
			off += s.delta[k] * lc.v[k]
		}
		dim := lc.dim
		for i := 0; i < d.Len(); i++ {
			ai := lc.a[i*dim : (i+1)*dim]
			var r float64
			for k, dk := range s.delta {
				r += dk * ai[k]
			}
			v, cl := clipLLR(r-off, c)
			total += v
			if cl {
				nclip++
			}
		}
	case s.ratio != nil:
		for _, r := range d.Records {
			v, cl := clipLLR(s.ratio.LogLikRatio(theta, thetaNew, r), c)
			total += v
			if cl {
				nclip++
			}
		}
	default:
		for i, r := range d.Records {
			s.prop[i] = m.LogLik(thetaNew, r)
			v, cl := clipLLR(s.prop[i]-s.cur[i], c)
			total += v
			if cl {
				nclip++
			}
		}
	}
	info.LLREvals += d.Len()
	info.ClippedLLRs += nclip
	return total
}

// gradSum evaluates G(θ) = Σ_{x∈D} clip_b(∇ ln p(x|θ)), the clipped
// gradient sum of Räisä et al. §3, through the model's linear-gradient form
// when available.
type gradSum struct {
	lin     *linearCache
	scratch []float64
}

func newGradSum(m Model, d *dataset.Dataset) *gradSum {
	return &gradSum{lin: newLinearCache(m, d), scratch: make([]float64, m.Dim())}
}

// sum writes G(θ) into out for the clip bound b, counting evaluations and
// clips.
func (s *gradSum) sum(m Model, d *dataset.Dataset, theta []float64, b float64, out []float64, info *Info) {
	for k := range out {
		out[k] = 0
	}
	nclip := 0
	g := s.scratch
	if lc := s.lin; lc != nil {
		lc.mulB(theta)
		dim := lc.dim
		for i := 0; i < d.Len(); i++ {
			ai := lc.a[i*dim : (i+1)*dim]
			for k := range g {
				g[k] = ai[k] - lc.v[k]
			}
			if clipGrad(g, b) {
				nclip++
			}
			for k, v := range g {
				out[k] += v
			}
		}
	} else {
		for _, r := range d.Records {
			m.GradLogLik(theta, r, g)
			if clipGrad(g, b) {
				nclip++
			}
			for k, v := range g {
				out[k] += v
			}
		}
	}
	info.GradEvals += d.Len()
	info.ClippedGrads += nclip
}

// accepted makes the last proposal the current state.
func (s *llrSum) accepted() { s.cur, s.prop = s.prop, s.cur }

// penaltyAccept is the acceptance test of the penalty algorithm (Räisä et
// al. Alg. 1, last lines; Yildirim & Ermis 2019): with ξ ~ N(0, σ²) and
// u ~ U(0, 1), accept iff ln u < ΔH + ξ − σ²/2, where ΔH is the noiseless
// log acceptance ratio. Its acceptance probability is
// Φ(ΔH/σ − σ/2) + e^{ΔH}·Φ(−ΔH/σ − σ/2), which keeps the chain reversible
// for Gaussian noise of known variance. Without noise (noise false) it is
// the Metropolis–Hastings test ln u < ΔH, probability min(1, e^{ΔH}).
// It draws ξ (when noise is on) and then u from rng; NaN rejects.
func penaltyAccept(dH, sigma float64, noise bool, rng *rand.Rand) bool {
	t := dH
	if noise {
		t += sigma*rng.NormFloat64() - 0.5*sigma*sigma
	}
	return math.Log(rng.Float64()) < t
}

// distance returns ‖a − b‖₂.
func distance(a, b []float64) float64 {
	var s float64
	for i := range a {
		e := a[i] - b[i]
		s += e * e
	}
	if math.IsInf(s, 1) {
		return floats.Distance(a, b, 2)
	}
	return math.Sqrt(s)
}

// DPPenalty is the DP-penalty algorithm (Yildirim & Ermis 2019) in the form
// of Räisä et al. (2021) §3: random-walk Metropolis–Hastings on the
// posterior whose log acceptance ratio is made private by clipping and
// Gaussian noise, with the penalty correction. One iteration:
//
//	θ′ = θ + diag(ProposalSD)·z,  z ~ N(0, I);
//	c = b_l‖θ′ − θ‖₂,  R = Σ_{x∈D} clip_c(ln p(x|θ′) − ln p(x|θ));
//	ΔH = R + ln p(θ′) − ln p(θ) + ξ,  ξ ~ N(0, σ_l²),  σ_l = 2τ_l·c;
//	accept θ′ iff ln u < ΔH − σ_l²/2,  u ~ U(0, 1).
//
// The clipped sum has sensitivity 2c under replace-one adjacency, so each
// iteration is a Gaussian mechanism with μ = 1/(2τ_l²) in Räisä et al.'s
// Theorem 2.4 (GDP parameter 1/τ_l per iteration). The penalty test leaves
// the posterior invariant when no ratio is clipped (Räisä et al. §3).
//
// Noise scale: by default Tau is the paper's τ. The authors' public code
// instead multiplies its tau by √n (σ_l = 2·tau·√n·c, so its tau is τ/√n and
// its μ per iteration is 1/(2·tau²·n)); TauScale "sqrt-n" reproduces that
// reading, so settings copied from the code mean what they meant there.
// PaperTau converts either reading to the paper's τ for accounting.
//
// Randomness per iteration, in order: Dim normals for the proposal, one
// normal for ξ (unless NoNoise), one uniform for u.
type DPPenalty struct {
	// Iters is the number of iterations k.
	Iters int `yaml:"iterations" json:"iterations"`
	// ProposalSD is the random-walk standard deviation: one value for all
	// coordinates, or one per coordinate.
	ProposalSD []float64 `yaml:"proposal_sd" json:"proposal_sd"`
	// ClipLLR is b_l: the per-record log-likelihood ratios are clipped to
	// ±b_l‖θ′ − θ‖₂.
	ClipLLR float64 `yaml:"clip_llr" json:"clip_llr"`
	// Tau is τ_l, the noise level: σ_l = 2τ_l·b_l‖θ′ − θ‖₂.
	Tau float64 `yaml:"tau" json:"tau"`
	// TauScale is "paper" (or empty): Tau is the paper's τ; or "sqrt-n":
	// the authors' code convention, τ = Tau·√n.
	TauScale string `yaml:"tau_scale,omitempty" json:"tau_scale,omitempty"`
	// NoNoise switches the noise off (ξ = 0, no σ²/2 correction): plain
	// random-walk MH with clipped ratios, not private. Tau must then be 0,
	// and ClipLLR may be +Inf (no clipping).
	NoNoise bool `yaml:"no_noise,omitempty" json:"no_noise,omitempty"`
	// Plant is a planted bug (nil: none): σ_l × noise (in the noise and in
	// its σ_l²/2 correction), the ratio clip bound b_l × clip (σ_l keeps
	// the declared b_l) and steps extra iterations; every iteration uses
	// all the data, so there is no rate. The guarantees keep the declared
	// values.
	Plant *Plant `yaml:"plant,omitempty" json:"plant,omitempty"`
}

// Planted implements Planter.
func (s *DPPenalty) Planted() *Plant { return s.Plant }

// plantFields says which plant fields apply: noise unless no_noise, clip
// unless the bound is infinite, steps always, never rate.
func (s *DPPenalty) plantFields() PlantFields {
	ok := PlantFields{Rate: "DP-penalty uses the full data in every iteration and does not subsample"}
	if s.NoNoise {
		ok.Noise = "no_noise is true, the sampler adds no noise"
	}
	if math.IsInf(s.ClipLLR, 0) {
		ok.Clip = "clip_llr is infinite"
	}
	return ok
}

// PlantNote implements Planter.
func (s *DPPenalty) PlantNote(n int) string {
	p := s.Plant
	var v []string
	if p.noise() != 1 {
		tl := s.PaperTau(n)
		v = append(v, fmt.Sprintf("acceptance noise σ_l = %.6g·b_l‖θ′ − θ‖ (declared %.6g·b_l‖θ′ − θ‖)", 2*tl*p.noise(), 2*tl))
	}
	if p.clip() != 1 {
		v = append(v, runValue("ratio clip b_l", s.ClipLLR, s.ClipLLR*p.clip()))
	}
	return p.note(s.Name(), append(v, p.stepsNote()...))
}

// Noise-scale conventions of the penalty samplers.
const (
	// TauPaper: τ as in Räisä et al. (σ_l = 2τ·b_l‖θ′−θ‖, σ_g = 2τ_g·b_g).
	TauPaper = "paper"
	// TauSqrtN: the authors' code, τ = tau·√n for a dataset of n records.
	TauSqrtN = "sqrt-n"
)

// paperTau converts a configured tau to the paper's τ for n records.
func paperTau(tau float64, scale string, n int) float64 {
	if scale == TauSqrtN {
		return tau * math.Sqrt(float64(n))
	}
	return tau
}

// checkTauScale validates a tau_scale field (a *field.Error about TauScale).
func checkTauScale(scale string) error {
	switch scale {
	case "", TauPaper, TauSqrtN:
		return nil
	}
	return field.Errorf(field.At("TauScale", "tau_scale"), "must be one of paper, sqrt-n, got %q", scale)
}

// PaperTau returns the paper's τ of this configuration on a dataset of n
// records (0 with NoNoise). Each iteration is then a Gaussian mechanism
// with μ = 1/(2τ²) in Räisä et al.'s Theorem 2.4.
func (s *DPPenalty) PaperTau(n int) float64 {
	if s.NoNoise {
		return 0
	}
	return paperTau(s.Tau, s.TauScale, n)
}

// Name implements Sampler.
func (s *DPPenalty) Name() string {
	return s.name() + s.Plant.suffix()
}

func (s *DPPenalty) name() string {
	if s.NoNoise {
		return fmt.Sprintf("RWMH(proposal_sd=%v, clip_llr=%g, no noise)", s.ProposalSD, s.ClipLLR)
	}
	sc := ""
	if s.TauScale == TauSqrtN {
		sc = "·√n"
	}
	return fmt.Sprintf("DP-penalty(proposal_sd=%v, clip_llr=%g, tau=%g%s)", s.ProposalSD, s.ClipLLR, s.Tau, sc)
}

// Iterations implements Sampler.
func (s *DPPenalty) Iterations(*dataset.Dataset) int { return s.Iters }

// IterationsPerEpoch implements Sampler: every iteration uses all the data.
func (s *DPPenalty) IterationsPerEpoch(*dataset.Dataset) int { return 1 }

// checkClipTau validates the clip bound and noise level shared by the
// penalty samplers.
func checkClipTau(clipName field.Path, clip float64, tauName field.Path, tau float64, noNoise bool) error {
	if noNoise {
		if !(clip > 0) {
			return field.Errorf(clipName, "must be > 0 (+Inf allowed with no_noise), got %g", clip)
		}
		if tau != 0 {
			return field.Errorf(tauName, "must be 0 (unset) when no_noise is true, got %g", tau)
		}
		return nil
	}
	if !(clip > 0) || math.IsInf(clip, 0) {
		return field.Errorf(clipName, "must be finite and > 0, got %g", clip)
	}
	if !(tau > 0) || math.IsInf(tau, 0) {
		return field.Errorf(tauName, "must be finite and > 0 (or set no_noise), got %g", tau)
	}
	return nil
}

// Check implements Sampler.
func (s *DPPenalty) Check(m Model, d *dataset.Dataset) error {
	if s.Iters < 1 || s.Iters > MaxIterations {
		return field.Errorf(field.At("Iters", "iterations"), "must be in [1, 2^40], got %d", s.Iters)
	}
	if len(s.ProposalSD) != 1 && len(s.ProposalSD) != m.Dim() {
		return field.Errorf(field.At("ProposalSD", "proposal_sd"), "must have 1 or %d values (the model's dimension), got %d", m.Dim(), len(s.ProposalSD))
	}
	for i, v := range s.ProposalSD {
		if !(v > 0) || math.IsInf(v, 0) {
			return field.Errorf(field.At("ProposalSD", "proposal_sd").Index(i), "must be finite and > 0, got %g", v)
		}
	}
	if err := checkTauScale(s.TauScale); err != nil {
		return err
	}
	if err := checkClipTau(field.At("ClipLLR", "clip_llr"), s.ClipLLR, field.At("Tau", "tau"), s.Tau, s.NoNoise); err != nil {
		return err
	}
	if err := s.Plant.check(s.plantFields()); err != nil {
		return err
	}
	if s.Iters+s.Plant.steps() > MaxIterations {
		return field.Errorf(field.At("Plant", "plant").Field("Steps", "steps"), "a run of more than 2^40 iterations is refused (%d declared + %d)", s.Iters, s.Plant.steps())
	}
	return nil
}

// Run implements Sampler.
func (s *DPPenalty) Run(m Model, d *dataset.Dataset, theta []float64, rng *rand.Rand, at []int, emit Emit) (Info, error) {
	return s.run(m, d, theta, rng, at, emit, nil)
}

// run is Run with, under the path threat model, the path's log-likelihood
// ratio accumulated into lr and released in place of θ (lr nil otherwise).
func (s *DPPenalty) run(m Model, d *dataset.Dataset, theta []float64, rng *rand.Rand, at []int, emit Emit, lr *PathLR) (Info, error) {
	dim := len(theta)
	if !finite(theta) {
		return Info{}, &DivergedError{Iteration: 0, Theta: append([]float64(nil), theta...)}
	}
	sd := make([]float64, dim)
	for k := range sd {
		sd[k] = s.ProposalSD[min(k, len(s.ProposalSD)-1)]
	}
	total := s.Iters + s.Plant.steps()
	rel := releaser{at: shiftAt(at, s.Plant.steps()), emit: emit}
	var path *hmcPath
	if lr != nil {
		rel.path, path = lr, s.newPath(lr, m, d)
	}
	info := Info{Iterations: total}
	llr := newLLRSum(m, d, theta)
	prop := make([]float64, dim)
	lpc := m.LogPrior(theta)
	noise := !s.NoNoise
	tau := s.PaperTau(d.Len()) * s.Plant.noise()
	clipRun := s.ClipLLR * s.Plant.clip()
	for t := 1; t <= total; t++ {
		for k := range prop {
			prop[k] = theta[k] + sd[k]*rng.NormFloat64()
		}
		dist := distance(theta, prop)
		c := s.ClipLLR * dist
		var r float64
		if path != nil {
			r = path.ratio(d, theta, prop, dist, clipRun*dist, &info)
		} else {
			r = llr.sum(m, d, theta, prop, clipRun*dist, &info)
		}
		lpp := m.LogPrior(prop)
		info.Proposals++
		var acc bool
		if path != nil {
			acc = path.accept(r+lpp-lpc, 2*tau*c, rng)
		} else {
			acc = penaltyAccept(r+lpp-lpc, 2*tau*c, noise, rng)
		}
		if acc {
			copy(theta, prop)
			lpc = lpp
			llr.accepted()
			info.Accepted++
		}
		if rel.due(t) {
			if err := rel.release(theta, &info); err != nil {
				return info, err
			}
		}
	}
	return info, nil
}
