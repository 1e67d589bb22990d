package mechanisms

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// IndexScheme says how SGLD picks the records of each minibatch.
type IndexScheme string

const (
	// WithReplacement draws b indices i.i.d. uniform on {1..n} (Heller eq. 3).
	WithReplacement IndexScheme = "with-replacement"
	// WithoutReplacement draws b distinct indices, afresh each iteration
	// (the uniform size-s subsets A_n of Bertazzi et al. eq. 15).
	WithoutReplacement IndexScheme = "without-replacement"
	// Poisson includes each record independently with probability q = b/n.
	Poisson IndexScheme = "poisson"
	// Reshuffle draws a new permutation at the start of every epoch and
	// takes consecutive batches of it.
	Reshuffle IndexScheme = "reshuffle"
	// Cyclic shuffles once before the first iteration and then visits the
	// data in that fixed order every epoch (cyclic SGLD, Heller §III.B).
	Cyclic IndexScheme = "cyclic"
)

// StepSchedule gives the step size of iteration t (t = 0, 1, …):
// η_t = Eta·(B/(B+t))^Gamma, the polynomial decay a(b+t)^{−γ} of Welling &
// Teh (2011) normalised so that η₀ = Eta. Gamma = 0 is a constant step.
type StepSchedule struct {
	Eta   float64 `yaml:"eta" json:"eta"`
	B     float64 `yaml:"b,omitempty" json:"b,omitempty"`
	Gamma float64 `yaml:"gamma,omitempty" json:"gamma,omitempty"`
}

// At returns η_t.
func (s StepSchedule) At(t int) float64 {
	if s.Gamma == 0 {
		return s.Eta
	}
	return s.Eta * math.Pow(s.B/(s.B+float64(t)), s.Gamma)
}

// Check validates the schedule; errors are *field.Error about Eta, Gamma
// or B.
func (s StepSchedule) Check() error {
	if !(s.Eta > 0) || math.IsInf(s.Eta, 0) {
		return field.Errorf(field.At("Eta", "eta"), "must be finite and > 0, got %g", s.Eta)
	}
	if !(s.Gamma >= 0 && s.Gamma <= 1) {
		return field.Errorf(field.At("Gamma", "gamma"), "must be in [0, 1], got %g", s.Gamma)
	}
	if s.Gamma > 0 && !(s.B > 0 && !math.IsInf(s.B, 0)) {
		return field.Errorf(field.At("B", "b"), "must be finite and > 0 when gamma > 0, got %g", s.B)
	}
	return nil
}

// SGLD is stochastic gradient Langevin dynamics (Welling & Teh 2011) in the
// form of Heller & Fetaya eq. 3:
//
//	θ ← θ + (η_t/2)·(∇ ln p(θ) + (n/b)·Σ_{i∈batch} g_i) + sqrt(η_t)·ξ,  ξ ~ N(0, I),
//
// where g_i = ∇ ln p(x_i | θ), clipped to norm Clip when Clip > 0 (the
// DP-SGLD step of Heller & Fetaya eq. 66: g_i / max(1, ‖g_i‖/C)). The drift
// is η/2 for noise variance η: this targets π, not π².
type SGLD struct {
	Step StepSchedule `yaml:"step" json:"step"`
	// Batch is the minibatch size b (the expected size for Poisson).
	Batch int `yaml:"batch" json:"batch"`
	// Scheme picks the minibatch indices.
	Scheme IndexScheme `yaml:"scheme" json:"scheme"`
	// Epochs sets the run length to Epochs·⌈n/b⌉ iterations, unless
	// Iters is set instead.
	Epochs int `yaml:"epochs,omitempty" json:"epochs,omitempty"`
	// Iters sets the run length directly.
	Iters int `yaml:"iterations,omitempty" json:"iterations,omitempty"`
	// Clip is the per-example gradient clipping norm C; 0 disables it.
	Clip float64 `yaml:"clip,omitempty" json:"clip,omitempty"`
	// NoiseVariance scales the injected noise variance: the noise is
	// sqrt(NoiseVariance·η_t)·ξ. 0 means 1, the algorithm. Other values
	// deviate from SGLD on purpose, to plant a bug for testing an audit.
	NoiseVariance float64 `yaml:"noise_variance,omitempty" json:"noise_variance,omitempty"`
	// Plant is a planted bug (nil: none): the noise standard deviation
	// × noise (on top of NoiseVariance: the noise is
	// noise·sqrt(NoiseVariance·η_t)·ξ, variance noise²·NoiseVariance·η_t),
	// the clip bound × clip (with Clip > 0), the Poisson rate b/n × rate
	// (scheme poisson; the gradient sum keeps its declared scale n/b) and
	// steps extra iterations. The guarantees keep the declared values.
	Plant *Plant `yaml:"plant,omitempty" json:"plant,omitempty"`
	// N, when set (scheme poisson only), is the public dataset size: the
	// rate b/N and the gradient scale N/b, whatever the size of the
	// dataset a run is given. Add/remove neighbours differ in size, and
	// the add/remove accountants of the Poisson subsampled Gaussian
	// mechanism need both the same on D and D′. 0: the dataset's size.
	N int `yaml:"n,omitempty" json:"n,omitempty"`

	// coefs caches the per-record coefficients of the affine fast path by
	// (model, dataset, η), so that the runs of an audit share them.
	coefs sync.Map
	// recent holds the two entries of coefs found last (an audit's runs
	// alternate between D and D′).
	recent [2]atomic.Pointer[affineEntry]
}

