package closedform

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Bertazzi et al. §3.2: a Monte Carlo estimator released with noise,
// A(D) = (1/N)Σ_{n} f(X_n) + L (their eq. 5), and its guarantees by their
// Props. 3.7 and 3.10. For a linear f(θ) = wᵀθ of a LinearLangevin chain
// the ergodic average is Gaussian with the mean and variance below, so the
// constants of Assumptions 3.6, 3.8 and 3.9 are computed exactly for the
// audited pair rather than assumed.

// Prop37Source and Prop310Source cite the estimator guarantees.
const (
	Prop37Source  = "Bertazzi et al. 2025, Prop. 3.7 / A.6 (Monte Carlo estimator with noise)"
	Prop310Source = "Bertazzi et al. 2025, Prop. 3.10 (Monte Carlo estimator with noise, via Assumptions 3.8 and 3.9)"
)

// ErgodicAverage returns the mean and variance of (1/N)Σ_{k=from}^{to} wᵀθ_k,
// N = to − from + 1, for the chain l (θ_k the state after k steps).
//
// In the eigenbasis of S each coordinate is an AR(1) process
// Y_k = ρY_{k−1} + σξ_k about the target's mean, independent across
// coordinates, with Var Y_k = v_k (LinearLangevin) and
// Cov(Y_k, Y_l) = ρ^{l−k}v_k for l ≥ k. So with a = Uᵀw,
//
//	mean = wᵀm + (1/N)Σ_j a_j m0_j Σ_k ρ_j^k,
//	Var  = (1/N²)Σ_j a_j² Σ_k v_{j,k}(1 + 2G_{j,k}),  G_k = Σ_{l=k+1}^{to} ρ^{l−k} = ρ(1 + G_{k+1}),
//
// with m0 = Uᵀ(θ₀'s mean − m).
func (l LinearLangevin) ErgodicAverage(w []float64, from, to int) (mean, variance float64, err error) {
	d, err := l.check()
	if err != nil {
		return 0, 0, err
	}
	if len(w) != d {
		return 0, 0, fmt.Errorf("f: must have %d weights (the model's dimension), got %d", d, len(w))
	}
	if from < 1 || to < from {
		return 0, 0, fmt.Errorf("window: must satisfy 1 ≤ from ≤ to, got [%d, %d]", from, to)
	}
	sym := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			sym.SetSym(i, j, 0.5*(l.Cov[i*d+j]+l.Cov[j*d+i]))
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, true) {
		return 0, 0, fmt.Errorf("cov: eigendecomposition failed")
	}
	vals := eig.Values(nil)
	var u mat.Dense
	eig.VectorsTo(&u)
	n := float64(to - from + 1)
	for i := 0; i < d; i++ {
		mean += w[i] * l.Mean[i]
	}
	for j := 0; j < d; j++ {
		if !(vals[j] > 0) {
			return 0, 0, fmt.Errorf("cov: must be positive definite (eigenvalue %g)", vals[j])
		}
		var a, m0 float64
		for i := 0; i < d; i++ {
			a += u.At(i, j) * w[i]
			init := 0.0
			if len(l.InitMean) > 0 {
				init = l.InitMean[i]
			}
			m0 += u.At(i, j) * (init - l.Mean[i])
		}
		rho := 1 - l.Step/vals[j]
		if !(math.Abs(rho) < 1) {
			return 0, 0, fmt.Errorf("step: h·λ = %g is outside (0, 2): the chain diverges", l.Step/vals[j])
		}
		// Σ_k ρ^k, v_k and the covariance sums, from the last iteration back.
		var sumRho, sumVar, g float64
		for k := to; k >= from; k-- {
			rk := math.Pow(rho, float64(k))
			r2k := rk * rk
			vk := r2k*l.InitVar + l.NoiseVar*(1-r2k)/(1-rho*rho)
			sumRho += rk
			sumVar += vk * (1 + 2*g)
			g = rho * (1 + g)
		}
		mean += a * m0 * sumRho / n
		variance += a * a * sumVar / (n * n)
	}
	return mean, variance, nil
}

// EstimatorNoise is the noise L added to the ergodic average: Laplace of
// scale Laplace, or Gaussian of standard deviation Gaussian (one of them
// > 0).
type EstimatorNoise struct {
	Laplace, Gaussian float64
}

// String names the noise.
func (z EstimatorNoise) String() string {
	if z.Laplace > 0 {
		return fmt.Sprintf("Laplace(scale %g)", z.Laplace)
	}
	return fmt.Sprintf("N(0, %g²)", z.Gaussian)
}

