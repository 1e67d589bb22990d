package mechanisms

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

func TestMLPGradientFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, m := range []MLP{
		{Features: 1, Hidden: 1, Classes: 2, Alpha: 1},
		{Features: 3, Hidden: 4, Classes: 3, Alpha: 0.5},
		{Features: 64, Hidden: 16, Classes: 10, Alpha: 2},
	} {
		for rep := 0; rep < 3; rep++ {
			// Weights of scale 0.5 keep most hidden units out of
			// saturation, so that every coordinate is exercised.
			checkModelGradFD(t, m, testutil.RandomTheta(rng, m.Dim(), 0.5), testutil.RandomRecord(rng, m.Features, m.Classes, 1))
		}
	}
}

// The documented layout of θ, evaluated by hand for a 2-2-2 network.
func TestMLPLayout(t *testing.T) {
	m := MLP{Features: 2, Hidden: 2, Classes: 2, Alpha: 1}
	// W₁ = [[1, 2], [3, 4]], b₁ = (0.5, −0.5), W₂ = [[1, −1], [2, 0.5]], b₂ = (0.1, −0.2).
	theta := []float64{1, 2, 3, 4, 0.5, -0.5, 1, -1, 2, 0.5, 0.1, -0.2}
	if m.Dim() != len(theta) {
		t.Fatalf("Dim = %d", m.Dim())
	}
	x := []float64{0.1, -0.2}
	h0, h1 := math.Tanh(1*0.1+2*-0.2+0.5), math.Tanh(3*0.1+4*-0.2-0.5)
	want := []float64{0.1 + h0 - h1, -0.2 + 2*h0 + 0.5*h1}
	f := make([]float64, 2)
	m.Logits(theta, x, f)
	for k := range f {
		if math.Abs(f[k]-want[k]) > 1e-15 {
			t.Errorf("f = %v, want %v", f, want)
		}
	}
	// Jacobian against finite differences in x (step 1e-6: the logits
	// are smooth with second derivatives ≲ 50 here, so truncation ≲ 1e-10).
	jac := make([]float64, 4)
	m.LogitsJacobian(theta, x, f, jac)
	for j := 0; j < 2; j++ {
		xp, xm := append([]float64(nil), x...), append([]float64(nil), x...)
		xp[j] += 1e-6
		xm[j] -= 1e-6
		fp, fm := make([]float64, 2), make([]float64, 2)
		m.Logits(theta, xp, fp)
		m.Logits(theta, xm, fm)
		for k := 0; k < 2; k++ {
			if fd := (fp[k] - fm[k]) / 2e-6; math.Abs(fd-jac[k*2+j]) > 1e-8 {
				t.Errorf("∂f_%d/∂x_%d = %g, finite difference %g", k, j, jac[k*2+j], fd)
			}
		}
	}
}

func TestLogitsJacobianFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, c := range []Classifier{Softmax{Features: 7, Classes: 4, Alpha: 1}, MLP{Features: 7, Hidden: 5, Classes: 4, Alpha: 1}} {
		theta := testutil.RandomTheta(rng, c.Dim(), 0.7)
		x := testutil.RandomRecord(rng, c.DataDim(), c.NumClasses(), 1).X
		k, d := c.NumClasses(), c.DataDim()
		f, jac := make([]float64, k), make([]float64, k*d)
		c.LogitsJacobian(theta, x, f, jac)
		f0 := make([]float64, k)
		c.Logits(theta, x, f0)
		for i := range f {
			if f[i] != f0[i] {
				t.Errorf("%s: LogitsJacobian's logits differ from Logits", c.Name())
			}
		}
		// Step 1e-5 with second derivatives ≲ 10: error ≲ 1e-9.
		for j := 0; j < d; j++ {
			xp, xm := append([]float64(nil), x...), append([]float64(nil), x...)
			xp[j] += 1e-5
			xm[j] -= 1e-5
			fp, fm := make([]float64, k), make([]float64, k)
			c.Logits(theta, xp, fp)
			c.Logits(theta, xm, fm)
			for i := 0; i < k; i++ {
				if fd := (fp[i] - fm[i]) / 2e-5; math.Abs(fd-jac[i*d+j]) > 1e-7 {
					t.Errorf("%s: ∂f_%d/∂x_%d = %g, finite difference %g", c.Name(), i, j, jac[i*d+j], fd)
				}
			}
		}
	}
}

