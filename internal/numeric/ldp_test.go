package numeric

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func columns(rows [][]float64) [][]float64 {
	cols := make([][]float64, len(rows[0]))
	for j := range cols {
		cols[j] = make([]float64, len(rows))
		for i := range rows {
			cols[j][i] = rows[i][j]
		}
	}
	return cols
}

// Reference values: scipy.optimize.nnls (scipy 1.10, an independent
// Fortran implementation of the same algorithm) on the same data.
func TestNNLSScipy(t *testing.T) {
	cases := []struct {
		a    [][]float64
		b, z []float64
	}{
		{
			a: [][]float64{{0.034, 1.36, 1.225, -0.51, -0.298}, {-0.527, 0.57, -0.056, 0.747, -1.847}, {1.567, -0.096, 0.68, -0.137, -0.379}, {0.463, 0.825, -0.203, -0.153, 0.686}, {-0.87, -1.514, 0.395, -0.671, -1.92}, {-0.814, -0.468, -1.193, -1.492, 0.037}, {0.897, -0.233, -0.744, 0.385, 0.717}, {-0.3, 0.545, 1.043, -0.207, -0.814}},
			b: []float64{-0.518, -5.13, 2.516, 0.925, -3.654, -1.412, 1.809, -1.684},
			z: []float64{1.462845341847143, 0, 0.4194127380902008, 0, 1.7186851773538567},
		},
		{ // more columns than rows
			a: [][]float64{{0.547, 0.656, -1.427, -0.645, 0.655, 0.493}, {0.179, -0.349, 0.109, 1.875, -0.221, 0.58}, {-0.417, -0.198, 0.648, -0.929, -0.242, -0.61}},
			b: []float64{-0.859, 0.176, 1.24},
			z: []float64{0, 0.4507229360181749, 1.0313136491563153, 0, 0, 0},
		},
		{
			a: [][]float64{{0.648, 0.469, -0.643, -1.178}, {-0.145, 1.203, 1.334, 0.908}, {0.347, 1.6, 1.233, -0.22}, {-1.062, -0.365, -0.42, 0.688}, {-1.899, -0.191, 1.671, -0.92}, {-0.758, -0.084, -1.418, -0.13}},
			b: []float64{-0.016, -0.005, -0.989, -0.366, 0.654, -0.715},
			z: []float64{0, 0, 0.12017093963998815, 0},
		},
	}
	for n, c := range cases {
		z, err := NNLS(columnsMatrix(columns(c.a)), c.b)
		if err != nil {
			t.Fatal(err)
		}
		for j := range z {
			if math.Abs(z[j]-c.z[j]) > 1e-12 {
				t.Errorf("case %d: z = %v, scipy %v", n, z, c.z)
				break
			}
		}
	}
}

// checkKKT verifies the Kuhn–Tucker conditions of min ‖x‖ s.t. Gx ≥ h for
// the returned (x, λ): feasibility, λ ≥ 0, x = Gᵀλ, and λ_i = 0 on slack
// constraints. For this convex problem they are sufficient for global
// optimality, so the check does not trust the solver. Tolerances are
// relative to the problem's scale (‖x‖, row norms), a few hundred ulps.
func checkKKT(t *testing.T, g [][]float64, h, x, lam []float64) {
	t.Helper()
	n := len(x)
	xn := math.Sqrt(dotf(x, x))
	tol := 1e-10 * (1 + xn)
	gtl := make([]float64, n)
	for i, row := range g {
		rn := math.Sqrt(dotf(row, row))
		slack := dotf(row, x) - h[i]
		if slack < -tol*rn {
			t.Errorf("constraint %d violated by %g", i, -slack)
		}
		if lam[i] < 0 {
			t.Errorf("λ_%d = %g < 0", i, lam[i])
		}
		if lam[i]*rn*slack > tol*(1+xn) {
			t.Errorf("complementary slackness fails at %d: λ = %g, slack = %g", i, lam[i], slack)
		}
		axpyf(lam[i], row, gtl)
	}
	for j := range x {
		if math.Abs(gtl[j]-x[j]) > tol {
			t.Errorf("stationarity: (Gᵀλ)_%d = %.15g, x_%d = %.15g", j, gtl[j], j, x[j])
		}
	}
}

