package mechanisms

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// sumGradRef is the minibatch gradient as SGLD computed it before models
// could sum a minibatch as matrix products, kept as the reference: one
// GradLogLik per record (written out in full), clipped by the norm of all
// its coordinates, and added to the sum in batch order.
func sumGradRef(m Model, theta []float64, recs []dataset.Record, batch []int, clip float64, sum, grad []float64) (clipped int) {
	clear(sum)
	for _, i := range batch {
		m.GradLogLik(theta, recs[i], grad)
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
				clipped++
			}
		}
		for k, g := range grad {
			sum[k] += g
		}
	}
	return clipped
}

// batchCase is a model with records, a minibatch and a clipping norm.
type batchCase struct {
	name  string
	m     BatchGradModel
	recs  []dataset.Record
	batch []int
	clip  float64
	theta []float64
	rows  int
}

// batchCases covers both models at the digits' shape and at small shapes,
// parameters at scale 0.5 and 3 (confident predictions: residuals near 0),
// minibatches empty, of one record, with repeated records, and longer than
// the workspace's block (so that blocks accumulate), unclipped and with a
// clipping norm that clips some records and not others.
func batchCases(rng *rand.Rand) []batchCase {
	models := []BatchGradModel{
		Softmax{Features: 64, Classes: 10, Alpha: 1}, Softmax{Features: 1, Classes: 2, Alpha: 1}, Softmax{Features: 5, Classes: 3, Alpha: 0.5},
		MLP{Features: 64, Hidden: 32, Classes: 10, Alpha: 1}, MLP{Features: 5, Hidden: 4, Classes: 3, Alpha: 1}, MLP{Features: 1, Hidden: 1, Classes: 2, Alpha: 1},
	}
	var out []batchCase
	for _, m := range models {
		k := m.(Classifier).NumClasses()
		recs := make([]dataset.Record, 80)
		for i := range recs {
			recs[i] = testutil.RandomRecord(rng, m.DataDim(), k, 1)
		}
		for _, scale := range []float64{0.5, 3} {
			theta := testutil.RandomTheta(rng, m.Dim(), scale)
			// Between the two middle gradient norms: clipping there clips
			// about half, and no record's norm is within rounding of it.
			g := make([]float64, m.Dim())
			norms := make([]float64, len(recs))
			for i, r := range recs {
				m.GradLogLik(theta, r, g)
				norms[i] = math.Sqrt(dot(g, g))
			}
			med := medianOf(norms)
			batches := map[string][]int{"empty": {}, "one": {3}, "repeats": {5, 1, 5, 7, 1, 5, 0}, "long": rng.Perm(len(recs))[:70]}
			for bn, b := range batches {
				for _, clip := range []float64{0, med} {
					out = append(out, batchCase{fmt.Sprintf("%s scale=%g %s clip=%.3g", m.Name(), scale, bn, clip), m, recs, b, clip, theta, 16})
				}
			}
		}
	}
	return out
}

// medianOf returns the median of an even number of values: the mean of
// the two middle ones.
func medianOf(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// The summed minibatch gradient of the matrix-product path equals the
// record-by-record reference (sumGradRef) to 1e-12 relative, coordinate by
// coordinate, and clips the same records. Relative is measured against
// Σ_r |g_r,k|, the sum of the magnitudes of the coordinate's terms (the
// scale of the rounding errors of any summation order; a coordinate whose
// terms cancel has no relative precision to keep): both paths evaluate the
// same formulas, and differ only in the order of the sums inside the
// products (the logits' dot products, in four interleaved partial sums in
// gonum's kernels), i.e. by a few ulps of those terms
// (docs/derivations/batch-gradients.md).
func TestSumGradLogLikMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	worst := 0.0
	for _, c := range batchCases(rng) {
		dim := c.m.Dim()
		ref, fast, g, mag := make([]float64, dim), make([]float64, dim), make([]float64, dim), make([]float64, dim)
		wantClipped := sumGradRef(c.m, c.theta, c.recs, c.batch, c.clip, ref, g)
		for _, i := range c.batch {
			c.m.GradLogLik(c.theta, c.recs[i], g)
			f := 1.0
			if nn := math.Sqrt(dot(g, g)); c.clip > 0 && nn > c.clip {
				f = c.clip / nn
			}
			for k := range g {
				mag[k] += math.Abs(g[k]) * f
			}
		}
		for k := range fast {
			fast[k] = math.NaN() // must be overwritten
		}
		gotClipped := c.m.NewGradBatch(c.rows).SumGradLogLik(c.theta, c.recs, c.batch, c.clip, fast)
		if gotClipped != wantClipped {
			t.Errorf("%s: %d gradients clipped, reference %d", c.name, gotClipped, wantClipped)
		}
		bad := 0
		for k := range ref {
			e := math.Abs(fast[k] - ref[k])
			if mag[k] > 0 {
				worst = math.Max(worst, e/mag[k])
			}
			if !(e <= 1e-12*mag[k]) {
				if bad++; bad <= 3 {
					t.Errorf("%s: coordinate %d = %.17g, reference %.17g (terms' magnitude %.3g)", c.name, k, fast[k], ref[k], mag[k])
				}
			}
		}
	}
	t.Logf("largest difference: %.3g of the terms' magnitude", worst)
}