// affineKey identifies cached fast-path coefficients.
type affineKey struct {
	model Affine1D
	data  *dataset.Dataset
	eta   float64
	clip  float64
}

// affineCoefs are h_i, j_i of every record and, for the step η of the key,
// a_i = 1 − (η/2)(prec + n·j_i) and c_i = (η/2)(shift + n·h_i).
type affineCoefs struct {
	h, j, a, c  []float64
	shift, prec float64
	// active lists the records with a non-zero gradient (h or j ≠ 0): a
	// Poisson minibatch draws only their inclusion, the others adding 0.
	active []int32
	// clipped marks the records whose constant gradient was clipped (nil
	// when none was).
	clipped []bool
}

// countClipped returns the number of records of batch whose gradient was
// clipped.
func (k *affineCoefs) countClipped(batch []int) int {
	if k.clipped == nil {
		return 0
	}
	c := 0
	for _, i := range batch {
		if k.clipped[i] {
			c++
		}
	}
	return c
}

// constantGrads reports whether m is a one-dimensional model whose
// per-record gradients do not depend on θ (a gradient canary on inert
// records), which SGLD's affine fast path can clip exactly.
func constantGrads(m Model) bool {
	_, ok := m.(*gradientCanary1D)
	return ok
}

func (s *SGLD) affineCoefs(m Affine1D, d *dataset.Dataset, clip float64) *affineCoefs {
	key := affineKey{m, d, s.Step.Eta, clip}
	// Every run of an audit asks for one of two keys (D and D′): compare
	// with the last two found before hashing an interface into the map.
	for r := range s.recent {
		if e := s.recent[r].Load(); e != nil && e.key == key {
			return e.coefs
		}
	}
	if v, ok := s.coefs.Load(key); ok {
		s.remember(key, v.(*affineCoefs))
		return v.(*affineCoefs)
	}
	n := d.Len()
	k := &affineCoefs{h: make([]float64, n), j: make([]float64, n), a: make([]float64, n), c: make([]float64, n)}
	for i, r := range d.Records {
		k.h[i], k.j[i] = m.AffineGrad1D(r)
		if clip > 0 && math.Abs(k.h[i]) > clip {
			// Only models with constant gradients (j = 0) come here
			// with a clip bound: the clipped gradient is constant too.
			k.h[i] = math.Copysign(clip, k.h[i])
			if k.clipped == nil {
				k.clipped = make([]bool, n)
			}
			k.clipped[i] = true
		}
		if k.h[i] != 0 || k.j[i] != 0 {
			k.active = append(k.active, int32(i))
		}
	}
	k.shift, k.prec = m.AffinePrior1D()
	half, nf := s.Step.Eta/2, float64(n)
	for i := range k.h {
		k.a[i] = 1 - half*(k.prec+nf*k.j[i])
		k.c[i] = half * (k.shift + nf*k.h[i])
	}
	v, _ := s.coefs.LoadOrStore(key, k)
	s.remember(key, v.(*affineCoefs))
	return v.(*affineCoefs)
}

