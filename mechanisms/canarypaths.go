package mechanisms

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// CanaryPaths is the one-run design (Steinke, Nasr & Jagielski 2023) with
// gradient canaries observed along the path: one chain of a DP sampler
// whose state holds, beside the model's parameters, m coordinates θ_1…θ_m
// with a flat prior, one per canary. Canary i is a record whose
// log-likelihood is K·θ_i (GradientCanary with sign +1 on its own
// coordinate), so its clipped gradient is min(K, C) along θ_i and its
// clipped log-likelihood ratio sits at the clip bound; no other record
// touches θ_i. Included canaries (S_i = +1) are in the run's data, the
// others not (add/remove of one canary).
//
// The score of canary i is its path statistic Λ_i: the log-likelihood
// ratio, included against left out, of the released quantities along θ_i
// under the declared sampler (Nasr et al. 2023's statistic, per canary;
// docs/derivations/one-run.md):
//
//   - SGLD (Heller & Fetaya eq. 66, clipped): the increments of θ_i, a
//     Gaussian shift per step with full batches, a two-component mixture
//     with Poisson batches (rate b/n, n public);
//   - DP-HMC (Räisä et al. 2021 Alg. 1): the L+1 noisy gradients of each
//     iteration along θ_i (the noisy log-likelihood ratio, which every
//     canary shares, is left out of the score);
//   - DP-penalty: the noisy ratio of each proposal, which every included
//     canary moves by its clipped ratio; Λ_i is the canary's Gaussian-shift
//     statistic as if it were alone, the other canaries acting as noise.
//
// Since no ordinary record and not the prior acts along the canaries'
// coordinates, their released quantities have the same law beside any
// model, given the public n: the canaries' coordinates are what a run
// simulates, with the sampler's run constants (a planted bug changes
// them) and the declared ones in the statistic. Any score is valid in the
// one-run design; the path statistic is the most powerful one for SGLD and
// the gradients of DP-HMC.
//
// n, the size of the public base data, sets SGLD's gradient scale n/b and
// Poisson rate b/n (and the √n noise reading of τ): they do not move with
// the number of included canaries, as the add/remove accountants need.
type CanaryPaths struct {
	// Sampler is the chain's sampler: *SGLD (clipped; Poisson, or full
	// batches), *DPHMC or *DPPenalty.
	Sampler Sampler
	// Release is the release schedule (of the run on the base data).
	Release ReleaseSpec
	// Base is the public base data D (its size is n).
	Base *dataset.Dataset
	// Count is m, the number of canaries, and Runs the runs they split
	// into (RunRange).
	Count, Runs int
	// Slope is K, the canaries' log-likelihood slope (0: DefaultCanarySlope).
	Slope float64
}

// canaryPathSampler is implemented by the samplers CanaryPaths runs.
type canaryPathSampler interface {
	// checkCanaryPaths says why the sampler cannot run gradient canaries
	// in one run (nil when it can).
	checkCanaryPaths(n int) error
	// runCanaryPaths runs the canaries' coordinates of one chain: in[i]
	// says whether canary i is in the data, scores receives Λ_i, and rel
	// is called at every release iteration (shifted by planted steps);
	// base is the public base data (its size is n).
	runCanaryPaths(ctx context.Context, rng *rand.Rand, base *dataset.Dataset, slope float64, in []bool, scores []float64, at []int, rel func(k int, info *Info) error) (Info, error)
	// canaryGuarantees returns the add/remove guarantees of one canary
	// for a release after it iterations.
	canaryGuarantees(n, it int) []closedform.Guarantee
}

// RunRange returns the canaries of run j when count canaries split into
// runs runs in order: [lo, hi), canary i belonging to run ⌊i·runs/count⌋.
func RunRange(count, runs, j int) (lo, hi int) {
	first := func(j int) int { // the smallest i with ⌊i·runs/count⌋ ≥ j
		return int((int64(j)*int64(count) + int64(runs) - 1) / int64(runs))
	}
	return first(j), first(j + 1)
}

func (c *CanaryPaths) slope() float64 {
	if c.Slope == 0 {
		return DefaultCanarySlope
	}
	return c.Slope
}

// Name implements Namer.
func (c *CanaryPaths) Name() string {
	return fmt.Sprintf("%s, %d gradient canaries (path statistic)", c.Sampler.Name(), c.Count)
}

// Dim implements Mechanism: one score per canary.
func (c *CanaryPaths) Dim() int { return c.Count }

