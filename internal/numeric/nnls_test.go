package numeric

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// A 6×4 problem whose solution has one active bound. Reference: scipy
// 1.10 optimize.nnls gives the support {1, 2, 3}; the values are the
// unconstrained least-squares solution on that support solved in mpmath at
// 30 digits (normal equations), whose dual Aᵀr is −1.2425 < 0 on the
// excluded coordinate, so the KKT conditions certify it as the optimum.
func TestNNLSReference(t *testing.T) {
	a := mat.NewDense(6, 4, []float64{
		1, 2, 0.5, -1,
		0.3, -1, 2, 0.7,
		2, 0.1, -0.4, 1.5,
		-1, 1, 1, 1,
		0.5, 0.5, -2, 0.2,
		1.2, -0.7, 0.3, -0.9,
	})
	b := []float64{1, -2, 0.5, 3, -1, 0.7}
	want := []float64{0, 0.97331311101947951303, 0.27342119731304960681, 0.20498414968313988343}
	x, err := NNLS(a, b)
	if err != nil {
		t.Fatal(err)
	}
	for j := range want {
		if math.Abs(x[j]-want[j]) > 1e-13 {
			t.Errorf("x[%d] = %.17g, want %.17g", j, x[j], want[j])
		}
	}
	var r mat.VecDense
	r.MulVec(a, mat.NewVecDense(4, x))
	r.SubVec(mat.NewVecDense(6, b), &r)
	if got := mat.Norm(&r, 2); math.Abs(got-3.0532384088773704056) > 1e-13 {
		t.Errorf("residual norm %.17g, want 3.0532384088773704056", got)
	}
}

// On random problems (including nearly collinear columns, as in the V_cor
// fit) the solution satisfies the KKT conditions: x ≥ 0, the dual
// w = Aᵀ(b − Ax) is ≤ 0 up to rounding, and w_j ≈ 0 wherever x_j > 0. The
// KKT conditions characterise the optimum of this convex problem, so they
// verify the solver without a reference solution.
func TestNNLSKKT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		m := 5 + rng.IntN(40)
		n := 1 + rng.IntN(20)
		a := mat.NewDense(m, n, nil)
		collinear := trial%3 == 0
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				v := rng.NormFloat64()
				if collinear {
					// Gaussian bumps with nearby centres.
					xi := float64(i)/float64(m)*6 - 3
					v = math.Exp(-0.5 * (xi - 0.1*float64(j)) * (xi - 0.1*float64(j)))
				}
				a.Set(i, j, v)
			}
		}
		b := make([]float64, m)
		for i := range b {
			b[i] = rng.NormFloat64()
		}
		x, err := NNLS(a, b)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		var r mat.VecDense
		r.MulVec(a, mat.NewVecDense(n, x))
		r.SubVec(mat.NewVecDense(m, b), &r)
		var w mat.VecDense
		w.MulVec(a.T(), &r)
		scale := mat.Norm(a, 1) * (1 + mat.Norm(mat.NewVecDense(m, b), 2))
		for j := 0; j < n; j++ {
			if x[j] < 0 {
				t.Fatalf("trial %d: x[%d] = %g < 0", trial, j, x[j])
			}
			if w.AtVec(j) > 1e-9*scale {
				t.Errorf("trial %d: dual w[%d] = %g > 0 (x[%d] = %g)", trial, j, w.AtVec(j), j, x[j])
			}
			if x[j] > 0 && math.Abs(w.AtVec(j)) > 1e-9*scale {
				t.Errorf("trial %d: complementary slackness fails: x[%d] = %g, w = %g", trial, j, x[j], w.AtVec(j))
			}
		}
	}
}

func TestNNLSErrors(t *testing.T) {
	a := mat.NewDense(2, 2, []float64{1, 0, 0, 1})
	if _, err := NNLS(a, []float64{1}); err == nil {
		t.Error("size mismatch accepted")
	}
	if _, err := NNLS(a, []float64{1, math.NaN()}); err == nil {
		t.Error("NaN in b accepted")
	}
	a.Set(0, 1, math.Inf(1))
	if _, err := NNLS(a, []float64{1, 1}); err == nil {
		t.Error("Inf in A accepted")
	}
}
