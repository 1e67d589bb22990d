package numeric

// GoldenMax maximises f on [a, b] by golden-section search (Kiefer 1953):
// exact for unimodal f, and for any f it returns the best interior point it
// evaluated. It stops after iters reductions or when the bracket is no
// wider than tol. NaN values of f are never chosen.
func GoldenMax(f func(float64) float64, a, b float64, iters int, tol float64) (x, fx float64) {
	const invPhi = 0.6180339887498949 // 1/φ
	x1, x2 := b-invPhi*(b-a), a+invPhi*(b-a)
	f1, f2 := f(x1), f(x2)
	x, fx = x1, f1
	if f2 > fx || fx != fx {
		x, fx = x2, f2
	}
	for k := 0; k < iters && b-a > tol; k++ {
		if f1 >= f2 || f2 != f2 {
			b, x2, f2 = x2, x1, f1
			x1 = b - invPhi*(b-a)
			f1 = f(x1)
			if f1 > fx || fx != fx {
				x, fx = x1, f1
			}
		} else {
			a, x1, f1 = x1, x2, f2
			x2 = a + invPhi*(b-a)
			f2 = f(x2)
			if f2 > fx || fx != fx {
				x, fx = x2, f2
			}
		}
	}
	return x, fx
}

// GoldenMin is GoldenMax for the minimum.
func GoldenMin(f func(float64) float64, a, b float64, iters int, tol float64) (x, fx float64) {
	x, fx = GoldenMax(func(t float64) float64 { return -f(t) }, a, b, iters, tol)
	return x, -fx
}
