package mechanisms

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// Classifier is a model whose likelihood is a categorical distribution over
// K classes given the features,
//
//	p(y | x, θ) = softmax(f(x; θ))_y = exp(f_y) / Σ_k exp(f_k),
//
// with logits f(x; θ) ∈ ℝᴷ. Record.Y holds the class index y ∈ {0, …, K−1}
// as a float64. The canary-crafting functions (CraftCanary, AgreedRecords)
// work on any Classifier.
type Classifier interface {
	Model
	// NumClasses is K.
	NumClasses() int
	// Logits writes f(x; θ) (K values) into logits.
	Logits(theta, x, logits []float64)
	// LogitsJacobian writes f(x; θ) into logits and its Jacobian in x,
	// ∂f_k/∂x_j, into jac (K×DataDim, row-major).
	LogitsJacobian(theta, x, logits, jac []float64)
}

// DataChecker is implemented by models that constrain records beyond their
// width and finiteness (class labels, for a Classifier). Chain.Check calls
// it, so that a sampler never meets a record the model cannot evaluate.
type DataChecker interface {
	CheckData(d *dataset.Dataset) error
}

// Softmax is Bayesian multinomial logistic regression with K classes, D
// features and an isotropic Gaussian prior on all parameters:
//
//	f_k(x) = w_kᵀx + b_k,  p(y | x, θ) = softmax(f(x))_y,  θ ~ N(0, I/Alpha).
//
// Layout of θ (Dim = K·D + K): the weight matrix W (K×D) row by row, then
// the biases, θ[k·D + j] = W_kj and θ[K·D + k] = b_k. The parametrisation
// is over-complete (adding a vector to every row of W leaves p unchanged);
// the prior makes the posterior proper all the same.
//
// A Softmax is a value with no state and safe for concurrent use; its
// methods allocate nothing.
type Softmax struct {
	// Features is D, the number of features of a record.
	Features int `yaml:"features" json:"features"`
	// Classes is K ≥ 2.
	Classes int `yaml:"classes" json:"classes"`
	// Alpha is the prior precision of every parameter.
	Alpha float64 `yaml:"alpha" json:"alpha"`
}

// Check validates the parameters.
func (m Softmax) Check() error {
	if m.Features < 1 {
		return field.Errorf(field.At("Features", "features"), "must be ≥ 1, got %d", m.Features)
	}
	if m.Classes < 2 {
		return field.Errorf(field.At("Classes", "classes"), "must be ≥ 2, got %d", m.Classes)
	}
	if m.Features > 1<<20 || m.Classes > 1<<16 || m.Features*m.Classes > 1<<24 {
		return field.Errorf(nil, "features × classes: must be ≤ 2^24 parameters, got %d × %d", m.Features, m.Classes)
	}
	if !(m.Alpha > 0) || math.IsInf(m.Alpha, 0) {
		return field.Errorf(field.At("Alpha", "alpha"), "must be finite and > 0, got %g", m.Alpha)
	}
	return nil
}

// LogitsAffineInX reports that the logits θ_kᵀx + b_k are affine in the
// features x, so that one linearisation of the decision boundaries is exact
// (canary crafting solves the least-distance problem once).
func (Softmax) LogitsAffineInX() bool { return true }

// Name implements Model.
func (m Softmax) Name() string {
	return fmt.Sprintf("softmax(features=%d, classes=%d, alpha=%g)", m.Features, m.Classes, m.Alpha)
}

// Dim implements Model: K·D + K.
func (m Softmax) Dim() int { return m.Classes * (m.Features + 1) }

// DataDim implements Model.
func (m Softmax) DataDim() int { return m.Features }

// NumClasses implements Classifier.
func (m Softmax) NumClasses() int { return m.Classes }

// CheckData implements DataChecker: D features per record, finite values,
// labels that are class indices in [0, K).
func (m Softmax) CheckData(d *dataset.Dataset) error { return checkClassData(d, m.Features, m.Classes) }

