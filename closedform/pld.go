package closedform

import (
	"fmt"
	"math"
	"math/cmplx"
	"sort"

	"gonum.org/v1/gonum/dsp/fourier"
)

// This file is a privacy-loss-distribution (PLD) accountant for mechanisms
// with a dominating pair (P, Q) whose privacy loss L = ln dP/dQ is a
// monotone function of a real statistic, so that its law under P and under
// Q is known through closed-form tails. The profile of T adaptive
// compositions is δ_T(ε) = E[(1 − e^{ε − L_1 − … − L_T})₊], L_t i.i.d. from
// the PLD under P (composition of trade-off functions, Dong, Roth & Su
// 2019, Thm 3.2, for dominating pairs in the sense of Zhu, Dong & Wang 2022;
// Koskela, Jälkö & Honkela 2020 for the FFT evaluation).
//
// Discretisation (docs/derivations/pld.md, §3): with Y = e^{−L}, δ_T is
// convex in each Y_t and non-increasing in it, so
//   - pessimistic: every grid cell's mass is split between its two end
//     points with its mean of Y kept (a mean-preserving spread; the "connect
//     the dots" PLD of Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022),
//     mass below the grid is moved up to its first point and mass above it
//     to +∞: an upper bound on δ_T for every ε;
//   - optimistic: cells are grouped, with fractional splits, into groups
//     whose mean of Y is exactly a grid value (a mean-preserving
//     contraction), mass below the grid is dropped and mass above it moved
//     down to its last point: a lower bound.
// Both are second-order accurate in the grid width h; the gap between them
// bounds the discretisation error. Compositions are one FFT, a power of
// every coefficient and one inverse FFT; the window of the composed loss is
// chosen by Chernoff bounds on the discrete step PLD, whose tail masses are
// added (pessimistic) or subtracted (optimistic) explicitly.

// lossPair is a dominating pair described by the tails of its privacy loss
// L = ln dP/dQ: tails(l) returns P(L > l), P(L ≤ l), Q(L > l), Q(L ≤ l),
// each accurate in relative terms where it is small.
type lossPair interface {
	tails(l float64) (sp, fp, sq, fq float64)
}

// maxPLDLoss bounds the per-step losses the accountant handles: beyond it
// e^{±L} leaves the float64 range.
const maxPLDLoss = 500.0

// lossBounds returns lo < hi with P(L ≤ lo) ≤ tau and P(L > hi) ≤ tau, found
// by doubling and bisection on the monotone tails; an error when they lie
// beyond ±maxPLDLoss.
func lossBounds(p lossPair, tau float64) (lo, hi float64, err error) {
	_, hi, ok := switchPoint(func(l float64) bool { sp, _, _, _ := p.tails(l); return sp <= tau })
	if ok {
		lo, _, ok = switchPoint(func(l float64) bool { _, fp, _, _ := p.tails(l); return fp > tau })
	}
	if !ok {
		return 0, 0, fmt.Errorf("closedform: the privacy loss exceeds ±%g with probability above %g; the PLD accountant does not cover this noise level", maxPLDLoss, tau)
	}
	if !(lo < hi) {
		lo = hi - 1e-9*math.Max(1, math.Abs(hi))
	}
	return lo, hi, nil
}

// switchPoint brackets the point where a monotone predicate turns from false
// to true and returns a < b with pred(a) false and pred(b) true, b − a small
// (1e-12 relative); ok is false when the switch lies beyond ±maxPLDLoss.
func switchPoint(pred func(float64) bool) (a, b float64, ok bool) {
	a, b = -1, 1
	for pred(a) {
		b = a
		if a *= 2; a < -maxPLDLoss {
			return 0, 0, false
		}
	}
	for !pred(b) {
		a = b
		if b *= 2; b > maxPLDLoss {
			return 0, 0, false
		}
	}
	for i := 0; i < 200 && b-a > 1e-12*math.Max(1e-6, math.Max(math.Abs(a), math.Abs(b))); i++ {
		if m := a + (b-a)/2; pred(m) {
			b = m
		} else {
			a = m
		}
	}
	return a, b, true
}

// stepPLD is one discretised step: masses under P at the losses (lo+i)·h.
type stepPLD struct {
	h   float64
	lo  int
	inf float64 // pessimistic mass at +∞
	// pess and opt are the pessimistic and optimistic masses on the grid.
	pess, opt []float64
	// mgfPess and mgfOpt are their log-MGF tables (for the windows), built
	// on first use.
	mgfPess, mgfOpt *mgfTable
}

