package closedform

import (
	"errors"
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/internal/numeric"
)

// Quantity names one of the four lower bounds of EpochCurves.
type Quantity int

const (
	// QChernoff is EpochCurves.Chernoff, the quantity of Heller & Fetaya's
	// Fig. 1 (App. A-E).
	QChernoff Quantity = iota
	// QTail is EpochCurves.Tail.
	QTail
	// QThreshold is EpochCurves.Threshold.
	QThreshold
	// QProfile is EpochCurves.Profile.
	QProfile
)

// Quantities lists the four quantities, from the paper's to the tightest.
var Quantities = []Quantity{QChernoff, QTail, QThreshold, QProfile}

// String names the quantity as the CLI spells it.
func (q Quantity) String() string {
	switch q {
	case QChernoff:
		return "chernoff"
	case QTail:
		return "tail"
	case QThreshold:
		return "threshold"
	case QProfile:
		return "profile"
	}
	return fmt.Sprintf("Quantity(%d)", int(q))
}

// ParseQuantity parses a name returned by String.
func ParseQuantity(s string) (Quantity, error) {
	for _, q := range Quantities {
		if q.String() == s {
			return q, nil
		}
	}
	return 0, fmt.Errorf("quantity: must be chernoff, tail, threshold or profile, got %q", s)
}

// Of returns the quantity's bound in ec.
func (q Quantity) Of(ec EpochCurves) Bound {
	switch q {
	case QTail:
		return ec.Tail
	case QThreshold:
		return ec.Threshold
	case QProfile:
		return ec.Profile
	}
	return ec.Chernoff
}

// IncreasingInC reports whether the quantity is proven non-decreasing in c
// wherever it exceeds its value at c → 0, so that SolveC's root is the
// only one (docs/derivations/interim-region.md, "Solving for c"): true for
// chernoff, tail and threshold, false for profile.
func (q Quantity) IncreasingInC() bool { return q != QProfile }

// QuantityAt returns one quantity at one epoch, computing only what it
// needs (the profile needs the threshold bound as its starting point).
func (c Counterexample) QuantityAt(q Quantity, epoch int, delta float64) (Bound, error) {
	m, err := c.Moments(epoch)
	if err != nil {
		return Bound{}, err
	}
	if err := checkCurveDelta(delta); err != nil {
		return Bound{}, err
	}
	if err := m.checkScale(); err != nil {
		return Bound{}, err
	}
	return m.quantity(q, delta), nil
}

func (m Moments) quantity(q Quantity, delta float64) Bound {
	if m.Epoch == 0 {
		return Bound{}
	}
	mx := m.mixture()
	switch q {
	case QChernoff:
		return mx.chernoffBound(delta)
	case QTail:
		return mx.tailBound(delta)
	case QThreshold:
		return mx.thresholdBound(delta)
	}
	b, _ := mx.profileBound(delta, mx.thresholdBound(delta))
	return b
}

// ErrUnreachable is wrapped by SolveC and SolveEta when no value of the
// unknown makes the quantity reach the target.
var ErrUnreachable = errors.New("target not reachable")

// CSolution is the result of SolveC.
type CSolution struct {
	// C is the slope at which the quantity equals the target at the epoch.
	C float64
	// Bound is the quantity at C (its Epsilon equals the target to about
	// 1e-12 relative, rounded down by its numerical error as always).
	Bound Bound
	// AtZero is the quantity's limit as c → 0 (0 for chernoff and tail; the
	// variances alone separate the datasets slightly for the others).
	AtZero float64
	// Unique is true when the quantity is proven increasing in c above
	// AtZero, so that C is the only solution (Quantity.IncreasingInC).
	Unique bool
}

