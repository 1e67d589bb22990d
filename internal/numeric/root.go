package numeric

import (
	"errors"
	"fmt"
	"math"
)

// ErrNoBracket is returned by Root when f(lo) and f(hi) have the same sign.
var ErrNoBracket = errors.New("numeric: root not bracketed")

// Root finds x in [lo, hi] with f(x) = 0 by Brent's method (inverse quadratic
// interpolation safeguarded by bisection; Brent 1973, ch. 4). f(lo) and
// f(hi) must differ in sign (or one be zero). The returned x is within
// xtol + 4·eps·|x| of a sign change of f. NaN values of f are an error.
func Root(f func(float64) float64, lo, hi, xtol float64) (float64, error) {
	a, b := lo, hi
	fa, fb := f(a), f(b)
	if math.IsNaN(fa) || math.IsNaN(fb) {
		return math.NaN(), fmt.Errorf("numeric: f is NaN at the bracket [%g, %g]", lo, hi)
	}
	if fa == 0 {
		return a, nil
	}
	if fb == 0 {
		return b, nil
	}
	if (fa > 0) == (fb > 0) {
		return math.NaN(), ErrNoBracket
	}
	c, fc := a, fa
	d := b - a
	e := d
	const eps = 2.220446049250313e-16
	for iter := 0; iter < 400; iter++ {
		if (fb > 0) == (fc > 0) {
			c, fc = a, fa
			d = b - a
			e = d
		}
		if math.Abs(fc) < math.Abs(fb) {
			a, b, c = b, c, b
			fa, fb, fc = fb, fc, fb
		}
		tol := 2*eps*math.Abs(b) + 0.5*xtol
		m := 0.5 * (c - b)
		if math.Abs(m) <= tol || fb == 0 {
			return b, nil
		}
		if math.Abs(e) >= tol && math.Abs(fa) > math.Abs(fb) {
			// Interpolate: secant when a == c, inverse quadratic otherwise.
			s := fb / fa
			var p, q float64
			if a == c {
				p = 2 * m * s
				q = 1 - s
			} else {
				qq := fa / fc
				r := fb / fc
				p = s * (2*m*qq*(qq-r) - (b-a)*(r-1))
				q = (qq - 1) * (r - 1) * (s - 1)
			}
			if p > 0 {
				q = -q
			} else {
				p = -p
			}
			if 2*p < math.Min(3*m*q-math.Abs(tol*q), math.Abs(e*q)) {
				e = d
				d = p / q
			} else {
				d = m
				e = m
			}
		} else {
			d = m
			e = m
		}
		a, fa = b, fb
		if math.Abs(d) > tol {
			b += d
		} else if m > 0 {
			b += tol
		} else {
			b -= tol
		}
		fb = f(b)
		if math.IsNaN(fb) {
			return math.NaN(), fmt.Errorf("numeric: f is NaN at %g", b)
		}
	}
	return b, errors.New("numeric: Root did not converge in 400 iterations")
}
