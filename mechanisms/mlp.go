package mechanisms

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// MLP is a Bayesian neural network with one hidden layer of tanh units and a
// softmax output, with an isotropic Gaussian prior on every weight and bias:
//
//	h = tanh(W₁x + b₁) ∈ ℝᴴ,  f = W₂h + b₂ ∈ ℝᴷ,  p(y | x, θ) = softmax(f)_y,
//	θ ~ N(0, I/Alpha).
//
// Layout of θ (Dim = H·D + H + K·H + K): W₁ (H×D) row by row, b₁ (H), W₂
// (K×H) row by row, b₂ (K). Gradients are hand-written backpropagation
// (GradLogLik), checked against finite differences in the tests.
//
// An MLP is a value with no state and safe for concurrent use. GradLogLik
// allocates nothing (its scratch lives in the gradient buffer); LogLik and
// the Classifier methods keep their scratch on the stack for H ≤ 256 and
// K ≤ 64.
type MLP struct {
	// Features is D, the number of features of a record.
	Features int `yaml:"features" json:"features"`
	// Hidden is H, the number of hidden units.
	Hidden int `yaml:"hidden" json:"hidden"`
	// Classes is K ≥ 2.
	Classes int `yaml:"classes" json:"classes"`
	// Alpha is the prior precision of every weight and bias.
	Alpha float64 `yaml:"alpha" json:"alpha"`
}

// Check validates the parameters.
func (m MLP) Check() error {
	if m.Features < 1 {
		return field.Errorf(field.At("Features", "features"), "must be ≥ 1, got %d", m.Features)
	}
	if m.Hidden < 1 {
		return field.Errorf(field.At("Hidden", "hidden"), "must be ≥ 1, got %d", m.Hidden)
	}
	if m.Classes < 2 {
		return field.Errorf(field.At("Classes", "classes"), "must be ≥ 2, got %d", m.Classes)
	}
	if m.Features > 1<<20 || m.Hidden > 1<<16 || m.Classes > 1<<16 ||
		int64(m.Hidden)*int64(m.Features+m.Classes+1) > 1<<24 {
		return field.Errorf(nil, "hidden × (features + classes): must be ≤ 2^24 parameters, got %d × (%d + %d)", m.Hidden, m.Features, m.Classes)
	}
	if !(m.Alpha > 0) || math.IsInf(m.Alpha, 0) {
		return field.Errorf(field.At("Alpha", "alpha"), "must be finite and > 0, got %g", m.Alpha)
	}
	return nil
}

// Name implements Model.
func (m MLP) Name() string {
	return fmt.Sprintf("mlp(features=%d, hidden=%d, classes=%d, alpha=%g)", m.Features, m.Hidden, m.Classes, m.Alpha)
}

// offsets of the blocks of θ: W₁, b₁, W₂, b₂, and the total.
func (m MLP) offsets() (b1, w2, b2, dim int) {
	h, d, k := m.Hidden, m.Features, m.Classes
	b1 = h * d
	w2 = b1 + h
	b2 = w2 + k*h
	return b1, w2, b2, b2 + k
}

// Dim implements Model: H·D + H + K·H + K.
func (m MLP) Dim() int {
	_, _, _, dim := m.offsets()
	return dim
}

// DataDim implements Model.
func (m MLP) DataDim() int { return m.Features }

// NumClasses implements Classifier.
func (m MLP) NumClasses() int { return m.Classes }

// CheckData implements DataChecker: D features per record, finite values,
// labels that are class indices in [0, K).
func (m MLP) CheckData(d *dataset.Dataset) error { return checkClassData(d, m.Features, m.Classes) }

// LogPrior implements Model: −Alpha·‖θ‖²/2 (constant dropped).
func (m MLP) LogPrior(theta []float64) float64 { return -0.5 * m.Alpha * dot(theta, theta) }

// priorPrecision implements isotropicPrior: the prior is N(0, I/Alpha).
func (m MLP) priorPrecision() float64 { return m.Alpha }

// GradLogPrior implements Model: −Alpha·θ.
func (m MLP) GradLogPrior(theta, grad []float64) {
	for i, t := range theta {
		grad[i] = -m.Alpha * t
	}
}

