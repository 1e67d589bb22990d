package mechanisms

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// Step-size jitter schemes of DPHMC.
const (
	// JitterNone keeps the leapfrog step η constant.
	JitterNone = "none"
	// JitterHalton multiplies η in iteration i by the i-th point of a
	// randomised base-2 Halton sequence (Owen 2017), as Räisä et al. §3 do
	// after Hoffman et al.
	JitterHalton = "halton"
)

// DPHMC is DP-HMC, Algorithm 1 of Räisä et al. (2021): Hamiltonian Monte
// Carlo whose leapfrog uses clipped, noisy gradients and whose acceptance
// test is the penalty test on clipped log-likelihood ratios. With U = −ln π
// and M = diag(Mass), one iteration from θ is:
//
//	p ~ N(0, M);  (θ′, p′) = (θ, p);
//	p′ ← p′ + (η/2)·g̃(θ′);
//	repeat L times: θ′ ← θ′ + η·M⁻¹p′;  p′ ← p′ + s·g̃(θ′), s = η (s = η/2 the last time);
//	c = b_l‖θ′ − θ‖₂;  R = Σ_{x∈D} clip_c(ln p(x|θ′) − ln p(x|θ));
//	ΔH = R + ½pᵀM⁻¹p − ½p′ᵀM⁻¹p′ + ln p(θ′) − ln p(θ) + ξ,  ξ ~ N(0, σ_l²),  σ_l = 2τ_l·c;
//	accept θ′ iff ln u < ΔH − σ_l²/2,  u ~ U(0, 1);
//
// with the noisy gradient of the log posterior (Räisä et al. §3)
//
//	g̃(θ) = Σ_{x∈D} clip_{b_g}(∇ ln p(x|θ)) + N(0, σ_g² I) + ∇ ln p(θ),  σ_g = 2b_g·τ_g.
//
// Sign: g̃ estimates ∇ ln π = −∇U, so the momentum step is p + s·g̃, the
// paper's l_{p_s}(θ, p) = (θ, p − s∇U(θ)) with the noise added to the
// gradient (its §3 display writes p − s(g + ξ) with g = ∇ ln π, a sign slip;
// the authors' code adds). The leapfrog evaluates g̃ L+1 times per
// iteration, each time with fresh noise, including at the start θ: Algorithm
// 1 re-draws the first gradient rather than reusing the previous
// iteration's last one (the paragraph after Theorem 3.5 discusses that
// saving and does not take it), so the privacy cost is k(L+1) gradient
// releases, μ = k/(2τ_l²) + k(L+1)/(2τ_g²) in Theorem 3.5.
//
// Clipping bounds the sensitivity of each gradient sum by 2b_g and of R by
// 2c under replace-one adjacency. Theorem 3.3 gives the exact posterior as
// invariant law when no ratio is clipped; clipping gradients does not bias
// the chain.
//
// Divergent trajectories: a leapfrog whose position becomes non-finite is
// abandoned and its proposal rejected (a function of the noisy gradients
// only, so no extra privacy cost); the state therefore stays finite.
//
// Noise scale: by default TauL and TauG are the paper's τ_l, τ_g; TauScale
// "sqrt-n" reads them as the authors' code does (τ = tau·√n), see
// DPPenalty. PaperTaus converts either reading for accounting.
//
// Randomness, in order: with JitterHalton one Uint64 at the start of the
// run (the digit scrambling); per iteration Dim normals for p, Dim normals
// per gradient evaluation (unless NoNoise), one normal for ξ (unless
// NoNoise) and one uniform for u.
type DPHMC struct {
	// Iters is the number of iterations k.
	Iters int `yaml:"iterations" json:"iterations"`
	// Step is the leapfrog step size η.
	Step float64 `yaml:"step" json:"step"`
	// LeapfrogSteps is L, the number of leapfrog steps per iteration.
	LeapfrogSteps int `yaml:"leapfrog_steps" json:"leapfrog_steps"`
	// Mass is the diagonal of the mass matrix M: one value for all
	// coordinates, one per coordinate, or empty for the identity. (The
	// paper allows any positive-definite M; its code supports diagonal M.)
	Mass []float64 `yaml:"mass,omitempty" json:"mass,omitempty"`
	// StepJitter is "none" (or empty) for a constant η, or "halton" for
	// η_i = η·h_i with h_i the randomised Halton sequence of the authors'
	// experiments.
	StepJitter string `yaml:"step_jitter,omitempty" json:"step_jitter,omitempty"`
	// ClipLLR is b_l: the per-record log-likelihood ratios are clipped to
	// ±b_l‖θ′ − θ‖₂.
	ClipLLR float64 `yaml:"clip_llr" json:"clip_llr"`
	// ClipGrad is b_g, the norm bound of each per-record gradient.
	ClipGrad float64 `yaml:"clip_grad" json:"clip_grad"`
	// TauL is τ_l, the noise level of the acceptance test.
	TauL float64 `yaml:"tau_l" json:"tau_l"`
	// TauG is τ_g, the noise level of the gradients: σ_g = 2b_g·τ_g.
	TauG float64 `yaml:"tau_g" json:"tau_g"`
	// TauScale is "paper" (or empty) or "sqrt-n" (the authors' code: the
	// paper's τ is the configured tau times √n).
	TauScale string `yaml:"tau_scale,omitempty" json:"tau_scale,omitempty"`
	// NoNoise switches all noise off (ξ = 0 and no σ²/2 correction, exact
	// clipped gradients): plain HMC with clipping, not private. TauL and
	// TauG must then be 0, and the clip bounds may be +Inf (no clipping).
	NoNoise bool `yaml:"no_noise,omitempty" json:"no_noise,omitempty"`
	// Plant is a planted bug (nil: none): σ_g and σ_l × noise, b_g and
	// b_l × clip (σ_g = 2b_gτ_g and σ_l = 2τ_l·b_l‖θ′ − θ‖ keep the
	// declared bounds) and steps extra iterations; every iteration uses
	// all the data, so there is no rate. The guarantees keep the declared
	// values.
	Plant *Plant `yaml:"plant,omitempty" json:"plant,omitempty"`
}