func checkClassData(d *dataset.Dataset, features, classes int) error {
	if err := d.Validate(features); err != nil {
		return err
	}
	_, err := dataset.ClassCounts(d, classes)
	return err
}

// LogPrior implements Model: −Alpha·‖θ‖²/2 (constant dropped).
func (m Softmax) LogPrior(theta []float64) float64 { return -0.5 * m.Alpha * dot(theta, theta) }

// priorPrecision implements isotropicPrior: the prior is N(0, I/Alpha).
func (m Softmax) priorPrecision() float64 { return m.Alpha }

// GradLogPrior implements Model: −Alpha·θ.
func (m Softmax) GradLogPrior(theta, grad []float64) {
	for i, t := range theta {
		grad[i] = -m.Alpha * t
	}
}

// SamplePrior implements PriorSampler.
func (m Softmax) SamplePrior(rng *rand.Rand, theta []float64) {
	s := 1 / math.Sqrt(m.Alpha)
	for i := range theta {
		theta[i] = s * rng.NormFloat64()
	}
}

// Logits implements Classifier: f_k = w_kᵀx + b_k, each dot product
// summed in order j = 0, 1, … from zero (as dot does). Four classes go
// through the loop together: four independent chains of additions keep
// the processor busy while each waits for its previous sum, with every
// class's sum, and so every bit, unchanged.
func (m Softmax) Logits(theta, x, logits []float64) {
	k, d := m.Classes, m.Features
	x = x[:d]
	c := 0
	for ; c+4 <= k; c += 4 {
		w0, w1 := theta[c*d:][:d], theta[(c+1)*d:][:d]
		w2, w3 := theta[(c+2)*d:][:d], theta[(c+3)*d:][:d]
		var s0, s1, s2, s3 float64
		for j, xj := range x {
			s0 += w0[j] * xj
			s1 += w1[j] * xj
			s2 += w2[j] * xj
			s3 += w3[j] * xj
		}
		b := theta[k*d+c:][:4]
		logits[c], logits[c+1], logits[c+2], logits[c+3] = b[0]+s0, b[1]+s1, b[2]+s2, b[3]+s3
	}
	if c+2 <= k {
		w0, w1 := theta[c*d:][:d], theta[(c+1)*d:][:d]
		var s0, s1 float64
		for j, xj := range x {
			s0 += w0[j] * xj
			s1 += w1[j] * xj
		}
		logits[c], logits[c+1] = theta[k*d+c]+s0, theta[k*d+c+1]+s1
		c += 2
	}
	if c < k {
		logits[c] = theta[k*d+c] + dot(theta[c*d:(c+1)*d], x)
	}
}

// LogitsJacobian implements Classifier: ∂f_k/∂x = w_k, so jac is a copy of W.
func (m Softmax) LogitsJacobian(theta, x, logits, jac []float64) {
	m.Logits(theta, x, logits)
	copy(jac[:m.Classes*m.Features], theta[:m.Classes*m.Features])
}

// classOf returns the class of a record, panicking on a label that is not a
// class index: CheckData rejects such data, so meeting one here is a
// programmer error.
func classOf(y float64, k int) int {
	c, ok := dataset.ClassIndex(y, k)
	if !ok {
		panic(fmt.Sprintf("mechanisms: label %g is not a class index in [0, %d) (validate the data with CheckData)", y, k))
	}
	return c
}

// LogLik implements Model: the log-softmax f_y − ln Σ_k exp(f_k), computed
// without overflow (see logSoftmaxAt).
func (m Softmax) LogLik(theta []float64, r dataset.Record) float64 {
	y := classOf(r.Y, m.Classes)
	var buf [stackClasses]float64
	f := stackOrHeap(buf[:], m.Classes)
	m.Logits(theta, r.X, f)
	return logSoftmaxAt(f, y)
}