// SamplePrior implements PriorSampler.
func (m MLP) SamplePrior(rng *rand.Rand, theta []float64) {
	s := 1 / math.Sqrt(m.Alpha)
	for i := range theta {
		theta[i] = s * rng.NormFloat64()
	}
}

// tanhDeriv returns tanh(a) and its derivative 1 − tanh²(a), both to full
// relative precision. With t = e^{−2|a|} and e = t − 1 (= expm1(−2|a|)),
//
//	tanh|a| = −e/(2 + e),  1 − tanh²a = 4t/(2 + e)²
//
// (from tanh a = (1 − e^{−2a})/(1 + e^{−2a})). For t ≥ 1/2, e comes from
// expm1 and t = 1 + e loses nothing; for t < 1/2, t comes from exp and
// e = t − 1 ∈ (−1, −1/2) is accurate. Forming 1 − h² from a rounded
// h = tanh a instead would lose every digit once |a| ≳ 19. Every method of
// MLP uses this one function, so they all see the same activations.
func tanhDeriv(a float64) (h, d float64) {
	x := 2 * math.Abs(a)
	var t, e float64
	if x <= math.Ln2 {
		e = math.Expm1(-x)
		t = 1 + e
	} else {
		t = math.Exp(-x)
		e = t - 1
	}
	den := 2 + e
	h = -e / den
	if a < 0 {
		h = -h
	}
	return h, 4 * t / (den * den)
}

// hidden writes the hidden activations h_i = tanh(W₁ᵢx + b₁ᵢ) and, when
// deriv is non-nil, their derivatives 1 − h_i².
func (m MLP) hidden(theta, x, h, deriv []float64) {
	d := m.Features
	b1, _, _, _ := m.offsets()
	for i := range h {
		a := theta[b1+i] + dot(theta[i*d:(i+1)*d], x)
		if deriv != nil {
			h[i], deriv[i] = tanhDeriv(a)
		} else {
			h[i], _ = tanhDeriv(a)
		}
	}
}

// output writes the logits f_k = W₂ₖh + b₂ₖ.
func (m MLP) output(theta, h, f []float64) {
	_, w2, b2, _ := m.offsets()
	hh := m.Hidden
	for k := range f {
		f[k] = theta[b2+k] + dot(theta[w2+k*hh:w2+(k+1)*hh], h)
	}
}

// Logits implements Classifier.
func (m MLP) Logits(theta, x, logits []float64) {
	var hb [stackHidden]float64
	h := stackOrHeap(hb[:], m.Hidden)
	m.hidden(theta, x, h, nil)
	m.output(theta, h, logits[:m.Classes])
}

// LogitsJacobian implements Classifier: ∂f_k/∂x_j = Σ_i W₂ₖᵢ(1 − h_i²)W₁ᵢⱼ.
func (m MLP) LogitsJacobian(theta, x, logits, jac []float64) {
	var hb, db [stackHidden]float64
	h, dv := stackOrHeap(hb[:], m.Hidden), stackOrHeap(db[:], m.Hidden)
	m.hidden(theta, x, h, dv)
	m.output(theta, h, logits[:m.Classes])
	_, w2, _, _ := m.offsets()
	d, hh := m.Features, m.Hidden
	for k := 0; k < m.Classes; k++ {
		row := jac[k*d : (k+1)*d]
		for j := range row {
			row[j] = 0
		}
		for i := 0; i < hh; i++ {
			c := theta[w2+k*hh+i] * dv[i]
			if c == 0 {
				continue
			}
			for j, w := range theta[i*d : (i+1)*d] {
				row[j] += c * w
			}
		}
	}
}

// LogLik implements Model: ln softmax(f(x))_y, computed without overflow.
func (m MLP) LogLik(theta []float64, r dataset.Record) float64 {
	y := classOf(r.Y, m.Classes)
	var fb [stackClasses]float64
	f := stackOrHeap(fb[:], m.Classes)
	m.Logits(theta, r.X, f)
	return logSoftmaxAt(f, y)
}