// remember makes an entry of coefs the most recent one.
func (s *SGLD) remember(key affineKey, k *affineCoefs) {
	s.recent[1].Store(s.recent[0].Load())
	s.recent[0].Store(&affineEntry{key, k})
}

// affineEntry is an entry of SGLD.coefs.
type affineEntry struct {
	key   affineKey
	coefs *affineCoefs
}

// maxGradRows bounds the block of records a BatchGradModel's workspace
// processes at once (larger minibatches go in several blocks).
const maxGradRows = 256

// permPool recycles the visiting orders of cyclic and reshuffled runs.
var permPool sync.Pool

// Name implements Sampler.
func (s *SGLD) Name() string {
	n := fmt.Sprintf("SGLD(eta=%g, batch=%d, %s", s.Step.Eta, s.Batch, s.Scheme)
	if s.Clip > 0 {
		n += fmt.Sprintf(", clip=%g", s.Clip)
	}
	return n + ")" + s.Plant.suffix()
}

// Planted implements Planter.
func (s *SGLD) Planted() *Plant { return s.Plant }

// plantFields says which plant fields apply: noise and steps always, clip
// when the sampler clips, rate under Poisson sampling.
func (s *SGLD) plantFields() PlantFields {
	var ok PlantFields
	if s.Clip == 0 {
		ok.Clip = "sampler.sgld.clip is 0, the sampler does not clip"
	}
	if s.Scheme != Poisson {
		ok.Rate = fmt.Sprintf("scheme %s draws fixed-size batches; only scheme poisson has a subsampling rate", s.Scheme)
	}
	return ok
}

// PlantNote implements Planter.
func (s *SGLD) PlantNote(n int) string {
	p := s.Plant
	var v []string
	if p.noise() != 1 {
		sd := math.Sqrt(s.noiseVar() * s.Step.Eta)
		v = append(v, runValue("noise standard deviation at the first step", sd, sd*p.noise()))
	}
	if p.clip() != 1 {
		v = append(v, runValue("clip bound", s.Clip, s.Clip*p.clip()))
	}
	if p.rate() != 1 && n > 0 {
		q := float64(s.Batch) / float64(s.sizeOf(n))
		v = append(v, runValue("Poisson rate", q, q*p.rate()))
	}
	return p.note(s.Name(), append(v, p.stepsNote()...))
}

// noiseSD returns the standard deviation of the noise of a step of size
// eta: sqrt(NoiseVariance·η), times the planted factor.
func (s *SGLD) noiseSD(eta float64) float64 {
	return math.Sqrt(s.noiseVar()*eta) * s.Plant.noise()
}

// runLength returns the number of iterations a run makes: the declared
// ones and the planted extra steps.
func (s *SGLD) runLength(d *dataset.Dataset) int {
	return s.Iterations(d) + s.Plant.steps()
}

// MaxPublicN bounds SGLD.N.
const MaxPublicN = 1 << 40

// sizeOf returns the size the rate and the gradient scale use for a
// dataset of n records: the public N when set, n otherwise.
func (s *SGLD) sizeOf(n int) int {
	if s.N > 0 {
		return s.N
	}
	return n
}

// batcher returns the minibatch drawer of a run on n records.
func (s *SGLD) batcher(n int, rng *rand.Rand) *batcher {
	bt := newBatcherRate(s.Scheme, n, s.Batch, s.Plant.rate(), rng)
	if s.N > 0 {
		bt.np = s.N
		bt.q = float64(s.Batch) / float64(s.N) * s.Plant.rate()
	}
	return bt
}

func (s *SGLD) noiseVar() float64 {
	if s.NoiseVariance == 0 {
		return 1
	}
	return s.NoiseVariance
}

// IterationsPerEpoch implements Sampler: ⌈n/b⌉ (n the public N when set).
func (s *SGLD) IterationsPerEpoch(d *dataset.Dataset) int {
	if s.Batch < 1 {
		return 1
	}
	return (s.sizeOf(d.Len()) + s.Batch - 1) / s.Batch
}

// Iterations implements Sampler: Iters, or Epochs·⌈n/b⌉ (math.MaxInt when
// that product overflows, which Check refuses).
func (s *SGLD) Iterations(d *dataset.Dataset) int {
	if s.Iters > 0 {
		return s.Iters
	}
	return satMul(s.Epochs, s.IterationsPerEpoch(d))
}