// Check validates the configuration (d is ignored: the runs take the base
// data and the canaries' inclusion).
func (c *CanaryPaths) Check(*dataset.Dataset) error {
	ps, ok := c.Sampler.(canaryPathSampler)
	if !ok {
		return field.Errorf(field.At("Sampler", "sampler"), "gradient canaries in one run need sgld, dp_hmc or dp_penalty, not %s", c.Sampler.Name())
	}
	if c.Count < 1 || c.Runs < 1 || c.Runs > c.Count {
		return fmt.Errorf("canary paths: %d canaries in %d runs", c.Count, c.Runs)
	}
	if !(c.Slope >= 0) || math.IsInf(c.Slope, 0) {
		return field.Errorf(field.At("Slope", "slope"), "must be finite and > 0 (0: %g), got %g", DefaultCanarySlope, c.Slope)
	}
	return ps.checkCanaryPaths(c.Base.Len())
}

// Points implements Mechanism: the release points of a run on the base
// data.
func (c *CanaryPaths) Points(*dataset.Dataset) ([]ReleasePoint, error) {
	pts, err := c.Release.Points(c.Sampler.Iterations(c.Base), c.Sampler.IterationsPerEpoch(c.Base))
	return pts, field.Wrap(err, field.At("Release", "release"))
}

// Run implements Mechanism; gradient canaries run only in the canary
// design, through RunCanaries.
func (c *CanaryPaths) Run(context.Context, Trial, *dataset.Dataset, Emit) (Info, error) {
	return Info{}, fmt.Errorf("canary paths: a run needs the canaries' inclusion (the canary design runs it)")
}

// RunCanaries runs trial t.Index, the canary design's run of that index,
// with canary i in the data when include[i]: the scores of the canaries
// of the run (RunRange), 0 for the others, at every release point.
func (c *CanaryPaths) RunCanaries(ctx context.Context, t Trial, include []bool, emit Emit) (Info, error) {
	if err := c.Check(nil); err != nil {
		return Info{}, err
	}
	pts, err := c.Points(nil)
	if err != nil {
		return Info{}, err
	}
	at := make([]int, len(pts))
	for k, p := range pts {
		at[k] = p.Iteration
	}
	lo, hi := RunRange(c.Count, c.Runs, t.Index)
	out := make([]float64, c.Count)
	scores := out[lo:hi]
	rel := func(k int, info *Info) error {
		info.PerRelease = append(info.PerRelease, info.Snapshot(pts[k].Iteration))
		return emit(k, out)
	}
	return c.Sampler.(canaryPathSampler).runCanaryPaths(ctx, t.RNG, c.Base, c.slope(), include[lo:hi], scores, at, rel)
}

// Guarantees implements Guarantor: the add/remove guarantees of one canary
// (the pair is ignored: the canary design's datasets differ by one canary,
// n public).
func (c *CanaryPaths) Guarantees(_ dataset.Pair, at ReleasePoint) []closedform.Guarantee {
	ps, ok := c.Sampler.(canaryPathSampler)
	if !ok {
		return []closedform.Guarantee{uncovered("(none)", "no add/remove accountant for "+c.Sampler.Name())}
	}
	return withVariant(ps.canaryGuarantees(c.Base.Len(), at.Iteration), CanaryVariant)
}

// BoundsOneCanary implements CanaryGuarantor.
func (c *CanaryPaths) BoundsOneCanary() {}

// CanaryGuarantor is implemented by mechanisms of the canary design whose
// Guarantees bound the add/remove of one canary, so that the design can
// test them (the theorems of a Chain bound replace-one pairs of datasets
// of one size, which says nothing of adding a canary).
type CanaryGuarantor interface {
	Guarantor
	// BoundsOneCanary marks the guarantees as those of one canary.
	BoundsOneCanary()
}

// CanaryVariant is the variant of the guarantees of one canary.
const CanaryVariant = "add/remove (one canary, n public)"

// stepCtx is how often the canary loops look at ctx.
const stepCtx = 64

// canaryLoop calls step for the iterations t = 1, …, total, looks at ctx
// every stepCtx iterations and calls rel at the release iterations at.
func canaryLoop(ctx context.Context, total int, at []int, info *Info, rel func(int, *Info) error, step func(t int)) error {
	k := 0
	for t := 1; t <= total; t++ {
		if t%stepCtx == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		step(t)
		for k < len(at) && at[k] == t {
			if err := rel(k, info); err != nil {
				return err
			}
			k++
		}
	}
	return nil
}