// cellMass returns the mass of (a, b] from the tails at both ends, by
// whichever difference subtracts the smaller numbers.
func cellMass(sa, sb, fa, fb float64) float64 {
	var v float64
	if fb <= sa {
		v = fb - fa
	} else {
		v = sa - sb
	}
	return math.Max(v, 0)
}

// discretise builds both step PLDs of the pair on the grid j·h, jlo ≤ j ≤ jhi.
func discretise(p lossPair, h float64, jlo, jhi int) *stepPLD {
	k := jhi - jlo // cells; cell c is (l_c, l_{c+1}], l_g = (jlo+g)·h
	sp, fp := make([]float64, k+1), make([]float64, k+1)
	sq, fq := make([]float64, k+1), make([]float64, k+1)
	for g := 0; g <= k; g++ {
		sp[g], fp[g], sq[g], fq[g] = p.tails(float64(jlo+g) * h)
	}
	m := make([]float64, k)
	// lu[c] = ln(E_P[Y | cell]/Y_{c+1}) ∈ [0, h]: the cell's mean of
	// Y = e^{−L} relative to its smallest value.
	lu := make([]float64, k)
	for c := 0; c < k; c++ {
		m[c] = cellMass(sp[c], sp[c+1], fp[c], fp[c+1])
		if m[c] == 0 {
			continue
		}
		n := cellMass(sq[c], sq[c+1], fq[c], fq[c+1])
		if n > 0 {
			lu[c] = math.Log(n) - math.Log(m[c]) + float64(jlo+c+1)*h
		}
		lu[c] = math.Min(math.Max(lu[c], 0), h)
	}
	s := &stepPLD{h: h, lo: jlo, inf: sp[k], pess: make([]float64, k+1), opt: make([]float64, k+1)}

	// Pessimistic: split each cell between its ends, mean of Y kept.
	s.pess[0] += fp[0]
	em1h := math.Expm1(h)
	for c := 0; c < k; c++ {
		if m[c] == 0 {
			continue
		}
		f := math.Min(math.Max(math.Expm1(lu[c])/em1h, 0), 1) // share at the lower loss l_c
		s.pess[c] += m[c] * f
		s.pess[c+1] += m[c] * (1 - f)
	}

	// Optimistic: at grid point g, the remainder of cell g−1 (mean of Y at or
	// above Y_g) is balanced by fractions of the cells below it (means at or
	// below Y_g) until the group's mean is Y_g exactly.
	rem := append([]float64(nil), m...)
	for g := 1; g <= k; g++ {
		mass := rem[g-1]
		if mass <= 0 {
			continue
		}
		rem[g-1] = 0
		excess := mass * math.Expm1(lu[g-1]) // Σ mass·(Y/Y_g − 1)
		for c := g; excess > 0 && c < k; c++ {
			if rem[c] <= 0 {
				continue
			}
			d := -math.Expm1(lu[c] + float64(g-c-1)*h) // 1 − Y/Y_g for cell c
			if d <= 0 {
				continue
			}
			if room := rem[c] * d; room >= excess {
				th := excess / room
				mass += th * rem[c]
				rem[c] -= th * rem[c]
				excess = 0
			} else {
				mass += rem[c]
				excess -= room
				rem[c] = 0
			}
		}
		at := g
		if excess > 0 { // nothing left below: round the group's mean loss down
			at = g - int(math.Ceil(math.Log1p(excess/mass)/h))
		}
		if at >= 0 {
			s.opt[at] += mass
		}
	}
	s.opt[k] += sp[k]
	return s
}

// moments returns the mean and standard deviation of the finite part of a
// PMF on the grid (lo+i)·h, normalised by its mass.
func moments(w []float64, lo int, h float64) (mean, sd float64) {
	var m0, m1 float64
	for i, v := range w {
		m0 += v
		m1 += v * float64(lo+i) * h
	}
	mean = m1 / m0
	var m2 float64
	for i, v := range w {
		d := float64(lo+i)*h - mean
		m2 += v * d * d
	}
	return mean, math.Sqrt(m2 / m0)
}