// Planted implements Planter.
func (h *DPHMC) Planted() *Plant { return h.Plant }

// plantFields says which plant fields apply: noise unless no_noise, clip
// unless a bound is infinite, steps always, never rate.
func (h *DPHMC) plantFields() PlantFields {
	ok := PlantFields{Rate: "DP-HMC uses the full data in every iteration and does not subsample"}
	if h.NoNoise {
		ok.Noise = "no_noise is true, the sampler adds no noise"
	}
	if math.IsInf(h.ClipLLR, 0) || math.IsInf(h.ClipGrad, 0) {
		ok.Clip = "a clip bound is infinite"
	}
	return ok
}

// PlantNote implements Planter.
func (h *DPHMC) PlantNote(n int) string {
	p := h.Plant
	var v []string
	if p.noise() != 1 {
		tl, tg := h.PaperTaus(n)
		sg := 2 * h.ClipGrad * tg
		v = append(v, runValue("gradient noise σ_g", sg, sg*p.noise()),
			fmt.Sprintf("acceptance noise σ_l = %.6g·b_l‖θ′ − θ‖ (declared %.6g·b_l‖θ′ − θ‖)", 2*tl*p.noise(), 2*tl))
	}
	if p.clip() != 1 {
		v = append(v, runValue("gradient clip b_g", h.ClipGrad, h.ClipGrad*p.clip()),
			runValue("ratio clip b_l", h.ClipLLR, h.ClipLLR*p.clip()))
	}
	return p.note(h.Name(), append(v, p.stepsNote()...))
}

// Name implements Sampler.
func (h *DPHMC) Name() string {
	return h.name() + h.Plant.suffix()
}