// checkCanaryPaths implements canaryPathSampler: clipped SGLD with a
// constant step, Poisson batches or full batches (without replacement,
// batch = n).
func (s *SGLD) checkCanaryPaths(n int) error {
	if s.Clip <= 0 {
		return field.Errorf(field.At("Clip", "clip"), "gradient canaries need clipped SGLD (clip > 0): without it no guarantee applies")
	}
	if s.Step.Gamma != 0 {
		return field.Errorf(field.At("Step", "step").Field("Gamma", "gamma"), "gradient canaries need a constant step (gamma 0), which the accountants assume")
	}
	if s.N != 0 && s.N != n {
		return field.Errorf(field.At("N", "n"), "gradient canaries take the public n from the base data (%d records); remove n or set it to %d, got %d", n, n, s.N)
	}
	if s.Scheme == Poisson || (s.Scheme == WithoutReplacement && s.Batch == n) {
		return nil
	}
	return field.Errorf(field.At("Scheme", "scheme"), "gradient canaries in one run need scheme poisson, or without-replacement with batch = n (%d): smaller fixed-size batches tie the canaries' inclusions together", n)
}

// runCanaryPaths implements canaryPathSampler. Per step, canary i's
// coordinate moves by y = (η/2)(n/b)·k·min(K, C) + σξ, k ~ Bernoulli(q)
// when it is in (k = 1 with full batches), 0 otherwise; the run's q, C and
// σ carry any planted factor, the statistic the declared ones. Draws per
// step and canary, in order: a uniform (Poisson, included canaries only)
// and a normal.
func (s *SGLD) runCanaryPaths(ctx context.Context, rng *rand.Rand, base *dataset.Dataset, slope float64, in []bool, scores []float64, at []int, rel func(int, *Info) error) (Info, error) {
	total := s.Iterations(base) + s.Plant.steps()
	at = shiftAt(at, s.Plant.steps())
	sc := float64(base.Len()) / float64(s.Batch)
	qDecl := 1.0
	if s.Scheme == Poisson {
		qDecl = math.Min(1, 1/sc)
	}
	qRun := math.Min(1, qDecl*s.Plant.rate())
	magDecl, magRun := math.Min(slope, s.Clip), math.Min(slope, s.Clip*s.Plant.clip())
	clipped := slope > s.Clip*s.Plant.clip()
	info := Info{Iterations: total}
	fn := newFastNormal(rng)
	err := canaryLoop(ctx, total, at, &info, rel, func(t int) {
		eta := s.Step.At(t - 1)
		sdRun, sdDecl := s.noiseSD(eta), math.Sqrt(s.noiseVar()*eta)
		a := eta / 2 * sc * magDecl
		aRun := eta / 2 * sc * magRun
		z := a / (sdDecl * sdDecl)
		for i, inc := range in {
			var y float64
			if inc && (qRun >= 1 || rng.Float64() < qRun) {
				y = aRun
				info.GradEvals++
				if clipped {
					info.ClippedGrads++
				}
			}
			y += sdRun * fn.norm()
			if qDecl >= 1 {
				scores[i] += z * (y - a/2)
			} else {
				scores[i] += logMix(qDecl, z*(y-a/2))
			}
		}
	})
	return info, err
}

// canaryGuarantees implements canaryPathSampler: the add/remove
// accountants of the (Poisson-)subsampled Gaussian mechanism with n, the
// scale n/b and the rate b/n public, and with full batches the exact GDP
// composition.
func (s *SGLD) canaryGuarantees(n, it int) []closedform.Guarantee {
	return sgldAddRemove(s, n, it)
}

// checkCanaryPaths implements canaryPathSampler.
func (h *DPHMC) checkCanaryPaths(int) error {
	if h.NoNoise {
		return field.Errorf(field.At("NoNoise", "no_noise"), "gradient canaries need the noise (no_noise: false)")
	}
	return nil
}

// runCanaryPaths implements canaryPathSampler. Every iteration evaluates
// L+1 noisy gradients (Alg. 1 re-draws the first); along θ_i each is
// min(K, b_g) when canary i is in, 0 otherwise, plus N(0, σ_g²) with
// σ_g = 2b_g·τ_g. Λ_i adds the Gaussian shift term of each. Draws per
// gradient evaluation: one normal per canary.
func (h *DPHMC) runCanaryPaths(ctx context.Context, rng *rand.Rand, base *dataset.Dataset, slope float64, in []bool, scores []float64, at []int, rel func(int, *Info) error) (Info, error) {
	total := h.Iters + h.Plant.steps()
	at = shiftAt(at, h.Plant.steps())
	_, tg := h.PaperTaus(base.Len())
	sdDecl, sdRun := 2*h.ClipGrad*tg, 2*h.ClipGrad*tg*h.Plant.noise()
	mDecl, mRun := math.Min(slope, h.ClipGrad), math.Min(slope, h.ClipGrad*h.Plant.clip())
	z := mDecl / (sdDecl * sdDecl)
	info := Info{Iterations: total}
	fn := newFastNormal(rng)
	err := canaryLoop(ctx, total, at, &info, rel, func(int) {
		for e := 0; e <= h.LeapfrogSteps; e++ {
			for i, inc := range in {
				y := sdRun * fn.norm()
				if inc {
					y += mRun
					info.GradEvals++
				}
				scores[i] += z * (y - mDecl/2)
			}
		}
	})
	return info, err
}

