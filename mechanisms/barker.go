package mechanisms

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// VarianceFailure says what the subsampled DP-Barker test does when the
// minibatch variance estimate s²_Δ* exceeds its limit.
type VarianceFailure string

const (
	// VarianceReject rejects the proposal of that iteration (the chain
	// stays) and counts the event in Info.VarianceCheckFailures. It is the
	// default, a choice of this package: the paper's main text does not
	// say what happens (its supplement is not among the project's sources)
	// and the authors' code stops the chain. Either reaction depends on
	// the data beyond what Thm 2 accounts for; with the defaults (clip
	// √b/N0, limit C = 2) the check cannot fail, as s²_Δ* ≤ 1.
	VarianceReject VarianceFailure = "reject"
	// VarianceError ends the run with a *VarianceCheckError, as the
	// authors' code stops the chain when its estimate exceeds 1.
	VarianceError VarianceFailure = "error"
)

// VarianceCheckError reports a subsampled Barker test whose minibatch
// variance estimate exceeded the limit, under OnVarianceFailure = "error".
type VarianceCheckError struct {
	Iteration       int
	Variance, Limit float64
}

// Error implements error.
func (e *VarianceCheckError) Error() string {
	return fmt.Sprintf("DP-Barker: minibatch variance estimate %.6g exceeds the limit %.6g at iteration %d (Heikkilä et al. eq. 15)",
		e.Variance, e.Limit, e.Iteration)
}

// DPBarker is the differentially private Metropolis–Hastings sampler of
// Heikkilä, Jälkö, Dikmen & Honkela (NeurIPS 2019) with Barker's acceptance
// test. Each iteration proposes θ′ = θ + Step·ξ, ξ ~ N(0, I) (a symmetric
// Gaussian random walk, so the proposal ratio of eq. 4 vanishes), and
// accepts it iff a noisy log-posterior ratio is positive:
//
//   - Full data (Batch = 0), eq. 9: Δ + N(0, C) + V_cor > 0 with
//     Δ = τ·Σ_i clip(ln p(x_i|θ′) − ln p(x_i|θ)) + ln p(θ′) − ln p(θ) (eq. 4).
//     Releasing the decision is (α, 2αB²/C)-RDP when each record's term
//     of Δ, τ·clip(·), is bounded by B (Thm 1, which states it for τ = 1).
//   - Subsampled (Batch = b ≥ 2), §3.3, eq. 18: a minibatch S of b records
//     drawn uniformly WITHOUT replacement, afresh every iteration;
//     Δ* = (N0/b)·Σ_{i∈S} clip(llr_i) + ln p(θ′) − ln p(θ) (eq. 6 with the
//     tempered scale, eq. 23); the minibatch variance estimate
//     s²_Δ* = (N0²/b)·(1/b)Σ_{i∈S}(llr_i − mean)² (population variance, as
//     in the authors' code, no finite-population correction); and the test
//     Δ* + N(0, C − s²_Δ*) + V_cor > 0. The variance check requires
//     s²_Δ* ≤ VarianceLimit (eq. 15 asks s² < C); clipping at the default
//     √b/N0 (eqs. 19, 23) guarantees s²_Δ* ≤ 1, the regime of Thm 2.
//   - Exact (Exact = true, full data only): the non-private Barker test of
//     eq. 5, Δ + V_log > 0 with V_log ~ Logistic(0, 1), which accepts with
//     probability σ(Δ) and satisfies detailed balance exactly.
//
// Tempering (§2.3): with N0 > 0 the log-likelihood is scaled by
// τ = N0/N (so N0 = Nβ/(β+N) for the c-posterior parameter β of eq. 7);
// N0 = 0 means τ = 1. What it targets: the exact and (up to V_cor's error,
// see VCor) the full-data tests satisfy detailed balance for the tempered
// posterior π^τ(θ) ∝ p(θ)·p(x|θ)^τ (eq. 26) when no llr is clipped; the
// subsampled test approximates the full-data one by the central limit
// theorem (eq. 17), so it targets π^τ only approximately.
//
// The paper's GMM experiment (§4, the authors' code) uses Batch = 1000,
// N0 = 100, C = 2, clipping at 0.99·√b/N0 and proposal variance 0.01, i.e.
// Step = 0.1, on N = 10⁶ records of the Mixture model.
type DPBarker struct {
	// Step is the standard deviation of the Gaussian random-walk proposal
	// in each coordinate.
	Step float64 `yaml:"step" json:"step"`
	// Iters is the number of iterations (proposals) of a run.
	Iters int `yaml:"iterations" json:"iterations"`
	// Batch is the minibatch size b ≥ 2 of the subsampled test; 0 selects
	// the full-data test.
	Batch int `yaml:"batch,omitempty" json:"batch,omitempty"`
	// N0 is the tempered effective sample size: the log-likelihood is
	// scaled by τ = N0/N (eq. 23). 0 means no tempering (N0 = N).
	N0 float64 `yaml:"n0,omitempty" json:"n0,omitempty"`
	// C is the variance of the Gaussian part of the test, in (0, π²/3);
	// 0 means 2, the paper's value (§3.3).
	C float64 `yaml:"c,omitempty" json:"c,omitempty"`
	// Clip bounds every per-record log-likelihood ratio to [−Clip, Clip]
	// before scaling. 0 means the paper's default: √b/N0 for the
	// subsampled test (eqs. 19, 23), no clipping for the full-data test
	// (Thm 1's B is then a property of the model).
	Clip float64 `yaml:"clip,omitempty" json:"clip,omitempty"`
	// NoClip disables clipping (a non-private baseline, or a planted bug).
	NoClip bool `yaml:"no_clip,omitempty" json:"no_clip,omitempty"`
	// VarianceLimit is the largest minibatch variance estimate s²_Δ* the
	// subsampled test accepts; 0 means C (eq. 15). The authors' code checks
	// s²_Δ* ≤ 1 at C = 2, the bound that clipping at √b/N0 implies (the
	// paper notes that (19) implies (15) at C = 2).
	VarianceLimit float64 `yaml:"variance_limit,omitempty" json:"variance_limit,omitempty"`
	// OnVarianceFailure is "reject" (default) or "error".
	OnVarianceFailure VarianceFailure `yaml:"on_variance_failure,omitempty" json:"on_variance_failure,omitempty"`
	// Exact selects the non-private exact Barker test of eq. 5 (full data
	// only; C must be left unset).
	Exact bool `yaml:"exact,omitempty" json:"exact,omitempty"`
	// Plant is a planted bug (nil: none): the test noise (N(0, ·) + V_cor)
	// × noise, the clip bound × clip (the scaling and the variance limit
	// keep their declared values) and steps extra iterations. The
	// guarantees keep the declared values.
	Plant *Plant `yaml:"plant,omitempty" json:"plant,omitempty"`
}

