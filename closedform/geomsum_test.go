package closedform

import (
	"fmt"
	"math"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/internal/numeric"
)

// directLogSum is the reference: ln Σ_{k=0}^{n−1} exp(g(λ^k)) term by term,
// scaled by the largest term and accumulated with Neumaier's compensated
// summation, so that its own rounding error is a few ulps regardless of n.
func (gr geomGrid) directLogSum(f geomTerm) float64 {
	gs := make([]float64, gr.n)
	gmax := math.Inf(-1)
	for k := range gs {
		gs[k], _ = f(math.Exp(-gr.L * float64(k)))
		gmax = math.Max(gmax, gs[k])
	}
	var sum, comp float64
	for _, g := range gs {
		x := math.Exp(g - gmax)
		t := sum + x
		if math.Abs(sum) >= x {
			comp += (sum - t) + x
		} else {
			comp += (x - t) + sum
		}
		sum = t
	}
	return gmax + math.Log(sum+comp)
}

// The engine against term-by-term summation (directLogSum), on grids large enough that the
// engine uses its Euler–Maclaurin panels, for terms that are flat, slowly
// or quickly varying, peaked inside the range, and far below the float64
// range. The engine's reported error must cover the difference, and be
// small.
func TestGeomSumMatchesDirect(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	type tc struct {
		name   string
		n      int
		L      float64
		f      geomTerm
		breaks []float64
	}
	// A Gaussian bump in u centred at u0 with width w, scaled far down.
	bump := func(u0, w, shift float64) geomTerm {
		return func(u float64) (float64, float64) {
			d := (u - u0) / w
			return -d*d/2 + shift, -d / w
		}
	}
	tail := func(a, b float64) geomTerm { // ln Φ(−(a + b·u))
		return func(u float64) (float64, float64) {
			w := -(a + b*u)
			lc := numeric.LogNormCDF(w)
			return lc, math.Exp(numeric.LogNormPDF(w)-lc) * -b
		}
	}
	cases := []tc{
		{"flat", 200000, 1e-9, func(u float64) (float64, float64) { return 3, 0 }, nil},
		{"slow exponential", 300000, 2e-6, func(u float64) (float64, float64) { return 40 * u, 40 }, nil},
		{"fast decay", 500000, 0.05, func(u float64) (float64, float64) { return 30 * u, 30 }, nil},
		{"tail, gentle", 1000000, 3e-7, tail(5, 3), nil},
		{"tail, steep", 400000, 1e-5, tail(-2, 60), nil},
		{"deep tail", 250000, 4e-6, tail(900, 100), nil},
		{"interior peak", 600000, 1e-6, bump(0.8, 0.01, -1e4), []float64{0.8}},
		{"interior trough", 300000, 3e-6, func(u float64) (float64, float64) {
			d := (u - 0.6) / 0.05
			return d * d / 2, d / 0.05
		}, []float64{0.6}},
		{"small n", 100, 0.3, tail(1, 5), nil},
	}
	for _, c := range cases {
		gr := geomGrid{n: c.n, L: c.L}
		got, rel := gr.logSum(c.f, c.breaks)
		want := gr.directLogSum(c.f)
		if d := math.Abs(got - want); d > rel+1e-15 || rel > 1e-11 || math.IsNaN(got) {
			t.Errorf("%s: engine %.17g, direct %.17g, |diff| %.3g, reported error %.3g", c.name, got, want, d, rel)
		}
	}
}