// Delta returns the δ of Assumption 3.5 at ε for shifts up to η: the
// exact hockey-stick divergence of L + η against L, which is the largest
// over |a − b| ≤ η (it grows with the shift). Laplace(b):
// max(0, 1 − e^{(ε − η/b)/2}); N(0, σ²): Φ(η/(2σ) − εσ/η) − e^ε Φ(−η/(2σ) − εσ/η)
// (Balle & Wang 2018, Thm 8).
func (z EstimatorNoise) Delta(eps, eta float64) float64 {
	if eta <= 0 {
		return 0
	}
	if z.Laplace > 0 {
		return math.Max(0, -math.Expm1((eps-eta/z.Laplace)/2))
	}
	s := z.Gaussian
	return math.Max(0, math.Min(1, gdpDeltaSafe(eta/s, eps, 1)))
}

// gaussTail returns P(|X| > c) for X ~ N(b, s²).
func gaussTail(b, s, c float64) float64 {
	if c < 0 {
		return 1
	}
	return 0.5*math.Erfc((c-b)/(s*math.Sqrt2)) + 0.5*math.Erfc((c+b)/(s*math.Sqrt2))
}

// EstimatorPair is the ergodic average's exact law on D and on D′ and the
// posteriors' means of f: what Props. 3.7 and 3.10 need for the pair.
type EstimatorPair struct {
	// MeanD, VarD and MeanDPrime, VarDPrime give the ergodic average's
	// Gaussian law on D and D′.
	MeanD, VarD, MeanDPrime, VarDPrime float64
	// PiD and PiDPrime are π_D(f) and π_D′(f).
	PiD, PiDPrime float64
	// Noise is L.
	Noise EstimatorNoise
}

// Tilde36 returns δ̃ of Assumption 3.6 at η for independent chains on D
// and D′: A_D − A_D′ ~ N(μ_D − μ_D′, v_D + v_D′) and δ̃ = P(|A_D − A_D′| > η).
func (e EstimatorPair) Tilde36(eta float64) float64 {
	return gaussTail(e.MeanD-e.MeanDPrime, math.Sqrt(e.VarD+e.VarDPrime), eta)
}

// Tilde38 returns δ̃ of Assumption 3.8 at C: the larger over D and D′ of
// P(|A − π(f)| > C).
func (e EstimatorPair) Tilde38(c float64) float64 {
	return math.Max(gaussTail(e.MeanD-e.PiD, math.Sqrt(e.VarD), c), gaussTail(e.MeanDPrime-e.PiDPrime, math.Sqrt(e.VarDPrime), c))
}

// GammaF returns γ_f = |π_D(f) − π_D′(f)| (Assumption 3.9, for the pair).
func (e EstimatorPair) GammaF() float64 { return math.Abs(e.PiD - e.PiDPrime) }

// scale is a length over which the tails above vanish.
func (e EstimatorPair) scale() float64 {
	return math.Abs(e.MeanD-e.MeanDPrime) + math.Abs(e.MeanD-e.PiD) + math.Abs(e.MeanDPrime-e.PiDPrime) + e.GammaF() +
		40*math.Sqrt(e.VarD+e.VarDPrime)
}

// minOver minimises g over [0, hi] on a grid of 4001 points refined by
// golden section around the best: any point gives a valid bound, so an
// inexact minimum only loosens it.
func minOver(g func(float64) float64, hi float64) (float64, float64) {
	const n = 4000
	bx, bv := 0.0, g(0)
	for i := 1; i <= n; i++ {
		x := hi * float64(i) / n
		if v := g(x); v < bv {
			bx, bv = x, v
		}
	}
	lo, up := math.Max(0, bx-hi/n), math.Min(hi, bx+hi/n)
	x, v := goldenMax(func(x float64) float64 { return -g(x) }, lo, up, 100)
	if -v < bv {
		return x, -v
	}
	return bx, bv
}

// Prop37 returns δ(ε) of Prop. 3.7 / A.6: with Assumption 3.6 at η (δ̃(η),
// independent coupling) and Assumption 3.5 at the same η, the release is
// (ε, δ_L(ε, η) + δ̃(η))-DP; η is chosen per ε to minimise it. It also
// returns the η used.
func (e EstimatorPair) Prop37(eps float64) (delta, eta float64) {
	eta, delta = minOver(func(x float64) float64 { return e.Noise.Delta(eps, x) + e.Tilde36(x) }, e.scale())
	return math.Min(1, delta), eta
}

// Prop310 returns δ(ε) of Prop. 3.10: with Assumption 3.8 at C (δ̃(C)),
// Assumption 3.9 (γ_f) and Assumption 3.5 at η = 2C + γ_f, the release is
// (ε, δ_L(ε, η) + 2δ̃ − δ̃²)-DP; C is chosen per ε to minimise it. It also
// returns the C used.
func (e EstimatorPair) Prop310(eps float64) (delta, c float64) {
	c, delta = minOver(func(x float64) float64 {
		t := e.Tilde38(x)
		return e.Noise.Delta(eps, 2*x+e.GammaF()) + 2*t - t*t
	}, e.scale())
	return math.Min(1, delta), c
}