func (h *DPHMC) name() string {
	j := ""
	if h.StepJitter == JitterHalton {
		j = ", halton"
	}
	sc := ""
	if h.TauScale == TauSqrtN {
		sc = "·√n"
	}
	if h.NoNoise {
		return fmt.Sprintf("HMC(step=%g%s, L=%d, clip_llr=%g, clip_grad=%g, no noise)", h.Step, j, h.LeapfrogSteps, h.ClipLLR, h.ClipGrad)
	}
	return fmt.Sprintf("DP-HMC(step=%g%s, L=%d, clip_llr=%g, clip_grad=%g, tau_l=%g%s, tau_g=%g%s)",
		h.Step, j, h.LeapfrogSteps, h.ClipLLR, h.ClipGrad, h.TauL, sc, h.TauG, sc)
}

// PaperTaus returns the paper's τ_l and τ_g of this configuration on a
// dataset of n records (0 with NoNoise). By Räisä et al.'s Theorem 3.5 a
// run of k iterations then has μ = k/(2τ_l²) + k(L+1)/(2τ_g²) in their
// Theorem 2.4 (GDP parameter sqrt(k/τ_l² + k(L+1)/τ_g²)).
func (h *DPHMC) PaperTaus(n int) (tauL, tauG float64) {
	if h.NoNoise {
		return 0, 0
	}
	return paperTau(h.TauL, h.TauScale, n), paperTau(h.TauG, h.TauScale, n)
}

// Iterations implements Sampler.
func (h *DPHMC) Iterations(*dataset.Dataset) int { return h.Iters }

// IterationsPerEpoch implements Sampler: every iteration uses all the data.
func (h *DPHMC) IterationsPerEpoch(*dataset.Dataset) int { return 1 }

// MaxLeapfrogSteps bounds L.
const MaxLeapfrogSteps = 100000

// Check implements Sampler.
func (h *DPHMC) Check(m Model, d *dataset.Dataset) error {
	if h.Iters < 1 || h.Iters > MaxIterations {
		return field.Errorf(field.At("Iters", "iterations"), "must be in [1, 2^40], got %d", h.Iters)
	}
	if !(h.Step > 0) || math.IsInf(h.Step, 0) {
		return field.Errorf(field.At("Step", "step"), "must be finite and > 0, got %g", h.Step)
	}
	if h.LeapfrogSteps < 1 || h.LeapfrogSteps > MaxLeapfrogSteps {
		return field.Errorf(field.At("LeapfrogSteps", "leapfrog_steps"), "must be in [1, %d], got %d", MaxLeapfrogSteps, h.LeapfrogSteps)
	}
	if len(h.Mass) > 1 && len(h.Mass) != m.Dim() {
		return field.Errorf(field.At("Mass", "mass"), "must have 0, 1 or %d values (the model's dimension), got %d", m.Dim(), len(h.Mass))
	}
	for i, v := range h.Mass {
		if !(v > 0) || math.IsInf(v, 0) {
			return field.Errorf(field.At("Mass", "mass").Index(i), "must be finite and > 0, got %g", v)
		}
	}
	switch h.StepJitter {
	case "", JitterNone, JitterHalton:
	default:
		return field.Errorf(field.At("StepJitter", "step_jitter"), "must be one of none, halton, got %q", h.StepJitter)
	}
	if err := checkTauScale(h.TauScale); err != nil {
		return err
	}
	if err := checkClipTau(field.At("ClipLLR", "clip_llr"), h.ClipLLR, field.At("TauL", "tau_l"), h.TauL, h.NoNoise); err != nil {
		return err
	}
	if err := checkClipTau(field.At("ClipGrad", "clip_grad"), h.ClipGrad, field.At("TauG", "tau_g"), h.TauG, h.NoNoise); err != nil {
		return err
	}
	if err := h.Plant.check(h.plantFields()); err != nil {
		return err
	}
	if h.Iters+h.Plant.steps() > MaxIterations {
		return field.Errorf(field.At("Plant", "plant").Field("Steps", "steps"), "a run of more than 2^40 iterations is refused (%d declared + %d)", h.Iters, h.Plant.steps())
	}
	return nil
}