// Reference values: mpmath at 50 digits, tanh(a) and sech²(a).
func TestTanhDeriv(t *testing.T) {
	cases := []struct{ a, h, d float64 }{
		{1e-10, 1.0e-10, 0.99999999999999999999},
		{1e-3, 0.00099999966666679999995, 0.99999900000066666629},
		{0.5, 0.4621171572600097585, 0.78644773296592741015},
		{3, 0.99505475368673045133, 0.0098660371654401912732},
		{19.5, 0.9999999999999999769, 4.6192896692063142878e-17},
		{30, 1, 3.5026043050786081354e-26},
		{200, 1, 7.6606783868560227801e-174},
		{-0.7, -0.60436777711716349631, 0.63473958998245858737},
		{-40, -1, 7.2194055513816606892e-35},
	}
	for _, c := range cases {
		h, d := tanhDeriv(c.a)
		if math.Abs(h-c.h) > 2e-16*math.Abs(c.h) {
			t.Errorf("tanh(%g) = %.17g, want %.17g", c.a, h, c.h)
		}
		if math.Abs(d-c.d) > 1e-15*c.d {
			t.Errorf("sech²(%g) = %.17g, want %.17g", c.a, d, c.d)
		}
	}
}

func TestMLPPredictAndStability(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	m := MLP{Features: 5, Hidden: 6, Classes: 3, Alpha: 1}
	for rep := 0; rep < 20; rep++ {
		theta := testutil.RandomTheta(rng, m.Dim(), 1)
		x := testutil.RandomRecord(rng, m.Features, m.Classes, 1).X
		p := m.Predict(theta, x)
		var s float64
		for y, py := range p {
			s += py
			if ll := m.LogLik(theta, dataset.Record{X: x, Y: float64(y)}); math.Abs(math.Exp(ll)-py) > 1e-14 {
				t.Errorf("exp(LogLik) = %g, Predict = %g", math.Exp(ll), py)
			}
		}
		if math.Abs(s-1) > 1e-14 {
			t.Errorf("probabilities sum to %.17g", s)
		}
	}
	// Enormous output weights: logits of order 1e6, log-likelihood and
	// gradient finite; tanh saturation gives exact ±1 units.
	theta := testutil.RandomTheta(rng, m.Dim(), 1e6)
	r := dataset.Record{X: []float64{1, -1, 2, 0, 1}, Y: 1}
	ll := m.LogLik(theta, r)
	g := make([]float64, m.Dim())
	m.GradLogLik(theta, r, g)
	if math.IsNaN(ll) || math.IsInf(ll, 0) || !finite(g) {
		t.Errorf("LogLik = %g, gradient finite: %v", ll, finite(g))
	}
}

func TestMLPConcurrentAndAllocFree(t *testing.T) {
	testConcurrentAllocFree(t, MLP{Features: 64, Hidden: 32, Classes: 10, Alpha: 1})
}

func TestMLPCheck(t *testing.T) {
	for _, c := range []struct {
		m    MLP
		want string
	}{
		{MLP{Features: 0, Hidden: 2, Classes: 2, Alpha: 1}, "features: must be ≥ 1, got 0"},
		{MLP{Features: 2, Hidden: 0, Classes: 2, Alpha: 1}, "hidden: must be ≥ 1, got 0"},
		{MLP{Features: 2, Hidden: 2, Classes: 1, Alpha: 1}, "classes: must be ≥ 2, got 1"},
		{MLP{Features: 2, Hidden: 2, Classes: 2, Alpha: -1}, "alpha: must be finite and > 0, got -1"},
		{MLP{Features: 1 << 20, Hidden: 1 << 10, Classes: 2, Alpha: 1}, "hidden × (features + classes): must be ≤ 2^24 parameters, got 1024 × (1048576 + 2)"},
	} {
		if err := c.m.Check(); err == nil || yamlText(err, "") != c.want {
			t.Errorf("%+v: error %v, want %q", c.m, err, c.want)
		}
	}
	m := MLP{Features: 2, Hidden: 3, Classes: 2, Alpha: 1}
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	if k := m.GradientConstants(nil); k.LikGradBound != 0 || k.Reason == "" || k.PriorLipschitz != 1 {
		t.Errorf("constants %+v", k)
	}
}