// Reference: the active set {0, 3, 5, 11} found by scipy's SLSQP, then
// x = G_Aᵀ(G_A G_Aᵀ)⁻¹h_A solved in mpmath at 40 digits, with every
// multiplier positive and every other constraint slack (so it is the
// optimum).
func TestLeastDistanceReference(t *testing.T) {
	g := [][]float64{{0.528, -0.739, 1.386, 0.822, 0.627}, {0.402, 0.956, -1.332, 0.614, 0.603}, {-1.768, 0.347, -0.25, 0.782, -0.439}, {-0.018, 0.343, -0.876, 0.599, -0.105}, {0.492, -0.522, 1.086, 0.605, -0.178}, {0.632, 1.26, 1.791, -1.574, 0.883}, {0.465, -0.094, -1.007, 1.257, -1.262}, {0.567, 1.302, -1.6, -0.303, -1.309}, {0.244, 1.514, 2.024, -1.778, -0.575}, {0.704, 1.579, 0.421, -0.746, 0.297}, {-0.017, -0.204, -0.734, 0.387, 0.308}, {-0.093, -0.222, -1.285, -0.486, 1.206}}
	h := []float64{-1.175, 3.418, -2.426, 1.156, -3.711, 1.836, -0.442, 1.208, -1.827, 0.944, 0.144, 1.667}
	want := []float64{0.56707408725379122885, 1.6466503133962150321, -0.72029011707389616463, 0.12826411044520906616, 1.0133149394071122355}
	wantLam := map[int]float64{0: 0.21062003770612628989, 3: 2.3895526607545360361, 5: 0.83729628572424689138, 11: 0.32572685310952514962}
	x, lam, err := LeastDistance(g, h)
	if err != nil {
		t.Fatal(err)
	}
	for j := range want {
		if math.Abs(x[j]-want[j]) > 1e-13 {
			t.Errorf("x = %v, want %v", x, want)
			break
		}
	}
	for i, l := range lam {
		if math.Abs(l-wantLam[i]) > 1e-12 {
			t.Errorf("λ_%d = %.15g, want %.15g", i, l, wantLam[i])
		}
	}
	checkKKT(t, g, h, x, lam)
}

// Random problems, including nearly parallel rows (the ensemble case:
// many similar models give many nearly identical constraints) and more
// constraints than dimensions: the KKT certificate must hold.
func TestLeastDistanceKKT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for rep := 0; rep < 200; rep++ {
		n := 1 + rng.IntN(12)
		m := 1 + rng.IntN(60)
		base := make([]float64, n)
		for j := range base {
			base[j] = rng.NormFloat64()
		}
		// A feasible point keeps the problem feasible.
		xf := make([]float64, n)
		for j := range xf {
			xf[j] = 3 * rng.NormFloat64()
		}
		spread := math.Pow(10, -8*rng.Float64()) // rows within 1e-8…1 of each other
		g := make([][]float64, m)
		h := make([]float64, m)
		for i := range g {
			g[i] = make([]float64, n)
			for j := range g[i] {
				g[i][j] = base[j] + spread*rng.NormFloat64()
			}
			if rep%3 == 0 {
				g[i] = append([]float64(nil), g[i]...)
				for j := range g[i] {
					g[i][j] = rng.NormFloat64()
				}
			}
			h[i] = dotf(g[i], xf) - math.Abs(rng.NormFloat64())
		}
		x, lam, err := LeastDistance(g, h)
		if err != nil {
			t.Fatalf("rep %d (n=%d, m=%d, spread %.1g): %v", rep, n, m, spread, err)
		}
		checkKKT(t, g, h, x, lam)
		if t.Failed() {
			t.Fatalf("rep %d: n=%d, m=%d, spread %.1g", rep, n, m, spread)
		}
	}
}