// Planted implements Planter.
func (s *DPBarker) Planted() *Plant { return s.Plant }

// plantFields says which plant fields apply: noise unless the test is
// exact, clip when the ratios are clipped, steps always, never rate.
func (s *DPBarker) plantFields() PlantFields {
	ok := PlantFields{Rate: "the test's minibatch size b sets its scaling N0/b and variance check; a planted rate is not supported (use a different batch)"}
	if s.Exact {
		ok.Noise = "exact is true, the exact test has no privacy noise"
	}
	if s.NoClip || (s.Batch == 0 && s.Clip == 0) {
		ok.Clip = "the log-likelihood ratios are not clipped"
	}
	return ok
}

// PlantNote implements Planter.
func (s *DPBarker) PlantNote(n int) string {
	pl := s.Plant
	var v []string
	if pl.noise() != 1 {
		v = append(v, fmt.Sprintf("the test noise N(0, C − s²) + V_cor scaled by %g (declared 1, C = %g)", pl.noise(), s.c()))
	}
	if pl.clip() != 1 {
		if p, err := s.resolve(n); err == nil {
			v = append(v, runValue("ratio clip", p.clip, p.clip*pl.clip()))
		}
	}
	return pl.note(s.Name(), append(v, pl.stepsNote()...))
}

// barkerParams are a DPBarker's settings resolved for one dataset size.
type barkerParams struct {
	full    bool
	n, b    int
	n0      float64
	scale   float64 // τ (full data) or N0/b (subsampled)
	c       float64
	clip    float64 // +Inf when not clipping
	limit   float64
	onFail  VarianceFailure
	vcor    *VCor
	exact   bool
	sdFixed float64 // sqrt(C + s²) for the full-data test
	noise   float64 // planted factor of the test noise (Run only; 0 means 1)
}