// logMGF returns ln Σ_i w_i·e^{λ·(lo+i)·h}.
func logMGF(w []float64, lo int, h, lambda float64) float64 {
	mx := math.Inf(-1)
	for i, v := range w {
		if v > 0 {
			mx = math.Max(mx, lambda*float64(lo+i)*h)
		}
	}
	var s float64
	for i, v := range w {
		if v > 0 {
			s += v * math.Exp(lambda*float64(lo+i)*h-mx)
		}
	}
	return mx + math.Log(s)
}

// mgfTable holds the log-MGF K(±λ) of the finite part of a step PLD on a
// logarithmic grid of λ > 0, from which Chernoff windows for any T are read
// without touching the PMF again.
type mgfTable struct {
	lambda, up, down []float64 // up[i] = K(λ_i), down[i] = K(−λ_i)
}

// newMGFTable tabulates K at 256 values of λ spread over [1e-4, 1e3]/sd (sd
// the per-step standard deviation): the optimal λ for T steps and a tail
// mass τ is about √(2 ln(1/τ)/T)/sd, inside that range for T ≤ 10⁹.
func newMGFTable(w []float64, lo int, h float64) *mgfTable {
	_, sd := moments(w, lo, h)
	sd = math.Max(sd, h)
	const n = 256
	t := &mgfTable{lambda: make([]float64, n), up: make([]float64, n), down: make([]float64, n)}
	for i := range t.lambda {
		l := math.Exp(math.Log(1e-4)+(math.Log(1e3)-math.Log(1e-4))*float64(i)/(n-1)) / sd
		t.lambda[i] = l
		t.up[i] = logMGF(w, lo, h, l)
		t.down[i] = logMGF(w, lo, h, -l)
	}
	return t
}

// window returns t_lo ≤ t_hi such that the sum S of T i.i.d. draws from the
// finite part of the step satisfies mass{S < t_lo} ≤ tau and
// mass{S > t_hi} ≤ tau, by the Chernoff bound mass{S > t} ≤ exp(T·K(λ) − λt)
// (and its mirror image), at the best tabulated λ. Any λ > 0 gives a valid
// bound; the choice only narrows the window.
func (t *mgfTable) window(T int, tau float64) (tlo, thi float64) {
	c := -math.Log(tau)
	tf := float64(T)
	tlo, thi = math.Inf(-1), math.Inf(1)
	for i, l := range t.lambda {
		thi = math.Min(thi, (tf*t.up[i]+c)/l)
		tlo = math.Max(tlo, -(tf*t.down[i]+c)/l)
	}
	return tlo, thi
}

// nextPow2 returns the smallest power of two ≥ n (and ≥ 16).
func nextPow2(n int) int {
	p := 16
	for p < n {
		p *= 2
	}
	return p
}

// maxPLDWindow bounds the FFT length of one composition.
const maxPLDWindow = 1 << 23

// composeFFT returns the T-fold convolution of w (masses at losses
// (lo+i)·h), computed circularly on n points and read on the window of
// indices base…base+n−1: entry i holds the composed mass at loss (base+i)·h
// plus the mass that lies outside the window and aliases onto it.
func composeFFT(w []float64, lo, T, base, n int) []float64 {
	arr := make([]float64, n)
	for i, v := range w {
		arr[i%n] += v
	}
	f := fourier.NewFFT(n)
	c := f.Coefficients(nil, arr)
	tc := complex(float64(T), 0)
	for k, v := range c {
		c[k] = cmplx.Pow(v, tc)
	}
	g := f.Sequence(nil, c)
	out := make([]float64, n)
	off := ((base-T*lo)%n + n) % n
	inv := 1 / float64(n)
	for i := range out {
		out[i] = g[(off+i)%n] * inv
	}
	return out
}

// pldSide is one composed PLD on a window, ready for δ(ε) queries: A[i] is
// the mass at losses ≥ l_i = (base+i)·h and D[i] = Σ_{k>i} g_k(1 − e^{l_i−l_k})
// is δ at ε = l_i from the window alone.
type pldSide struct {
	h    float64
	base int
	A, D []float64
}

