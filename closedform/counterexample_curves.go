package closedform

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"

	"github.com/mcmcaudit/mcmcaudit/internal/numeric"
	"gonum.org/v1/gonum/mathext"
)

// Interval is an interval of θ written as offsets from D1's mean μ_j at the
// epoch: {θ : Lo < θ − μ_j < Hi}; Lo may be −Inf and Hi +Inf.
type Interval struct {
	// Lo and Hi are the ends, as offsets θ − μ_j.
	Lo, Hi float64
}

// Bound is a lower bound on the ε of (ε, δ)-DP for releasing the SGLD
// iterate at one epoch: the event S below satisfies
// P(θ ∈ S) ≥ e^ε·P(θ̂ ∈ S) + δ (or the same with the datasets swapped), so
// no ε′ < Epsilon makes the release (ε′, δ)-DP (Heller & Fetaya Def. III.1).
type Bound struct {
	// Epsilon is the bound, ≥ 0. Its probabilities are rounded by their
	// error bounds in the direction that lowers it, so it never exceeds the
	// exact value of the quantity it evaluates.
	Epsilon float64
	// Err bounds the numerical error: the exact value of the quantity lies
	// in [Epsilon, Epsilon + Err]. For Threshold it covers the evaluation at
	// the threshold found, not the search for the best threshold.
	Err float64
	// Set is the distinguishing event S (empty when Epsilon is 0 because no
	// event gives a positive bound).
	Set []Interval
	// D1First is true when S is more likely under D1: P(θ_j ∈ S) ≥
	// e^ε·P(θ̂_j ∈ S) + δ; false for the other direction.
	D1First bool
}

// EpochCurves gathers the four lower bounds at one epoch, in increasing
// order of tightness: Chernoff ≤ Tail ≤ Threshold ≤ Profile.
type EpochCurves struct {
	// Epoch is K: the bounds concern the iterate after K·n SGLD steps.
	Epoch int
	// Chernoff is the quantity of Heller & Fetaya's Fig. 1 (App. A-E):
	// max{0, ln(1/2 − δ) − ln((1/n) Σ_r exp(−z_r²/2))}, z_r = d_r/σ̂_r, where
	// the Chernoff bound of Lemma IV.5 replaces P(θ̂_j > μ_j).
	Chernoff Bound
	// Tail is the same event S = {θ > μ_j} with P(θ̂_j > μ_j) computed
	// exactly, (1/n) Σ_r Φ(−z_r).
	Tail Bound
	// Threshold is the best half-line {θ > t} or {θ < t} over t, in both
	// directions: max of ln(P(S) − δ) − ln Q(S) and ln(Q(S) − δ) − ln P(S).
	Threshold Bound
	// Profile is ε(δ) of the exact privacy profile, from the hockey-stick
	// divergences δ(ε) = ∫[p − e^ε q]₊ and ∫[q − e^ε p]₊ between D1's
	// Gaussian p and D2's mixture q (the divergence D_{e^ε} of Balle et al.
	// 2019, App.; Heller & Fetaya Def. III.1 taken over all events, whose
	// supremum is attained at a level set of p/q by Neyman–Pearson).
	Profile Bound
	// ProfileExact reports that every mixture component has variance ≥ D1's
	// (true for all configurations with n x_h² β ≥ α): then ln p − ln q is
	// concave, its level sets are intervals or their complements, and
	// Profile is the exact profile up to Err. Otherwise Profile is still a
	// valid lower bound but the event found may not be optimal.
	ProfileExact bool
}

// Curves returns the four lower bounds at one epoch.
func (c Counterexample) Curves(epoch int, delta float64) (EpochCurves, error) {
	m, err := c.Moments(epoch)
	if err != nil {
		return EpochCurves{}, err
	}
	if err := checkCurveDelta(delta); err != nil {
		return EpochCurves{}, err
	}
	if err := m.checkScale(); err != nil {
		return EpochCurves{}, err
	}
	return m.curves(delta), nil
}

// maxZ is the largest standardised mean difference the curves accept: the
// bounds grow like z²/2, and beyond z ≈ 1e100 the Gaussian exponents leave
// the float64 range.
const maxZ = 1e100

// checkScale reports moments that float64 cannot carry through the curves.
func (m Moments) checkScale() error {
	for _, x := range []float64{m.Mean, m.Var, m.DiffConst, m.DiffSlope, m.VarConst, m.VarSlope} {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("c: too large for float64: the moments at epoch %d overflow", m.Epoch)
		}
	}
	sd := math.Sqrt(math.Min(m.Var, m.VarConst))
	if z := (m.DiffConst + m.DiffSlope) / sd; !(z <= maxZ) {
		return fmt.Errorf("c: too large for float64: at epoch %d D2's components lie up to %.3g standard deviations from D1's mean (at most %g supported)",
			m.Epoch, z, maxZ)
	}
	return nil
}

