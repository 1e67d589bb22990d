package stats

import (
	"fmt"
	"math"
)

// Conversion names a way of turning (α, r)-RDP into (ε, δ)-DP at one Rényi
// order. Every RDP → DP function of this package takes one; the zero value
// is Improved, the one the accountants use.
//
//   - Mironov 2017, Prop. 3: (α, r)-RDP implies (r + ln(1/δ)/(α−1), δ)-DP.
//   - Balle, Barthe, Gaboardi, Hsu & Sato 2020, Thm 21 (equivalently
//     Canonne, Kamath & Steinke 2020, Prop. 12): (α, r)-RDP implies
//     (ε, δ)-DP with ε = r + ln((α−1)/α) − (ln δ + ln α)/(α−1), that is
//     δ(ε) = exp((α−1)(r − ε))·(1 − 1/α)^(α−1)/α.
//
// The second is never worse: its δ is Mironov's times (1 − 1/α)^(α−1)/α < 1.
// Improved takes the better of the two at every order anyway, so that the
// minimum is the documented one whatever the rounding. The derivation of
// the second (an optimal pointwise bound (x − e^ε)₊ ≤ c·x^α applied under Q
// to x = dP/dQ) is written out in docs/derivations/pld.md, §1.
type Conversion int

const (
	// Improved is the better of Mironov 2017, Prop. 3 and Balle et al.
	// 2020, Thm 21 at every order.
	Improved Conversion = iota
	// Mironov is Mironov 2017, Prop. 3 alone: the form most papers print,
	// kept as a reference.
	Mironov
)

// String names the conversion.
func (c Conversion) String() string {
	switch c {
	case Improved:
		return "improved (Mironov 2017 Prop. 3 or Balle et al. 2020 Thm 21, the better)"
	case Mironov:
		return "Mironov 2017 Prop. 3"
	}
	return fmt.Sprintf("Conversion(%d)", int(c))
}

// OrderEpsilon returns the ε of the (ε, δ)-DP that (α, r)-RDP gives at one
// order α > 1 and δ ∈ (0, 1): r + ln(1/δ)/(α−1) for Mironov; for Improved
// the smaller of that and r + ln((α−1)/α) − (ln δ + ln α)/(α−1), clamped at
// 0 (it may be negative for a tiny r and a large δ). r = +Inf gives +Inf.
func (c Conversion) OrderEpsilon(r, alpha, delta float64) float64 {
	mir := r - math.Log(delta)/(alpha-1)
	if c == Mironov {
		return mir
	}
	bb := r + math.Log1p(-1/alpha) - (math.Log(delta)+math.Log(alpha))/(alpha-1)
	return math.Max(0, math.Min(mir, bb))
}

// OrderLogDelta returns ln δ(ε) of the (ε, δ(ε))-DP that (α, r)-RDP gives at
// one order α > 1: Mironov's −(α−1)(ε − r); for Improved the smaller of that
// and (α−1)(r − ε) + (α−1)·ln(1 − 1/α) − ln α. Capped at 0 (δ ≤ 1);
// r = +Inf gives 0.
func (c Conversion) OrderLogDelta(r, alpha, eps float64) float64 {
	if math.IsInf(r, 1) {
		return 0
	}
	mir := (alpha - 1) * (r - eps)
	if c == Mironov {
		return math.Min(0, mir)
	}
	bb := mir + (alpha-1)*math.Log1p(-1/alpha) - math.Log(alpha)
	return math.Min(0, math.Min(mir, bb))
}

// Epsilon converts the curve to (ε, δ)-DP by the conversion c, minimised
// over the Rényi orders, and returns the order attaining the minimum.
// With orders nil (or empty) the curve is taken as defined at every real
// order: DefaultOrders are searched and the best order is refined by
// golden-section search between its grid neighbours (the objective is
// unimodal for curves with (α−1)·r(α) convex, as every curve of this
// project). Otherwise only the given orders count, and an order ≤ 1 is an
// error. δ must be in (0, 1).
func (curve RDPCurve) Epsilon(delta float64, c Conversion, orders []float64) (eps, order float64, err error) {
	if err = checkRDPDelta(delta); err != nil {
		return math.NaN(), math.NaN(), err
	}
	continuous := len(orders) == 0
	if continuous {
		orders = DefaultOrders
	}
	eps, order = math.Inf(1), math.NaN()
	for _, a := range orders {
		if !(a > 1) {
			return math.NaN(), math.NaN(), fmt.Errorf("orders: every Rényi order must be > 1, got %g", a)
		}
		if e := c.OrderEpsilon(curve(a), a, delta); e < eps {
			eps, order = e, a
		}
	}
	if !continuous || math.IsInf(eps, 1) || eps == 0 {
		return eps, order, nil
	}
	x, fx := refineOrder(func(a float64) float64 { return c.OrderEpsilon(curve(a), a, delta) }, order)
	if fx < eps {
		eps, order = fx, x
	}
	return eps, order, nil
}