// newPLDSide builds the suffix sums: D_{i−1} = e^{−h}D_i + (1 − e^{−h})A_i, a
// recurrence of non-negative terms (no cancellation).
func newPLDSide(g []float64, base int, h float64) *pldSide {
	n := len(g)
	s := &pldSide{h: h, base: base, A: make([]float64, n), D: make([]float64, n)}
	eh, omeh := math.Exp(-h), -math.Expm1(-h)
	acc := 0.0
	for i := n - 1; i >= 0; i-- {
		acc += math.Max(g[i], 0)
		s.A[i] = acc
		if i < n-1 {
			s.D[i] = math.Max(eh*s.D[i+1]+omeh*s.A[i+1], s.D[i+1])
		}
	}
	return s
}

// loss returns l_i.
func (s *pldSide) loss(i int) float64 { return float64(s.base+i) * s.h }

// delta returns Σ_k g_k(1 − e^{ε−l_k})₊ for ε ≥ 0 (any real ε, in fact):
// with l_i the first grid loss ≥ ε and s = l_i − ε, it is
// (1 − e^{−s})A_i + e^{−s}D_i.
func (s *pldSide) delta(eps float64) float64 {
	n := len(s.A)
	i := int(math.Ceil(eps/s.h)) - s.base
	if i < 0 {
		i = 0
	}
	for i < n && s.loss(i) < eps {
		i++
	}
	if i >= n {
		return 0
	}
	d := s.loss(i) - eps
	return -math.Expm1(-d)*s.A[i] + math.Exp(-d)*s.D[i]
}

// epsilon returns the smallest ε ≥ 0 with delta(ε) ≤ target (target > 0).
func (s *pldSide) epsilon(target float64) float64 {
	if s.delta(0) <= target {
		return 0
	}
	n := len(s.A)
	// First grid point with D ≤ target (D is non-increasing); it exists,
	// since D[n−1] = 0.
	i := sort.Search(n, func(i int) bool { return s.D[i] <= target })
	lower := 0.0
	if i > 0 {
		lower = math.Max(lower, s.loss(i-1))
	}
	e := lower
	if s.A[i] > target && s.A[i] > s.D[i] {
		e = math.Max(lower, s.loss(i)-math.Log((s.A[i]-s.D[i])/(s.A[i]-target)))
	}
	for k := 0; k < 64 && s.delta(e) > target; k++ {
		e = math.Nextafter(e, math.Inf(1))
	}
	return e
}

// composedPLD is one direction of a T-fold composition, both bounds.
type composedPLD struct {
	pess, opt *pldSide
	// floor is added to the pessimistic δ (mass at +∞, tail beyond the
	// window, FFT round-off allowance); cut is subtracted from the
	// optimistic one (aliased tail mass, round-off allowance).
	floor, cut float64
}

// composeStep composes one discretised step T times (not safe for
// concurrent use on the same step: it fills the step's MGF tables).
func composeStep(s *stepPLD, T int, tau float64) (*composedPLD, error) {
	if s.mgfPess == nil {
		s.mgfPess = newMGFTable(s.pess, s.lo, s.h)
		s.mgfOpt = newMGFTable(s.opt, s.lo, s.h)
	}
	tlo, thi := s.mgfPess.window(T, tau)
	olo, ohi := s.mgfOpt.window(T, tau)
	tlo, thi = math.Min(tlo, olo), math.Max(thi, ohi)
	base := int(math.Floor(tlo / s.h))
	top := int(math.Ceil(thi / s.h))
	if top-base+1 > maxPLDWindow {
		return nil, fmt.Errorf("closedform: the composed privacy loss spans %d grid points (limit %d)", top-base+1, maxPLDWindow)
	}
	n := nextPow2(top - base + 1)
	gp := composeFFT(s.pess, s.lo, T, base, n)
	gOpt := composeFFT(s.opt, s.lo, T, base, n)
	inf := -math.Expm1(float64(T) * math.Log1p(-s.inf))
	return &composedPLD{
		pess:  newPLDSide(gp, base, s.h),
		opt:   newPLDSide(gOpt, base, s.h),
		floor: inf + tau + roundoffAllowance(gp),
		cut:   tau + roundoffAllowance(gOpt),
	}, nil
}

// roundoffAllowance bounds the effect on δ of the FFT's rounding errors:
// n times the noise level per entry, estimated as the larger of the most
// negative entry (true masses are ≥ 0) and 8·log2(n)·2⁻⁵³ of the largest.
// It is an estimate, not a proof; the tests compare compositions with
// direct convolutions and the exact Gaussian profile.
func roundoffAllowance(g []float64) float64 {
	n := float64(len(g))
	var neg, mx float64
	for _, v := range g {
		neg = math.Max(neg, -v)
		mx = math.Max(mx, v)
	}
	return n * math.Max(neg, 8*math.Log2(n)*0x1p-53*mx)
}

