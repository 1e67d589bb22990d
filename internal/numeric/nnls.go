package numeric

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// NNLS solves the non-negative least-squares problem
//
//	minimise ‖A·x − b‖₂  subject to  x ≥ 0
//
// by the active-set method of Lawson & Hanson (Solving Least Squares
// Problems, 1974, ch. 23, algorithm NNLS). Each unconstrained subproblem on
// the current passive set is solved by QR (gonum's Dense.Solve). A
// coordinate enters the passive set only while its dual value
// w_j = (Aᵀ(b − A·x))_j exceeds tol = 10·max(m, n)·ε·‖A‖₁, so on return the
// Karush–Kuhn–Tucker conditions hold to that tolerance: x ≥ 0, w ≤ tol and
// w_j ≈ 0 where x_j > 0.
//
// It returns an error when A and b disagree in size, when an entry is not
// finite, or when the method has not converged after 3n outer iterations.
//
// NNLS is the one function exempt from the cyclomatic limit of 20 that
// .ci/run enforces: it follows Lawson and Hanson's steps in their order and
// numbering, which splitting it would obscure.
func NNLS(a mat.Matrix, b []float64) ([]float64, error) {
	m, n := a.Dims()
	if len(b) != m {
		return nil, fmt.Errorf("nnls: b has %d entries, A has %d rows", len(b), m)
	}
	var norm1 float64 // max column sum of |A|
	for j := 0; j < n; j++ {
		var s float64
		for i := 0; i < m; i++ {
			v := a.At(i, j)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("nnls: A[%d][%d] is not finite (%g)", i, j, v)
			}
			s += math.Abs(v)
		}
		norm1 = math.Max(norm1, s)
	}
	for i, v := range b {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("nnls: b[%d] is not finite (%g)", i, v)
		}
	}
	tol := 10 * float64(max(m, n)) * 0x1p-52 * norm1

	x := make([]float64, n)
	passive := make([]bool, n)
	w := make([]float64, n)
	resid := make([]float64, m)
	bv := mat.NewVecDense(m, append([]float64(nil), b...))

	// dual computes w = Aᵀ(b − A·x).
	dual := func() {
		for i := 0; i < m; i++ {
			r := b[i]
			for j := 0; j < n; j++ {
				if x[j] != 0 {
					r -= a.At(i, j) * x[j]
				}
			}
			resid[i] = r
		}
		for j := 0; j < n; j++ {
			var s float64
			for i := 0; i < m; i++ {
				s += a.At(i, j) * resid[i]
			}
			w[j] = s
		}
	}
	// solveP returns the unconstrained least-squares solution restricted to
	// the passive set (zero elsewhere).
	solveP := func() ([]float64, error) {
		var idx []int
		for j, p := range passive {
			if p {
				idx = append(idx, j)
			}
		}
		sub := mat.NewDense(m, len(idx), nil)
		for c, j := range idx {
			for i := 0; i < m; i++ {
				sub.Set(i, c, a.At(i, j))
			}
		}
		var zv mat.VecDense
		if err := zv.SolveVec(sub, bv); err != nil {
			return nil, err
		}
		z := make([]float64, n)
		for c, j := range idx {
			z[j] = zv.AtVec(c)
		}
		return z, nil
	}

	// skip marks coordinates whose entry failed (their unconstrained
	// coefficient came out ≤ 0 although w_j > tol, a rounding effect of
	// near-collinear columns, Lawson & Hanson's step 6 safeguard); it is
	// cleared whenever x changes.
	skip := make([]bool, n)
	maxIter := 3 * n
	for iter := 0; ; iter++ {
		if iter == maxIter {
			return x, errors.New("nnls: no convergence after 3n iterations")
		}
		dual()
		t, wt := -1, tol
		for j := 0; j < n; j++ {
			if !passive[j] && !skip[j] && w[j] > wt {
				t, wt = j, w[j]
			}
		}
		if t < 0 {
			return x, nil
		}
		passive[t] = true
		for inner := 0; ; inner++ {
			if inner > n {
				return x, errors.New("nnls: inner loop did not terminate")
			}
			z, err := solveP()
			if err != nil {
				return x, fmt.Errorf("nnls: least-squares subproblem: %w", err)
			}
			if inner == 0 && z[t] <= 0 {
				passive[t] = false
				skip[t] = true
				break
			}
			feasible := true
			for j := 0; j < n; j++ {
				if passive[j] && z[j] <= 0 {
					feasible = false
					break
				}
			}
			if feasible {
				copy(x, z)
				for j := range skip {
					skip[j] = false
				}
				break
			}
			// Move from x towards z as far as feasibility allows; the
			// coordinates that reach zero (at least the one attaining the
			// step) leave the passive set.
			alpha, hit := math.Inf(1), -1
			for j := 0; j < n; j++ {
				if passive[j] && z[j] <= 0 {
					if s := x[j] / (x[j] - z[j]); s < alpha {
						alpha, hit = s, j
					}
				}
			}
			for j := 0; j < n; j++ {
				if passive[j] {
					x[j] += alpha * (z[j] - x[j])
					if j == hit || x[j] <= 0 {
						x[j] = 0
						passive[j] = false
					}
				}
			}
		}
	}
}
