package closedform

import (
	"fmt"
	"math"
)

// Counterexample is the cyclic-SGLD counterexample of Heller & Fetaya
// (§IV.B, eq. 8; App. A-D): Bayesian linear regression y = θx + ξ with
// ξ ~ N(0, 1/β) and prior θ ~ N(0, 1/α), sampled by SGLD with batch size 1
// that visits the data in one fixed (shuffled once) order every epoch,
// started from a prior draw θ₀ ~ N(0, 1/α). Dataset D1 holds n copies of
// (x_h, c·x_h); its neighbour D2 replaces one of them by (x_h/2, c·x_h/2).
//
// One SGLD step with datum (x, y) is θ ← θ + (η/2)(−αθ + n(y − θx)xβ) + √η·ξ
// (Heller & Fetaya eq. 3 and eq. 23), the affine map θ ← aθ + b + √η·ξ with
// a = 1 − (η/2)(α + n x²β), b = (η/2) n x y β. On D1 every step is the same
// map, so θ_j is Gaussian; on D2 only the position r of the special datum
// matters, r is uniform on {1, …, n}, and θ̂_j is the uniform mixture of n
// Gaussians (Lemma A.2, Lemma A.3).
type Counterexample struct {
	// N is the dataset size n ≥ 1.
	N int
	// Alpha is the prior precision α > 0.
	Alpha float64
	// Beta is the noise precision β > 0.
	Beta float64
	// XH is the covariate x_h > 0 of D1.
	XH float64
	// C is the slope c > 0 of the data, y = c·x.
	C float64
	// Eta is the SGLD step size η, in (0, 2/s) with s = α + n x_h² β so that
	// the per-step contraction λ = 1 − ηs/2 lies in (0, 1).
	Eta float64
}

// S returns s = α + n x_h² β, the posterior precision of D1 (Lemma IV.2).
func (c Counterexample) S() float64 {
	return c.Alpha + float64(c.N)*c.XH*c.XH*c.Beta
}

// EtaScaled returns η = k/s², the step sizes of the paper being k = 2
// (§IV.B) and k = 1 (Claim IV.9).
func (c Counterexample) EtaScaled(k float64) float64 {
	s := c.S()
	return k / (s * s)
}

// Validate reports the first parameter outside its allowed range.
func (c Counterexample) Validate() error {
	pos := func(name string, v float64) error {
		if !(v > 0) || math.IsInf(v, 1) {
			return fmt.Errorf("%s: must be a finite number > 0, got %g", name, v)
		}
		return nil
	}
	if c.N < 1 || float64(c.N) > 1<<53 {
		return fmt.Errorf("n: must be an integer in [1, 2^53], got %d", c.N)
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"alpha", c.Alpha}, {"beta", c.Beta}, {"xh", c.XH}, {"c", c.C}} {
		if err := pos(p.name, p.v); err != nil {
			return err
		}
	}
	s := c.S()
	if math.IsInf(s, 0) {
		return fmt.Errorf("n: α + n x_h² β overflows float64")
	}
	if !(c.Eta > 0 && c.Eta < 2/s) {
		return fmt.Errorf("eta: must be in (0, 2/s) = (0, %g) so that λ = 1 − ηs/2 ∈ (0, 1), got %g", 2/s, c.Eta)
	}
	return nil
}

// cexConst holds the per-configuration constants of the epoch maps, each
// computed without subtracting nearly equal numbers.
type cexConst struct {
	n        float64
	s        float64
	L        float64 // −ln λ, λ = 1 − ηs/2
	lam      float64 // λ
	lamHat   float64 // λ̂ = 1 − (η/2)(α + n x_h²β/4)
	lamDiff  float64 // λ̂ − λ = (3/4)(η/2) n x_h² β
	dLog     float64 // ln λ̂ − ln λ = log1p((λ̂−λ)/λ)
	lnA      float64 // ln A, A = λ̂ λ^(n−1)
	oneMLam2 float64 // 1 − λ² = (ηs/2)(2 − ηs/2)
	mInf     float64 // M∞ = ρ/(1−λ) = n c x_h² β / s
	e1       float64 // (3/4)(η/2) n x_h² β c α / s
}

func (c Counterexample) consts() cexConst {
	n := float64(c.N)
	nx2b := n * c.XH * c.XH * c.Beta
	s := c.Alpha + nx2b
	half := c.Eta * s / 2 // 1 − λ, exactly
	k := cexConst{n: n, s: s}
	k.L = -math.Log1p(-half)
	k.lam = 1 - half
	k.lamDiff = 0.75 * (c.Eta / 2) * nx2b
	k.lamHat = k.lam + k.lamDiff
	k.dLog = math.Log1p(k.lamDiff / k.lam)
	lHat := -math.Log1p(-(c.Eta / 2) * (c.Alpha + nx2b/4)) // −ln λ̂
	k.lnA = -lHat - (n-1)*k.L
	k.oneMLam2 = half * (2 - half)
	k.mInf = nx2b * c.C / s
	k.e1 = 0.75 * (c.Eta / 2) * nx2b * c.C * c.Alpha / s
	return k
}

