package stats

import (
	"fmt"
	"math"
)

// The RDP → (ε, δ) conversions of this file take, at every Rényi order, the
// better of two valid conversions:
//
//   - Mironov 2017, Prop. 3: (α, r)-RDP implies (r + ln(1/δ)/(α−1), δ)-DP;
//   - Balle, Barthe, Gaboardi, Hsu & Sato 2020, Thm 21 (equivalently
//     Canonne, Kamath & Steinke 2020, Prop. 12): (α, r)-RDP implies
//     (ε, δ)-DP with ε = r + ln((α−1)/α) − (ln δ + ln α)/(α−1), that is
//     δ(ε) = exp((α−1)(r − ε))·(1 − 1/α)^(α−1)/α.
//
// The second is never worse: its δ is Mironov's times (1 − 1/α)^(α−1)/α < 1.
// Both are taken anyway, so that the minimum is the documented one whatever
// the rounding. The derivation of the second (an optimal pointwise bound
// (x − e^ε)₊ ≤ c·x^α applied under Q to x = dP/dQ) is written out in
// docs/derivations/pld.md, §1.

// MironovEpsilon returns r + ln(1/δ)/(α−1), the ε that (α, r)-RDP gives at δ
// by Mironov 2017, Prop. 3. It needs α > 1 and δ ∈ (0, 1); r = +Inf gives
// +Inf.
func MironovEpsilon(r, alpha, delta float64) float64 {
	return r - math.Log(delta)/(alpha-1)
}

// BBGHSEpsilon returns r + ln((α−1)/α) − (ln δ + ln α)/(α−1), the ε that
// (α, r)-RDP gives at δ by Balle, Barthe, Gaboardi, Hsu & Sato 2020, Thm 21
// (Canonne, Kamath & Steinke 2020, Prop. 12). It needs α > 1 and δ ∈ (0, 1);
// r = +Inf gives +Inf. The result may be negative for a tiny r and a large
// δ; callers clamp at 0.
func BBGHSEpsilon(r, alpha, delta float64) float64 {
	return r + math.Log1p(-1/alpha) - (math.Log(delta)+math.Log(alpha))/(alpha-1)
}

// RDPOrderEpsilon returns the smaller of MironovEpsilon and BBGHSEpsilon,
// clamped at 0: the (ε, δ)-DP that (α, r)-RDP gives at one order.
func RDPOrderEpsilon(r, alpha, delta float64) float64 {
	return math.Max(0, math.Min(MironovEpsilon(r, alpha, delta), BBGHSEpsilon(r, alpha, delta)))
}

// RDPOrderLogDelta returns ln δ(ε) for the (ε, δ(ε))-DP that (α, r)-RDP gives
// at one order: the smaller of Mironov's −(α−1)(ε − r) and the
// Balle et al. 2020, Thm 21 form (α−1)(r − ε) + (α−1)·ln(1 − 1/α) − ln α,
// capped at 0 (δ ≤ 1). r = +Inf gives 0.
func RDPOrderLogDelta(r, alpha, eps float64) float64 {
	if math.IsInf(r, 1) {
		return 0
	}
	mir := (alpha - 1) * (r - eps)
	bb := mir + (alpha-1)*math.Log1p(-1/alpha) - math.Log(alpha)
	return math.Min(0, math.Min(mir, bb))
}

// RDPToDPImproved converts an RDP curve to (ε, δ)-DP by the better of
// Mironov 2017, Prop. 3 and Balle et al. 2020, Thm 21 at every given order
// (see RDPOrderEpsilon), minimised over the orders; it returns the order
// attaining the minimum. Orders ≤ 1 are an error.
func RDPToDPImproved(curve RDPCurve, delta float64, orders []float64) (eps, order float64, err error) {
	if err = checkRDPDelta(delta); err != nil {
		return math.NaN(), math.NaN(), err
	}
	if len(orders) == 0 {
		return math.NaN(), math.NaN(), fmt.Errorf("orders: need at least one Rényi order")
	}
	eps, order = math.Inf(1), math.NaN()
	for _, a := range orders {
		if !(a > 1) {
			return math.NaN(), math.NaN(), fmt.Errorf("orders: every Rényi order must be > 1, got %g", a)
		}
		if e := RDPOrderEpsilon(curve(a), a, delta); e < eps {
			eps, order = e, a
		}
	}
	return eps, order, nil
}