// MaxIterations bounds a run's length, so that a typo cannot start a run
// that never ends.
const MaxIterations = 1 << 40

// Check implements Sampler; errors are *field.Error with paths relative
// to s (the Chain holding s adds "Sampler").
func (s *SGLD) Check(m Model, d *dataset.Dataset) error {
	if err := s.Step.Check(); err != nil {
		return field.Wrap(err, field.At("Step", "step"))
	}
	n := d.Len()
	if s.Batch < 1 || s.Batch > n {
		return field.Errorf(field.At("Batch", "batch"), "must be in [1, n=%d], got %d", n, s.Batch)
	}
	switch s.Scheme {
	case WithReplacement, WithoutReplacement, Poisson, Reshuffle, Cyclic:
	default:
		return field.Errorf(field.At("Scheme", "scheme"), "must be one of with-replacement, without-replacement, poisson, reshuffle, cyclic, got %q", s.Scheme)
	}
	if (s.Epochs > 0) == (s.Iters > 0) || s.Epochs < 0 || s.Iters < 0 {
		return field.Errorf(nil, "set exactly one of epochs ≥ 1 or iterations ≥ 1 (got epochs=%d, iterations=%d)", s.Epochs, s.Iters)
	}
	if s.Iters > MaxIterations {
		return field.Errorf(field.At("Iters", "iterations"), "must be in [1, 2^40], got %d", s.Iters)
	}
	if it := s.Iterations(d); it > MaxIterations || it < 0 {
		return field.Errorf(field.At("Epochs", "epochs"), "a run of more than 2^40 iterations is refused (epochs × ⌈n/batch⌉ = %d × %d)", s.Epochs, s.IterationsPerEpoch(d))
	}
	if !(s.Clip >= 0) || math.IsInf(s.Clip, 0) {
		return field.Errorf(field.At("Clip", "clip"), "must be finite and ≥ 0, got %g", s.Clip)
	}
	if !(s.NoiseVariance >= 0) || math.IsInf(s.NoiseVariance, 0) {
		return field.Errorf(field.At("NoiseVariance", "noise_variance"), "must be finite and ≥ 0, got %g", s.NoiseVariance)
	}
	return s.checkPlantAndN(d)
}

// checkPlantAndN checks the planted bug and the public n against a run on
// d.
func (s *SGLD) checkPlantAndN(d *dataset.Dataset) error {
	if err := s.Plant.check(s.plantFields()); err != nil {
		return err
	}
	if s.N != 0 && (s.Scheme != Poisson || s.N < s.Batch || s.N > MaxPublicN) {
		return field.Errorf(field.At("N", "n"), "a public n is for scheme poisson, in [batch=%d, 2^40], got %d (scheme %s)", s.Batch, s.N, s.Scheme)
	}
	if q := float64(s.Batch) / float64(s.sizeOf(d.Len())) * s.Plant.rate(); q > 1 {
		return field.Errorf(field.At("Plant", "plant").Field("Rate", "rate"), "the planted rate b/n × rate = %g must be at most 1", q)
	}
	if it := s.runLength(d); it > MaxIterations || it < 0 {
		return field.Errorf(field.At("Plant", "plant").Field("Steps", "steps"), "a run of more than 2^40 iterations is refused (%d declared + %d)", s.Iterations(d), s.Plant.steps())
	}
	return nil
}

// batcher produces the index sets of SGLD's minibatches.
type batcher struct {
	scheme IndexScheme
	n, b   int
	// np is the size the Poisson rate and scale use (n unless public).
	np   int
	perm []int
	pos  int // next position in perm (reshuffle, cyclic)
	buf  []int
	q    float64
}

func newBatcher(scheme IndexScheme, n, b int, rng *rand.Rand) *batcher {
	return newBatcherRate(scheme, n, b, 1, rng)
}

// newBatcherRate is newBatcher with the Poisson rate b/n multiplied by rate
// (a planted bug; the gradient scale stays n/b).
func newBatcherRate(scheme IndexScheme, n, b int, rate float64, rng *rand.Rand) *batcher {
	bt := &batcher{scheme: scheme, n: n, np: n, b: b, q: float64(b) / float64(n) * rate, buf: make([]int, 0, b)}
	switch scheme {
	case WithoutReplacement, Reshuffle, Cyclic:
		bt.perm = make([]int, n)
		for i := range bt.perm {
			bt.perm[i] = i
		}
		if scheme == Cyclic {
			rng.Shuffle(n, func(i, j int) { bt.perm[i], bt.perm[j] = bt.perm[j], bt.perm[i] })
		}
	}
	return bt
}

