package numeric

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// ErrInfeasible is returned by LeastDistance when no x satisfies G x ≥ h.
var ErrInfeasible = errors.New("numeric: the constraints G x ≥ h have no solution")

// NNLS solves the non-negative least-squares problem
//
//	minimise ‖A z − b‖₂ subject to z ≥ 0
//
// by the active-set algorithm of Lawson & Hanson (Solving Least Squares
// Problems, 1974, ch. 23, Algorithm NNLS). A is given by its columns (cols[j]
// is column j, all of length len(b)). The returned z satisfies the
// Kuhn–Tucker conditions to rounding: with w = Aᵀ(b − Az), w_j ≤ tol where
// z_j = 0 and w_j ≈ 0 where z_j > 0.
//
// A column that is numerically dependent on the current passive set (its
// component orthogonal to them is below 1e-12 of its norm) is not
// admitted, as in Lawson & Hanson's step 6 safeguard; this keeps the
// least-squares subproblems well posed.
func NNLS(cols [][]float64, b []float64) (z []float64, err error) {
	m, n := len(b), len(cols)
	for j, c := range cols {
		if len(c) != m {
			panic(fmt.Sprintf("numeric: NNLS column %d has length %d, want %d", j, len(c), m))
		}
	}
	z = make([]float64, n)
	if n == 0 || m == 0 {
		return z, nil
	}
	var maxNorm, bNorm float64
	norms := make([]float64, n)
	for j, c := range cols {
		norms[j] = math.Sqrt(dotf(c, c))
		maxNorm = math.Max(maxNorm, norms[j])
	}
	bNorm = math.Sqrt(dotf(b, b))
	if maxNorm == 0 || bNorm == 0 {
		return z, nil
	}
	tol := 1e-12 * maxNorm * bNorm
	inP := make([]bool, n)
	var passive []int
	resid := append([]float64(nil), b...) // b − A z
	w := make([]float64, n)
	rejected := make([]bool, n)
	maxIter := 3*n + 100
	for iter := 0; ; iter++ {
		if iter == maxIter {
			return z, fmt.Errorf("numeric: NNLS did not converge in %d iterations", maxIter)
		}
		for j, c := range cols {
			w[j] = dotf(c, resid)
		}
		for j := range rejected {
			rejected[j] = false
		}
		var zs []float64
		for {
			t, wt := -1, tol
			for j := range cols {
				if !inP[j] && !rejected[j] && w[j] > wt {
					t, wt = j, w[j]
				}
			}
			if t < 0 {
				return z, nil // Kuhn–Tucker conditions hold
			}
			if len(passive) >= m {
				rejected[t] = true
				continue
			}
			cand := append(append([]int(nil), passive...), t)
			var rlast float64
			zs, rlast = lstsq(cols, cand, b)
			// Admit t only if it is independent of the passive columns
			// and enters with a positive coefficient (exact arithmetic
			// guarantees the latter for independent columns).
			if math.Abs(rlast) <= 1e-12*norms[t] || !(zs[len(zs)-1] > 0) {
				rejected[t] = true
				continue
			}
			passive = cand
			inP[t] = true
			break
		}
		// Inner loop: while the least-squares solution on the passive set
		// has a non-positive coefficient, move from z towards it as far as
		// z stays non-negative, and drop the coefficients that reach 0.
		for {
			alpha, hit := math.Inf(1), -1
			for i, j := range passive {
				if zs[i] <= 0 {
					if a := z[j] / (z[j] - zs[i]); a < alpha {
						alpha, hit = a, j
					}
				}
			}
			if hit < 0 {
				break
			}
			keep := passive[:0]
			for i, j := range passive {
				z[j] += alpha * (zs[i] - z[j])
				if j != hit && z[j] > 0 {
					keep = append(keep, j)
				} else {
					z[j] = 0
					inP[j] = false
				}
			}
			passive = keep
			if len(passive) == 0 {
				zs = nil
				break
			}
			zs, _ = lstsq(cols, passive, b)
		}
		for i, j := range passive {
			z[j] = zs[i]
		}
		copy(resid, b)
		for _, j := range passive {
			axpyf(-z[j], cols[j], resid)
		}
	}
}

