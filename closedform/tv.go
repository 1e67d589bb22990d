package closedform

import (
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/stats"
)

// HockeyStickGaussian1D returns the hockey-stick divergence
//
//	H_{e^ε}(P ‖ Q) = sup_B P(B) − e^ε·Q(B),  P = N(0, sd1²), Q = N(dm, sd2²),
//
// (Balle et al. 2019's D_{e^ε}; at ε = 0 it is the total variation distance
// ‖P − Q‖_TV of Bertazzi et al. Def. A.1), and a bound on the absolute error
// of the value returned: the exact divergence lies in [value − err,
// value + err].
//
// The supremum is attained on B = {ln p − ln q > ε} (Neyman–Pearson), here
// {a x² + b x + c > 0} with a = (sd1² − sd2²)/(2 sd1² sd2²), b = −dm/sd2²,
// c = dm²/(2 sd2²) + ln(sd2/sd1) − ε: at most two intervals, whose ends are
// the roots of the quadratic, computed in the cancellation-free form
// (Press et al., Numerical Recipes §5.6). The masses of the intervals are
// differences of erfc on the side of the origin where they do not cancel.
// With equal standard deviations it is the μ-GDP profile, μ = |dm|/sd
// (Dong, Roth & Su 2019, Cor. 2.13).
//
// The error bound covers the float64 evaluation of the two masses (a few
// ulps each) and the roots' rounding: at an end r of B, p − e^ε q vanishes,
// so moving the end by Δ changes the value by at most
// Δ²·sup|p′ − e^ε q′| ≤ Δ²(1/sd1² + e^ε/sd2²)/√(2πe), where Δ is bounded by
// twice the Newton correction at the computed root plus the rounding of the
// quadratic's terms.
func HockeyStickGaussian1D(eps, dm, sd1, sd2 float64) (delta, errBound float64, err error) {
	if err := checkHockeyStickArgs(eps, dm, sd1, sd2); err != nil {
		return math.NaN(), math.NaN(), err
	}
	if sd1 == sd2 {
		delta, errBound = hockeyStickEqualSD(eps, dm, sd1)
	} else {
		delta, errBound = hockeyStickUnequalSD(eps, dm, sd1, sd2)
	}
	return delta, errBound, nil
}

// checkHockeyStickArgs checks HockeyStickGaussian1D's arguments: ε finite
// and ≥ 0, dm finite, both standard deviations finite and > 0.
func checkHockeyStickArgs(eps, dm, sd1, sd2 float64) error {
	if !(eps >= 0) || math.IsInf(eps, 1) {
		return fmt.Errorf("epsilon: must be finite and ≥ 0, got %g", eps)
	}
	if math.IsNaN(dm) || math.IsInf(dm, 0) {
		return fmt.Errorf("mean difference: must be finite, got %g", dm)
	}
	for _, s := range []float64{sd1, sd2} {
		if !(s > 0) || math.IsInf(s, 1) {
			return fmt.Errorf("standard deviation: must be finite and > 0, got %g", s)
		}
	}
	return nil
}

// hockeyStickEqualSD is HockeyStickGaussian1D for sd1 = sd2 = sd: the
// total variation in closed form at ε = 0, the μ-GDP profile otherwise
// (Dong, Roth & Su 2019, Cor. 2.13), with their error bounds.
func hockeyStickEqualSD(eps, dm, sd float64) (delta, errBound float64) {
	if dm == 0 {
		return 0, 0
	}
	if eps == 0 {
		// TV = 2Φ(|dm|/(2sd)) − 1 = erf(|dm|/(2√2 sd)), exact to an ulp.
		v := math.Erf(math.Abs(dm) / (2 * math.Sqrt2 * sd))
		return v, 4e-16*v + 1e-300
	}
	v := stats.GDPDelta(math.Abs(dm)/sd, eps)
	return v, 1e-14*v + 1e-300
}