// next returns the indices of the next minibatch (reused buffer).
func (bt *batcher) next(rng *rand.Rand) []int {
	bt.buf = bt.buf[:0]
	switch bt.scheme {
	case WithReplacement:
		for k := 0; k < bt.b; k++ {
			bt.buf = append(bt.buf, rng.IntN(bt.n))
		}
	case WithoutReplacement:
		// Partial Fisher–Yates: the first b entries become a uniform subset.
		for k := 0; k < bt.b; k++ {
			j := k + rng.IntN(bt.n-k)
			bt.perm[k], bt.perm[j] = bt.perm[j], bt.perm[k]
			bt.buf = append(bt.buf, bt.perm[k])
		}
	case Poisson:
		for i := 0; i < bt.n; i++ {
			if rng.Float64() < bt.q {
				bt.buf = append(bt.buf, i)
			}
		}
	case Reshuffle, Cyclic:
		if bt.pos == 0 && bt.scheme == Reshuffle {
			rng.Shuffle(bt.n, func(i, j int) { bt.perm[i], bt.perm[j] = bt.perm[j], bt.perm[i] })
		}
		end := min(bt.pos+bt.b, bt.n)
		bt.buf = append(bt.buf, bt.perm[bt.pos:end]...)
		bt.pos = end
		if bt.pos == bt.n {
			bt.pos = 0
		}
	}
	return bt.buf
}

// scale returns the factor multiplying the minibatch gradient sum: n/b for
// fixed-size schemes (n/|batch| for the last, shorter batch of an epoch),
// 1/q = n/b for Poisson sampling (unbiased for the full-data sum).
func (bt *batcher) scale(batchLen int) float64 {
	if bt.scheme == Poisson {
		return float64(bt.np) / float64(bt.b)
	}
	if batchLen == 0 {
		return float64(bt.n) / float64(bt.b)
	}
	return float64(bt.n) / float64(batchLen)
}

// Run implements Sampler.
func (s *SGLD) Run(m Model, d *dataset.Dataset, theta []float64, rng *rand.Rand, at []int, emit Emit) (Info, error) {
	return s.runInto(m, d, theta, rng, at, emit, nil)
}

// runInto implements bufferedSampler: Run, with the per-release snapshots
// in src's buffer and the releases to its recorder (src may be nil).
func (s *SGLD) runInto(m Model, d *dataset.Dataset, theta []float64, rng *rand.Rand, at []int, emit Emit, src *TrialSource) (Info, error) {
	return s.run(m, d, theta, rng, at, emit, src, nil)
}

// runPath implements pathSampler.
func (s *SGLD) runPath(m Model, d *dataset.Dataset, theta []float64, rng *rand.Rand, at []int, emit Emit, lr *PathLR) (Info, error) {
	return s.run(m, d, theta, rng, at, emit, nil, lr)
}

// run is Run, with the buffers of src (may be nil) and, under the path
// threat model, the path's log-likelihood ratio accumulated into lr and
// released in place of θ (lr nil otherwise).
func (s *SGLD) run(m Model, d *dataset.Dataset, theta []float64, rng *rand.Rand, at []int, emit Emit, src *TrialSource, lr *PathLR) (Info, error) {
	at = shiftAt(at, s.Plant.steps())
	if a, ok := m.(Affine1D); ok && m.Dim() == 1 && (s.Clip == 0 || constantGrads(m)) {
		return s.runAffine1D(a, d, theta, rng, at, emit, src, lr)
	}
	total := s.runLength(d)
	bt := s.batcher(d.Len(), rng)
	clip := s.Clip * s.Plant.clip()
	fn := newFastNormal(rng)
	rel := newReleaser(at, emit, src)
	var path *sgldPath
	if lr != nil {
		rel.path, path = lr, s.newPath(lr, m)
	}
	dim := len(theta)
	grad := make([]float64, dim)
	gi := make([]float64, dim)
	noise := make([]float64, dim)
	var gb GradBatch
	if bm, ok := m.(BatchGradModel); ok {
		gb = bm.NewGradBatch(min(s.Batch, maxGradRows))
	}
	info := Info{Iterations: total}
	for t := 0; t < total; t++ {
		eta := s.Step.At(t)
		batch := bt.next(rng)
		if gb != nil {
			info.ClippedGrads += gb.SumGradLogLik(theta, d.Records, batch, clip, gi)
			info.GradEvals += len(batch)
		} else {
			sumClippedGrads(m, d, batch, theta, clip, grad, gi, &info)
		}
		sc := bt.scale(len(batch))
		half, sd := eta/2, s.noiseSD(eta)
		fn.fill(noise)
		var before float64
		if path != nil {
			before = theta[path.coord]
		}
		if !sgldUpdate(m, theta, grad, gi, noise, half, sc, sd) {
			return info, &DivergedError{Iteration: t + 1, Theta: append([]float64(nil), theta...)}
		}
		if path != nil {
			path.step(theta[path.coord]-before, eta)
		}
		if rel.due(t + 1) {
			if err := rel.release(theta, &info); err != nil {
				return info, err
			}
		}
	}
	return info, nil
}