// lstsq solves min ‖A_S y − b‖ over the columns S by Householder QR and
// returns y and the last diagonal entry of R (the size of the last
// column's component orthogonal to the others).
func lstsq(cols [][]float64, s []int, b []float64) ([]float64, float64) {
	m, k := len(b), len(s)
	a := mat.NewDense(m, k, nil)
	for i, j := range s {
		a.SetCol(i, cols[j])
	}
	var qr mat.QR
	qr.Factorize(a)
	var r mat.Dense
	qr.RTo(&r)
	rlast := r.At(k-1, k-1)
	for i := 0; i < k; i++ {
		if r.At(i, i) == 0 {
			return make([]float64, k), 0
		}
	}
	var y mat.VecDense
	// SolveVecTo reports an ill-conditioned R as a mat.Condition; the
	// caller's independence test decides what to do with such a column.
	_ = qr.SolveVecTo(&y, false, mat.NewVecDense(m, append([]float64(nil), b...)))
	return append([]float64(nil), y.RawVector().Data...), rlast
}

// LeastDistance solves the least-distance problem
//
//	minimise ‖x‖₂ subject to G x ≥ h
//
// (G has rows g[i], all of length n) by Lawson & Hanson's reduction to NNLS
// (Solving Least Squares Problems, 1974, ch. 23, §3, Algorithm LDP): with
// E = [Gᵀ; hᵀ] ((n+1)×m) and f = (0, …, 0, 1), solve NNLS for u, form
// r = E u − f; the constraints are infeasible if r = 0, and otherwise
// x = −r_{1:n}/r_{n+1}. Rows are first scaled to unit norm (which leaves
// the feasible set unchanged and conditions E better).
//
// It also returns Lagrange multipliers λ ≥ 0 (λ = u/(−r_{n+1}), scaled
// back to the unnormalised rows) that certify optimality: x = Gᵀλ and
// λ_i = 0 wherever g_iᵀx > h_i. These are the Kuhn–Tucker conditions of
// the problem, necessary and sufficient because it is convex, so callers
// (and tests) can check the answer without trusting the solver.
func LeastDistance(g [][]float64, h []float64) (x, lambda []float64, err error) {
	if len(g) != len(h) {
		panic(fmt.Sprintf("numeric: LeastDistance has %d rows and %d right-hand sides", len(g), len(h)))
	}
	lambda = make([]float64, len(g))
	if len(g) == 0 {
		return nil, lambda, nil
	}
	n := len(g[0])
	x = make([]float64, n)
	var cols [][]float64
	var idx []int
	var scale []float64
	for i, row := range g {
		if len(row) != n {
			panic(fmt.Sprintf("numeric: LeastDistance row %d has length %d, want %d", i, len(row), n))
		}
		if math.IsNaN(h[i]) || math.IsInf(h[i], 0) {
			return nil, nil, fmt.Errorf("numeric: LeastDistance right-hand side %d is %g", i, h[i])
		}
		nr := math.Sqrt(dotf(row, row))
		if math.IsNaN(nr) || math.IsInf(nr, 0) {
			return nil, nil, fmt.Errorf("numeric: LeastDistance row %d is not finite", i)
		}
		if nr == 0 {
			if h[i] > 0 {
				return nil, nil, ErrInfeasible
			}
			continue
		}
		c := make([]float64, n+1)
		for j, v := range row {
			c[j] = v / nr
		}
		c[n] = h[i] / nr
		cols = append(cols, c)
		idx = append(idx, i)
		scale = append(scale, nr)
	}
	anyPositive := false
	for _, c := range cols {
		if c[n] > 0 {
			anyPositive = true
		}
	}
	if !anyPositive {
		return x, lambda, nil // x = 0 is feasible, hence optimal
	}
	f := make([]float64, n+1)
	f[n] = 1
	u, err := NNLS(cols, f)
	if err != nil {
		return nil, nil, err
	}
	r := make([]float64, n+1)
	for j, c := range cols {
		axpyf(u[j], c, r)
	}
	r[n] -= 1
	// ‖r‖² = −r_{n+1} at the NNLS optimum; it vanishes exactly when the
	// constraints are infeasible. Below 1e-12 the point would be ≳ 1e6
	// times farther than the unit-scaled constraints suggest: treat that
	// as infeasible rather than return a meaningless x.
	if !(-r[n] > 1e-12) {
		return nil, nil, ErrInfeasible
	}
	for j := 0; j < n; j++ {
		x[j] = -r[j] / r[n]
	}
	for k, i := range idx {
		lambda[i] = u[k] / -r[n] / scale[k]
	}
	return x, lambda, nil
}

func dotf(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func axpyf(alpha float64, x, y []float64) {
	for i, v := range x {
		y[i] += alpha * v
	}
}