// The shape of canary crafting on the digits: 64 dimensions, 900 rows in
// 9 tight clusters (100 similar models × 9 competing classes) and a box of
// 128 bound constraints; the KKT certificate must hold.
func TestLeastDistanceEnsembleShape(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for rep := 0; rep < 4; rep++ {
		n := 64
		base := make([][]float64, 9)
		for k := range base {
			base[k] = make([]float64, n)
			for j := range base[k] {
				base[k][j] = rng.NormFloat64()
			}
		}
		spread := math.Pow(10, -3*rng.Float64())
		xf := make([]float64, n)
		for j := range xf {
			xf[j] = rng.NormFloat64()
		}
		var g [][]float64
		var h []float64
		for i := 0; i < 900; i++ {
			row := make([]float64, n)
			for j := range row {
				row[j] = base[i%9][j] + spread*rng.NormFloat64()
			}
			g = append(g, row)
			h = append(h, dotf(row, xf)-0.1*math.Abs(rng.NormFloat64()))
		}
		for j := 0; j < n; j++ {
			lo, hi := make([]float64, n), make([]float64, n)
			lo[j], hi[j] = 1, -1
			g = append(g, lo, hi)
			h = append(h, -10, -10)
		}
		x, lam, err := LeastDistance(g, h)
		if err != nil {
			t.Fatal(err)
		}
		checkKKT(t, g, h, x, lam)
	}
}

func TestLeastDistanceEdgeCases(t *testing.T) {
	// x ≥ 1 and −x ≥ 0: infeasible.
	if _, _, err := LeastDistance([][]float64{{1}, {-1}}, []float64{1, 0}); !errors.Is(err, ErrInfeasible) {
		t.Errorf("infeasible: %v", err)
	}
	// 0·x ≥ 1: infeasible; 0·x ≥ −1: ignored.
	if _, _, err := LeastDistance([][]float64{{0, 0}}, []float64{1}); !errors.Is(err, ErrInfeasible) {
		t.Errorf("zero row: %v", err)
	}
	x, lam, err := LeastDistance([][]float64{{0, 0}, {2, 0}}, []float64{-1, 3})
	if err != nil || math.Abs(x[0]-1.5) > 4e-15 || x[1] != 0 || lam[0] != 0 || math.Abs(lam[1]-0.75) > 4e-15 {
		t.Errorf("x = %v, λ = %v, %v; want (1.5, 0), (0, 0.75)", x, lam, err)
	}
	// Origin feasible: x = 0.
	x, _, err = LeastDistance([][]float64{{1, 1}}, []float64{-2})
	if err != nil || x[0] != 0 || x[1] != 0 {
		t.Errorf("x = %v, %v", x, err)
	}
	// Distance to a half-plane: x₁ + x₂ ≥ 2 → (1, 1).
	x, _, err = LeastDistance([][]float64{{1, 1}}, []float64{2})
	if err != nil || math.Abs(x[0]-1) > 1e-15 || math.Abs(x[1]-1) > 1e-15 {
		t.Errorf("x = %v, %v", x, err)
	}
	// Duplicated rows (exactly dependent columns in NNLS).
	g := [][]float64{{1, 2}, {1, 2}, {2, 4}, {-1, 1}}
	h := []float64{5, 5, 10, 1}
	x, lam, err = LeastDistance(g, h)
	if err != nil {
		t.Fatal(err)
	}
	checkKKT(t, g, h, x, lam)
	if _, _, err := LeastDistance([][]float64{{1}}, []float64{math.NaN()}); err == nil {
		t.Error("NaN right-hand side must be an error")
	}
}
