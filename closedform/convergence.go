package closedform

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// TVBound is a certified upper bound on the total variation distance
// between the law of a chain's state and its target.
type TVBound struct {
	// Value is the bound, in [0, 1].
	Value float64
	// Method names how it was obtained, for a guarantee's note.
	Method string
}

// LinearLangevin is a Langevin-type chain on a Gaussian target
// π = N(m, S) whose drift is exactly the target's score,
//
//	θ_{k+1} = θ_k + h·S⁻¹(m − θ_k) + sqrt(σ²)·ξ_{k+1},  ξ ~ N(0, I),
//
// started from θ₀ ~ N(m₀, c₀ I) (c₀ = 0: a fixed point). ULA (Bertazzi et
// al. eq. 12) on a conjugate Gaussian model is this chain with h = γ and
// σ² = 2γ; full-batch SGLD (Welling & Teh 2011; Heller & Fetaya eq. 3 with
// b = n) with h = η/2 and σ² = η. The linear-regression and Gaussian-mean
// models have ∇ ln π(θ) = S⁻¹(m − θ) exactly, with (m, S) their posterior.
//
// In the eigenbasis S = U diag(s_j) Uᵀ, with λ_j = 1/s_j and ρ_j = 1 − hλ_j,
// the law after k steps is Gaussian with independent coordinates (the noise
// and the start are isotropic):
//
//	mean_j = ρ_j^k (U ᵀ(m₀ − m))_j,  var_j = ρ_j^{2k} c₀ + σ²(1 − ρ_j^{2k})/(1 − ρ_j²).
type LinearLangevin struct {
	// Step is h > 0, the factor of the score in one step.
	Step float64
	// NoiseVar is σ² > 0, the variance of each coordinate's noise per step.
	NoiseVar float64
	// Mean and Cov are the target's m and S (row-major d×d).
	Mean, Cov []float64
	// InitMean is m₀ (zeros when empty); InitVar is c₀ ≥ 0.
	InitMean []float64
	InitVar  float64
}

// laggedCoord is one eigen-coordinate of the chain's law and the target.
type laggedCoord struct {
	mean, variance, lambda float64
	// x is λ·var − 1, evaluated without cancellation.
	x float64
}

func (l LinearLangevin) check() (int, error) {
	d := len(l.Mean)
	if d < 1 || len(l.Cov) != d*d {
		return 0, fmt.Errorf("cov: must hold d×d = %d values for a mean of dimension %d, got %d", d*d, d, len(l.Cov))
	}
	if len(l.InitMean) != 0 && len(l.InitMean) != d {
		return 0, fmt.Errorf("init: must have %d values, got %d", d, len(l.InitMean))
	}
	if !(l.Step > 0) || math.IsInf(l.Step, 1) {
		return 0, fmt.Errorf("step: must be finite and > 0, got %g", l.Step)
	}
	if !(l.NoiseVar > 0) || math.IsInf(l.NoiseVar, 1) {
		return 0, fmt.Errorf("noise variance: must be finite and > 0, got %g", l.NoiseVar)
	}
	if !(l.InitVar >= 0) || math.IsInf(l.InitVar, 1) {
		return 0, fmt.Errorf("init variance: must be finite and ≥ 0, got %g", l.InitVar)
	}
	return d, nil
}