// GradLogLik implements Model by backpropagation. With g = e_y − softmax(f)
// and δ = (W₂ᵀg) ⊙ (1 − h²):
//
//	∂/∂W₂ = g hᵀ,  ∂/∂b₂ = g,  ∂/∂W₁ = δ xᵀ,  ∂/∂b₁ = δ.
//
// Scratch lives in grad: h in the b₁ slots, the tanh derivatives in the
// first column of the W₁ block (slot i·D, overwritten only after δ_i is
// formed), and f, then g, in the b₂ slots.
func (m MLP) GradLogLik(theta []float64, r dataset.Record, grad []float64) {
	k, d, hh := m.Classes, m.Features, m.Hidden
	y := classOf(r.Y, k)
	b1, w2, b2, _ := m.offsets()
	h := grad[b1 : b1+hh]
	for i := range h {
		a := theta[b1+i] + dot(theta[i*d:(i+1)*d], r.X)
		h[i], grad[i*d] = tanhDeriv(a)
	}
	g := grad[b2 : b2+k]
	m.output(theta, h, g)
	softmaxResidual(g, y)
	for c := 0; c < k; c++ {
		row := grad[w2+c*hh : w2+(c+1)*hh]
		gc := g[c]
		for i, hv := range h {
			row[i] = gc * hv
		}
	}
	for i := 0; i < hh; i++ {
		var s float64
		for c := 0; c < k; c++ {
			s += theta[w2+c*hh+i] * g[c]
		}
		delta := s * grad[i*d]
		grad[b1+i] = delta
		row := grad[i*d : (i+1)*d]
		for j, x := range r.X {
			row[j] = delta * x
		}
	}
}

// NewGradBatch implements BatchGradModel.
func (m MLP) NewGradBatch(rows int) GradBatch {
	rows = max(rows, 1)
	hh := m.Hidden
	return &mlpGrad{m: m, rows: rows, x: make([]float64, rows*m.Features), h: make([]float64, rows*hh),
		dv: make([]float64, rows*hh), g: make([]float64, rows*m.Classes), delta: make([]float64, rows*hh),
		ys: make([]int, rows), e: make([]float64, 4*m.Classes)}
}

// mlpGrad is the MLP's minibatch workspace: a block of gathered records,
// their hidden activations and tanh derivatives, output residuals and
// hidden-layer errors, the records' labels and softmaxResidualRows'
// scratch.
type mlpGrad struct {
	m                  MLP
	rows               int
	x, h, dv, g, delta []float64
	ys                 []int
	e                  []float64
}

