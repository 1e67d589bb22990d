package stats

import (
	"fmt"
	"math"
	"sort"

	"github.com/mcmcaudit/mcmcaudit/internal/numeric"
)

// RDPTable is a Rényi-DP guarantee known at a finite set of integer orders:
// the mechanism is (Orders[i], Eps[i])-RDP for every i. Orders are strictly
// increasing and ≥ 2; Eps may be +Inf where the bound says nothing. It is
// the form taken by the amplification-by-subsampling bounds, which are stated
// for integer orders only (Wang, Balle & Kasiviswanathan 2019; Mironov,
// Talwar & Zhang 2019; Heikkilä et al. 2019, Cor. 2).
type RDPTable struct {
	Orders []int
	Eps    []float64
}

// NewRDPTable evaluates eps at every order and returns the table. Orders must
// be strictly increasing integers ≥ 2; eps must return a value ≥ 0 or +Inf.
func NewRDPTable(orders []int, eps func(order int) float64) (RDPTable, error) {
	t := RDPTable{Orders: append([]int(nil), orders...), Eps: make([]float64, len(orders))}
	for i, a := range orders {
		t.Eps[i] = eps(a)
	}
	return t, t.Validate()
}

// Validate checks the table's invariants.
func (t RDPTable) Validate() error {
	if len(t.Orders) == 0 {
		return fmt.Errorf("orders: need at least one Rényi order")
	}
	if len(t.Orders) != len(t.Eps) {
		return fmt.Errorf("rdp table: %d orders but %d values", len(t.Orders), len(t.Eps))
	}
	for i, a := range t.Orders {
		if a < 2 {
			return fmt.Errorf("orders: every tabulated Rényi order must be an integer ≥ 2, got %d", a)
		}
		if i > 0 && a <= t.Orders[i-1] {
			return fmt.Errorf("orders: must be strictly increasing, got %d after %d", a, t.Orders[i-1])
		}
		if e := t.Eps[i]; !(e >= 0) {
			return fmt.Errorf("rdp table: ε_RDP(%d) must be ≥ 0 or +Inf, got %g", a, e)
		}
	}
	return nil
}

// Compose returns the RDP of k adaptive compositions of the mechanism:
// RDP adds up at every order (Mironov 2017, Prop. 1). k must be ≥ 0.
func (t RDPTable) Compose(k float64) RDPTable {
	if !(k >= 0) || math.IsInf(k, 1) {
		panic(fmt.Sprintf("stats: RDPTable.Compose with k = %g", k))
	}
	out := RDPTable{Orders: append([]int(nil), t.Orders...), Eps: make([]float64, len(t.Eps))}
	for i, e := range t.Eps {
		if k == 0 {
			out.Eps[i] = 0 // no release: nothing leaks, even where the bound is +Inf
			continue
		}
		out.Eps[i] = k * e
	}
	return out
}

// Curve returns the table as an RDPCurve defined at every order α > 1:
//   - at a tabulated order, its value;
//   - between two tabulated orders a < α < b, the smaller of ε(b)
//     (Rényi divergence is non-decreasing in the order; van Erven &
//     Harremoës 2014, Thm 3) and the linear interpolation of (α−1)·ε(α)
//     between a and b, which is valid because (α−1)·D_α(P‖Q) = ln E_Q[(P/Q)^α]
//     is a cumulant generating function, hence convex in α (the argument of
//     Wang, Balle & Kasiviswanathan 2019, Cor. 10);
//   - below the smallest order, its value there (monotonicity again);
//   - above the largest order, +Inf (no guarantee).
func (t RDPTable) Curve() RDPCurve {
	orders := append([]int(nil), t.Orders...)
	eps := append([]float64(nil), t.Eps...)
	return func(a float64) float64 {
		if !(a > 1) {
			return math.NaN()
		}
		i := sort.Search(len(orders), func(i int) bool { return float64(orders[i]) >= a })
		switch {
		case i == len(orders):
			return math.Inf(1)
		case float64(orders[i]) == a || i == 0:
			return eps[i]
		}
		lo, hi := float64(orders[i-1]), float64(orders[i])
		el, eh := eps[i-1], eps[i]
		if math.IsInf(eh, 1) {
			return eh
		}
		if math.IsInf(el, 1) {
			return eh
		}
		w := (a - lo) / (hi - lo)
		interp := ((1-w)*(lo-1)*el + w*(hi-1)*eh) / (a - 1)
		return math.Min(interp, eh)
	}
}