// GradLogLik implements Model: with g = e_y − softmax(f), the gradient is
// ∂/∂W_kj = g_k·x_j and ∂/∂b_k = g_k (the outer product g ⊗ (x, 1)). The
// logits are kept in grad's bias slots while they are needed, so the call
// allocates nothing.
func (m Softmax) GradLogLik(theta []float64, r dataset.Record, grad []float64) {
	k, d := m.Classes, m.Features
	y := classOf(r.Y, k)
	g := grad[k*d : k*d+k]
	m.Logits(theta, r.X, g)
	softmaxResidual(g, y)
	for c := 0; c < k; c++ {
		row := grad[c*d : (c+1)*d]
		gc := g[c]
		for j, x := range r.X {
			row[j] = gc * x
		}
	}
}

// NewGradBatch implements BatchGradModel.
func (m Softmax) NewGradBatch(rows int) GradBatch {
	rows = max(rows, 1)
	return &softmaxGrad{m: m, rows: rows, g: make([]float64, rows*m.Classes), xs: make([]*float64, rows),
		ys: make([]int, rows), e: make([]float64, 4*m.Classes)}
}

// softmaxGrad is Softmax's minibatch workspace: the logits, then
// residuals, of a block of records, pointers to their features, their
// labels, and softmaxResidualRows' scratch.
type softmaxGrad struct {
	m    Softmax
	rows int
	g    []float64
	xs   []*float64
	ys   []int
	e    []float64
}

// SumGradLogLik implements GradBatch. For a block X (b×D) of records with
// one-hot labels Y, the logits are F = X·Wᵀ + 1·bᵀ and the residuals
// G = Y − softmax(F) row by row (as GradLogLik computes them), and the sum
// of the records' outer products g_r ⊗ (x_r, 1) is Σ∇_W = Gᵀ·X and
// Σ∇_b = Gᵀ·1: two products, with no record's gradient materialised. A
// record's gradient norm is ‖g_r‖·‖(x_r, 1)‖ (the norm of an outer
// product), so clipping scales g_r by min(1, C/(‖g_r‖·‖(x_r, 1)‖)) before
// the product (docs/derivations/batch-gradients.md).
//
// The products run on the records' own feature slices (no block is
// gathered) in the kernels of kernel.go: the logits are logitsRows' (with
// AVX-512, four records × four classes per kernel call, each weight
// loaded once for the four records; else dotRows, four classes of a
// record at a time), and Gᵀ·X is sumOuter, which keeps four classes × 32
// features (AVX-512) or two × 16 (AVX2) of the sum in registers across
// the whole block. The block's residuals are softmaxResidualRows', four
// rows per kernel call.
func (w *softmaxGrad) SumGradLogLik(theta []float64, recs []dataset.Record, batch []int, clip float64, sum []float64) (clipped int) {
	k, d := w.m.Classes, w.m.Features
	wts, bias := theta[:k*d], theta[k*d:k*d+k]
	sw, sb := sum[:k*d], sum[k*d:k*d+k]
	clear(sum[:k*d+k])
	for r0 := 0; r0 < len(batch); r0 += w.rows {
		idx := batch[r0:min(r0+w.rows, len(batch))]
		nb := len(idx)
		g, xs, ys := w.g[:nb*k], w.xs[:nb], w.ys[:nb]
		for r, i := range idx {
			xr := recs[i].X[:d]
			xs[r] = &xr[0]
			ys[r] = classOf(recs[i].Y, k)
		}
		logitsRows(xs, d, wts, d, bias, g, k)
		softmaxResidualRows(g, k, ys, w.e)
		for r, i := range idx {
			gr := g[r*k : (r+1)*k]
			if clip > 0 {
				xr := recs[i].X[:d]
				if nn := math.Sqrt(dot(gr, gr) * (dot(xr, xr) + 1)); nn > clip {
					f := clip / nn
					for c := range gr {
						gr[c] *= f
					}
					clipped++
				}
			}
			for c, v := range gr {
				sb[c] += v
			}
		}
		sumOuter(sw, d, g, k, k, d, xs)
	}
	return clipped
}