// sumClippedGrads writes into gi the sum over batch of the records'
// gradients at theta, each clipped to norm clip when clip > 0 (Heller &
// Fetaya eq. 66), using grad as scratch and counting into info.
func sumClippedGrads(m Model, d *dataset.Dataset, batch []int, theta []float64, clip float64, grad, gi []float64, info *Info) {
	clear(gi)
	for _, i := range batch {
		m.GradLogLik(theta, d.Records[i], grad)
		info.GradEvals++
		if clip > 0 {
			var nn float64
			for _, g := range grad {
				nn += g * g
			}
			if nn = math.Sqrt(nn); nn > clip {
				f := clip / nn
				for k := range grad {
					grad[k] *= f
				}
				info.ClippedGrads++
			}
		}
		for k, g := range grad {
			gi[k] += g
		}
	}
}

// isotropicPrior is implemented by models whose prior is N(0, I/α), so
// that ∇ ln π(θ) = −α·θ can be computed inside the SGLD update.
type isotropicPrior interface {
	priorPrecision() float64
}

// sgldUpdate applies θ ← θ + (η/2)(∇ ln π(θ) + sc·gi) + sd·noise in place
// and reports whether every coordinate stayed finite. For an isotropic
// Gaussian prior the prior gradient −α·θ_k and the finiteness test are
// computed in the same pass, with the bits of GradLogPrior followed by
// the update and finite; other models use grad as scratch for
// GradLogPrior.
func sgldUpdate(m Model, theta, grad, gi, noise []float64, half, sc, sd float64) bool {
	ip, ok := m.(isotropicPrior)
	if !ok {
		m.GradLogPrior(theta, grad)
		for k := range theta {
			theta[k] += half*(grad[k]+sc*gi[k]) + sd*noise[k]
		}
		return finite(theta)
	}
	na := -ip.priorPrecision()
	gi, noise = gi[:len(theta)], noise[:len(theta)]
	k, ok := 0, true
	if n4 := len(theta) / 4; useAVX2 && n4 > 0 {
		c := [4]float64{na, sc, half, sd}
		ok = sgldStepAVX2(&theta[0], &gi[0], &noise[0], n4, &c)
		k = 4 * n4
	}
	// The conversions round each product before its sum, as the kernel
	// does, in every build (GOAMD64=v3 would otherwise fuse them). bad
	// becomes NaN at a NaN or infinite coordinate.
	var bad float64
	for ; k < len(theta); k++ {
		t := theta[k]
		v := t + (float64(half*(float64(na*t)+float64(sc*gi[k]))) + float64(sd*noise[k]))
		theta[k] = v
		bad += v - v
	}
	return ok && bad == 0
}

