package closedform

import (
	"math"
	"sort"

	"github.com/mcmcaudit/mcmcaudit/internal/numeric"
	"gonum.org/v1/gonum/integrate/quad"
)

// This file holds the summation engine behind the counterexample curves.
//
// Every quantity of the cyclic-SGLD counterexample is a sum over the n orders
// r of the special datum, and each summand is a smooth function of
// u = λ^(n−r) ∈ {1, λ, …, λ^(n−1)}: S = Σ_{k=0}^{n−1} exp(g(λ^k)). For the
// paper's n ≈ 1.8·10⁷ a direct sum per epoch is 10⁷ special-function calls;
// the engine instead treats the index as continuous, x ∈ [0, n−1] with
// u = e^(−Lx), L = −ln λ, and sums panels of consecutive indices by the
// Euler–Maclaurin formula (Graham, Knuth & Patashnik, Concrete Mathematics,
// §9.5):
//
//	Σ_{k=a}^{b} h(k) = ∫_a^b h dx + (h(a)+h(b))/2 + (h′(b)−h′(a))/12 + R,
//
// with the integral by Gauss–Legendre quadrature (gonum integrate/quad).
// When h⁽⁴⁾ and h⁽⁶⁾ have one common sign on the panel, R lies between 0
// and the first omitted term −(h‴(b)−h‴(a))/720 (Concrete Mathematics
// §9.5); the engine charges 2(|h‴(a)|+|h‴(b)|)/720, with h‴ from second
// differences of the exact h′ at unit spacing. The sign condition is not
// checked panel by panel, so the error bound is an estimate; the tests hold
// it against term-by-term sums. Panels where this charge or the quadrature
// error (two-halves comparison) is too large are split; panels of at most
// directPanel indices are summed term by term. The caller passes the points
// where g may turn (it knows them in closed form), so that every panel is
// monotone: its largest term is at an end, which makes the scale, the
// "negligible panel" rule and the quadrature safe (no hidden spike).
//
// Everything is scaled by the largest term, so sums of terms far below the
// float64 range (e^(−10⁶)) are exact in log space.

// geomTerm returns g(u) = ln(summand) and dg/du at u = λ^k (k may be any
// real in [−1, n]).
type geomTerm func(u float64) (g, gu float64)

// geomGrid is the index set k = 0..n−1 of the sums, u_k = e^(−L·k).
type geomGrid struct {
	n int
	L float64 // −ln λ > 0
}

const (
	// directPanel is the largest panel summed term by term.
	directPanel = 32
	// directAll: grids this small are always summed term by term.
	directAll = 64
	// glNodes is the Gauss–Legendre order on each panel (and each half).
	glNodes = 20
	// sumRelTol is the relative error accepted on one panel.
	sumRelTol = 1e-14
	// sumAbsTol is the absolute error accepted on one panel and the bound
	// below which a whole panel is dropped, in units of the largest term.
	sumAbsTol  = 1e-16
	negligible = 1e-18
	// roundingPerTerm bounds the rounding error of one direct term,
	// relative to the largest term (exp and the term itself, a few ulps).
	roundingPerTerm = 1e-15
)

// Gauss–Legendre nodes and weights on [−1, 1], from gonum.
var glX, glW = func() ([]float64, []float64) {
	x := make([]float64, glNodes)
	w := make([]float64, glNodes)
	quad.Legendre{}.FixedLocations(x, w, -1, 1)
	return x, w
}()