// BatchLogitsScratch implements BatchClassifier: none is needed.
func (m Softmax) BatchLogitsScratch(int) int { return 0 }

// BatchLogits implements BatchClassifier: F = X·Wᵀ + 1·bᵀ, four rows of
// logits at a time by logits4 with AVX-512, else a row at a time by
// dotRows (four classes per kernel call); the bits are the same.
func (m Softmax) BatchLogits(theta, x []float64, n int, f, _ []float64) {
	k, d := m.Classes, m.Features
	wts, bias := theta[:k*d], theta[k*d:k*d+k]
	r := 0
	if useAVX512 && d >= 8 && n >= 4 {
		_ = x[n*d-1] // the rows the kernels read unchecked
		for ; r+4 <= n; r += 4 {
			xs := [4]*float64{&x[r*d], &x[(r+1)*d], &x[(r+2)*d], &x[(r+3)*d]}
			logits4(&xs, d, wts, d, bias, f[r*k:], k)
		}
	}
	for ; r < n; r++ {
		fr := f[r*k : (r+1)*k]
		dotRows(x[r*d:(r+1)*d], wts, d, fr)
		for c, b := range bias {
			fr[c] += b
		}
	}
}

// Predict returns the class probabilities p(· | x, θ) (a new slice).
func (m Softmax) Predict(theta, x []float64) []float64 {
	return ClassProbs(m, theta, x, make([]float64, m.Classes))
}

// Prob returns p(y | x, θ).
func (m Softmax) Prob(theta, x []float64, y int) float64 {
	return math.Exp(ClassLogProb(m, theta, x, y))
}

// GradientConstants implements ConstantsModel. With g = e_y − p and
// x̃ = (x, 1), ∇_θ ln p(y | x, θ) = g ⊗ x̃, so its norm is ‖g‖·‖x̃‖, and
//
//	‖g‖² = (1 − p_y)² + Σ_{k≠y} p_k² ≤ (1 − p_y)² + (Σ_{k≠y} p_k)² = 2(1 − p_y)² ≤ 2,
//
// giving c = √2·max‖x̃‖ over the records (approached, never attained, as p
// concentrates on one wrong class). The difference of two records'
// gradients is bounded by the triangle inequality, √2·(‖x̃₁‖ + ‖x̃₂‖) for
// the two largest norms; for records with parallel x̃ and g′ = −g (each
// record predicted confidently as the other's label) it is approached, so
// nothing tighter holds in general. The prior Alpha‖θ‖²/2 has L = a = Alpha.
func (m Softmax) GradientConstants(records []dataset.Record) GradientConstants {
	var n1, n2 float64
	for _, r := range records {
		n := math.Sqrt(dot(r.X, r.X) + 1)
		if n > n1 {
			n1, n2 = n, n1
		} else if n > n2 {
			n2 = n
		}
	}
	return GradientConstants{LikGradBound: math.Sqrt2 * n1, LikGradDiff: math.Sqrt2 * (n1 + n2),
		PriorLipschitz: m.Alpha, PriorConvexity: m.Alpha}
}

// stackClasses is the number of classes (and stackHidden the hidden width)
// up to which per-call scratch lives in a stack array; larger models fall
// back to a heap slice.
const (
	stackClasses = 64
	stackHidden  = 256
)

// stackOrHeap returns buf[:n] when it fits, else a new slice.
func stackOrHeap(buf []float64, n int) []float64 {
	if n <= len(buf) {
		return buf[:n]
	}
	return make([]float64, n)
}