// The summed minibatch gradient against central finite differences of
// Σ_{i∈batch} LogLik (an independent check of the products' layout: a
// transposed block or a missing bias moves a coordinate by O(|g|)). The
// error budget is checkModelGradFD's, per record: h = 1e-5, tolerance
// 1e-6·(|batch| + |g|).
func TestSumGradLogLikFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const h = 1e-5
	for _, m := range []BatchGradModel{Softmax{Features: 6, Classes: 4, Alpha: 1}, MLP{Features: 5, Hidden: 3, Classes: 4, Alpha: 1}} {
		k := m.(Classifier).NumClasses()
		recs := make([]dataset.Record, 9)
		for i := range recs {
			recs[i] = testutil.RandomRecord(rng, m.DataDim(), k, 1)
		}
		batch := []int{2, 0, 8, 2, 5}
		theta := testutil.RandomTheta(rng, m.Dim(), 1)
		sum := make([]float64, m.Dim())
		m.NewGradBatch(2).SumGradLogLik(theta, recs, batch, 0, sum)
		ll := func(th []float64) float64 {
			var s float64
			for _, i := range batch {
				s += m.LogLik(th, recs[i])
			}
			return s
		}
		th := append([]float64(nil), theta...)
		for j := range theta {
			th[j] = theta[j] + h
			fp := ll(th)
			th[j] = theta[j] - h
			fm := ll(th)
			th[j] = theta[j]
			if fd := (fp - fm) / (2 * h); math.Abs(fd-sum[j]) > 1e-6*(float64(len(batch))+math.Abs(sum[j])) {
				t.Errorf("%s: Σ∂LogLik/∂θ[%d] = %.12g, finite difference %.12g", m.Name(), j, sum[j], fd)
			}
		}
	}
}

// hideBatch wraps a classifier so that it offers no batch methods.
type hideBatch struct{ Classifier }

// countCorrectRef is test accuracy as the engine counted it before the
// Scorer: PredictClass record by record.
func countCorrectRef(c Classifier, theta []float64, d *dataset.Dataset) int {
	n := 0
	for _, r := range d.Records {
		if PredictClass(c, theta, r.X) == int(r.Y) {
			n++
		}
	}
	return n
}

// logitScale bounds the magnitude of the terms that make up logit j at x,
// the scale of the rounding errors of any order of its sums: for Softmax
// |b_j| + Σ_i |W_ji·x_i|; for the MLP |b₂ⱼ| + Σ_i |W₂ⱼᵢ|·(1 + s_i) with
// s_i = |b₁ᵢ| + Σ_l |W₁ᵢₗ·x_l| the hidden unit's scale (tanh is
// 1-Lipschitz and bounded by 1).
func logitScale(c Classifier, theta, x []float64, j int) float64 {
	switch m := c.(type) {
	case Softmax:
		s := math.Abs(theta[m.Classes*m.Features+j])
		for i, v := range x {
			s += math.Abs(theta[j*m.Features+i] * v)
		}
		return s
	case MLP:
		b1, w2, b2, _ := m.offsets()
		s := math.Abs(theta[b2+j])
		for i := 0; i < m.Hidden; i++ {
			si := math.Abs(theta[b1+i])
			for l, v := range x {
				si += math.Abs(theta[i*m.Features+l] * v)
			}
			s += math.Abs(theta[w2+j*m.Hidden+i]) * (1 + si)
		}
		return s
	}
	panic("logitScale: unknown classifier")
}

