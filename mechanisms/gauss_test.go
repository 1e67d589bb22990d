package mechanisms

import (
	"fmt"
	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"gonum.org/v1/gonum/mat"
)

// A correlated 2-D record covariance with eigenvalues 1.4 and 0.1, used by
// the tests of this file and of the samplers.
var testCov2 = []float64{1, 0.6, 0.6, 0.5}

func mustGauss(t testing.TB, mu0 []float64, sd float64, cov []float64) *Gauss {
	t.Helper()
	g, err := NewGauss(mu0, sd, cov)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// refLogNormal is ln N(x; θ, Σ) by another route than Gauss.LogLik (which
// uses the precision matrix): the Cholesky factor Σ = LLᵀ, z = L⁻¹(x−θ),
// −½‖z‖² − Σᵢ ln Lᵢᵢ − (d/2) ln 2π.
func refLogNormal(t *testing.T, x, theta, cov []float64) float64 {
	t.Helper()
	d := len(x)
	var ch mat.Cholesky
	if !ch.Factorize(mat.NewSymDense(d, append([]float64(nil), cov...))) {
		t.Fatal("covariance not positive definite")
	}
	var l mat.TriDense
	ch.LTo(&l)
	e := make([]float64, d)
	for i := range e {
		e[i] = x[i] - theta[i]
	}
	var z mat.VecDense
	if err := z.SolveVec(&l, mat.NewVecDense(d, e)); err != nil {
		t.Fatal(err)
	}
	s := -0.5*mat.Dot(&z, &z) - 0.5*float64(d)*math.Log(2*math.Pi)
	for i := 0; i < d; i++ {
		s -= math.Log(l.At(i, i))
	}
	return s
}

// LogLik against refLogNormal, the gradients against central finite differences, and
// LogLikRatio against the difference of log-likelihoods.
func TestGaussDensities(t *testing.T) {
	cov, err := raisaCovariance(4, 0.5, 3)
	if err != nil {
		t.Fatal(err)
	}
	// Shift the spectrum so finite differences are well conditioned.
	for i := 0; i < 4; i++ {
		cov[i*4+i] += 0.3
	}
	g := mustGauss(t, []float64{0.5, -1, 2, 0}, 3, cov)
	rng := rand.New(rand.NewPCG(1, 2))
	grad := make([]float64, 4)
	for trial := 0; trial < 50; trial++ {
		theta := make([]float64, 4)
		thetaNew := make([]float64, 4)
		x := make([]float64, 4)
		for i := range theta {
			theta[i] = 2 * rng.NormFloat64()
			thetaNew[i] = theta[i] + 0.3*rng.NormFloat64()
			x[i] = 2 * rng.NormFloat64()
		}
		r := dataset.Record{X: x}
		ref := refLogNormal(t, x, theta, cov)
		if got := g.LogLik(theta, r); math.Abs(got-ref) > 1e-10*math.Max(1, math.Abs(ref)) {
			t.Fatalf("LogLik = %.15g, Cholesky route %.15g", got, ref)
		}
		refNew := refLogNormal(t, x, thetaNew, cov)
		if got, want := g.LogLikRatio(theta, thetaNew, r), refNew-ref; math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Fatalf("LogLikRatio = %.15g, difference of log-densities %.15g", got, want)
		}
		g.GradLogLik(theta, r, grad)
		checkGradFD(t, "gauss loglik", func(th []float64) float64 { return g.LogLik(th, r) }, theta, grad)
		g.GradLogPrior(theta, grad)
		checkGradFD(t, "gauss prior", g.LogPrior, theta, grad)
	}
}

// checkGradFD compares grad with central differences of f at theta. With
// step h the truncation error is O(h²f‴) and the rounding error
// O(ε|f|/h); h = 1e-5 keeps both below 1e-6 for the O(1)–O(100) values
// used here.
func checkGradFD(t *testing.T, what string, f func([]float64) float64, theta, grad []float64) {
	t.Helper()
	const h = 1e-5
	th := append([]float64(nil), theta...)
	for i := range th {
		th[i] = theta[i] + h
		fp := f(th)
		th[i] = theta[i] - h
		fm := f(th)
		th[i] = theta[i]
		fd := (fp - fm) / (2 * h)
		if math.Abs(fd-grad[i]) > 1e-6*math.Max(1, math.Abs(fd)) {
			t.Fatalf("%s: ∂/∂θ%d = %.10g, finite difference %.10g at θ = %v", what, i, grad[i], fd, theta)
		}
	}
}

