package mechanisms

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// checkModelGradFD compares m.GradLogLik at (θ, r) with central finite
// differences of m.LogLik, coordinate by coordinate, and the same for the
// prior. With step h the central difference errs by h²·|f‴|/6
// (truncation) plus about eps·|f|/h (rounding). For the models here f‴ is
// bounded by a small multiple of the cube of the largest weight or feature
// met along the coordinate (≲ 10³ for the draws below), so at h = 1e-5 the
// truncation is ≲ 2e-8, and with |f| ≲ 10³ the rounding is ≲ 2e-8; tol =
// 1e-6·(1 + |g|) leaves a margin of 50. Any real defect (a missing factor,
// a transposed index, the wrong sign) moves a coordinate by O(|g|), far
// more.
func checkModelGradFD(t *testing.T, m Model, theta []float64, r dataset.Record) {
	t.Helper()
	const h, tol = 1e-5, 1e-6
	dim := m.Dim()
	grad := make([]float64, dim)
	m.GradLogLik(theta, r, grad)
	th := append([]float64(nil), theta...)
	bad := 0
	for i := 0; i < dim; i++ {
		th[i] = theta[i] + h
		fp := m.LogLik(th, r)
		th[i] = theta[i] - h
		fm := m.LogLik(th, r)
		th[i] = theta[i]
		fd := (fp - fm) / (2 * h)
		if math.Abs(fd-grad[i]) > tol*(1+math.Abs(grad[i])) {
			if bad++; bad <= 5 {
				t.Errorf("%s: ∂LogLik/∂θ[%d] = %.12g, finite difference %.12g", m.Name(), i, grad[i], fd)
			}
		}
	}
	m.GradLogPrior(theta, grad)
	for i := 0; i < dim; i++ {
		th[i] = theta[i] + h
		fp := m.LogPrior(th)
		th[i] = theta[i] - h
		fm := m.LogPrior(th)
		th[i] = theta[i]
		if fd := (fp - fm) / (2 * h); math.Abs(fd-grad[i]) > tol*(1+math.Abs(grad[i])) {
			t.Errorf("%s: ∂LogPrior/∂θ[%d] = %.12g, finite difference %.12g", m.Name(), i, grad[i], fd)
		}
	}
}

// randomRecord draws x ~ N(0, s²I) and a uniform label.
func TestSoftmaxGradientFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, m := range []Softmax{{Features: 1, Classes: 2, Alpha: 1}, {Features: 5, Classes: 3, Alpha: 0.5}, {Features: 64, Classes: 10, Alpha: 2}} {
		for rep := 0; rep < 3; rep++ {
			checkModelGradFD(t, m, testutil.RandomTheta(rng, m.Dim(), 1), testutil.RandomRecord(rng, m.Features, m.Classes, 1))
		}
	}
}

// Reference values: mpmath at 50 digits, ln softmax(f)_y =
// f_y − m − ln Σ exp(f_k − m).
func TestLogSoftmaxStability(t *testing.T) {
	cases := []struct {
		f    []float64
		y    int
		want float64
	}{
		{[]float64{40, 0, 0}, 0, -8.4967085105831779546e-18}, // naive f_y − lse gives 0
		{[]float64{800, -700, 5}, 1, -1500},
		{[]float64{800, -700, 5}, 0, 0}, // −(e^{−795} + e^{−1500}) underflows
		{[]float64{800, -700, 5}, 2, -795},
		{[]float64{1e300, -1e300}, 1, -2e300},
		{[]float64{1e300, -1e300}, 0, 0},
		{[]float64{3.5, -1.25, 0.5, 2}, 3, -1.7480850490038046006},
		{[]float64{-745.2, 0, 12}, 0, -757.20000614419352321},
	}
	for _, c := range cases {
		got := logSoftmaxAt(c.f, c.y)
		if math.IsNaN(got) || math.IsInf(got, 0) {
			t.Errorf("logSoftmax(%v)_%d = %g", c.f, c.y, got)
			continue
		}
		if err := math.Abs(got - c.want); err > 1e-15*math.Abs(c.want) && err > 0 {
			t.Errorf("logSoftmax(%v)_%d = %.17g, want %.17g", c.f, c.y, got, c.want)
		}
	}
	// The residual e_y − p: g_y = 1 − p_y to full relative precision
	// (mpmath: 8.4967085105831779185e-18 for f = (40, 0, 0), y = 0).
	g := []float64{40, 0, 0}
	softmaxResidual(g, 0)
	if want := 8.4967085105831779185e-18; math.Abs(g[0]-want) > 1e-15*want {
		t.Errorf("g_y = %.17g, want %.17g", g[0], want)
	}
	if want := -4.2483542552915889592e-18; math.Abs(g[1]-want) > 1e-15*-want {
		t.Errorf("g_1 = %.17g, want %.17g", g[1], want)
	}
	// Huge logits through the model: finite log-likelihood and gradient,
	// and the gradient of a confidently misclassified record tends to
	// (e_y − e_ŷ) ⊗ (x, 1).
	m := Softmax{Features: 2, Classes: 3, Alpha: 1}
	theta := []float64{400, 0, -350, 0, 0, 0, 0, 0, 5} // f = (800, −700, 5) at x = (2, 0)
	r := dataset.Record{X: []float64{2, 0}, Y: 1}
	if got := m.LogLik(theta, r); got != -1500 {
		t.Errorf("LogLik = %.17g, want −1500", got)
	}
	grad := make([]float64, m.Dim())
	m.GradLogLik(theta, r, grad)
	want := []float64{-2, 0, 2, 0, 0, 0, -1, 1, 0}
	for i := range grad {
		if grad[i] != want[i] {
			t.Errorf("grad = %v, want %v", grad, want)
			break
		}
	}
}