func (s *DPBarker) c() float64 {
	if s.C == 0 {
		return 2
	}
	return s.C
}

func (s *DPBarker) resolve(n int) (barkerParams, error) {
	p := barkerParams{full: s.Batch == 0, n: n, b: s.Batch, c: s.c(), exact: s.Exact, onFail: s.OnVarianceFailure}
	p.n0 = float64(n)
	if s.N0 > 0 {
		p.n0 = s.N0
	}
	if p.full {
		p.scale = p.n0 / float64(n)
	} else {
		p.scale = p.n0 / float64(s.Batch)
	}
	switch {
	case s.NoClip:
		p.clip = math.Inf(1)
	case s.Clip > 0:
		p.clip = s.Clip
	case p.full:
		p.clip = math.Inf(1)
	default:
		p.clip = math.Sqrt(float64(s.Batch)) / p.n0
	}
	p.limit = p.c
	if s.VarianceLimit > 0 {
		p.limit = s.VarianceLimit
	}
	if p.onFail == "" {
		p.onFail = VarianceReject
	}
	if !s.Exact {
		v, err := NewVCor(p.c)
		if err != nil {
			return p, err
		}
		p.vcor = v
		p.sdFixed = math.Sqrt(p.c + vcorSD*vcorSD)
	}
	return p, nil
}

// Name implements Sampler.
func (s *DPBarker) Name() string {
	return s.name() + s.Plant.suffix()
}

func (s *DPBarker) name() string {
	clip := ""
	switch {
	case s.NoClip:
		clip = ", no clipping"
	case s.Clip > 0:
		clip = fmt.Sprintf(", clip=%g", s.Clip)
	case s.Batch > 0:
		clip = ", clip=√b/N0"
	}
	temp := ""
	if s.N0 > 0 {
		temp = fmt.Sprintf(", N0=%g", s.N0)
	}
	switch {
	case s.Exact:
		return fmt.Sprintf("Barker(exact logistic test, full data, step=%g%s%s)", s.Step, temp, clip)
	case s.Batch == 0:
		return fmt.Sprintf("DP-Barker(full data, C=%g, step=%g%s%s)", s.c(), s.Step, temp, clip)
	}
	return fmt.Sprintf("DP-Barker(b=%d, C=%g, step=%g%s%s)", s.Batch, s.c(), s.Step, temp, clip)
}

// Iterations implements Sampler.
func (s *DPBarker) Iterations(*dataset.Dataset) int { return s.Iters }

// IterationsPerEpoch implements Sampler: 1 for the full-data test, ⌈n/b⌉
// for the subsampled one.
func (s *DPBarker) IterationsPerEpoch(d *dataset.Dataset) int {
	if s.Batch < 1 {
		return 1
	}
	return (d.Len() + s.Batch - 1) / s.Batch
}