// CurveRange returns Curves for every epoch in [from, to], computed
// concurrently (the result does not depend on the number of workers).
func (c Counterexample) CurveRange(from, to int, delta float64) ([]EpochCurves, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := checkEpochs(from, to); err != nil {
		return nil, err
	}
	if err := checkCurveDelta(delta); err != nil {
		return nil, err
	}
	k := c.consts()
	for e := from; e <= to; e++ {
		if err := k.moments(c, e).checkScale(); err != nil {
			return nil, err
		}
	}
	out := make([]EpochCurves, to-from+1)
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = k.moments(c, from+i).curves(delta)
			}
		}()
	}
	for i := range out {
		next <- i
	}
	close(next)
	wg.Wait()
	return out, nil
}

// TailCurve returns only the exact-tail bound (Tail of EpochCurves) for
// every epoch in [from, to].
func (c Counterexample) TailCurve(from, to int, delta float64) ([]Bound, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := checkEpochs(from, to); err != nil {
		return nil, err
	}
	if err := checkCurveDelta(delta); err != nil {
		return nil, err
	}
	k := c.consts()
	out := make([]Bound, 0, to-from+1)
	for e := from; e <= to; e++ {
		m := k.moments(c, e)
		if err := m.checkScale(); err != nil {
			return nil, err
		}
		out = append(out, m.mixture().tailBound(delta))
	}
	return out, nil
}

func checkCurveDelta(delta float64) error {
	if !(delta > 0 && delta < 1) {
		return fmt.Errorf("delta: must be in (0, 1), got %g", delta)
	}
	return nil
}

func checkEpochs(from, to int) error {
	if from < 0 {
		return fmt.Errorf("epochs: FROM must be ≥ 0, got %d", from)
	}
	if to < from {
		return fmt.Errorf("epochs: TO must be ≥ FROM, got %d:%d", from, to)
	}
	return nil
}

func (m Moments) curves(delta float64) EpochCurves {
	ec := EpochCurves{Epoch: m.Epoch, ProfileExact: true}
	if m.Epoch == 0 {
		// Both datasets output the prior draw: P = Q and every ε is 0.
		return ec
	}
	q := m.mixture()
	ec.Chernoff = q.chernoffBound(delta)
	ec.Tail = q.tailBound(delta)
	ec.Threshold = q.thresholdBound(delta)
	ec.Profile, ec.ProfileExact = q.profileBound(delta, ec.Threshold)
	return ec
}

// epsFromMasses returns ln(A − δ) − ln B, the largest ε with A ≥ e^ε·B + δ,
// or −Inf when A ≤ δ.
func epsFromMasses(lnA, lnB, lnDelta float64) float64 {
	if !(lnA > lnDelta) {
		return math.Inf(-1)
	}
	return lnA + numeric.Log1mExp(lnDelta-lnA) - lnB
}

// massBound turns the masses of one event into a Bound, rounding down.
// lnP, lnQ are D1's and D2's log probabilities of the event, eP, eQ bounds
// on their absolute errors.
func massBound(lnP, eP, lnQ, eQ, lnDelta float64, set []Interval, d1First bool) Bound {
	var low, high float64
	if d1First {
		low = epsFromMasses(lnP-eP, lnQ+eQ, lnDelta)
		high = epsFromMasses(lnP+eP, lnQ-eQ, lnDelta)
	} else {
		low = epsFromMasses(lnQ-eQ, lnP+eP, lnDelta)
		high = epsFromMasses(lnQ+eQ, lnP-eP, lnDelta)
	}
	if !(high > 0) {
		return Bound{}
	}
	b := Bound{Set: set, D1First: d1First, Epsilon: math.Max(low, 0)}
	b.Err = high - b.Epsilon
	if math.IsNaN(b.Err) {
		b.Err = math.Inf(1)
	}
	return b
}

func (q mixture) chernoffBound(delta float64) Bound {
	if !(delta < 0.5) {
		return Bound{}
	}
	lc, e := q.logChernoff()
	// P(θ_j > μ_j) = 1/2 exactly.
	return massBound(-math.Ln2, 0, lc, e, math.Log(delta),
		[]Interval{{0, math.Inf(1)}}, true)
}

func (q mixture) tailBound(delta float64) Bound {
	if !(delta < 0.5) {
		return Bound{}
	}
	lq, e := q.logCDF(0, true)
	return massBound(-math.Ln2, 0, lq, e, math.Log(delta),
		[]Interval{{0, math.Inf(1)}}, true)
}