// runAffine1D is Run for one-dimensional models with affine gradients and
// no clipping: the same update, with h_i and j_i of every record
// precomputed, so that an iteration costs a few flops and one normal draw.
// Both paths draw their noise from a fastNormal seeded from rng.
func (s *SGLD) runAffine1D(a Affine1D, d *dataset.Dataset, theta []float64, rng *rand.Rand, at []int, emit Emit, src *TrialSource, lr *PathLR) (Info, error) {
	n := d.Len()
	k := s.affineCoefs(a, d, s.Clip*s.Plant.clip())
	h, j, shift, prec := k.h, k.j, k.shift, k.prec
	total := s.runLength(d)
	rel := newReleaser(at, emit, src)
	info := Info{Iterations: total}
	constant := s.Step.Gamma == 0
	var path *sgldPath
	if lr != nil {
		rel.path, path = lr, s.newPath(lr, a.(Model))
	}
	if s.Scheme == Poisson && len(k.active) < n {
		return s.runAffine1DSparse(k, n, theta, rng, &rel, &info, path)
	}
	if s.Batch == 1 && constant && s.Scheme != Poisson && path == nil && k.clipped == nil {
		// The loop fills info in place: an Info is 136 bytes, and copying
		// it back up through each call costs the interim-region audit
		// (200 steps a run) a few per cent.
		err := s.runAffine1DBatch1(k, n, theta, rng, &rel, &info)
		return info, err
	}
	bt := s.batcher(n, rng)
	fn := newFastNormal(rng)
	th := theta[0]
	half, sd := s.Step.Eta/2, s.noiseSD(s.Step.Eta)
	next := rel.nextAt()
	for t := 0; t < total; t++ {
		if !constant {
			eta := s.Step.At(t)
			half, sd = eta/2, s.noiseSD(eta)
		}
		batch := bt.next(rng)
		var sh, sj float64
		for _, i := range batch {
			sh += h[i]
			sj += j[i]
		}
		info.GradEvals += len(batch)
		info.ClippedGrads += k.countClipped(batch)
		sc := bt.scale(len(batch))
		before := th
		th += half*(shift-prec*th+sc*(sh-sj*th)) + sd*fn.norm()
		if th-th != 0 {
			return info, &DivergedError{Iteration: t + 1, Theta: []float64{th}}
		}
		if path != nil {
			path.step(th-before, s.Step.At(t))
		}
		if t+1 == next {
			theta[0] = th
			if err := rel.release(theta, &info); err != nil {
				return info, err
			}
			next = rel.nextAt()
		}
	}
	theta[0] = th
	return info, nil
}

// runAffine1DBatch1 is the batch-1, constant-step case of runAffine1D — the
// paper's setting — where an iteration with record i is the affine map
// θ ← a_i·θ + c_i + sqrt(η)·ξ with a_i = 1 − (η/2)(prec + n·j_i) and
// c_i = (η/2)(shift + n·h_i) fixed: one multiply-add and one normal draw.
// With and without replacement coincide for a batch of one record. Each
// scheme has a loop of its own, with no per-step branch on the scheme.
func (s *SGLD) runAffine1DBatch1(k *affineCoefs, n int, theta []float64, rng *rand.Rand, rel *releaser, info *Info) error {
	sd := s.noiseSD(s.Step.Eta)
	switch s.Scheme {
	case Cyclic:
		return runBatch1Cyclic(k, n, sd, theta, rng, rel, info)
	case WithReplacement, WithoutReplacement:
		return runBatch1Uniform(k, n, sd, theta, rng, rel, info)
	}
	return runBatch1Reshuffle(k, n, sd, theta, rng, rel, info)
}

// batch1Order returns the identity permutation of n records as int32
// indices, in the buffer of the run's trial source when it has one, else
// in a buffer recycled through permPool: hand p back to the pool (when
// not nil) once the run ends.
func batch1Order(n int, src *TrialSource) (order []int32, p *[]int32) {
	if src != nil {
		if cap(src.perm) < n {
			src.perm = make([]int32, n)
		}
		order = src.perm[:n]
	} else {
		p, _ = permPool.Get().(*[]int32)
		if p == nil || cap(*p) < n {
			buf := make([]int32, n)
			p = &buf
		}
		order = (*p)[:n]
	}
	for i := range order {
		order[i] = int32(i)
	}
	return order, p
}

// putOrder hands an order buffer of batch1Order back to the pool.
func putOrder(p *[]int32) {
	if p != nil {
		permPool.Put(p)
	}
}

// shuffleOrder permutes order uniformly: the Fisher–Yates shuffle of
// rand.Rand.Shuffle, drawing the same numbers from rng in the same order
// (IntN(i+1) is Shuffle's draw), so runs are unchanged, without a call of
// a swap function per element.
func shuffleOrder(order []int32, rng *rand.Rand) {
	for i := len(order) - 1; i > 0; i-- {
		j := rng.IntN(i + 1)
		order[i], order[j] = order[j], order[i]
	}
}

