package closedform

import (
	"math"

	"github.com/mcmcaudit/mcmcaudit/internal/numeric"
)

// mixture is the output of cyclic SGLD on D2 at one epoch, with D1's output
// as the reference, both written in the offset τ = θ − μ from D1's mean, so
// that no quantity is a difference of two large means:
//
//	P = N(0, v)                                  (D1)
//	Q = (1/n) Σ_k N(−(D0 + D1·u_k), V0 + V1·u_k²), u_k = λ^k, k = 0..n−1   (D2)
type mixture struct {
	grid           geomGrid
	d0, d1, v0, v1 float64
	v              float64 // P's variance
	uMin           float64 // λ^(n−1)
	logN           float64
}

func (m Moments) mixture() mixture {
	return mixture{
		grid: geomGrid{n: m.n, L: m.L},
		d0:   m.DiffConst, d1: m.DiffSlope, v0: m.VarConst, v1: m.VarSlope,
		v:    m.Var,
		uMin: math.Exp(-float64(m.n-1) * m.L),
		logN: math.Log(float64(m.n)),
	}
}

// termErr is the error charged on a log sum per unit of its magnitude for
// the inputs of the sums: the moments carry a few ulps of relative error,
// which the Gaussian exponent −w²/2 turns into an absolute error of order
// 1e-16·w² in the log of each term (termErr allows 50 times that).
const termErr = 1e-14

// sumLogErr turns the engine's relative error of a mean of n positive terms
// into an error bound on its log ls: the engine's part, capped at ln n
// (the mean of positive terms lies between the largest term over n and the
// largest term, and the engine's sum never leaves that range by more), plus
// termErr per unit of |ls| for the inputs.
func (q mixture) sumLogErr(rel, ls float64) float64 {
	return math.Min(logErr(rel), q.logN+1e-12) + termErr*(1+math.Abs(ls))
}

// wBreak returns the u at which w(u) = (a + D1·u)/sqrt(V0 + V1·u²) can
// turn: w′(u) ∝ D1·V0 − a·V1·u (none when that never vanishes).
func (q mixture) wBreak(a float64) []float64 {
	if a == 0 || q.v1 == 0 {
		return nil
	}
	return []float64{q.d1 * q.v0 / (a * q.v1)}
}

// logCDF returns ln Q(τ < t) (upper = false) or ln Q(τ > t) (upper = true),
// and a bound on the absolute error of that log.
func (q mixture) logCDF(t float64, upper bool) (float64, float64) {
	a := t + q.d0
	sign := 1.0
	if upper {
		sign = -1
	}
	f := func(u float64) (float64, float64) {
		v := q.v0 + q.v1*u*u
		sd := math.Sqrt(v)
		w := sign * (a + q.d1*u) / sd
		wu := sign * (q.d1*q.v0 - a*q.v1*u) / (v * sd)
		lc := numeric.LogNormCDF(w)
		return lc, math.Exp(numeric.LogNormPDF(w)-lc) * wu
	}
	ls, rel := q.grid.logSum(f, q.wBreak(a))
	ls -= q.logN
	return ls, q.sumLogErr(rel, ls)
}

// logChernoff returns ln((1/n) Σ_r exp(−z_r²/2)), z_r = d_r/σ̂_r (Heller &
// Fetaya Lemma IV.5), and a bound on the absolute error of that log.
func (q mixture) logChernoff() (float64, float64) {
	f := func(u float64) (float64, float64) {
		v := q.v0 + q.v1*u*u
		sd := math.Sqrt(v)
		z := (q.d0 + q.d1*u) / sd
		zu := (q.d1*q.v0 - q.d0*q.v1*u) / (v * sd)
		return -z * z / 2, -z * zu
	}
	ls, rel := q.grid.logSum(f, q.wBreak(q.d0))
	ls -= q.logN
	return ls, q.sumLogErr(rel, ls)
}