// LogDelta returns ln δ(ε), the profile form of Epsilon: the minimum over
// the orders of c.OrderLogDelta(curve(α), α, ε), capped at 0. With orders
// nil (or empty) the minimum over DefaultOrders is refined by golden-section
// search between the best order's grid neighbours (the exponent is convex
// in α when (α−1)·r(α) is). Given orders ≤ 1 are skipped (they certify
// nothing).
func (curve RDPCurve) LogDelta(eps float64, c Conversion, orders []float64) float64 {
	continuous := len(orders) == 0
	if continuous {
		orders = DefaultOrders
	}
	best, bi := 0.0, -1
	for i, a := range orders {
		if !(a > 1) {
			continue
		}
		if v := c.OrderLogDelta(curve(a), a, eps); v < best {
			best, bi = v, i
		}
	}
	if !continuous || bi < 0 {
		return best
	}
	if _, fx := refineOrder(func(a float64) float64 { return c.OrderLogDelta(curve(a), a, eps) }, DefaultOrders[bi]); fx < best {
		best = fx
	}
	return best
}

// LogDelta returns ln δ(ε) for the (ε, δ)-DP guarantees the table implies
// by the conversion c: the minimum over tabulated orders of
// c.OrderLogDelta, capped at 0. For Mironov the minimum over the tabulated
// orders is also the minimum over the whole interpolated Curve (between two
// orders the exponent is linear in α). A tabulated 0 is treated like any
// other value (it may be a rounded tiny number), so a table of zeros still
// gives ε(δ) > 0; a caller that knows nothing was released says so itself.
func (t RDPTable) LogDelta(eps float64, c Conversion) float64 {
	best := 0.0
	for i, a := range t.Orders {
		if v := c.OrderLogDelta(t.Eps[i], float64(a), eps); v < best {
			best = v
		}
	}
	return best
}

// Profile returns ε ↦ δ(ε) = exp(LogDelta(ε, c)) with the per-order
// constants of the conversion computed once, for callers that evaluate the
// profile many times. For Improved the Balle et al. 2020 form is the
// smaller at every order (since (1 − 1/α)^(α−1)/α < 1):
// ln δ = (α−1)(r − ε) + (α−1)ln(1 − 1/α) − ln α.
func (t RDPTable) Profile(c Conversion) func(eps float64) float64 {
	var am1, r, k []float64
	for i, a := range t.Orders {
		if math.IsInf(t.Eps[i], 1) {
			continue
		}
		af := float64(a)
		am1 = append(am1, af-1)
		r = append(r, t.Eps[i])
		if c == Mironov {
			k = append(k, 0)
		} else {
			k = append(k, math.Min(0, (af-1)*math.Log1p(-1/af)-math.Log(af)))
		}
	}
	return func(eps float64) float64 {
		best := 0.0
		for i := range am1 {
			if v := am1[i]*(r[i]-eps) + k[i]; v < best {
				best = v
			}
		}
		return math.Exp(best)
	}
}

// Epsilon returns the smallest ε with (ε, δ)-DP implied by the table through
// the conversion c, the minimum over tabulated orders of c.OrderEpsilon, and
// the order that attains it; +Inf with order 0 when every tabulated value is
// +Inf. δ must be in (0, 1).
func (t RDPTable) Epsilon(delta float64, c Conversion) (eps float64, order int, err error) {
	if err = checkRDPDelta(delta); err != nil {
		return math.NaN(), 0, err
	}
	eps = math.Inf(1)
	for i, a := range t.Orders {
		if e := c.OrderEpsilon(t.Eps[i], float64(a), delta); e < eps {
			eps, order = e, a
		}
	}
	return eps, order, nil
}