func TestSoftmaxPredict(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m := Softmax{Features: 6, Classes: 4, Alpha: 1}
	for rep := 0; rep < 20; rep++ {
		theta := testutil.RandomTheta(rng, m.Dim(), 2)
		r := testutil.RandomRecord(rng, m.Features, m.Classes, 1)
		p := m.Predict(theta, r.X)
		var s float64
		for y, py := range p {
			s += py
			// exp(LogLik) must agree with Predict: two code paths.
			if ll := m.LogLik(theta, dataset.Record{X: r.X, Y: float64(y)}); math.Abs(math.Exp(ll)-py) > 1e-14 {
				t.Errorf("exp(LogLik) = %g, Predict = %g", math.Exp(ll), py)
			}
			if q := m.Prob(theta, r.X, y); math.Abs(q-py) > 1e-15 {
				t.Errorf("Prob = %g, Predict = %g", q, py)
			}
		}
		if math.Abs(s-1) > 1e-14 {
			t.Errorf("probabilities sum to %.17g", s)
		}
		if c := PredictClass(m, theta, r.X); p[c] < p[argmaxOf(p)] {
			t.Errorf("PredictClass = %d is not the most probable", c)
		}
		// Direct evaluation of one logit from the documented layout.
		f := make([]float64, m.Classes)
		m.Logits(theta, r.X, f)
		k := rep % m.Classes
		want := theta[m.Classes*m.Features+k]
		for j, x := range r.X {
			want += theta[k*m.Features+j] * x
		}
		if math.Abs(f[k]-want) > 1e-13*(1+math.Abs(want)) {
			t.Errorf("logit %d = %g, layout says %g", k, f[k], want)
		}
	}
}

// The gradient bound of GradientConstants must hold at every θ, and it is
// approached when p concentrates on one wrong class (so it is not loose).
func TestSoftmaxGradientConstants(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	m := Softmax{Features: 4, Classes: 5, Alpha: 3}
	var recs []dataset.Record
	for i := 0; i < 30; i++ {
		recs = append(recs, testutil.RandomRecord(rng, m.Features, m.Classes, 1))
	}
	k := m.GradientConstants(recs)
	if k.PriorLipschitz != 3 || k.PriorConvexity != 3 || k.LikGradBound <= 0 || k.LikGradDiff < k.LikGradBound {
		t.Fatalf("constants %+v", k)
	}
	ga, gb := make([]float64, m.Dim()), make([]float64, m.Dim())
	var maxNorm, maxDiff float64
	for rep := 0; rep < 2000; rep++ {
		theta := testutil.RandomTheta(rng, m.Dim(), math.Exp(4*rng.Float64()))
		a, b := recs[rng.IntN(len(recs))], recs[rng.IntN(len(recs))]
		m.GradLogLik(theta, a, ga)
		m.GradLogLik(theta, b, gb)
		var na, nd float64
		for i := range ga {
			na += ga[i] * ga[i]
			nd += (ga[i] - gb[i]) * (ga[i] - gb[i])
		}
		maxNorm, maxDiff = math.Max(maxNorm, math.Sqrt(na)), math.Max(maxDiff, math.Sqrt(nd))
	}
	if maxNorm > k.LikGradBound || maxDiff > k.LikGradDiff {
		t.Errorf("observed ‖∇‖ ≤ %g (bound %g), ‖∇a − ∇b‖ ≤ %g (bound %g)", maxNorm, k.LikGradBound, maxDiff, k.LikGradDiff)
	}
	// Worst case: the record of largest norm, its class given −∞ logit and
	// another class +∞: ‖∇‖ = √2‖x̃‖ to rounding.
	var big dataset.Record
	for _, r := range recs {
		if dot(r.X, r.X) > dot(big.X, big.X) {
			big = r
		}
	}
	theta := make([]float64, m.Dim())
	y := int(big.Y)
	other := (y + 1) % m.Classes
	theta[m.Classes*m.Features+other] = 100
	m.GradLogLik(theta, big, ga)
	if n := math.Sqrt(dot(ga, ga)); math.Abs(n-k.LikGradBound) > 1e-12*n {
		t.Errorf("worst-case ‖∇‖ = %.15g, bound %.15g", n, k.LikGradBound)
	}
}