// SolveC returns the c > 0 (the other fields of c, η included, are kept)
// at which quantity q at the given epoch ≥ 1 equals target > 0.
//
// Every mean difference d_r is proportional to c and no variance depends on
// it, so z_r = c·z_r(1). For chernoff this gives the bracket
// c ∈ [√(2(target − ln(½−δ)))/max z_r(1), √(2(target − ln(½−δ)))/min z_r(1)];
// since chernoff ≤ tail ≤ threshold ≤ profile, the upper end serves all
// four, and the lower end is halved until the quantity is below the target.
// The root is then found by Brent's method to 1e-13 relative. An error
// wrapping ErrUnreachable is returned when the target is at most the
// quantity's limit as c → 0, or needs a c beyond what float64 carries.
// The scaling, the bracket and the monotonicity proofs are in
// docs/derivations/interim-region.md, "Solving for c".
func (c Counterexample) SolveC(q Quantity, epoch int, delta, target float64) (CSolution, error) {
	if err := checkSolveArgs(epoch, delta, target); err != nil {
		return CSolution{}, err
	}
	if q == QChernoff || q == QTail {
		if !(delta < 0.5) {
			return CSolution{}, fmt.Errorf("delta: the %s quantity needs δ < 1/2 (P(θ > μ_j) = 1/2), got %g", q, delta)
		}
	}
	unit := c
	unit.C = 1
	m, err := unit.Moments(epoch)
	if err != nil {
		return CSolution{}, err
	}
	zMin, zMax := m.zRange()
	if !(zMax > 0) {
		return CSolution{}, fmt.Errorf("%w: at epoch %d the datasets' means coincide for every c", ErrUnreachable, epoch)
	}
	at := func(cv float64) (Bound, error) {
		cc := c
		cc.C = cv
		return cc.QuantityAt(q, epoch, delta)
	}
	sol := CSolution{Unique: q.IncreasingInC()}
	// The limit c → 0: at z_r ≤ 1e-150 the means are 1e-150 standard
	// deviations apart, which no quantity can resolve.
	b0, err := at(1e-150 / zMax)
	if err != nil {
		return sol, err
	}
	sol.AtZero = b0.Epsilon
	if !(target > sol.AtZero) {
		return sol, fmt.Errorf("%w: %s at epoch %d is already %.6g as c → 0 (the variances alone), at or above the target %g",
			ErrUnreachable, q, epoch, sol.AtZero, target)
	}
	// For δ ≥ 1/2 (threshold and profile only) the Chernoff bracket is
	// taken at δ = 1/4 and widened below if it falls short.
	need := math.Sqrt(2 * (target - math.Log(0.5-math.Min(delta, 0.25))))
	hi, err := cAboveTarget(at, need/zMin, target)
	if err != nil {
		return sol, err
	}
	lo, err := cBelowTarget(at, need/zMax, q, target)
	if err != nil {
		return sol, err
	}
	f := func(x float64) float64 {
		b, err := at(x)
		if err != nil {
			return math.NaN()
		}
		return b.Epsilon - target
	}
	root, err := numeric.Root(f, lo, hi, 1e-13*hi)
	if err != nil {
		return sol, err
	}
	sol.C = root
	sol.Bound, err = at(root)
	return sol, err
}

// checkSolveArgs checks the arguments SolveC and SolveEta share: a finite
// target ε′ > 0, an epoch ≥ 1 and a δ the curves accept.
func checkSolveArgs(epoch int, delta, target float64) error {
	if !(target > 0) || math.IsInf(target, 1) {
		return fmt.Errorf("target: must be a finite ε′ > 0, got %g", target)
	}
	if epoch < 1 {
		return fmt.Errorf("epoch: must be ≥ 1 (epoch 0 is the prior draw, where ε = 0), got %d", epoch)
	}
	return checkCurveDelta(delta)
}

// cAboveTarget returns the upper end of SolveC's bracket: hi (the Chernoff
// bracket's upper end), doubled until the quantity (at) reaches target.
// An error wrapping ErrUnreachable is returned when hi is not a float64,
// or when the quantity cannot be evaluated before it reaches the target.
func cAboveTarget(at func(float64) (Bound, error), hi, target float64) (float64, error) {
	if math.IsInf(hi, 0) || math.IsNaN(hi) {
		return 0, fmt.Errorf("%w: c would exceed the float64 range", ErrUnreachable)
	}
	bh, err := at(hi)
	for err == nil && bh.Epsilon < target {
		// Only for δ ≥ 1/4 with threshold or profile can the Chernoff
		// bracket fall short; grow it.
		hi *= 2
		bh, err = at(hi)
	}
	if err != nil {
		return 0, fmt.Errorf("%w: reaching ε′ = %g needs c ≈ %.3g or more: %v", ErrUnreachable, target, hi, err)
	}
	return hi, nil
}