// coords returns the law after k steps coordinate by coordinate.
func (l LinearLangevin) coords(k int) ([]laggedCoord, error) {
	d, err := l.check()
	if err != nil {
		return nil, err
	}
	if k < 0 {
		return nil, fmt.Errorf("iterations: must be ≥ 0, got %d", k)
	}
	sym := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			sym.SetSym(i, j, 0.5*(l.Cov[i*d+j]+l.Cov[j*d+i]))
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, true) {
		return nil, fmt.Errorf("cov: eigendecomposition failed")
	}
	vals := eig.Values(nil)
	var u mat.Dense
	eig.VectorsTo(&u)
	diff := make([]float64, d)
	for i := range diff {
		m0 := 0.0
		if len(l.InitMean) > 0 {
			m0 = l.InitMean[i]
		}
		diff[i] = m0 - l.Mean[i]
	}
	out := make([]laggedCoord, d)
	K := float64(k)
	for j := 0; j < d; j++ {
		if !(vals[j] > 0) {
			return nil, fmt.Errorf("cov: must be positive definite (eigenvalue %g)", vals[j])
		}
		lam := 1 / vals[j]
		var m0 float64
		for i := 0; i < d; i++ {
			m0 += u.At(i, j) * diff[i]
		}
		hl := l.Step * lam
		rho := 1 - hl
		c := laggedCoord{lambda: lam}
		// σ²/(h(2 − hλ)) is the stationary variance; λ times it, minus 1, is
		// (σ² − 2h + h²λ)/(h(2 − hλ)).
		switch {
		case rho == 0:
			c.mean = 0
			if k == 0 {
				c.mean = m0
			}
		default:
			lr := math.Log(math.Abs(rho))
			p := math.Exp(K * lr)
			if rho < 0 && k%2 == 1 {
				p = -p
			}
			c.mean = p * m0
		}
		var r2k, oneMr2k float64 // ρ^{2k}, 1 − ρ^{2k}
		if rho == 0 {
			r2k, oneMr2k = 0, 1
			if k == 0 {
				r2k, oneMr2k = 1, 0
			}
		} else {
			lr := math.Log(math.Abs(rho))
			r2k, oneMr2k = math.Exp(2*K*lr), -math.Expm1(2*K*lr)
		}
		oneMr2 := hl * (2 - hl) // 1 − ρ²
		if oneMr2 == 0 {
			c.variance = l.InitVar + K*l.NoiseVar
			c.x = lam*c.variance - 1
		} else {
			stat := l.NoiseVar / oneMr2 // σ²/(1 − ρ²), may be < 0 when |ρ| > 1
			c.variance = r2k*l.InitVar + stat*oneMr2k
			statX := (l.NoiseVar - 2*l.Step + l.Step*hl) / (l.Step * (2 - hl)) // λ·stat − 1
			c.x = r2k*(lam*l.InitVar-(statX+1)) + statX
		}
		if !(c.variance > 0) {
			return nil, fmt.Errorf("the chain's law is degenerate after %d steps (variance %g)", k, c.variance)
		}
		out[j] = c
	}
	return out, nil
}

// Law returns the mean and covariance of the chain after k steps, in the
// original coordinates (for tests and reports).
func (l LinearLangevin) Law(k int) (mean, cov []float64, err error) {
	cs, err := l.coords(k)
	if err != nil {
		return nil, nil, err
	}
	d := len(l.Mean)
	sym := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			sym.SetSym(i, j, 0.5*(l.Cov[i*d+j]+l.Cov[j*d+i]))
		}
	}
	var eig mat.EigenSym
	eig.Factorize(sym, true)
	var u mat.Dense
	eig.VectorsTo(&u)
	mean = make([]float64, d)
	cov = make([]float64, d*d)
	for i := 0; i < d; i++ {
		mean[i] = l.Mean[i]
		for j := 0; j < d; j++ {
			mean[i] += u.At(i, j) * cs[j].mean
			for q := 0; q < d; q++ {
				cov[i*d+q] += u.At(i, j) * cs[j].variance * u.At(q, j)
			}
		}
	}
	return mean, cov, nil
}

// TVToTarget returns a certified upper bound on ‖law(θ_k) − N(m, S)‖_TV.
//
// In one dimension it is the exact distance between the two Gaussians
// plus its numerical error (HockeyStickGaussian1D at ε = 0). In d
// dimensions both laws are products over the eigen-coordinates of S, and
// the bound is the smallest of (i) the sum of the exact one-dimensional
// distances (TV of product measures is subadditive: ‖⊗P_j − ⊗Q_j‖_TV ≤
// Σ_j ‖P_j − Q_j‖_TV) and (ii) TVFromKL of the closed-form Gaussian
// Kullback–Leibler divergence Σ_j ½[λ_j var_j − 1 − ln(λ_j var_j) + λ_j mean_j²]
// (Pinsker or Bretagnolle–Huber). The eigendecomposition is gonum's
// float64 one (backward error of order 1e-15·‖S‖).
func (l LinearLangevin) TVToTarget(k int) (TVBound, error) {
	cs, err := l.coords(k)
	if err != nil {
		return TVBound{}, err
	}
	var sum, kl float64
	for _, c := range cs {
		if math.IsInf(c.variance, 0) || math.IsInf(c.mean, 0) || math.IsNaN(c.mean) {
			return TVBound{Value: 1, Method: "the chain's law leaves the float64 range (an unstable step): no bound below 1"}, nil
		}
		v, e, err := HockeyStickGaussian1D(0, c.mean, math.Sqrt(c.variance), 1/math.Sqrt(c.lambda))
		if err != nil {
			return TVBound{}, err
		}
		sum += v + e
		kl += 0.5 * (xMinusLog1p(c.x) + c.lambda*c.mean*c.mean)
	}
	if len(cs) == 1 {
		return TVBound{Value: math.Min(1, sum), Method: "exact 1-D Gaussian TV (with its numerical error bound)"}, nil
	}
	pk := TVFromKL(kl)
	if sum <= pk {
		return TVBound{Value: math.Min(1, sum), Method: "sum of exact 1-D TVs over the eigen-coordinates (subadditivity over product measures)"}, nil
	}
	return TVBound{Value: pk, Method: "closed-form Gaussian KL with Pinsker / Bretagnolle–Huber"}, nil
}