// Moments are the exact first two moments of cyclic SGLD at the end of an
// epoch K (step j = K·n), for D1 and for every order r of D2.
//
// D1 (Lemma A.3): θ_j ~ N(μ, v) with μ = M∞(1 − λ^(nK)), M∞ = n c x_h²β/s,
// and v = λ^(2nK)/α + η(1 − λ^(2nK))/(1 − λ²).
//
// D2 with the special datum at position r (Lemma A.2; the epoch maps and
// their solution are derived in docs/derivations/interim-region.md): the epoch
// map is m ← A m + B_r, v ← A² v + C_r with A = λ̂ λ^(n−1) for every r.
// Solving it and subtracting from D1 in closed form gives, with
// u = λ^(n−r) ∈ {1, λ, …, λ^(n−1)},
//
//	d_r = μ − μ̂_r = D0 + D1·u,  D0 = M∞(A^K − λ^(nK)),  D1 = e1(1 − A^K)/(1 − A),
//	v̂_r = V0 + V1·u²,          V0 = A^(2K)/α + η(1 − A^(2K))/(1 − λ²),
//	                            V1 = η(λ̂² − λ²)/(1 − λ²) · (1 − A^(2K))/(1 − A²),
//
// where e1 = (3/4)(η/2) n x_h²β c α/s, so that both parts of d_r are ≥ 0 and
// nothing cancels: A^K − λ^(nK) = A^K·(−expm1(−K ln(λ̂/λ))), and every
// 1 − x^k is −expm1(k ln x). The paper's Lemma A.4 lower bound on d_r is
// a consequence (checked in the tests).
type Moments struct {
	// Epoch is K; the moments hold after K·n SGLD steps.
	Epoch int
	// Mean and Var are μ and v of D1's Gaussian.
	Mean, Var float64
	// DiffConst, DiffSlope are D0, D1: d_r = μ − μ̂_r = D0 + D1·λ^(n−r).
	DiffConst, DiffSlope float64
	// VarConst, VarSlope are V0, V1: v̂_r = V0 + V1·λ^(2(n−r)).
	VarConst, VarSlope float64

	n int
	L float64 // −ln λ
}

// Moments returns the exact moments after `epoch` epochs (epoch 0 is the
// prior draw).
func (c Counterexample) Moments(epoch int) (Moments, error) {
	if err := c.Validate(); err != nil {
		return Moments{}, err
	}
	if epoch < 0 {
		return Moments{}, fmt.Errorf("epoch: must be ≥ 0, got %d", epoch)
	}
	return c.consts().moments(c, epoch), nil
}

func (k cexConst) moments(c Counterexample, epoch int) Moments {
	K := float64(epoch)
	m := Moments{Epoch: epoch, n: c.N, L: k.L}
	lnLamNK := -k.n * K * k.L // ln λ^(nK)
	lamNK := math.Exp(lnLamNK)
	m.Mean = -k.mInf * math.Expm1(lnLamNK)
	m.Var = lamNK*lamNK/c.Alpha - c.Eta*math.Expm1(2*lnLamNK)/k.oneMLam2

	aK := math.Exp(K * k.lnA)
	oneMAK := -math.Expm1(K * k.lnA)
	oneMA := -math.Expm1(k.lnA)
	oneMA2K := -math.Expm1(2 * K * k.lnA)
	oneMA2 := -math.Expm1(2 * k.lnA)
	m.DiffConst = k.mInf * aK * -math.Expm1(-K*k.dLog)
	m.DiffSlope = k.e1 * oneMAK / oneMA
	m.VarConst = aK*aK/c.Alpha + c.Eta*oneMA2K/k.oneMLam2
	m.VarSlope = c.Eta * k.lamDiff * (k.lamHat + k.lam) / k.oneMLam2 * oneMA2K / oneMA2
	return m
}

// U returns u = λ^(n−r) for the order r ∈ {1, …, n}.
func (m Moments) U(r int) float64 { return math.Exp(-float64(m.n-r) * m.L) }

// Order returns, for the special datum at position r ∈ {1, …, n}, the mean
// difference d_r = μ − μ̂_r (≥ 0), the component mean μ̂_r and its variance.
// It panics when r is outside [1, n].
func (m Moments) Order(r int) (diff, mean, variance float64) {
	if r < 1 || r > m.n {
		panic(fmt.Sprintf("closedform: order r = %d outside [1, %d]", r, m.n))
	}
	u := m.U(r)
	diff = m.DiffConst + m.DiffSlope*u
	return diff, m.Mean - diff, m.VarConst + m.VarSlope*u*u
}