// logSoftmaxAt returns ln softmax(f)_y without overflow or needless
// rounding: with m = max_k f_k, it is (f_y − m) − ln Σ_k exp(f_k − m); when
// f_y is the maximum it is −log1p(Σ_{k≠y} exp(f_k − f_y)), which keeps full
// relative precision when p_y is close to 1 (ln p_y ≈ −(1 − p_y)).
func logSoftmaxAt(f []float64, y int) float64 {
	mx := f[0]
	for _, v := range f[1:] {
		mx = max(mx, v) // math.Max's value (NaN, and +0 over −0), without a call
	}
	if f[y] == mx {
		var s float64
		for k, v := range f {
			if k != y {
				s += math.Exp(v - mx)
			}
		}
		return -math.Log1p(s)
	}
	var s float64
	for _, v := range f {
		s += math.Exp(v - mx)
	}
	return (f[y] - mx) - math.Log(s)
}

// softmaxInPlace replaces logits f by softmax(f). The maximum is taken
// by comparison rather than math.Max (a call per element on amd64): the
// two differ only on NaN, and a NaN logit makes every output NaN either
// way. The normalisation multiplies by 1/Σ rather than dividing each term
// (within an ulp or two of the quotient, and a tenth of a digits audit's
// time).
func softmaxInPlace(f []float64) {
	mx := f[0]
	for _, v := range f[1:] {
		if v > mx {
			mx = v
		}
	}
	var s float64
	for k, v := range f {
		e := math.Exp(v - mx)
		f[k] = e
		s += e
	}
	inv := 1 / s
	for k := range f {
		f[k] *= inv
	}
}

// softmaxResidual replaces logits f by g = e_y − softmax(f), the gradient
// of ln softmax(f)_y with respect to f. g_y = 1 − p_y is computed as
// Σ_{k≠y} p_k, which keeps its relative precision when p_y is near 1.
// The exponentials are fastExp's (within 2 ulp of math.Exp): the
// residual feeds the samplers' gradients only, never a reported
// probability. softmaxResidualGo defines the result; softmaxResidualRows
// computes the same bits for a block of rows. (One row in the AVX2 kernel,
// all four lanes on it, is no faster than the Go code: the sequential sums
// bound it.)
func softmaxResidual(f []float64, y int) { softmaxResidualGo(f, y) }

// checkLabel panics unless 0 ≤ y < k: softmaxResidual4AVX writes class y
// of a row unchecked.
func checkLabel(y, k int) {
	if uint(y) >= uint(k) {
		panic(fmt.Sprintf("mechanisms: class %d out of range [0, %d)", y, k))
	}
}

// softmaxResidualRows applies softmaxResidual to the len(ys) rows
// g[r·k : (r+1)·k] with labels ys[r]. With AVX2 + FMA, four rows at a time
// run in softmaxResidual4AVX (one row per lane, the scalar operations in
// their order, so the bits are softmaxResidualGo's); e is its scratch, at
// least 4·k values. The other rows, and any block with a logit outside
// the kernel's range, run softmaxResidualGo.
func softmaxResidualRows(g []float64, k int, ys []int, e []float64) {
	n := len(ys)
	r := 0
	if useAVX2 && n >= 4 {
		_, _ = g[n*k-1], e[4*k-1]
		for ; r+4 <= n; r += 4 {
			for _, y := range ys[r : r+4] {
				checkLabel(y, k)
			}
			if !softmaxResidual4AVX(&g[r*k], k, k, (*[4]int)(ys[r:r+4]), &e[0], &expVec) {
				for i := r; i < r+4; i++ {
					softmaxResidualGo(g[i*k:(i+1)*k], ys[i])
				}
			}
		}
	}
	for ; r < n; r++ {
		softmaxResidualGo(g[r*k:(r+1)*k], ys[r])
	}
}

// expVecLen is the number of constants in expVec.
const expVecLen = 13

// expVec holds, each in four lanes, the constants of softmaxResidual4AVX
// at the offsets it reads them: fastExp's, in the order of its operations,
// the range bound −708, then as integer bits the table mask 63, the class
// step 1 and the sign bit.
var expVec = func() (c [expVecLen][4]float64) {
	v := [expVecLen]float64{expInvLn2x64, expShift, expLn2x64Hi, expLn2x64Lo,
		1.0 / 120, 1.0 / 24, 1.0 / 6, 1.0 / 2, 1, -708,
		math.Float64frombits(63), math.Float64frombits(1), math.Float64frombits(1 << 63)}
	for i, x := range v {
		c[i] = [4]float64{x, x, x, x}
	}
	return c
}()