// haltonPoint returns the i-th point (i ≥ 0) of the base-2 Halton sequence
// randomised by digit scrambling: digit j of i (from the least significant)
// lands at weight 2^{−(j+1)} — the radical inverse — after being permuted by
// a random permutation of {0, 1} per digit position, i.e. XORed with bit j
// of the 53-bit mask (Owen 2017, "A randomized Halton algorithm in R", the
// generator of Räisä et al.'s experiments). The result is in [0, 1).
func haltonPoint(i uint64, mask uint64) float64 {
	return float64((bits.Reverse64(i)>>11)^mask) * 0x1p-53
}

// hmcWork holds one run's scratch space and settings.
type hmcWork struct {
	h        *DPHMC
	m        Model
	d        *dataset.Dataset
	invMass  []float64
	sqrtMass []float64
	thetaP   []float64 // proposal θ′
	p0, p    []float64 // initial and final momentum
	g, gi    []float64 // gradient and per-record scratch
	sigmaG   float64
	tauL     float64 // τ_l, times the planted noise factor
	clipG    float64 // b_g, times the planted clip factor
	clipL    float64 // b_l, times the planted clip factor
	noise    bool
	llr      *llrSum
	grads    *gradSum
	info     Info
	path     *hmcPath // the path statistic under the path threat model, else nil
}

func newHMCWork(h *DPHMC, m Model, d *dataset.Dataset, theta []float64) *hmcWork {
	dim := len(theta)
	w := &hmcWork{h: h, m: m, d: d, noise: !h.NoNoise,
		invMass: make([]float64, dim), sqrtMass: make([]float64, dim),
		thetaP: make([]float64, dim), p0: make([]float64, dim), p: make([]float64, dim),
		g: make([]float64, dim), gi: make([]float64, dim)}
	for k := range w.invMass {
		mk := 1.0
		if len(h.Mass) > 0 {
			mk = h.Mass[min(k, len(h.Mass)-1)]
		}
		w.invMass[k] = 1 / mk
		w.sqrtMass[k] = math.Sqrt(mk)
	}
	if w.noise {
		tl, tg := h.PaperTaus(d.Len())
		f := h.Plant.noise()
		w.tauL = tl * f
		w.sigmaG = 2 * h.ClipGrad * tg * f
	}
	w.clipG, w.clipL = h.ClipGrad*h.Plant.clip(), h.ClipLLR*h.Plant.clip()
	w.llr = newLLRSum(m, d, theta)
	w.grads = newGradSum(m, d)
	return w
}

// noisyGrad writes g̃(θ) into w.g: the clipped gradient sum, plus
// N(0, σ_g² I) noise unless noise is off, plus the prior's gradient.
func (w *hmcWork) noisyGrad(theta []float64, rng *rand.Rand) {
	w.grads.sum(w.m, w.d, theta, w.clipG, w.g, &w.info)
	if w.noise {
		for k := range w.g {
			w.g[k] += w.sigmaG * rng.NormFloat64()
		}
	}
	w.m.GradLogPrior(theta, w.gi)
	for k, v := range w.gi {
		w.g[k] += v
	}
	if w.path != nil {
		w.path.grad(theta, w.g)
	}
}