// The mixture's own sums (tail probabilities, Chernoff terms, densities)
// against direct summation at n = 2·10⁵ with enough spread in z across the
// orders that the sums are not trivial.
func TestMixtureSumsMatchDirect(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	// λ^n ≈ e^-3, so u spans [0.05, 1]. With c = 3e5 the early epochs have
	// z ≈ 4.8 and 1.0 for every order; with c = 3e8, at epochs 10 and 30
	// the mixture is near its stationary state and z_r ∝ u_r runs from
	// about 0.4 to 9 across the orders.
	for _, run := range []struct {
		c      float64
		epochs []int
	}{{3e5, []int{1, 3}}, {3e8, []int{10, 30}}} {
		c := Counterexample{N: 200000, Alpha: 2, Beta: 1, XH: 1.8, C: run.c}
		c.Eta = 6 / c.S() / float64(c.N)
		for _, epoch := range run.epochs {
			m, err := c.Moments(epoch)
			if err != nil {
				t.Fatal(err)
			}
			q := m.mixture()
			gr := q.grid
			sd := math.Sqrt(q.v)
			for _, tau := range []float64{-q.d0 - 3*sd, -q.d0, 0, 2 * sd} {
				for _, upper := range []bool{false, true} {
					got, e := q.logCDF(tau, upper)
					sign := 1.0
					if upper {
						sign = -1
					}
					want := gr.directLogSum(func(u float64) (float64, float64) {
						return numeric.LogNormCDF(sign * (tau + q.d0 + q.d1*u) / math.Sqrt(q.v0+q.v1*u*u)), 0
					}) - q.logN
					if d := math.Abs(got - want); d > e+1e-15 || e > 1e-10 {
						t.Errorf("epoch %d, logCDF(%g, %v) = %.15g, direct %.15g (diff %.2g, bound %.2g)", epoch, tau, upper, got, want, d, e)
					}
				}
				got, e := q.logDensity(tau)
				want := gr.directLogSum(func(u float64) (float64, float64) {
					v := q.v0 + q.v1*u*u
					w := (tau + q.d0 + q.d1*u) / math.Sqrt(v)
					return -w*w/2 - 0.5*math.Log(v), 0
				}) - q.logN - halfLog2Pi
				if d := math.Abs(got - want); d > e+1e-15 || e > 1e-10 {
					t.Errorf("epoch %d, logDensity(%g) = %.15g, direct %.15g (diff %.2g, bound %.2g)", epoch, tau, got, want, d, e)
				}
			}
			got, e := q.logChernoff()
			want := gr.directLogSum(func(u float64) (float64, float64) {
				z := (q.d0 + q.d1*u) / math.Sqrt(q.v0+q.v1*u*u)
				return -z * z / 2, 0
			}) - q.logN
			if d := math.Abs(got - want); d > e+1e-15 || e > 1e-10 {
				t.Errorf("epoch %d, logChernoff = %.15g, direct %.15g (diff %.2g, bound %.2g)", epoch, got, want, d, e)
			}
		}
	}
}

func TestCubicRootsIn(t *testing.T) {
	// (x − 0.2)(x − 0.5)(x − 0.9) = x³ − 1.6x² + 0.73x − 0.09.
	r := cubicRootsIn(1, -1.6, 0.73, -0.09, 0, 1)
	want := []float64{0.2, 0.5, 0.9}
	if len(r) != 3 {
		t.Fatalf("roots = %v, want %v", r, want)
	}
	for i := range r {
		if math.Abs(r[i]-want[i]) > 1e-12 {
			t.Errorf("root %d = %.17g, want %g", i, r[i], want[i])
		}
	}
	if r := cubicRootsIn(1, -1.6, 0.73, -0.09, 0.3, 0.8); len(r) != 1 || math.Abs(r[0]-0.5) > 1e-12 {
		t.Errorf("roots in (0.3, 0.8) = %v, want [0.5]", r)
	}
	// Degenerate: a line.
	if r := cubicRootsIn(0, 0, 2, -1, 0, 1); len(r) != 1 || math.Abs(r[0]-0.5) > 1e-15 {
		t.Errorf("line roots = %v", r)
	}
}

func ExampleCounterexample_Moments() {
	c := Counterexample{N: 17864389, Alpha: 2, Beta: 1, XH: 1.8, C: 2e7}
	c.Eta = c.EtaScaled(1) // η = 1/s², Claim IV.9
	m, _ := c.Moments(48)
	d, _, v := m.Order(1)
	fmt.Printf("d_1 = %.6e, σ̂_1 = %.6e, z_1 = %.4f\n", d, math.Sqrt(v), d/math.Sqrt(v))
	// Output: d_1 = 3.773778e-03, σ̂_1 = 4.487147e-04, z_1 = 8.4102
}