// softmaxResidualGo is softmaxResidual in portable Go.
func softmaxResidualGo(f []float64, y int) {
	mx := f[0]
	for _, v := range f[1:] {
		if v > mx {
			mx = v
		}
	}
	var s float64
	for k, v := range f {
		// fastExp(v − mx), written out so that the loop makes no call:
		// v − mx ≤ 0, so only the lower end of its range is tested (a NaN
		// fails the test too). The conversions round each product before
		// its sum, as fastExp and softmaxResidual4AVX do, in every build
		// (GOAMD64=v3 would otherwise fuse x*y + z).
		x, e := v-mx, 0.0
		if x >= -708 {
			kf := (float64(x*expInvLn2x64) + expShift) - expShift
			ki := int64(kf)
			r := (x - float64(kf*expLn2x64Hi)) - float64(kf*expLn2x64Lo)
			q := r * (1 + float64(r*(1.0/2+float64(r*(1.0/6+float64(r*(1.0/24+float64(r*(1.0/120)))))))))
			t := math.Float64frombits(math.Float64bits(expTab[ki&63]) + uint64(ki>>6)<<52)
			e = math.FMA(t, q, t)
		} else {
			e = math.Exp(x)
		}
		f[k] = e
		s += e
	}
	inv := 1 / s
	for k := range f {
		f[k] *= inv
	}
	var rest float64
	for k, p := range f {
		if k != y {
			rest += p
			f[k] = -p
		}
	}
	f[y] = rest
}

// ClassProbs writes p(· | x, θ) into probs (len K) and returns it.
func ClassProbs(c Classifier, theta, x, probs []float64) []float64 {
	probs = probs[:c.NumClasses()]
	c.Logits(theta, x, probs)
	softmaxInPlace(probs)
	return probs
}

// ClassLogProb returns ln p(y | x, θ).
func ClassLogProb(c Classifier, theta, x []float64, y int) float64 {
	k := c.NumClasses()
	if y < 0 || y >= k {
		panic(fmt.Sprintf("mechanisms: class %d out of range [0, %d)", y, k))
	}
	var buf [stackClasses]float64
	f := stackOrHeap(buf[:], k)
	logitsOf(c, theta, x, f)
	return logSoftmaxAt(f, y)
}

// PredictClass returns the most probable class for x under θ (the smallest
// index among ties).
func PredictClass(c Classifier, theta, x []float64) int {
	var buf [stackClasses]float64
	f := stackOrHeap(buf[:], c.NumClasses())
	logitsOf(c, theta, x, f)
	return argmaxOf(f)
}

// logitsOf writes c's logits at x into f. The built-in models are called
// directly, so that a caller's stack buffer f stays on the stack (a call
// through the interface would move it to the heap on every call); other
// classifiers write into a heap copy.
func logitsOf(c Classifier, theta, x, f []float64) {
	switch m := c.(type) {
	case Softmax:
		m.Logits(theta, x, f)
	case MLP:
		m.Logits(theta, x, f)
	default:
		tmp := make([]float64, len(f))
		c.Logits(theta, x, tmp)
		copy(f, tmp)
	}
}

func argmaxOf(f []float64) int {
	best := 0
	for k, v := range f {
		if v > f[best] {
			best = k
		}
	}
	return best
}

// Accuracy returns the fraction of records of d that θ classifies
// correctly.
func Accuracy(c Classifier, theta []float64, d *dataset.Dataset) float64 {
	if d.Len() == 0 {
		return math.NaN()
	}
	n := 0
	for _, r := range d.Records {
		if float64(PredictClass(c, theta, r.X)) == r.Y {
			n++
		}
	}
	return float64(n) / float64(d.Len())
}
