package closedform

import (
	"math"
	"testing"
)

// Composing the transition with the prior's variance reproduces the
// marginal variances of Moments: v(K) = Factor²·(1/α) + Var over K epochs
// from epoch 0, and the transition over Δ epochs chains: v(K+Δ) =
// Factor(Δ)²·v(K) + Var(Δ) for D1 and for an order r of D2.
func TestTransitionMatchesMoments(t *testing.T) {
	for _, c := range []Counterexample{
		{N: 8, Alpha: 2, Beta: 1, XH: 1.8, C: 3, Eta: 0.2 / 27.92},
		{N: 17864389, Alpha: 2, Beta: 1, XH: 1.8, C: 2e7, Eta: 1 / (57880620.36 * 57880620.36)},
	} {
		for _, k := range []int{1, 5, 30} {
			for _, d := range []int{1, 3} {
				m0, _ := c.Moments(k)
				m1, _ := c.Moments(k + d)
				tr, err := c.Transition(d)
				if err != nil {
					t.Fatal(err)
				}
				if got := tr.Factor1*tr.Factor1*m0.Var + tr.Var1; math.Abs(got-m1.Var) > 1e-12*m1.Var {
					t.Errorf("n=%d K=%d Δ=%d: D1 variance %.15g, Moments %.15g", c.N, k, d, got, m1.Var)
				}
				for _, r := range []int{1, c.N / 2, c.N} {
					_, _, v0 := m0.Order(r)
					_, _, v1 := m1.Order(r)
					u := m0.U(r)
					if got := tr.Factor2*tr.Factor2*v0 + tr.VarConst + tr.VarSlope*u*u; math.Abs(got-v1) > 1e-12*v1 {
						t.Errorf("n=%d K=%d Δ=%d r=%d: D2 variance %.15g, Moments %.15g", c.N, k, d, r, got, v1)
					}
				}
			}
		}
		// From the prior: v(K) = Factor(K)²/α + Var(K).
		tr, _ := c.Transition(4)
		m, _ := c.Moments(4)
		if got := tr.Factor1*tr.Factor1/c.Alpha + tr.Var1; math.Abs(got-m.Var) > 1e-12*m.Var {
			t.Errorf("D1 from the prior: %.15g vs %.15g", got, m.Var)
		}
	}
	if _, err := (Counterexample{N: 8, Alpha: 2, Beta: 1, XH: 1.8, C: 3, Eta: 0.01}).Transition(0); err == nil {
		t.Error("Δ = 0 accepted")
	}
}