// Gradients must not depend on concurrent use, and must not allocate.
func TestSoftmaxConcurrentAndAllocFree(t *testing.T) {
	testConcurrentAllocFree(t, Softmax{Features: 64, Classes: 10, Alpha: 1})
}

func testConcurrentAllocFree(t *testing.T, m Model) {
	rng := rand.New(rand.NewPCG(7, 8))
	c := m.(Classifier)
	theta := testutil.RandomTheta(rng, m.Dim(), 0.5)
	recs := make([]dataset.Record, 50)
	for i := range recs {
		recs[i] = testutil.RandomRecord(rng, m.DataDim(), c.NumClasses(), 1)
	}
	want := make([][]float64, len(recs))
	for i, r := range recs {
		want[i] = make([]float64, m.Dim())
		m.GradLogLik(theta, r, want[i])
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			g := make([]float64, m.Dim())
			for rep := 0; rep < 20; rep++ {
				i := (w*7 + rep*13) % len(recs)
				m.GradLogLik(theta, recs[i], g)
				for j := range g {
					if g[j] != want[i][j] {
						errs <- "concurrent GradLogLik differs from the serial one"
						return
					}
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	g := make([]float64, m.Dim())
	if a := testing.AllocsPerRun(50, func() { m.GradLogLik(theta, recs[0], g) }); a != 0 {
		t.Errorf("GradLogLik allocates %g times per call", a)
	}
	if a := testing.AllocsPerRun(50, func() { m.LogLik(theta, recs[0]) }); a != 0 {
		t.Errorf("LogLik allocates %g times per call", a)
	}
}

func TestSoftmaxCheck(t *testing.T) {
	for _, c := range []struct {
		m    Softmax
		want string
	}{
		{Softmax{Features: 0, Classes: 2, Alpha: 1}, "features: must be ≥ 1, got 0"},
		{Softmax{Features: 3, Classes: 1, Alpha: 1}, "classes: must be ≥ 2, got 1"},
		{Softmax{Features: 3, Classes: 2, Alpha: 0}, "alpha: must be finite and > 0, got 0"},
		{Softmax{Features: 3, Classes: 2, Alpha: math.Inf(1)}, "alpha: must be finite and > 0, got +Inf"},
	} {
		if err := c.m.Check(); err == nil || yamlText(err, "") != c.want {
			t.Errorf("%+v: error %v, want %q", c.m, err, c.want)
		}
	}
	m := Softmax{Features: 2, Classes: 3, Alpha: 1}
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	d := &dataset.Dataset{Name: "t", Records: []dataset.Record{{X: []float64{1, 2}, Y: 2}, {X: []float64{1, 2}, Y: 3}}}
	if err := m.CheckData(d); err == nil || err.Error() != `dataset "t": record 1 label must be a class index in [0, 3), got 3` {
		t.Errorf("CheckData: %v", err)
	}
	d.Records[1].Y = 0.5
	// Chain.Check runs the model's data check.
	c := &Chain{Model: m, Sampler: &SGLD{Step: StepSchedule{Eta: 1e-3}, Batch: 1, Scheme: Cyclic, Epochs: 1}}
	if err := c.Check(d); err == nil || err.Error() != `dataset "t": record 1 label must be a class index in [0, 3), got 0.5` {
		t.Errorf("Chain.Check: %v", err)
	}
}