// logDensity returns ln q(t), the mixture's log density at offset t, and a
// bound on the absolute error of that log.
func (q mixture) logDensity(t float64) (float64, float64) {
	a := t + q.d0
	f := func(u float64) (float64, float64) {
		v := q.v0 + q.v1*u*u
		sd := math.Sqrt(v)
		w := (a + q.d1*u) / sd
		wu := (q.d1*q.v0 - a*q.v1*u) / (v * sd)
		return -w*w/2 - 0.5*math.Log(v), -w*wu - q.v1*u/v
	}
	ls, rel := q.grid.logSum(f, q.densityBreaks(a))
	ls -= q.logN + halfLog2Pi
	return ls, q.sumLogErr(rel, ls)
}

const halfLog2Pi = 0.91893853320467274178032973640561763986139747363778

// densityBreaks returns the u in (λ^(n−1), 1) where the log density of a
// component at offset a − D0, g(u) = −w²/2 − ½ln(V0 + V1u²), can turn:
// multiplying g′(u) by (V0 + V1u²)² gives the cubic
//
//	−V1²u³ + a·D1·V1·u² + (a²V1 − D1²V0 − V0V1)·u − a·D1·V0.
func (q mixture) densityBreaks(a float64) []float64 {
	c3 := -q.v1 * q.v1
	c2 := a * q.d1 * q.v1
	c1 := a*a*q.v1 - q.d1*q.d1*q.v0 - q.v0*q.v1
	c0 := -a * q.d1 * q.v0
	return cubicRootsIn(c3, c2, c1, c0, q.uMin, 1)
}

// cubicRootsIn returns the real roots in (lo, hi) of c3x³ + c2x² + c1x + c0,
// found by splitting at the roots of the derivative and bracketing.
func cubicRootsIn(c3, c2, c1, c0, lo, hi float64) []float64 {
	p := func(x float64) float64 { return ((c3*x+c2)*x+c1)*x + c0 }
	cuts := []float64{lo}
	// p′ = 3c3x² + 2c2x + c1.
	a, b, c := 3*c3, 2*c2, c1
	switch {
	case a != 0:
		disc := b*b - 4*a*c
		if disc > 0 {
			sq := math.Sqrt(disc)
			// Stable quadratic roots.
			qq := -0.5 * (b + math.Copysign(sq, b))
			r1, r2 := qq/a, c/qq
			if qq == 0 {
				r1, r2 = -b/(2*a), -b/(2*a)
			}
			if r1 > r2 {
				r1, r2 = r2, r1
			}
			for _, r := range []float64{r1, r2} {
				if r > lo && r < hi {
					cuts = append(cuts, r)
				}
			}
		}
	case b != 0:
		if r := -c / b; r > lo && r < hi {
			cuts = append(cuts, r)
		}
	}
	cuts = append(cuts, hi)
	var roots []float64
	for i := 0; i+1 < len(cuts); i++ {
		x0, x1 := cuts[i], cuts[i+1]
		f0, f1 := p(x0), p(x1)
		if f0 == 0 || f1 == 0 || (f0 > 0) == (f1 > 0) {
			continue
		}
		if r, err := numeric.Root(p, x0, x1, 1e-15*(x1-x0)); err == nil {
			roots = append(roots, r)
		}
	}
	return roots
}

// gaussLogCDF returns ln P(τ < t) or ln P(τ > t) for P = N(0, v) with σ = sd.
func gaussLogCDF(t, sd float64, upper bool) float64 {
	if upper {
		return numeric.LogNormCDF(-t / sd)
	}
	return numeric.LogNormCDF(t / sd)
}

// gaussLogErr bounds the absolute error of ln P for a Gaussian tail
// probability computed by numeric.LogNormCDF (a few ulps of |ln P|, and of
// the standardised argument's square).
func gaussLogErr(lnP float64) float64 { return 1e-15 + termErr*math.Abs(lnP) }

// logErr converts a relative error bound r of a positive X into a bound e on
// the error of ln X that holds in both directions: X(1−r) = X·e^(−e) and
// X(1+r) ≤ X·e^e. It is +Inf when r ≥ 1.
func logErr(r float64) float64 {
	if !(r < 1) {
		return math.Inf(1)
	}
	return -math.Log1p(-r)
}

// relErr converts a log error bound e back to a relative error bound of X
// (the larger, upward deviation).
func relErr(e float64) float64 { return math.Expm1(e) }
