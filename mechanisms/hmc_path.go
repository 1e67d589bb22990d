package mechanisms

import (
	"math"
	"math/rand/v2"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// The path threat model of DP-HMC and DP-penalty (Räisä et al. 2021).
//
// What their privacy proofs release (Theorem 3.5 for DP-HMC, Theorem 2.4
// composed over the iterations for DP-penalty) is, per iteration:
//
//   - DP-HMC: every noisy gradient g̃(θ) = G(θ) + N(0, σ_g² I) + ∇ ln p(θ)
//     of the leapfrog (L+1 per iteration, Alg. 1), and the noisy clipped
//     log-likelihood ratio R + ξ, ξ ~ N(0, σ_l²), of the proposal. The
//     trajectory is a function of the noisy gradients and of the momentum
//     (data-independent), and the decision one of the noisy ratio and of u:
//     post-processing.
//   - DP-penalty: the noisy ratio R + ξ of each proposal; the proposal
//     θ′ = θ + diag(sd)·z is data-independent given θ.
//
// With a gradient canary (GradientCanary), every record other than the
// canary contributes the same to each quantity under D and D′, and the
// adversary, who knows both datasets and θ, θ′, computes that part. So
// each released Gaussian quantity contributes one GaussShift term to Λ:
//
//   - a noisy gradient: y = g̃_c, its canary coordinate (no ordinary record
//     and not the flat prior has a gradient along θ_c); mean s_h·min(K, b_g)
//     under hypothesis h, sd σ_g = 2b_g·τ_g;
//   - a noisy ratio: y = (R + ξ) − R_ord, R_ord the clipped ratios of the
//     ordinary records; mean clip_c(s_h·K·(θ′_c − θ_c)), c = b_l‖θ′ − θ‖,
//     sd σ_l = 2τ_l·c;
//
// with the declared τ's and clip bounds: a planted bug changes what runs,
// never the statistic. Under add-one the canary is absent from D (s = 0).
// docs/derivations/path-hmc.md has the derivation and a hand case.

// hmcReleased is one released quantity of a DP-HMC or DP-penalty path, as
// the test recorder sees it.
type hmcReleased struct {
	// Ratio is false for a noisy gradient (Value = g̃_c at Theta), true for
	// a noisy ratio (Value = R + ξ of the proposal ThetaNew from Theta).
	Ratio           bool
	Value           float64
	Theta, ThetaNew []float64
}

// hmcPathRecorder, when set (by tests), receives every released quantity
// of the DP-HMC and DP-penalty path runs, in order. The slices are only
// valid during the call.
var hmcPathRecorder func(q hmcReleased)

// hmcPath accumulates the path statistic of a DP-HMC or DP-penalty run.
type hmcPath struct {
	lr     *PathLR
	g      *GradientCanary
	coord  int
	canary int // index of the canary record in the run's dataset, −1 without
	// gm is the canary's clipped gradient along θ_c under D and D′ (the
	// declared b_g), sdG the declared σ_g.
	gm  [2]float64
	sdG float64
	// bl and tauL are the declared b_l and τ_l.
	bl, tauL float64
	// The pending proposal: R, R_ord, the ratio's means under D and D′
	// and the declared σ_l.
	r, rOrd float64
	rm      [2]float64
	rsd     float64
	theta   []float64 // the pending proposal's θ and θ′, for the recorder
	thetaP  []float64
}

// newHMCPath returns the path statistic of a run on m and d (the side's
// dataset) with the declared ratio clip bl and τ_l, and, for DP-HMC, the
// declared gradient clip bg and τ_g (bg = 0 for DP-penalty).
func newHMCPath(lr *PathLR, m Model, d *dataset.Dataset, bl, tauL, bg, tauG float64) *hmcPath {
	g := CanaryOf(m)
	p := &hmcPath{lr: lr, g: g, coord: g.Coord(), canary: -1, bl: bl, tauL: tauL, sdG: 2 * bg * tauG}
	for i, r := range d.Records {
		if g.Sign(r) != 0 {
			p.canary = i
			break
		}
	}
	mag := math.Min(g.Slope(), bg)
	for h := range p.gm {
		p.gm[h] = lr.Spec.Sign[h] * mag
	}
	return p
}

// grad adds the term of the noisy gradient g̃ evaluated at theta.
func (p *hmcPath) grad(theta, g []float64) {
	y := g[p.coord]
	if hmcPathRecorder != nil {
		hmcPathRecorder(hmcReleased{Value: y, Theta: theta})
	}
	p.lr.add(p.gradTerm(y))
}

// gradTerm is the term of a noisy gradient whose canary coordinate is y:
// ln N(y; s_D·min(K, b_g), σ_g²) − ln N(y; s_D′·min(K, b_g), σ_g²).
func (p *hmcPath) gradTerm(y float64) float64 {
	return GaussShift(y, p.gm[0], p.gm[1], p.sdG)
}

// ratio returns the sampler's clipped ratio sum R(θ, θ′) at the run's clip
// bound cRun, and keeps what the proposal's path term needs: R_ord, the
// ordinary records' clipped ratios at the declared bound c = b_l·dist (a
// planted clip bound changes R, not what the adversary subtracts), and the
// canary's clipped ratio under D and D′ at c, with the declared
// σ_l = 2τ_l·c.
func (p *hmcPath) ratio(d *dataset.Dataset, theta, thetaNew []float64, dist, cRun float64, info *Info) float64 {
	c := p.bl * dist
	var r, rOrd float64
	nclip := 0
	for i, rec := range d.Records {
		raw := p.g.LogLikRatio(theta, thetaNew, rec)
		v, cl := clipLLR(raw, cRun)
		r += v
		if cl {
			nclip++
		}
		if i != p.canary {
			if cRun != c {
				v, _ = clipLLR(raw, c)
			}
			rOrd += v
		}
	}
	info.LLREvals += d.Len()
	info.ClippedLLRs += nclip
	k := p.g.Slope() * (thetaNew[p.coord] - theta[p.coord])
	for h := range p.rm {
		p.rm[h], _ = clipLLR(p.lr.Spec.Sign[h]*k, c)
	}
	p.rsd = 2 * p.tauL * c
	p.r, p.rOrd = r, rOrd
	p.theta, p.thetaP = theta, thetaNew
	return r
}

// accept is penaltyAccept with the noise on (the same draws, in the same
// order, and the same arithmetic) for the proposal ratio last returned,
// whose noisy value R + ξ it adds to Λ.
func (p *hmcPath) accept(dH, sigma float64, rng *rand.Rand) bool {
	xi := sigma * rng.NormFloat64()
	z := p.r + xi
	if hmcPathRecorder != nil {
		hmcPathRecorder(hmcReleased{Ratio: true, Value: z, Theta: p.theta, ThetaNew: p.thetaP})
	}
	p.lr.add(p.ratioTerm(z))
	t := dH
	t += xi - 0.5*sigma*sigma
	return math.Log(rng.Float64()) < t
}

// ratioTerm is the term of the noisy ratio z = R + ξ of the proposal last
// passed to ratio: y = z − R_ord, ln N(y; m_D, σ_l²) − ln N(y; m_D′, σ_l²).
// θ′ = θ gives c = 0: no record's ratio can move, and the term is 0.
func (p *hmcPath) ratioTerm(z float64) float64 {
	if !(p.rsd > 0) {
		return 0
	}
	return GaussShift(z-p.rOrd, p.rm[0], p.rm[1], p.rsd)
}

// checkPenaltyPath is the common part of checkPath for the penalty
// samplers: noise must be on, and a noise scale that depends on the
// dataset's size must not differ between D and D′.
func checkPenaltyPath(spec *PathSpec, noNoise bool, tauScale string) error {
	if noNoise {
		return field.Errorf(field.At("NoNoise", "no_noise"), "under the path threat model the sampler must add its noise (no_noise false): without it no guarantee applies")
	}
	if tauScale == TauSqrtN && spec.N[0] != spec.N[1] {
		return field.Errorf(field.At("TauScale", "tau_scale"), "sqrt-n makes the noise depend on the dataset's size, which differs between D and D′ (%d and %d records) under add-one: use paper", spec.N[0], spec.N[1])
	}
	return nil
}

// checkPath implements pathSampler.
func (h *DPHMC) checkPath(spec *PathSpec, _ Model, _ *dataset.Dataset) error {
	return checkPenaltyPath(spec, h.NoNoise, h.TauScale)
}

// runPath implements pathSampler.
func (h *DPHMC) runPath(m Model, d *dataset.Dataset, theta []float64, rng *rand.Rand, at []int, emit Emit, lr *PathLR) (Info, error) {
	return h.run(m, d, theta, rng, at, emit, lr)
}

// newPath returns the path statistic of a run of h on m and d, with the
// declared bounds and noise levels.
func (h *DPHMC) newPath(lr *PathLR, m Model, d *dataset.Dataset) *hmcPath {
	tl, tg := h.PaperTaus(d.Len())
	return newHMCPath(lr, m, d, h.ClipLLR, tl, h.ClipGrad, tg)
}

// checkPath implements pathSampler.
func (s *DPPenalty) checkPath(spec *PathSpec, _ Model, _ *dataset.Dataset) error {
	return checkPenaltyPath(spec, s.NoNoise, s.TauScale)
}

// runPath implements pathSampler.
func (s *DPPenalty) runPath(m Model, d *dataset.Dataset, theta []float64, rng *rand.Rand, at []int, emit Emit, lr *PathLR) (Info, error) {
	return s.run(m, d, theta, rng, at, emit, lr)
}

// newPath returns the path statistic of a run of s on m and d, with the
// declared bound and noise level.
func (s *DPPenalty) newPath(lr *PathLR, m Model, d *dataset.Dataset) *hmcPath {
	return newHMCPath(lr, m, d, s.ClipLLR, s.PaperTau(d.Len()), 0, 0)
}
