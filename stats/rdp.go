package stats

import (
	"math"

	"github.com/mcmcaudit/mcmcaudit/internal/numeric"
)

// RDPCurve is a Rényi-DP guarantee: order α > 1 ↦ ε_RDP(α). A curve may
// return +Inf at orders where it gives no guarantee.
type RDPCurve func(order float64) float64

// DefaultOrders is the grid of Rényi orders used when a conversion is asked
// to search over orders: 1.01 … 10⁴, 400 points evenly spaced in ln(α−1).
var DefaultOrders = func() []float64 {
	const k = 400
	lo, hi := math.Log(0.01), math.Log(1e4-1)
	out := make([]float64, k)
	for i := range out {
		out[i] = 1 + math.Exp(lo+(hi-lo)*float64(i)/(k-1))
	}
	return out
}()

// refineOrder minimises obj by golden-section search between the grid
// neighbours of order in DefaultOrders (from halfway to 1 below the first
// order), for objectives unimodal in the Rényi order; it returns the
// minimiser and the minimum.
func refineOrder(obj func(float64) float64, order float64) (x, fx float64) {
	i := 0
	for i < len(DefaultOrders) && DefaultOrders[i] != order {
		i++
	}
	lo, hi := DefaultOrders[max(i-1, 0)], DefaultOrders[min(i+1, len(DefaultOrders)-1)]
	if i == 0 {
		lo = 1 + (DefaultOrders[0]-1)/2
	}
	return numeric.GoldenMin(obj, lo, hi, 200, 1e-13*hi)
}

// GaussianRDP returns the RDP curve of μ-GDP / a Gaussian mechanism with
// sensitivity-to-noise ratio μ: ε(α) = α·μ²/2 (Mironov 2017, Prop. 7).
func GaussianRDP(mu float64) RDPCurve {
	rho := mu * mu / 2
	return func(a float64) float64 { return a * rho }
}

// RenyiGaussian returns the Rényi divergence of order ν > 1 between two 1-D
// normals, D_ν(N(μ1,σ1²) ‖ N(μ2,σ2²)) (Gil, Alajaji & Linder 2013; Heller &
// Fetaya eq. 20; Heikkilä et al. eq. 10):
//
//	ln(σ2/σ1) + ln(σ2²/σ*²)/(2(ν−1)) + ν(μ1−μ2)²/(2σ*²),  σ*² = νσ2² + (1−ν)σ1².
//
// It is +Inf when σ*² ≤ 0 (the divergence is infinite there). The first two
// terms are evaluated through log1p to stay exact when σ1 ≈ σ2.
func RenyiGaussian(nu, mu1, sigma1, mu2, sigma2 float64) float64 {
	if !(nu > 1) || !(sigma1 > 0) || !(sigma2 > 0) {
		return math.NaN()
	}
	s1, s2 := sigma1*sigma1, sigma2*sigma2
	star := nu*s2 + (1-nu)*s1
	if !(star > 0) {
		return math.Inf(1)
	}
	// r = σ1²/σ2² − 1; σ*²/σ2² = 1 − (ν−1)·r.
	r := (s1 - s2) / s2
	logRatio := -0.5 * math.Log1p(r) // ln(σ2/σ1) = −½ ln(1+r)
	return logRatio - math.Log1p(-(nu-1)*r)/(2*(nu-1)) + nu*(mu1-mu2)*(mu1-mu2)/(2*star)
}