// canaryGuarantees implements canaryPathSampler: Thm 3.5 under add/remove,
// where one record moves each clipped sum by b_g (b_l‖θ′−θ‖) rather than
// 2b_g: the composition of Gaussian mechanisms with half the replace-one
// sensitivity, μ = √(k(1/τ_l² + (L+1)/τ_g²))/2, which is Thm 3.5 with τ
// doubled.
func (h *DPHMC) canaryGuarantees(n, it int) []closedform.Guarantee {
	tl, tg := h.PaperTaus(n)
	gs := wrap(closedform.RaisaHMC{TauL: 2 * tl, TauG: 2 * tg, Leapfrog: h.LeapfrogSteps, Iterations: it}.Guarantees())
	return halfSensitivity(gs)
}

// halfSensitivity notes on Räisä et al.'s guarantees, computed with τ
// doubled, that they are the add/remove reading.
func halfSensitivity(gs []closedform.Guarantee) []closedform.Guarantee {
	for i := range gs {
		if gs[i].Applies {
			gs[i].Note = "add/remove: one record moves each clipped sum by half the replace-one sensitivity, so this is the theorem with every τ doubled; " + gs[i].Note
		}
	}
	return gs
}

// checkCanaryPaths implements canaryPathSampler.
func (s *DPPenalty) checkCanaryPaths(int) error {
	if s.NoNoise {
		return field.Errorf(field.At("NoNoise", "no_noise"), "gradient canaries need the noise (no_noise: false)")
	}
	return nil
}

// runCanaryPaths implements canaryPathSampler. One iteration proposes
// θ′ = θ + diag(sd)·z in the canaries' m coordinates; with c = b_l‖θ′−θ‖
// each included canary adds its clipped ratio r_i = clip_c(K(θ′_i − θ_i))
// to R, and the noisy ratio is y = R + N(0, σ_l²), σ_l = 2τ_l·c. The
// proposal is accepted iff ln u < y − σ_l²/2 (flat prior). Λ_i adds
// (r_i·y − r_i²/2)/σ_l², with the declared c and σ_l. Draws per iteration:
// one normal per canary, one for ξ, one uniform.
func (s *DPPenalty) runCanaryPaths(ctx context.Context, rng *rand.Rand, base *dataset.Dataset, slope float64, in []bool, scores []float64, at []int, rel func(int, *Info) error) (Info, error) {
	total := s.Iters + s.Plant.steps()
	at = shiftAt(at, s.Plant.steps())
	tau := s.PaperTau(base.Len())
	tauRun := tau * s.Plant.noise()
	clipRun := s.ClipLLR * s.Plant.clip()
	step := make([]float64, len(in))
	info := Info{Iterations: total}
	err := canaryLoop(ctx, total, at, &info, rel, func(int) {
		var ss float64
		for i := range step {
			step[i] = s.ProposalSD[min(i, len(s.ProposalSD)-1)] * rng.NormFloat64()
			ss += step[i] * step[i]
		}
		dist := math.Sqrt(ss)
		c, cRun := s.ClipLLR*dist, clipRun*dist
		var r float64
		for i, inc := range in {
			if inc {
				v, cl := clipLLR(slope*step[i], cRun)
				r += v
				if cl {
					info.ClippedLLRs++
				}
			}
		}
		info.LLREvals += len(in)
		sd := 2 * tau * c
		y := r + 2*tauRun*c*rng.NormFloat64()
		info.Proposals++
		if math.Log(rng.Float64()) < y-0.5*(2*tauRun*c)*(2*tauRun*c) {
			info.Accepted++
		}
		if sd > 0 {
			v := sd * sd
			for i := range step {
				ri, _ := clipLLR(slope*step[i], c)
				scores[i] += ri * (y - ri/2) / v
			}
		}
	})
	return info, err
}

// canaryGuarantees implements canaryPathSampler: Thm 2.4 composed over the
// iterations (§3) under add/remove, half the replace-one sensitivity.
func (s *DPPenalty) canaryGuarantees(n, it int) []closedform.Guarantee {
	return halfSensitivity(wrap(closedform.RaisaPenalty{TauL: 2 * s.PaperTau(n), Iterations: it}.Guarantees()))
}