// leapfrog runs the noisy leapfrog of L steps of size eta from (θ, w.p0),
// leaving (θ′, p′) in w.thetaP and w.p. It reports false if the position
// became non-finite (the trajectory is then abandoned).
func (w *hmcWork) leapfrog(theta []float64, eta float64, rng *rand.Rand) bool {
	copy(w.thetaP, theta)
	copy(w.p, w.p0)
	w.noisyGrad(w.thetaP, rng)
	for k, g := range w.g {
		w.p[k] += 0.5 * eta * g
	}
	L := w.h.LeapfrogSteps
	for j := 1; j <= L; j++ {
		for k := range w.thetaP {
			w.thetaP[k] += eta * w.invMass[k] * w.p[k]
		}
		if !finite(w.thetaP) {
			return false
		}
		w.noisyGrad(w.thetaP, rng)
		s := eta
		if j == L {
			s = 0.5 * eta
		}
		for k, g := range w.g {
			w.p[k] += s * g
		}
	}
	return true
}

// kinetic returns ½pᵀM⁻¹p.
func (w *hmcWork) kinetic(p []float64) float64 {
	var s float64
	for k, v := range p {
		s += v * v * w.invMass[k]
	}
	return 0.5 * s
}

// deltaH returns the noiseless part of ΔH for the proposal in w.thetaP,
// R + ½pᵀM⁻¹p − ½p′ᵀM⁻¹p′ + ln p(θ′) − ln p(θ), and σ_l = 2τ_l·c. lpc is
// ln p(θ); the proposal's log prior is returned too.
func (w *hmcWork) deltaH(theta []float64, lpc float64) (dH, sigma, lpp float64) {
	dist := distance(theta, w.thetaP)
	c := w.h.ClipLLR * dist
	var r float64
	if w.path != nil {
		r = w.path.ratio(w.d, theta, w.thetaP, dist, w.clipL*dist, &w.info)
	} else {
		r = w.llr.sum(w.m, w.d, theta, w.thetaP, w.clipL*dist, &w.info)
	}
	lpp = w.m.LogPrior(w.thetaP)
	dH = r + (w.kinetic(w.p0) - w.kinetic(w.p)) + (lpp - lpc)
	return dH, 2 * w.tauL * c, lpp
}

// Run implements Sampler.
func (h *DPHMC) Run(m Model, d *dataset.Dataset, theta []float64, rng *rand.Rand, at []int, emit Emit) (Info, error) {
	return h.run(m, d, theta, rng, at, emit, nil)
}

// run is Run with, under the path threat model, the path's log-likelihood
// ratio accumulated into lr and released in place of θ (lr nil otherwise).
func (h *DPHMC) run(m Model, d *dataset.Dataset, theta []float64, rng *rand.Rand, at []int, emit Emit, lr *PathLR) (Info, error) {
	if !finite(theta) {
		return Info{}, &DivergedError{Iteration: 0, Theta: append([]float64(nil), theta...)}
	}
	w := newHMCWork(h, m, d, theta)
	total := h.Iters + h.Plant.steps()
	w.info.Iterations = total
	at = shiftAt(at, h.Plant.steps())
	var mask uint64
	halton := h.StepJitter == JitterHalton
	if halton {
		mask = rng.Uint64() >> 11
	}
	rel := releaser{at: at, emit: emit}
	if lr != nil {
		rel.path, w.path = lr, h.newPath(lr, m, d)
	}
	lpc := m.LogPrior(theta)
	for t := 1; t <= total; t++ {
		eta := h.Step
		if halton {
			eta *= haltonPoint(uint64(t-1), mask)
		}
		for k := range w.p0 {
			w.p0[k] = w.sqrtMass[k] * rng.NormFloat64()
		}
		w.info.Proposals++
		if w.leapfrog(theta, eta, rng) {
			dH, sigma, lpp := w.deltaH(theta, lpc)
			var acc bool
			if w.path != nil {
				acc = w.path.accept(dH, sigma, rng)
			} else {
				acc = penaltyAccept(dH, sigma, w.noise, rng)
			}
			if acc {
				copy(theta, w.thetaP)
				lpc = lpp
				w.llr.accepted()
				w.info.Accepted++
			}
		}
		if rel.due(t) {
			if err := rel.release(theta, &w.info); err != nil {
				return w.info, err
			}
		}
	}
	return w.info, nil
}