// span returns an offset range holding all but a negligible part of both P
// and Q, and P's and Q's largest standard deviations.
func (q mixture) span(delta float64) (lo, hi, sd, sdMax float64) {
	sd = math.Sqrt(q.v)
	sdMax = math.Sqrt(math.Max(q.v0+q.v1, q.v0+q.v1*q.uMin*q.uMin))
	zd := 0.0
	if delta < 0.5 {
		zd = -mathext.NormalQuantile(delta)
	}
	w := zd + 10
	dMin := q.d0 + q.d1*q.uMin
	dMax := q.d0 + q.d1
	lo = math.Min(-w*sd, -dMax-w*sdMax)
	hi = math.Max(w*sd, -dMin+w*sdMax)
	return lo, hi, sd, sdMax
}

// thresholdBound searches the half-lines {τ > t} and {τ < t} in both
// directions: a grid over the span (including t = 0, the paper's event),
// then golden-section refinement around the best grid point of each of the
// four combinations.
func (q mixture) thresholdBound(delta float64) Bound {
	lnDelta := math.Log(delta)
	lo, hi, sd, sdMax := q.span(delta)
	dMin, dMax := q.d0+q.d1*q.uMin, q.d0+q.d1
	var grid []float64
	addLin := func(a, b float64, k int) {
		for i := 0; i <= k; i++ {
			grid = append(grid, a+(b-a)*float64(i)/float64(k))
		}
	}
	zd := 0.0
	if delta < 0.5 {
		zd = -mathext.NormalQuantile(delta)
	}
	wd := zd + 10
	addLin(-wd*sd, wd*sd, 64)                  // around P
	addLin(-dMax-wd*sdMax, -dMin+wd*sdMax, 64) // around Q
	addLin(lo, hi, 32)                         // everything
	grid = append(grid, 0)
	sortUnique(&grid)

	type combo struct {
		upper, d1First bool
	}
	combos := []combo{{true, true}, {false, true}, {true, false}, {false, false}}
	eval := func(t float64, cb combo) (eps float64) {
		lnP := gaussLogCDF(t, sd, cb.upper)
		lnQ, _ := q.logCDF(t, cb.upper)
		if cb.d1First {
			return epsFromMasses(lnP, lnQ, lnDelta)
		}
		return epsFromMasses(lnQ, lnP, lnDelta)
	}
	best := make([]int, len(combos))
	bestV := make([]float64, len(combos))
	for i := range bestV {
		bestV[i] = math.Inf(-1)
	}
	for i, t := range grid {
		lnPu, lnPl := gaussLogCDF(t, sd, true), gaussLogCDF(t, sd, false)
		lnQu, _ := q.logCDF(t, true)
		lnQl, _ := q.logCDF(t, false)
		vals := [4]float64{
			epsFromMasses(lnPu, lnQu, lnDelta),
			epsFromMasses(lnPl, lnQl, lnDelta),
			epsFromMasses(lnQu, lnPu, lnDelta),
			epsFromMasses(lnQl, lnPl, lnDelta),
		}
		for j, v := range vals {
			if v > bestV[j] {
				best[j], bestV[j] = i, v
			}
		}
	}
	var out Bound
	for j, cb := range combos {
		if math.IsInf(bestV[j], -1) {
			continue
		}
		i := best[j]
		a, b := grid[max(i-1, 0)], grid[min(i+1, len(grid)-1)]
		t, v := goldenMax(func(t float64) float64 { return eval(t, cb) }, a, b, 48)
		if !(v > bestV[j]) {
			t = grid[i]
		}
		lnP := gaussLogCDF(t, sd, cb.upper)
		lnQ, eQ := q.logCDF(t, cb.upper)
		set := []Interval{{t, math.Inf(1)}}
		if !cb.upper {
			set = []Interval{{math.Inf(-1), t}}
		}
		bd := massBound(lnP, gaussLogErr(lnP), lnQ, eQ, lnDelta, set, cb.d1First)
		if bd.Epsilon > out.Epsilon || out.Set == nil && bd.Set != nil {
			out = bd
		}
	}
	return out
}

// sortUnique sorts xs and drops repeated values.
func sortUnique(xs *[]float64) {
	s := *xs
	sort.Float64s(s)
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != out[len(out)-1] {
			out = append(out, x)
		}
	}
	*xs = out
}

// goldenMax maximises f on [a, b] by golden-section search
// (numeric.GoldenMax), exact for unimodal f; it returns the best point
// seen, the endpoints included.
func goldenMax(f func(float64) float64, a, b float64, iters int) (float64, float64) {
	bx, bf := numeric.GoldenMax(f, a, b, iters, 0)
	for _, x := range [2]float64{a, b} {
		if v := f(x); v > bf {
			bx, bf = x, v
		}
	}
	return bx, bf
}