// cBelowTarget returns the lower end of SolveC's bracket: lo (the Chernoff
// bracket's lower end), halved until quantity q (at) is below target; an
// error wrapping ErrUnreachable when that takes lo below 1e-300.
func cBelowTarget(at func(float64) (Bound, error), lo float64, q Quantity, target float64) (float64, error) {
	bl, err := at(lo)
	for err == nil && bl.Epsilon >= target {
		lo /= 2
		if lo < 1e-300 {
			return 0, fmt.Errorf("%w: no c > 0 brings %s below the target", ErrUnreachable, q)
		}
		bl, err = at(lo)
	}
	if err != nil {
		return 0, err
	}
	return lo, nil
}

// zRange returns the smallest and largest z_r = d_r/σ̂_r over the orders
// (u ∈ [λ^(n−1), 1]), at the ends or where z′(u) = 0.
func (m Moments) zRange() (lo, hi float64) {
	z := func(u float64) float64 {
		return (m.DiffConst + m.DiffSlope*u) / math.Sqrt(m.VarConst+m.VarSlope*u*u)
	}
	uMin := math.Exp(-float64(m.n-1) * m.L)
	lo, hi = math.Inf(1), math.Inf(-1)
	us := []float64{uMin, 1}
	if m.DiffConst != 0 && m.VarSlope != 0 {
		// z′(u) ∝ D1·V0 − D0·V1·u.
		if u := m.DiffSlope * m.VarConst / (m.DiffConst * m.VarSlope); u > uMin && u < 1 {
			us = append(us, u)
		}
	}
	for _, u := range us {
		v := z(u)
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return lo, hi
}

// EtaCrossing is one step size at which the quantity crosses the target.
type EtaCrossing struct {
	// Eta is the step size; Scale is η·s², the k of η = k/s².
	Eta, Scale float64
	// Rising is true when the quantity goes from below to above the
	// target as η grows through Eta.
	Rising bool
}

// EtaSolution is the result of SolveEta.
type EtaSolution struct {
	// Crossings lists every crossing found, by increasing η.
	Crossings []EtaCrossing
	// PeakEta and PeakEpsilon are the largest value of the quantity seen
	// (grid point refined by golden-section search) and where.
	PeakEta, PeakEpsilon float64
	// Grid is the number of step sizes scanned.
	Grid int
}

// etaGridPerDecade is SolveEta's scan density in 1 − λ = ηs/2.
const etaGridPerDecade = 40

// SolveEta returns the step sizes η ∈ (0, 2/s) at which quantity q at the
// given epoch crosses target > 0, for the c of the receiver (its Eta is
// ignored). The quantity is not monotone in η — at a fixed epoch it rises
// and falls again as the step size sweeps the chain through the interim
// region — so the whole range is scanned: x = 1 − λ = ηs/2 on a grid of
// 40 points per decade from the x at which K·n·x = 1e-3 (extended down
// until the quantity is below the target) to 1 − 1e-9, every sign change
// being refined by Brent's method in ln x; the largest value seen is
// refined by golden-section search and joins the scan, so a single peak
// above the target yields both its crossings however narrow it is. Two
// peaks closer together than the grid spacing can still be missed. An error wrapping ErrUnreachable is
// returned when the quantity never reaches the target on the scan; it
// names the peak. See docs/derivations/interim-region.md, "Solving for η".
func (c Counterexample) SolveEta(q Quantity, epoch int, delta, target float64) (EtaSolution, error) {
	var sol EtaSolution
	if err := checkSolveArgs(epoch, delta, target); err != nil {
		return sol, err
	}
	probe := c
	probe.Eta = 1 / probe.S()
	if err := probe.Validate(); err != nil {
		return sol, err
	}
	s := c.S()
	// ε as a function of t = ln x; NaN where float64 cannot carry it.
	f := func(t float64) float64 {
		cc := c
		cc.Eta = 2 * math.Exp(t) / s
		b, err := cc.QuantityAt(q, epoch, delta)
		if err != nil {
			return math.NaN()
		}
		return b.Epsilon
	}
	ts, vs := etaScan(f, math.Log(1e-3/(float64(epoch)*float64(c.N))), target)
	sol.Grid = len(ts)
	best := argmaxFinite(vs)
	if best < 0 {
		return sol, fmt.Errorf("%w: the curves cannot be evaluated for any η (c too large for float64)", ErrUnreachable)
	}
	ts, vs, tp, vp := refineEtaPeak(f, ts, vs, best)
	sol.PeakEta, sol.PeakEpsilon = 2*math.Exp(tp)/s, vp
	for i := 1; i < len(ts); i++ {
		a, b := vs[i-1]-target, vs[i]-target
		if math.IsNaN(a) || math.IsNaN(b) || (a >= 0) == (b >= 0) {
			continue
		}
		r, err := numeric.Root(func(t float64) float64 { return f(t) - target }, ts[i-1], ts[i], 1e-13)
		if err != nil {
			continue
		}
		eta := 2 * math.Exp(r) / s
		sol.Crossings = append(sol.Crossings, EtaCrossing{Eta: eta, Scale: eta * s * s, Rising: b >= 0})
	}
	if len(sol.Crossings) == 0 {
		return sol, fmt.Errorf("%w: the largest %s at epoch %d over η ∈ (0, 2/s) is %.6g (at η = %.6g = %.6g/s²), below the target %g",
			ErrUnreachable, q, epoch, vp, sol.PeakEta, sol.PeakEta*s*s, target)
	}
	return sol, nil
}

// etaScan evaluates f (ε as a function of t = ln x, x = 1 − λ) on SolveEta's
// grid of etaGridPerDecade points per decade, from tLo — first lowered a
// decade at a time while f(tLo) ≥ target, down to t ≈ −690 — to
// ln(1 − 1e-9). It returns the points and the values.
func etaScan(f func(float64) float64, tLo, target float64) (ts, vs []float64) {
	tHi := math.Log1p(-1e-9)
	for f(tLo) >= target && tLo > -690 {
		tLo -= math.Ln10
	}
	if tLo >= tHi {
		tLo = tHi - math.Ln10
	}
	k := int(math.Ceil((tHi-tLo)/math.Ln10*etaGridPerDecade)) + 1
	ts = make([]float64, k)
	vs = make([]float64, k)
	for i := range ts {
		ts[i] = tLo + (tHi-tLo)*float64(i)/float64(k-1)
		vs[i] = f(ts[i])
	}
	return ts, vs
}

// argmaxFinite returns the index of the largest value of vs that is not
// NaN (the first of equals), or −1 when every value is NaN.
func argmaxFinite(vs []float64) int {
	best := -1
	for i, v := range vs {
		if !math.IsNaN(v) && (best < 0 || v > vs[best]) {
			best = i
		}
	}
	return best
}

// refineEtaPeak refines the grid's largest value vs[best] by golden-section
// search of f between the grid's neighbours of ts[best] (keeping the grid
// point when the search does no better). A refined peak joins the scan, in
// order, so that a peak above the target narrower than one grid cell still
// yields its two crossings. It returns the scan and the peak (tp, vp).
func refineEtaPeak(f func(float64) float64, ts, vs []float64, best int) (_, _ []float64, tp, vp float64) {
	a, b := ts[max(best-1, 0)], ts[min(best+1, len(ts)-1)]
	tp, vp = goldenMax(f, a, b, 40)
	if !(vp >= vs[best]) {
		tp, vp = ts[best], vs[best]
	}
	if tp != ts[best] {
		i := best
		if tp > ts[best] {
			i++
		}
		ts = append(ts[:i], append([]float64{tp}, ts[i:]...)...)
		vs = append(vs[:i], append([]float64{vp}, vs[i:]...)...)
	}
	return ts, vs, tp, vp
}