// PLDProfile is the privacy profile of T compositions computed by the PLD
// accountant: Delta is an upper bound on δ(ε) (pessimistic discretisation),
// OptimisticDelta a lower bound on the δ(ε) of the same dominating pair; the
// gap between them is the discretisation error. With several directions
// (add/remove) every function takes the maximum over them.
type PLDProfile struct {
	// Steps is the number T of compositions.
	Steps int
	// GridStep is the loss grid width h.
	GridStep float64
	// WindowSize is the FFT length of the composition.
	WindowSize int
	dirs       []*composedPLD
}

// Floor returns the constant included in Delta for the probability mass
// that is not resolved on the grid (truncated tails, loss +∞, round-off):
// Delta never goes below it, and Epsilon(δ) is +Inf for δ at or below it.
func (p *PLDProfile) Floor() float64 {
	f := 0.0
	for _, d := range p.dirs {
		f = math.Max(f, d.floor)
	}
	return f
}

// Delta returns the pessimistic δ(ε), an upper bound, capped at 1.
func (p *PLDProfile) Delta(eps float64) float64 {
	v := 0.0
	for _, d := range p.dirs {
		v = math.Max(v, d.pess.delta(eps)+d.floor)
	}
	return math.Min(v, 1)
}

// OptimisticDelta returns the optimistic δ(ε), a lower bound on the
// dominating pair's profile.
func (p *PLDProfile) OptimisticDelta(eps float64) float64 {
	v := 0.0
	for _, d := range p.dirs {
		v = math.Max(v, d.opt.delta(eps)-d.cut)
	}
	return math.Min(v, 1)
}

// Epsilon returns the smallest ε ≥ 0 with Delta(ε) ≤ δ, +Inf when δ is at
// or below the floor.
func (p *PLDProfile) Epsilon(delta float64) float64 {
	guess := 0.0
	for _, d := range p.dirs {
		t := delta - d.floor
		if !(t > 0) {
			return math.Inf(1)
		}
		guess = math.Max(guess, d.pess.epsilon(t))
	}
	return smallestCrossing(p.Delta, delta, guess)
}

// OptimisticEpsilon returns the smallest ε ≥ 0 with OptimisticDelta(ε) ≤ δ.
func (p *PLDProfile) OptimisticEpsilon(delta float64) float64 {
	guess := 0.0
	for _, d := range p.dirs {
		guess = math.Max(guess, d.opt.epsilon(delta+d.cut))
	}
	return smallestCrossing(p.OptimisticDelta, delta, guess)
}

// smallestCrossing turns a closed-form guess of where a non-increasing
// profile crosses δ into the smallest float ε ≥ 0 with profile(ε) ≤ δ: it
// brackets the crossing around the guess and bisects on the float bits (the
// guess is off by rounding only, so a few steps suffice).
func smallestCrossing(profile func(float64) float64, delta, guess float64) float64 {
	if profile(0) <= delta {
		return 0
	}
	hi := guess
	for step := 1e-15 * math.Max(hi, 1e-300); profile(hi) > delta; step *= 2 {
		if hi += step; math.IsInf(hi, 1) {
			return hi
		}
	}
	lo := hi
	for step := 1e-15 * math.Max(lo, 1e-300); lo > 0 && profile(lo) <= delta; step *= 2 {
		lo = math.Max(lo-step, 0)
	}
	if profile(lo) <= delta { // lo = 0 is excluded above
		return lo
	}
	a, b := math.Float64bits(lo), math.Float64bits(hi)
	for b-a > 1 {
		m := a + (b-a)/2
		if profile(math.Float64frombits(m)) <= delta {
			b = m
		} else {
			a = m
		}
	}
	return math.Float64frombits(b)
}

// Gap returns the discretisation gap at δ, (ε_pess − ε_opt)/ε_pess (0 when
// ε_pess is 0 or +Inf).
func (p *PLDProfile) Gap(delta float64) float64 {
	ep := p.Epsilon(delta)
	if ep == 0 || math.IsInf(ep, 1) {
		return 0
	}
	return (ep - p.OptimisticEpsilon(delta)) / ep
}
