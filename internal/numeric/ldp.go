package numeric

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// ErrInfeasible is returned by LeastDistance when no x satisfies G x ≥ h.
var ErrInfeasible = errors.New("numeric: the constraints G x ≥ h have no solution")

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
	u, err := NNLS(columnsMatrix(cols), f)
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

// columnsMatrix builds the dense matrix whose columns are cols.
func columnsMatrix(cols [][]float64) *mat.Dense {
	a := mat.NewDense(len(cols[0]), len(cols), nil)
	for j, c := range cols {
		a.SetCol(j, c)
	}
	return a
}