// runBatch1Cyclic is the paper's scheme: one random order drawn before the
// first iteration, then visited again every epoch. The ziggurat's common
// case is inlined by hand (fastNormal.norm is too large for the compiler
// to inline). The noise does not depend on θ: adding it to c_i first and
// finishing with one fused multiply-add keeps the serial dependency on θ to
// a single FMA per iteration.
func runBatch1Cyclic(k *affineCoefs, n int, sd float64, theta []float64, rng *rand.Rand, rel *releaser, info *Info) error {
	a, c := k.a, k.c
	order, buf := batch1Order(n, rel.src)
	defer putOrder(buf)
	shuffleOrder(order, rng)
	fn := newFastNormal(rng)
	total := info.Iterations
	th := theta[0]
	next := rel.nextAt()
	staged, made := rel.staged1D(), 0
	pos := 0
	for t := 1; t <= total; t++ {
		u := fn.next()
		zj, zl := int32(u>>32), u&127
		var z float64
		if uint32(zj+zj>>31^zj>>31) < zigK[zl] {
			z = float64(zj) * zigW[zl]
		} else {
			z = fn.normSlow(zj, zl)
		}
		i := order[pos]
		th = math.FMA(a[i], th, c[i]+sd*z)
		if pos++; pos == n {
			pos = 0
		}
		if th-th != 0 {
			return rel.diverged1D(theta, staged[:made], info, t, th)
		}
		if t == next {
			made, next = rel.stage1D(staged, made, th)
		}
	}
	return rel.finish1D(theta, staged[:made], info, th, total)
}

// runBatch1Uniform draws the record of every iteration uniformly from the
// n records (with or without replacement: the same for one record), fused
// with the update like the cyclic loop. The index is Lemire's (2019)
// multiply-high method: the high word of x·n for a uniform 64-bit x, with
// the products whose low word falls below 2^64 mod n drawn again, which
// makes it exactly uniform; the threshold is computed once per run, not
// per step.
func runBatch1Uniform(k *affineCoefs, n int, sd float64, theta []float64, rng *rand.Rand, rel *releaser, info *Info) error {
	a, c := k.a[:n], k.c[:n]
	fn := newFastNormal(rng)
	nn := uint64(n)
	thresh := -nn % nn
	total := info.Iterations
	th := theta[0]
	next := rel.nextAt()
	staged, made := rel.staged1D(), 0
	for t := 1; t <= total; t++ {
		u := fn.next()
		zj, zl := int32(u>>32), u&127
		var z float64
		if uint32(zj+zj>>31^zj>>31) < zigK[zl] {
			z = float64(zj) * zigW[zl]
		} else {
			z = fn.normSlow(zj, zl)
		}
		i, lo := bits.Mul64(fn.next(), nn)
		for lo < thresh {
			i, lo = bits.Mul64(fn.next(), nn)
		}
		th = math.FMA(a[i], th, c[i]+sd*z)
		if th-th != 0 {
			return rel.diverged1D(theta, staged[:made], info, t, th)
		}
		if t == next {
			made, next = rel.stage1D(staged, made, th)
		}
	}
	return rel.finish1D(theta, staged[:made], info, th, total)
}

// runBatch1Reshuffle draws a new random order at the start of every epoch.
func runBatch1Reshuffle(k *affineCoefs, n int, sd float64, theta []float64, rng *rand.Rand, rel *releaser, info *Info) error {
	a, c := k.a, k.c
	order, buf := batch1Order(n, rel.src)
	defer putOrder(buf)
	fn := newFastNormal(rng)
	total := info.Iterations
	th := theta[0]
	next := rel.nextAt()
	staged, made := rel.staged1D(), 0
	pos := 0
	for t := 1; t <= total; t++ {
		if pos == 0 {
			shuffleOrder(order, rng)
		}
		i := order[pos]
		if pos++; pos == n {
			pos = 0
		}
		th = math.FMA(a[i], th, c[i]+sd*fn.norm())
		if th-th != 0 {
			return rel.diverged1D(theta, staged[:made], info, t, th)
		}
		if t == next {
			made, next = rel.stage1D(staged, made, th)
		}
	}
	return rel.finish1D(theta, staged[:made], info, th, total)
}
