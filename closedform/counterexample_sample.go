package closedform

import (
	"fmt"
	"math"
)

// Transition gives the exact law of cyclic SGLD on the counterexample over
// Δ consecutive epochs, as a Gaussian AR(1) of the fluctuation around the
// mean: with θ = μ_K + e (D1) or θ = μ_K − d_r(K) + e (D2, order r), the
// fluctuation after Δ more epochs is
//
//	D1:  e′ = Factor1·e + N(0, Var1),                 Factor1 = λ^(nΔ),
//	D2:  e′ = Factor2·e + N(0, VarConst + VarSlope·u²), Factor2 = A^Δ,
//
// with u = λ^(n−r). It follows from the epoch maps m ← λ^n m + ρS(n),
// v ← λ^(2n) v + ηS2(n) (D1) and m ← A m + B_r, v ← A² v + C_r (D2, Heller &
// Fetaya Lemmas A.2–A.3; docs/derivations/interim-region.md) applied Δ
// times to the noise alone.
// Together with Moments (the means) it lets one sample a whole run exactly
// at its epoch boundaries without simulating its n·Δ steps.
type Transition struct {
	Epochs             int
	Factor1, Var1      float64
	Factor2            float64
	VarConst, VarSlope float64
}

// Transition returns the law of Δ ≥ 1 epochs.
func (c Counterexample) Transition(epochs int) (Transition, error) {
	if err := c.Validate(); err != nil {
		return Transition{}, err
	}
	if epochs < 1 {
		return Transition{}, fmt.Errorf("epochs: must be ≥ 1, got %d", epochs)
	}
	k := c.consts()
	d := float64(epochs)
	lnLamND := -k.n * d * k.L // ln λ^(nΔ)
	t := Transition{Epochs: epochs, Factor1: math.Exp(lnLamND), Factor2: math.Exp(d * k.lnA)}
	// η(1 − λ^(2nΔ))/(1 − λ²): the D1 noise accumulated over Δ epochs.
	t.Var1 = -c.Eta * math.Expm1(2*lnLamND) / k.oneMLam2
	// C_r(1 − A^(2Δ))/(1 − A²) with C_r = η(1 − A²)/(1 − λ²) + u²·η(λ̂² − λ²)/(1 − λ²).
	oneMA2D := -math.Expm1(2 * d * k.lnA)
	t.VarConst = c.Eta * oneMA2D / k.oneMLam2
	t.VarSlope = c.Eta * k.lamDiff * (k.lamHat + k.lam) / k.oneMLam2 * oneMA2D / -math.Expm1(2*k.lnA)
	return t, nil
}