// SumGradLogLik implements GradBatch: backpropagation (GradLogLik) for a
// block X (b×D) of records at once. With A = X·W₁ᵀ + 1·b₁ᵀ, H = tanh(A),
// F = H·W₂ᵀ + 1·b₂ᵀ, G = Y − softmax(F) by rows and Δ = (G·W₂) ⊙ (1 − H²),
// the summed gradient is
//
//	Σ∇_{W₂} = Gᵀ·H,  Σ∇_{b₂} = Gᵀ·1,  Σ∇_{W₁} = Δᵀ·X,  Σ∇_{b₁} = Δᵀ·1.
//
// A record's gradient is the four outer products g⊗h, g, δ⊗x, δ, so its
// squared norm is ‖g‖²(‖h‖² + 1) + ‖δ‖²(‖x‖² + 1), and clipping scales
// the record's g and δ (δ is linear in g) by min(1, C/norm) before the
// products (docs/derivations/batch-gradients.md).
func (w *mlpGrad) SumGradLogLik(theta []float64, recs []dataset.Record, batch []int, clip float64, sum []float64) (clipped int) {
	m := w.m
	k, d, hh := m.Classes, m.Features, m.Hidden
	b1, w2, b2, dim := m.offsets()
	clear(sum[:dim])
	for r0 := 0; r0 < len(batch); r0 += w.rows {
		idx := batch[r0:min(r0+w.rows, len(batch))]
		nb := len(idx)
		x, h, dv, g, delta := w.x[:nb*d], w.h[:nb*hh], w.dv[:nb*hh], w.g[:nb*k], w.delta[:nb*hh]
		gather(x, recs, idx, d)
		gemm(false, true, nb, hh, d, x, d, theta[:b1], d, 0, h, hh)
		for r := 0; r < nb; r++ {
			for i := 0; i < hh; i++ {
				j := r*hh + i
				h[j], dv[j] = tanhDeriv(h[j] + theta[b1+i])
			}
		}
		gemm(false, true, nb, k, hh, h, hh, theta[w2:b2], hh, 0, g, k)
		addRow(g, nb, theta[b2:dim])
		ys := w.ys[:nb]
		for r, i := range idx {
			ys[r] = classOf(recs[i].Y, k)
		}
		softmaxResidualRows(g, k, ys, w.e)
		gemm(false, false, nb, hh, k, g, k, theta[w2:b2], hh, 0, delta, hh)
		for j, v := range dv {
			delta[j] *= v
		}
		for r := 0; r < nb; r++ {
			gr, dr := g[r*k:(r+1)*k], delta[r*hh:(r+1)*hh]
			if clip > 0 {
				hr, xr := h[r*hh:(r+1)*hh], x[r*d:(r+1)*d]
				n2 := dot(gr, gr)*(dot(hr, hr)+1) + dot(dr, dr)*(dot(xr, xr)+1)
				if nn := math.Sqrt(n2); nn > clip {
					f := clip / nn
					for c := range gr {
						gr[c] *= f
					}
					for i := range dr {
						dr[i] *= f
					}
					clipped++
				}
			}
			for c, v := range gr {
				sum[b2+c] += v
			}
			for i, v := range dr {
				sum[b1+i] += v
			}
		}
		gemm(true, false, k, hh, nb, g, k, h, hh, 1, sum[w2:b2], hh)
		gemm(true, false, hh, d, nb, delta, hh, x, d, 1, sum[:b1], d)
	}
	return clipped
}

// BatchLogitsScratch implements BatchClassifier: the hidden activations.
func (m MLP) BatchLogitsScratch(n int) int { return n * m.Hidden }

// BatchLogits implements BatchClassifier: H = tanh(X·W₁ᵀ + 1·b₁ᵀ) and
// F = H·W₂ᵀ + 1·b₂ᵀ as two products.
func (m MLP) BatchLogits(theta, x []float64, n int, f, scratch []float64) {
	k, d, hh := m.Classes, m.Features, m.Hidden
	b1, w2, b2, dim := m.offsets()
	h := scratch[:n*hh]
	gemm(false, true, n, hh, d, x, d, theta[:b1], d, 0, h, hh)
	for r := 0; r < n; r++ {
		for i := 0; i < hh; i++ {
			j := r*hh + i
			h[j], _ = tanhDeriv(h[j] + theta[b1+i])
		}
	}
	gemm(false, true, n, k, hh, h, hh, theta[w2:b2], hh, 0, f, k)
	addRow(f, n, theta[b2:dim])
}

// Predict returns the class probabilities p(· | x, θ) (a new slice).
func (m MLP) Predict(theta, x []float64) []float64 {
	return ClassProbs(m, theta, x, make([]float64, m.Classes))
}

// Prob returns p(y | x, θ).
func (m MLP) Prob(theta, x []float64, y int) float64 {
	return math.Exp(ClassLogProb(m, theta, x, y))
}

// GradientConstants implements ConstantsModel. The output-layer part of the
// gradient is bounded (‖g ⊗ (h, 1)‖ ≤ √2·√(H+1), as for Softmax), but the
// hidden-layer part δ ⊗ (x, 1) with δ = (W₂ᵀg) ⊙ (1 − h²) grows with the
// output weights W₂, so ‖∇ ln p(y | x, θ)‖ has no finite bound over θ. The
// prior Alpha‖θ‖²/2 has L = a = Alpha (the posterior is not log-concave).
func (m MLP) GradientConstants(records []dataset.Record) GradientConstants {
	return GradientConstants{PriorLipschitz: m.Alpha, PriorConvexity: m.Alpha,
		Reason: "the MLP's hidden-layer gradient (W₂ᵀg ⊙ (1 − h²)) ⊗ (x, 1) grows with the output weights, so it is unbounded in θ"}
}