// logSum returns ln Σ_{k=0}^{n−1} exp(g(λ^k)) and a bound on the relative
// error of the sum (so the log is within ±relErr of the exact log, to first
// order). breaks lists values of u where g may change from increasing to
// decreasing; points outside (λ^(n−1), 1) are ignored. It returns −Inf when
// every term is zero.
func (gr geomGrid) logSum(f geomTerm, breaks []float64) (logS, rel float64) {
	s := summer{f: f, L: gr.L}
	N := float64(gr.n - 1)
	if gr.n <= directAll {
		var acc numeric.LogSumAcc
		for k := 0; k < gr.n; k++ {
			g, _ := f(math.Exp(-gr.L * float64(k)))
			acc.Add(g)
		}
		return acc.Log(), float64(gr.n) * roundingPerTerm
	}
	// Monotone pieces [lo_i, hi_i] with integer ends.
	xs := make([]float64, 0, len(breaks))
	for _, u := range breaks {
		if !(u > 0 && u < 1) || math.IsNaN(u) {
			continue
		}
		x := -math.Log(u) / gr.L
		if x > 0 && x < N {
			xs = append(xs, math.Floor(x))
		}
	}
	sort.Float64s(xs)
	type piece struct{ a, b float64 }
	var pieces []piece
	lo := 0.0
	for _, x := range xs {
		if x >= lo {
			pieces = append(pieces, piece{lo, x})
			lo = x + 1
		}
	}
	if lo <= N {
		pieces = append(pieces, piece{lo, N})
	}
	// Scale: the largest term sits at a piece end.
	G := math.Inf(-1)
	for _, p := range pieces {
		for _, x := range [2]float64{p.a, p.b} {
			if g, _ := f(math.Exp(-gr.L * x)); g > G {
				G = g
			}
		}
	}
	if math.IsInf(G, -1) {
		return G, 0
	}
	if math.IsNaN(G) || math.IsInf(G, 1) {
		return math.NaN(), math.Inf(1)
	}
	s.G = G
	// Each term's log carries a rounding error of a few ulps of |g|, so
	// values of h are only that accurate: the tolerance cannot go below it.
	s.relTol = sumRelTol + 1e-15*(math.Abs(G)+50)
	for _, p := range pieces {
		ha, hpa := s.at(p.a)
		hb, hpb := s.at(p.b)
		s.panel(p.a, p.b, ha, hpa, hb, hpb, 0)
	}
	if !(s.sum > 0) {
		return math.NaN(), math.Inf(1)
	}
	return G + math.Log(s.sum), s.err / s.sum
}

// summer accumulates one sum; h(x) = exp(g(e^(−Lx)) − G).
type summer struct {
	f        geomTerm
	L, G     float64
	relTol   float64
	sum, err float64
}

// at returns h(x) and h′(x) = dh/dx.
func (s *summer) at(x float64) (h, hx float64) {
	u := math.Exp(-s.L * x)
	g, gu := s.f(u)
	h = math.Exp(g - s.G)
	if h == 0 {
		return 0, 0
	}
	return h, h * gu * u * (-s.L)
}

// gl returns the Gauss–Legendre estimate of ∫_a^b h.
func (s *summer) gl(a, b float64) float64 {
	c, r := (a+b)/2, (b-a)/2
	var t float64
	for i, x := range glX {
		h, _ := s.at(c + r*x)
		t += glW[i] * h
	}
	return t * r
}

// panel adds Σ_{k=a}^{b} h(k) for integers a ≤ b on which h is monotone.
func (s *summer) panel(a, b, ha, hpa, hb, hpb float64, depth int) {
	count := b - a + 1
	hmax := math.Max(ha, hb)
	if count*hmax <= negligible {
		s.sum += count * (ha + hb) / 2
		s.err += count * hmax
		return
	}
	if count <= directPanel || depth > 60 {
		var t float64
		for k := a; k <= b; k++ {
			h, _ := s.at(k)
			t += h
		}
		s.sum += t
		s.err += count * roundingPerTerm * hmax
		return
	}
	m := (a + b) / 2
	i1 := s.gl(a, b)
	i2 := s.gl(a, m) + s.gl(m, b)
	qerr := math.Abs(i1 - i2)
	// h‴ at the ends by second differences of h′ at unit spacing.
	_, hpa0 := s.at(a - 1)
	_, hpa1 := s.at(a + 1)
	_, hpb0 := s.at(b - 1)
	_, hpb1 := s.at(b + 1)
	h3a := hpa1 - 2*hpa + hpa0
	h3b := hpb1 - 2*hpb + hpb0
	emerr := 2 * (math.Abs(h3a) + math.Abs(h3b)) / 720
	est := i2 + (ha+hb)/2 + (hpb-hpa)/12
	e := qerr + emerr
	if e <= s.relTol*est+sumAbsTol && est > 0 {
		s.sum += est
		s.err += e
		return
	}
	// Split the index set at the integer midpoint.
	mi := math.Floor(m)
	hm, hpm := s.at(mi)
	hn, hpn := s.at(mi + 1)
	s.panel(a, mi, ha, hpa, hm, hpm, depth+1)
	s.panel(mi+1, b, hn, hpn, hb, hpb, depth+1)
}
