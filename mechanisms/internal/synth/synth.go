// Package synth draws the synthetic datasets and the random covariance of
// the papers' experiments from plain, already validated parameters. It is
// the one implementation behind the public packages mechanisms/synthetic
// and mechanisms/presets (which validate their arguments and name the
// faulty field), and it imports nothing of package mechanisms, so that
// package's own tests draw the same data — the same random streams —
// without an import cycle.
package synth

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// gaussianX draws x ~ N(0, xScale² I_d).
func gaussianX(rng *rand.Rand, d int, xScale float64) []float64 {
	x := make([]float64, d)
	for k := range x {
		x[k] = xScale * rng.NormFloat64()
	}
	return x
}

// LinReg draws n records x ~ N(0, xScale² I_d), y = θ*ᵀx + N(0, 1/beta).
func LinReg(n int, thetaStar []float64, beta, xScale float64, seed uint64) *dataset.Dataset {
	rng := rand.New(rand.NewPCG(seed, 0x5eed11))
	d := &dataset.Dataset{Name: fmt.Sprintf("synthetic-linreg(n=%d, seed=%d)", n, seed), Records: make([]dataset.Record, n)}
	sd := 1 / math.Sqrt(beta)
	for i := range d.Records {
		x := gaussianX(rng, len(thetaStar), xScale)
		d.Records[i] = dataset.Record{X: x, Y: dot(thetaStar, x) + sd*rng.NormFloat64()}
	}
	return d
}

// Logistic draws n records x ~ N(0, xScale² I_d), y ~ Bernoulli(sigmoid(θ*ᵀx)).
func Logistic(n int, thetaStar []float64, xScale float64, seed uint64, sigmoid func(float64) float64) *dataset.Dataset {
	rng := rand.New(rand.NewPCG(seed, 0x5eed12))
	d := &dataset.Dataset{Name: fmt.Sprintf("synthetic-logistic(n=%d, seed=%d)", n, seed), Records: make([]dataset.Record, n)}
	for i := range d.Records {
		x := gaussianX(rng, len(thetaStar), xScale)
		y := 0.0
		if rng.Float64() < sigmoid(dot(thetaStar, x)) {
			y = 1
		}
		d.Records[i] = dataset.Record{X: x, Y: y}
	}
	return d
}

// Banana draws n records x₁ ~ N(phi1, var1), x₂ ~ N(phi2, var2), where
// (phi1, phi2) = g⁻¹(θ) is the unbent parameter of Räisä et al.'s banana
// model (§4.1).
func Banana(n int, phi1, phi2, var1, var2 float64, seed uint64) *dataset.Dataset {
	rng := rand.New(rand.NewPCG(seed, 0x5eed15))
	s1, s2 := math.Sqrt(var1), math.Sqrt(var2)
	d := &dataset.Dataset{Name: fmt.Sprintf("synthetic-banana(n=%d, seed=%d)", n, seed), Records: make([]dataset.Record, n)}
	for k := range d.Records {
		x1 := phi1 + s1*rng.NormFloat64()
		x2 := phi2 + s2*rng.NormFloat64()
		d.Records[k] = dataset.Record{X: []float64{x1, x2}}
	}
	return d
}

// Gauss draws n records x = θ + L·z, z ~ N(0, I_d), with L the lower
// Cholesky factor of the covariance, row-major d×d, d = len(theta).
func Gauss(n int, theta, chol []float64, seed uint64) *dataset.Dataset {
	dim := len(theta)
	rng := rand.New(rand.NewPCG(seed, 0x5eed14))
	d := &dataset.Dataset{Name: fmt.Sprintf("synthetic-gauss(n=%d, seed=%d)", n, seed), Records: make([]dataset.Record, n)}
	z := make([]float64, dim)
	for k := range d.Records {
		for i := range z {
			z[i] = rng.NormFloat64()
		}
		x := make([]float64, dim)
		for i := range x {
			s := theta[i]
			for j := 0; j <= i; j++ {
				s += chol[i*dim+j] * z[j]
			}
			x[i] = s
		}
		d.Records[k] = dataset.Record{X: x}
	}
	return d
}

// Mixture draws n records of Heikkilä et al.'s eq. 25 at θ (two values):
// with probability ½ from N(θ₁, varX), else from N(θ₁ + θ₂, varX).
func Mixture(n int, theta []float64, varX float64, seed uint64) *dataset.Dataset {
	rng := rand.New(rand.NewPCG(seed, 0x5eed13))
	sd := math.Sqrt(varX)
	d := &dataset.Dataset{Name: fmt.Sprintf("synthetic-mixture(n=%d, seed=%d)", n, seed), Records: make([]dataset.Record, n)}
	for i := range d.Records {
		mu := theta[0]
		if rng.Float64() < 0.5 {
			mu += theta[1]
		}
		d.Records[i] = dataset.Record{X: []float64{mu + sd*rng.NormFloat64()}}
	}
	return d
}

// RaisaCovariance draws a random d×d covariance as Räisä et al. §4.1 do
// (after Hoffman et al.): eigenvalues i.i.d. Gamma(shape, scale 1),
// eigenvectors from the QR orthonormalisation of a matrix with i.i.d.
// U[0, 1] entries; Σ = Q·diag(λ)·Qᵀ. It fails when an eigenvalue
// underflows to 0.
func RaisaCovariance(d int, shape float64, seed uint64) ([]float64, error) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed13))
	gam := distuv.Gamma{Alpha: shape, Beta: 1, Src: rng}
	lam := make([]float64, d)
	for i := range lam {
		lam[i] = gam.Rand()
		if !(lam[i] > 0) {
			return nil, fmt.Errorf("seed %d: eigenvalue %d underflowed to %g; choose another seed", seed, i, lam[i])
		}
	}
	u := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			u.Set(i, j, rng.Float64())
		}
	}
	var qr mat.QR
	qr.Factorize(u)
	var q mat.Dense
	qr.QTo(&q)
	cov := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			var s float64
			for k := 0; k < d; k++ {
				s += q.At(i, k) * lam[k] * q.At(j, k)
			}
			cov[i*d+j], cov[j*d+i] = s, s
		}
	}
	return cov, nil
}