// Posterior against a different route: sequential Bayesian (Kalman)
// updates, one record at a time, m ← m + K(x − m), S ← (I − K)S with
// K = S(S + Σ)⁻¹, starting from the prior.
func TestGaussPosteriorSequential(t *testing.T) {
	cov, _ := raisaCovariance(3, 0.5, 11)
	g := mustGauss(t, []float64{1, -2, 0.5}, 0.7, cov)
	d, err := syntheticGauss(25, []float64{0.3, 3, -1}, cov, 5)
	if err != nil {
		t.Fatal(err)
	}
	mean, pcov, err := g.Posterior(d)
	if err != nil {
		t.Fatal(err)
	}
	m := mat.NewVecDense(3, []float64{1, -2, 0.5})
	S := mat.NewDense(3, 3, nil)
	for i := 0; i < 3; i++ {
		S.Set(i, i, 0.49)
	}
	sigma := mat.NewDense(3, 3, cov)
	for _, r := range d.Records {
		var sum, inv, K, IK, S2 mat.Dense
		sum.Add(S, sigma)
		if err := inv.Inverse(&sum); err != nil {
			t.Fatal(err)
		}
		K.Mul(S, &inv)
		var innov, step mat.VecDense
		innov.SubVec(mat.NewVecDense(3, r.X), m)
		step.MulVec(&K, &innov)
		m.AddVec(m, &step)
		IK.Sub(eye(3), &K)
		S2.Mul(&IK, S)
		S = &S2
	}
	for i := 0; i < 3; i++ {
		if math.Abs(mean[i]-m.AtVec(i)) > 1e-9*math.Max(1, math.Abs(m.AtVec(i))) {
			t.Errorf("posterior mean[%d] = %.12g, sequential %.12g", i, mean[i], m.AtVec(i))
		}
		for j := 0; j < 3; j++ {
			if w := 0.5 * (S.At(i, j) + S.At(j, i)); math.Abs(pcov[3*i+j]-w) > 1e-9*math.Sqrt(S.At(i, i)*S.At(j, j)) {
				t.Errorf("posterior cov[%d][%d] = %.12g, sequential %.12g", i, j, pcov[3*i+j], w)
			}
		}
	}
}

func eye(n int) *mat.Dense {
	e := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		e.Set(i, i, 1)
	}
	return e
}

// RaisaCovariance: the same seed gives the same matrix; the matrix is
// symmetric positive definite; its eigenvalues are Gamma(shape, 1) draws:
// over 500 seeds × d = 10, the mean eigenvalue is within 4.5 SE of the
// shape (SE = sqrt(shape/5000), the Gamma variance being shape·scale²), and a
// wrong scale (mean 2·shape) would be 50 SE off (asserted ≥ 20).
func TestRaisaCovariance(t *testing.T) {
	a, _ := raisaCovariance(10, 0.5, 7)
	b, _ := raisaCovariance(10, 0.5, 7)
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("same seed, different matrices")
		}
		if a[i] != a[(i%10)*10+i/10] {
			t.Fatal("not symmetric")
		}
	}
	const seeds, d, shape = 500, 10, 0.5
	var sum float64
	for s := uint64(0); s < seeds; s++ {
		c, err := raisaCovariance(d, shape, s)
		if err != nil {
			t.Fatal(err)
		}
		var es mat.EigenSym
		if !es.Factorize(mat.NewSymDense(d, c), false) {
			t.Fatal("eigendecomposition failed")
		}
		for _, v := range es.Values(nil) {
			if !(v > 0) {
				t.Fatalf("seed %d: eigenvalue %g", s, v)
			}
			sum += v
		}
		if _, err := NewGauss(nil, 1, c); err != nil {
			t.Fatalf("seed %d: %v", s, err)
		}
	}
	n := float64(seeds * d)
	se := math.Sqrt(shape / n)
	checkMoment(t, "mean eigenvalue", sum/n, shape, se)
	if shape/se < 20 {
		t.Errorf("test cannot tell shape %g from twice it", shape)
	}
}

// SyntheticGauss draws from N(θ, Σ): sample means and covariances within
// 4.5 delta-method SEs.
func TestSyntheticGauss(t *testing.T) {
	theta := []float64{1, -2}
	d, err := syntheticGauss(40000, theta, testCov2, 9)
	if err != nil {
		t.Fatal(err)
	}
	xs := [2][]float64{make([]float64, d.Len()), make([]float64, d.Len())}
	for k, r := range d.Records {
		xs[0][k], xs[1][k] = r.X[0], r.X[1]
	}
	for i := 0; i < 2; i++ {
		m, v, sem, sev := testutil.SampleMoments(xs[i])
		checkMoment(t, fmt.Sprintf("x[%d] mean", i), m, theta[i], sem)
		checkMoment(t, fmt.Sprintf("x[%d] var", i), v, testCov2[3*i], sev)
	}
	checkCovariance(t, "x cov", xs[0], xs[1], testCov2[1])
}

// checkCovariance compares the sample covariance of (a, b) with want,
// with the SE of the mean of the centred products.
func checkCovariance(t *testing.T, what string, a, b []float64, want float64) {
	t.Helper()
	ma, _, _, _ := testutil.SampleMoments(a)
	mb, _, _, _ := testutil.SampleMoments(b)
	prod := make([]float64, len(a))
	for k := range prod {
		prod[k] = (a[k] - ma) * (b[k] - mb)
	}
	c, _, se, _ := testutil.SampleMoments(prod)
	checkMoment(t, what, c, want, se)
}

func TestGaussErrors(t *testing.T) {
	bad := []struct {
		mu0  []float64
		sd   float64
		cov  []float64
		want string
	}{
		{nil, 1, []float64{1, 2, 3}, "cov: must hold d×d"},
		{nil, 0, []float64{1}, "prior_sd"},
		{nil, math.Inf(1), []float64{1}, "prior_sd"},
		{[]float64{1, 2}, 1, []float64{1}, "prior_mean: must have 1"},
		{[]float64{math.NaN()}, 1, []float64{1}, "prior_mean[0]"},
		{nil, 1, []float64{1, 0.5, 0.4, 1}, "cov: must be symmetric"},
		{nil, 1, []float64{1, 2, 2, 1}, "cov: must be positive definite"},
		{nil, 1, []float64{math.NaN()}, "cov[0][0]"},
	}
	for _, b := range bad {
		_, err := NewGauss(b.mu0, b.sd, b.cov)
		if err == nil || !contains(yamlText(err, ""), b.want) {
			t.Errorf("NewGauss(%v, %g, %v): error %v, want %q", b.mu0, b.sd, b.cov, err, b.want)
		}
	}
}