// BatchLogits equals Logits record by record up to the order of the dot
// products' sums (to 1e-12 of logitScale), and a Scorer counts what PredictClass record by record counts
// — through the products, and through Logits for a classifier without
// batch methods — on 1500 records (more than one scoring block) for
// parameters from sharp to vague. Counts could differ only for a record
// whose two best logits agree to the last bits.
func TestScorerMatchesPredictClass(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, c := range []BatchClassifier{Softmax{Features: 64, Classes: 10, Alpha: 1}, MLP{Features: 64, Hidden: 16, Classes: 10, Alpha: 1}, Softmax{Features: 2, Classes: 3, Alpha: 1}} {
		d := &dataset.Dataset{Name: "random"}
		for i := 0; i < 1500; i++ {
			d.Records = append(d.Records, testutil.RandomRecord(rng, c.DataDim(), c.NumClasses(), 1))
		}
		ts, err := NewTestSet(c, d)
		if err != nil {
			t.Fatal(err)
		}
		fast := ts.NewScorer()
		plainTS, _ := NewTestSet(hideBatch{c}, d)
		plain := plainTS.NewScorer()
		for _, scale := range []float64{0.05, 0.5, 3} {
			theta := testutil.RandomTheta(rng, c.Dim(), scale)
			want := countCorrectRef(c, theta, d)
			if got := fast.Correct(theta); got != want {
				t.Errorf("%s scale %g: Scorer counts %d correct, PredictClass %d", c.Name(), scale, got, want)
			}
			if got := plain.Correct(theta); got != want {
				t.Errorf("%s scale %g: Scorer without batch methods counts %d correct, PredictClass %d", c.Name(), scale, got, want)
			}
			if want == 0 || want == d.Len() {
				t.Errorf("%s scale %g: %d of %d correct, a degenerate comparison", c.Name(), scale, want, d.Len())
			}
			k := c.NumClasses()
			f := make([]float64, 5*k)
			x := make([]float64, 5*c.DataDim())
			for r := 0; r < 5; r++ {
				copy(x[r*c.DataDim():], d.Records[r].X)
			}
			c.BatchLogits(theta, x, 5, f, make([]float64, c.BatchLogitsScratch(5)))
			one := make([]float64, k)
			for r := 0; r < 5; r++ {
				c.Logits(theta, d.Records[r].X, one)
				for j := range one {
					if math.Abs(one[j]-f[r*k+j]) > 1e-12*logitScale(c, theta, d.Records[r].X, j) {
						t.Errorf("%s: BatchLogits[%d][%d] = %.17g, Logits %.17g", c.Name(), r, j, f[r*k+j], one[j])
					}
				}
			}
		}
	}
	bad := &dataset.Dataset{Name: "bad", Records: []dataset.Record{{X: []float64{0, 0}, Y: 3}}}
	if _, err := NewTestSet(Softmax{Features: 2, Classes: 3, Alpha: 1}, bad); err == nil || !contains(err.Error(), "not a class index in [0, 3)") {
		t.Errorf("label 3 of 3 classes: error %v", err)
	}
}

// The hot paths allocate nothing per call: a minibatch gradient sum (with
// clipping), a test-set score, and the per-release class probabilities
// and predictions the features and reports use.
func TestBatchPathsAllocFree(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, m := range []BatchGradModel{Softmax{Features: 64, Classes: 10, Alpha: 1}, MLP{Features: 64, Hidden: 32, Classes: 10, Alpha: 1}} {
		c := m.(BatchClassifier)
		d := &dataset.Dataset{Name: "random"}
		for i := 0; i < 300; i++ {
			d.Records = append(d.Records, testutil.RandomRecord(rng, m.DataDim(), c.NumClasses(), 1))
		}
		theta := testutil.RandomTheta(rng, m.Dim(), 0.5)
		gb := m.NewGradBatch(32)
		sum := make([]float64, m.Dim())
		batch := rng.Perm(d.Len())[:40]
		if a := testing.AllocsPerRun(20, func() { gb.SumGradLogLik(theta, d.Records, batch, 1, sum) }); a != 0 {
			t.Errorf("%s: SumGradLogLik allocates %g times per call", m.Name(), a)
		}
		ts, _ := NewTestSet(c, d)
		sc := ts.NewScorer()
		if a := testing.AllocsPerRun(20, func() { sc.Correct(theta) }); a != 0 {
			t.Errorf("%s: Scorer.Correct allocates %g times per call", m.Name(), a)
		}
		x := d.Records[0].X
		if a := testing.AllocsPerRun(20, func() { ClassLogProb(c, theta, x, 1) }); a != 0 {
			t.Errorf("%s: ClassLogProb allocates %g times per call", m.Name(), a)
		}
		if a := testing.AllocsPerRun(20, func() { PredictClass(c, theta, x) }); a != 0 {
			t.Errorf("%s: PredictClass allocates %g times per call", m.Name(), a)
		}
	}
}