// Check implements Sampler.
func (s *DPBarker) Check(m Model, d *dataset.Dataset) error {
	if !(s.Step > 0) || math.IsInf(s.Step, 0) {
		return field.Errorf(field.At("Step", "step"), "must be finite and > 0, got %g", s.Step)
	}
	if s.Iters < 1 || s.Iters > MaxIterations {
		return field.Errorf(field.At("Iters", "iterations"), "must be in [1, 2^40], got %d", s.Iters)
	}
	n := d.Len()
	if s.Batch != 0 && (s.Batch < 2 || s.Batch > n) {
		return field.Errorf(field.At("Batch", "batch"), "must be 0 (full data) or in [2, n=%d], got %d", n, s.Batch)
	}
	if s.N0 != 0 && !(s.N0 > 0 && s.N0 <= float64(n)) {
		return field.Errorf(field.At("N0", "n0"), "must be 0 (no tempering) or in (0, n=%d], got %g", n, s.N0)
	}
	if err := s.checkTest(); err != nil {
		return err
	}
	if err := s.checkClip(); err != nil {
		return err
	}
	if err := s.checkVariance(); err != nil {
		return err
	}
	if _, err := s.resolve(n); err != nil {
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

// checkTest checks the choice of test: the exact test (eq. 5) on the full
// data, or the Gaussian part c of the approximate one.
func (s *DPBarker) checkTest() error {
	if s.Exact {
		if s.Batch != 0 {
			return field.Errorf(field.At("Exact", "exact"), "the exact test (eq. 5) uses the full data; set batch to 0, got %d", s.Batch)
		}
		if s.C != 0 {
			return field.Errorf(field.At("C", "c"), "the exact test (eq. 5) has no Gaussian part; leave c unset, got %g", s.C)
		}
	} else if s.C != 0 && !(s.C > 0 && s.C < LogisticVariance) {
		return field.Errorf(field.At("C", "c"), "must be in (0, π²/3 = %.6g), got %g", LogisticVariance, s.C)
	}
	return nil
}

// checkClip checks the clipping bound and its opt-out.
func (s *DPBarker) checkClip() error {
	if s.Clip != 0 && !(s.Clip > 0 && !math.IsInf(s.Clip, 0)) {
		return field.Errorf(field.At("Clip", "clip"), "must be finite and > 0 (or 0 for the paper's default), got %g", s.Clip)
	}
	if s.NoClip && s.Clip != 0 {
		return field.Errorf(field.At("NoClip", "no_clip"), "cannot be combined with clip = %g", s.Clip)
	}
	return nil
}

// checkVariance checks the subsampled test's variance check and what a
// failed one does.
func (s *DPBarker) checkVariance() error {
	if s.VarianceLimit != 0 {
		if s.Batch == 0 {
			return field.Errorf(field.At("VarianceLimit", "variance_limit"), "only the subsampled test (batch ≥ 2) has a variance check, got %g with batch 0", s.VarianceLimit)
		}
		if !(s.VarianceLimit > 0 && s.VarianceLimit <= s.c()) {
			return field.Errorf(field.At("VarianceLimit", "variance_limit"), "must be in (0, c = %g], got %g", s.c(), s.VarianceLimit)
		}
	}
	switch s.OnVarianceFailure {
	case "", VarianceReject, VarianceError:
	default:
		return field.Errorf(field.At("OnVarianceFailure", "on_variance_failure"), "must be one of reject, error, got %q", s.OnVarianceFailure)
	}
	return nil
}

// logisticDraw returns a Logistic(0, 1) variate ln(u/(1−u)) with u uniform
// on the open interval (0, 1) (53-bit midpoints, so never ±Inf).
func logisticDraw(rng *rand.Rand) float64 {
	u := (float64(rng.Uint64()>>11) + 0.5) * 0x1p-53
	return math.Log(u) - math.Log1p(-u)
}

// clipBarkerLLR clips x to [−b, b] and reports whether it was clipped. NaN
// passes through on purpose: the Barker test then stops with an error
// naming the iteration, rather than hide a broken likelihood (the penalty
// samplers' clipLLR maps NaN to 0 instead, to keep their sensitivity bound).
func clipBarkerLLR(x, b float64) (float64, bool) {
	if x > b {
		return b, true
	}
	if x < -b {
		return -b, true
	}
	return x, false
}

// Run implements Sampler. Per iteration it draws, in this order: the
// proposal (Dim normals), the minibatch (b indices, subsampled test only),
// then the test noise (a component index and one normal for N(0, ·) +
// V_cor, or one uniform for the exact test).
func (s *DPBarker) Run(m Model, d *dataset.Dataset, theta []float64, rng *rand.Rand, at []int, emit Emit) (Info, error) {
	return s.run(m, d, theta, rng, at, emit, nil)
}

// run is Run; under the path threat model (path non-nil) the released
// test statistic of every iteration feeds the path's log-likelihood ratio,
// which is released in place of θ (barker_path.go).
func (s *DPBarker) run(m Model, d *dataset.Dataset, theta []float64, rng *rand.Rand, at []int, emit Emit, path *barkerPath) (Info, error) {
	p, err := s.resolve(d.Len())
	if err != nil {
		return Info{}, err
	}
	if s.Plant != nil {
		p.clip *= s.Plant.clip()
		p.noise = s.Plant.noise()
	}
	total := s.Iters + s.Plant.steps()
	rel := releaser{at: shiftAt(at, s.Plant.steps()), emit: emit}
	info := Info{Iterations: total}
	if path != nil {
		rel.path = path.lr
		if path.inert {
			return s.runInert(&p, d, theta, rng, &rel, &info, path)
		}
	}
	prop := make([]float64, len(theta))
	lpCur := m.LogPrior(theta)
	var llCur, llProp, r []float64
	var bt *batcher
	if p.full {
		llCur, llProp = p.fullLogLiks(m, d, theta), make([]float64, p.n)
	} else {
		bt = newBatcher(WithoutReplacement, p.n, p.b, rng)
		r = make([]float64, p.b)
	}
	for t := 1; t <= total; t++ {
		for k := range prop {
			prop[k] = theta[k] + s.Step*rng.NormFloat64()
		}
		if !finite(prop) {
			return info, &DivergedError{Iteration: t, Theta: append([]float64(nil), prop...)}
		}
		info.Proposals++
		lpProp := m.LogPrior(prop)
		var sum, sd float64
		reject := false
		if p.full {
			// The full-data test's loop stays here: as a method of its own
			// it cost the benchmarks some 5%.
			for i, rec := range d.Records {
				llProp[i] = m.LogLik(prop, rec)
				x, c := clipBarkerLLR(llProp[i]-llCur[i], p.clip)
				if c {
					info.ClippedLLRs++
				}
				sum += x
				if path != nil {
					path.record(rec, llProp[i]-llCur[i])
				}
			}
			info.LLREvals += p.n
			sd = p.sdFixed
		} else {
			var s2 float64
			sum, s2 = p.batchSum(m, d, theta, prop, bt.next(rng), r, &info)
			if reject, err = p.varianceCheck(t, s2, &info); err != nil {
				return info, err
			}
			sd = math.Sqrt(p.c - s2 + vcorSD*vcorSD)
		}
		delta := p.scale*sum + (lpProp - lpCur)
		if math.IsNaN(delta) {
			return info, fmt.Errorf("DP-Barker: the log-posterior ratio is NaN at iteration %d (θ = %v, θ′ = %v): the model's log-likelihood or log-prior is NaN or infinite at both points",
				t, theta, prop)
		}
		if !reject && p.decide(delta, sd, rng, path, prop, theta, lpProp-lpCur) {
			copy(theta, prop)
			lpCur = lpProp
			if p.full {
				llCur, llProp = llProp, llCur
			}
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

// fullLogLiks returns the log-likelihoods of every record at theta, which
// the full-data test keeps from one iteration to the next.
func (p *barkerParams) fullLogLiks(m Model, d *dataset.Dataset, theta []float64) []float64 {
	ll := make([]float64, p.n)
	for i, rec := range d.Records {
		ll[i] = m.LogLik(theta, rec)
	}
	return ll
}

// batchSum returns the sum of the clipped log-likelihood ratios between
// prop and theta over the minibatch (written into r, of its length) and
// the variance estimate s²_Δ* = (N0²/b)·(population variance of the b
// ratios) of the subsampled test; it counts the evaluations and the
// clipped ratios into info.
func (p *barkerParams) batchSum(m Model, d *dataset.Dataset, theta, prop []float64, batch []int, r []float64, info *Info) (sum, s2 float64) {
	for k, i := range batch {
		rec := d.Records[i]
		x, c := clipBarkerLLR(m.LogLik(prop, rec)-m.LogLik(theta, rec), p.clip)
		if c {
			info.ClippedLLRs++
		}
		r[k] = x
		sum += x
	}
	info.LLREvals += p.b
	mean := sum / float64(p.b)
	var ss float64
	for _, x := range r {
		ss += (x - mean) * (x - mean)
	}
	return sum, p.n0 * p.n0 / float64(p.b) * (ss / float64(p.b))
}

// varianceCheck applies the subsampled test's variance check at iteration
// t: a variance s2 above the limit is counted into info, and then either
// rejects the proposal (reject true) or, under VarianceError, stops the
// run with a *VarianceCheckError.
func (p *barkerParams) varianceCheck(t int, s2 float64, info *Info) (reject bool, err error) {
	if !(s2 > p.limit) {
		return false, nil
	}
	info.VarianceCheckFailures++
	if p.onFail == VarianceError {
		return false, &VarianceCheckError{Iteration: t, Variance: s2, Limit: p.limit}
	}
	return true, nil
}

// accept draws the test noise and reports whether the proposal of
// log-posterior ratio delta is accepted: delta + Z > 0, with Z logistic
// for the exact test, N(0, sd²) + V_cor otherwise.
func (p *barkerParams) accept(delta, sd float64, rng *rand.Rand) bool {
	var z float64
	if p.exact {
		z = logisticDraw(rng)
	} else {
		z = p.vcor.sampleWithNormal(rng, sd)
	}
	if p.noise != 0 {
		z *= p.noise
	}
	return delta+z > 0
}