// hockeyStickUnequalSD is HockeyStickGaussian1D for sd1 ≠ sd2: the masses
// of B = {a x² + b x + c > 0} under both laws, and the error bound of the
// value (float64 masses, and the ends of B moved by their rounding).
func hockeyStickUnequalSD(eps, dm, sd1, sd2 float64) (delta, errBound float64) {
	v1, v2 := sd1*sd1, sd2*sd2
	a := (sd1 - sd2) * (sd1 + sd2) / (2 * v1 * v2)
	b := -dm / v2
	c := dm*dm/(2*v2) + math.Log1p((sd2-sd1)/sd1) - eps
	ee := math.Exp(eps)
	// f(x) = a x² + b x + c = ln p(x) − ln q(x) − ε.
	f := func(x float64) float64 { return (a*x+b)*x + c }
	fscale := func(x float64) float64 {
		return math.Abs(x*x/(2*v1)) + math.Abs((x-dm)*(x-dm)/(2*v2)) + math.Abs(c) + eps + 1
	}
	ends := quadraticRoots(a, b, c)
	// The set B = {f > 0}: outside the roots when a > 0, between them when
	// a < 0; all of ℝ or empty without real roots.
	pMass := func(lo, hi float64) float64 { return gaussMass(lo/sd1, hi/sd1) }
	qMass := func(lo, hi float64) float64 { return gaussMass((lo-dm)/sd2, (hi-dm)/sd2) }
	var pB, qB float64
	switch {
	case len(ends) == 0 && a > 0:
		pB, qB = 1, 1
	case len(ends) == 0:
		return 0, 1e-300
	case a > 0:
		pB = pMass(math.Inf(-1), ends[0]) + pMass(ends[1], math.Inf(1))
		qB = qMass(math.Inf(-1), ends[0]) + qMass(ends[1], math.Inf(1))
	default:
		pB, qB = pMass(ends[0], ends[1]), qMass(ends[0], ends[1])
	}
	eq := 0.0 // e^ε·Q(B), 0 when Q(B) is (e^ε may overflow)
	if qB > 0 {
		eq = ee * qB
	}
	val := pB - eq
	errB := 8e-16*(pB+eq) + 1e-300
	curv := (1/v1 + ee/v2) / math.Sqrt(2*math.Pi*math.E)
	for _, r := range ends {
		fp := 2*a*r + b
		if fp == 0 || math.IsInf(r, 0) {
			errB = math.Inf(1)
			continue
		}
		dx := 2 * (math.Abs(f(r)) + 4e-16*fscale(r)) / math.Abs(fp)
		errB += dx * dx * curv
	}
	if val < 0 {
		val = 0
	}
	return math.Min(val, 1), errB
}

// quadraticRoots returns the real roots r1 < r2 of a x² + b x + c (a ≠ 0),
// in the cancellation-free form (Press et al., Numerical Recipes §5.6), or
// none when the discriminant is not positive.
func quadraticRoots(a, b, c float64) []float64 {
	disc := b*b - 4*a*c
	if !(disc > 0) {
		return nil
	}
	sq := math.Sqrt(disc)
	q := -0.5 * (b + math.Copysign(sq, b))
	r1, r2 := q/a, c/q
	if q == 0 {
		r1, r2 = -math.Sqrt(-c/a), math.Sqrt(-c/a)
	}
	if r1 > r2 {
		r1, r2 = r2, r1
	}
	return []float64{r1, r2}
}

// gaussMass returns Φ(hi) − Φ(lo) for lo ≤ hi, on the side of 0 where the
// two tails do not cancel.
func gaussMass(lo, hi float64) float64 {
	if !(lo < hi) {
		return 0
	}
	const s = math.Sqrt2
	switch {
	case lo >= 0:
		return 0.5 * (math.Erfc(lo/s) - math.Erfc(hi/s))
	case hi <= 0:
		return 0.5 * (math.Erfc(-hi/s) - math.Erfc(-lo/s))
	}
	return 0.5 * (math.Erf(hi/s) - math.Erf(lo/s))
}

// TVGaussian1D returns an upper bound on ‖N(m1, sd1²) − N(m2, sd2²)‖_TV,
// the exact value plus its error bound (HockeyStickGaussian1D at ε = 0),
// capped at 1.
func TVGaussian1D(m1, sd1, m2, sd2 float64) (float64, error) {
	v, e, err := HockeyStickGaussian1D(0, m2-m1, sd1, sd2)
	if err != nil {
		return math.NaN(), err
	}
	return math.Min(1, v+e), nil
}

// TVFromKL returns the certified upper bound on a total variation distance
// that a Kullback–Leibler divergence kl between the two laws gives:
// the smaller of Pinsker's inequality ‖P − Q‖_TV ≤ sqrt(KL/2) (Tsybakov
// 2009, Lemma 2.5) and the Bretagnolle–Huber form
// ‖P − Q‖_TV ≤ sqrt(1 − e^{−KL}) (Bretagnolle & Huber 1979; Tsybakov 2009
// §2.4): Le Cam's ‖P − Q‖_TV ≤ sqrt(1 − BC²) with the Bhattacharyya
// coefficient BC = E_P[sqrt(q/p)] ≥ e^{−KL/2} by Jensen. The second is the
// better one for KL above about 1.6; both are capped at 1.
func TVFromKL(kl float64) float64 {
	if !(kl >= 0) {
		return math.NaN()
	}
	return math.Min(1, math.Min(math.Sqrt(kl/2), math.Sqrt(-math.Expm1(-kl))))
}

// KLGaussian1D returns KL(N(m1, v1) ‖ N(m2, v2)) for variances v1, v2:
//
//	½[v1/v2 − 1 − ln(v1/v2) + (m1 − m2)²/v2],
//
// with x − ln(1 + x), x = v1/v2 − 1, evaluated without cancellation.
func KLGaussian1D(dm, v1, v2 float64) float64 {
	x := (v1 - v2) / v2
	return 0.5 * (xMinusLog1p(x) + dm*dm/v2)
}

// xMinusLog1p returns x − ln(1 + x) ≥ 0 for x > −1, by its series near 0.
func xMinusLog1p(x float64) float64 {
	if math.Abs(x) < 1e-4 {
		// x²/2 − x³/3 + x⁴/4 − x⁵/5: the next term is below 1e-20·x².
		return x * x * (0.5 - x*(1.0/3-x*(0.25-x/5)))
	}
	return x - math.Log1p(x)
}