// checkRDPDelta checks that δ is in (0, 1), as an RDP → (ε, δ) conversion needs.
func checkRDPDelta(delta float64) error {
	if !(delta > 0 && delta < 1) {
		return fmt.Errorf("delta: must be in (0, 1) for an RDP conversion, got %g", delta)
	}
	return nil
}

// WORSubsampledRDP returns the RDP at integer order α ≥ 2 of a mechanism run
// on a subsample of size m = q·n drawn uniformly without replacement, under
// replace-one adjacency, when the mechanism itself is (j, base(j))-RDP for
// every integer 2 ≤ j ≤ α and has no finite pure-DP bound (ε(∞) = ∞).
// This is the general upper bound of Wang, Balle & Kasiviswanathan 2019,
// Thm 9 (the form Heikkilä et al. 2019 print as eq. 22):
//
//	ε′(α) = 1/(α−1) · ln(1 + q²·C(α,2)·min{4(e^{ε(2)}−1), 2e^{ε(2)}}
//	                      + Σ_{j=3..α} 2·q^j·C(α,j)·e^{(j−1)ε(j)}).
//
// Every term is summed in log space with C(α, j) from lgamma, so neither
// the huge binomials nor e^{(j−1)ε(j)} overflow. It is +Inf if base is +Inf at
// some j ≤ α. It panics when α < 2 or q ∉ [0, 1] (programmer errors).
func WORSubsampledRDP(base func(order int) float64, q float64, alpha int) float64 {
	if alpha < 2 || !(q >= 0 && q <= 1) {
		panic(fmt.Sprintf("stats: WORSubsampledRDP(q = %g, α = %d)", q, alpha))
	}
	if q == 0 {
		return 0
	}
	lq := math.Log(q)
	e2 := base(2)
	if math.IsInf(e2, 1) || math.IsNaN(e2) {
		return math.Inf(1)
	}
	var acc numeric.LogSumAcc
	acc.Add(2*lq + numeric.LogBinomial(alpha, 2) +
		math.Min(math.Log(4)+numeric.LogExpm1(e2), math.Ln2+e2))
	for j := 3; j <= alpha; j++ {
		ej := base(j)
		if math.IsInf(ej, 1) || math.IsNaN(ej) {
			return math.Inf(1)
		}
		acc.Add(math.Ln2 + float64(j)*lq + numeric.LogBinomial(alpha, j) + float64(j-1)*ej)
	}
	return numeric.Log1pExp(acc.Log()) / float64(alpha-1)
}

// IntegerOrders returns the integer Rényi orders 2, 3, …, dense up to
// min(dense, max) and then growing geometrically by the factor growth
// (rounded, strictly increasing) up to and including max. Accountants that
// are only valid at integer orders evaluate on this grid; the RDP → DP
// conversion then loses little, because ε_RDP(α) + ln(1/δ)/(α−1) is flat
// near its minimum at large α.
func IntegerOrders(dense, max int, growth float64) []int {
	if max < 2 || dense < 2 || !(growth > 1) {
		panic(fmt.Sprintf("stats: IntegerOrders(%d, %d, %g)", dense, max, growth))
	}
	var out []int
	for a := 2; a <= min(dense, max); a++ {
		out = append(out, a)
	}
	x := float64(out[len(out)-1])
	for out[len(out)-1] < max {
		x *= growth
		a := int(math.Round(x))
		if a <= out[len(out)-1] {
			a = out[len(out)-1] + 1
		}
		if a > max {
			a = max
		}
		out = append(out, a)
	}
	return out
}