// RDPToDPImprovedContinuous is RDPToDPImproved for a curve defined at every
// real order: it searches DefaultOrders, then refines the best order by
// golden-section search between its grid neighbours (as RDPToDPContinuous
// does for Mironov's conversion).
func RDPToDPImprovedContinuous(curve RDPCurve, delta float64) (eps, order float64, err error) {
	eps, order, err = RDPToDPImproved(curve, delta, DefaultOrders)
	if err != nil || math.IsInf(eps, 1) || eps == 0 {
		return eps, order, err
	}
	x, fx := refineOrder(func(a float64) float64 { return RDPOrderEpsilon(curve(a), a, delta) }, order)
	if fx < eps {
		eps, order = fx, x
	}
	return eps, order, nil
}

// RDPLogDeltaImproved returns ln δ(ε), the profile form of RDPToDPImproved:
// the minimum over the given orders of RDPOrderLogDelta(curve(α), α, ε),
// capped at 0. Orders ≤ 1 are skipped (they certify nothing).
func RDPLogDeltaImproved(curve RDPCurve, eps float64, orders []float64) float64 {
	best := 0.0
	for _, a := range orders {
		if !(a > 1) {
			continue
		}
		if v := RDPOrderLogDelta(curve(a), a, eps); v < best {
			best = v
		}
	}
	return best
}

// RDPLogDeltaImprovedContinuous is RDPLogDeltaImproved for a curve defined
// at every real order: the minimum over DefaultOrders, refined by
// golden-section search between the best order's grid neighbours (the
// exponent (α−1)(r(α) − ε) + (α−1)ln(1 − 1/α) − ln α is convex in α when
// (α−1)·r(α) is, as for every curve of this project).
func RDPLogDeltaImprovedContinuous(curve RDPCurve, eps float64) float64 {
	best, bi := 0.0, -1
	for i, a := range DefaultOrders {
		if v := RDPOrderLogDelta(curve(a), a, eps); v < best {
			best, bi = v, i
		}
	}
	if bi < 0 {
		return 0
	}
	if _, fx := refineOrder(func(a float64) float64 { return RDPOrderLogDelta(curve(a), a, eps) }, DefaultOrders[bi]); fx < best {
		best = fx
	}
	return best
}

// ImprovedLogDelta returns ln δ(ε) for the (ε, δ)-DP guarantees implied by
// the table: the minimum over tabulated orders of RDPOrderLogDelta (the
// better of Mironov 2017, Prop. 3 and Balle et al. 2020, Thm 21), capped at
// 0. Like LogDelta it treats a tabulated 0 as any other value.
func (t RDPTable) ImprovedLogDelta(eps float64) float64 {
	best := 0.0
	for i, a := range t.Orders {
		if v := RDPOrderLogDelta(t.Eps[i], float64(a), eps); v < best {
			best = v
		}
	}
	return best
}

// ImprovedProfile returns ε ↦ ImprovedDelta(ε) with the per-order constants
// of the conversion computed once (for callers that evaluate the profile
// many times). Since (1 − 1/α)^(α−1)/α < 1, the Balle et al. 2020 form is
// the smaller at every order: ln δ = (α−1)(r − ε) + (α−1)ln(1 − 1/α) − ln α.
func (t RDPTable) ImprovedProfile() func(eps float64) float64 {
	var am1, r, c []float64
	for i, a := range t.Orders {
		if math.IsInf(t.Eps[i], 1) {
			continue
		}
		af := float64(a)
		am1 = append(am1, af-1)
		r = append(r, t.Eps[i])
		c = append(c, math.Min(0, (af-1)*math.Log1p(-1/af)-math.Log(af)))
	}
	return func(eps float64) float64 {
		best := 0.0
		for i := range am1 {
			if v := am1[i]*(r[i]-eps) + c[i]; v < best {
				best = v
			}
		}
		return math.Exp(best)
	}
}

// ImprovedDelta returns δ(ε) = exp(ImprovedLogDelta(ε)).
func (t RDPTable) ImprovedDelta(eps float64) float64 { return math.Exp(t.ImprovedLogDelta(eps)) }

// ImprovedEpsilon returns the smallest ε with (ε, δ)-DP implied by the table,
// the minimum over tabulated orders of RDPOrderEpsilon (the better of
// Mironov 2017, Prop. 3 and Balle et al. 2020, Thm 21), and the order that
// attains it; +Inf with order 0 when every tabulated value is +Inf.
func (t RDPTable) ImprovedEpsilon(delta float64) (eps float64, order int, err error) {
	if err = checkRDPDelta(delta); err != nil {
		return math.NaN(), 0, err
	}
	eps = math.Inf(1)
	for i, a := range t.Orders {
		if e := RDPOrderEpsilon(t.Eps[i], float64(a), delta); e < eps {
			eps, order = e, a
		}
	}
	return eps, order, nil
}
