package closedform

import (
	"math"

	"github.com/mcmcaudit/mcmcaudit/internal/numeric"
)

// The exact privacy profile of the counterexample at one epoch.
//
// For distributions P and Q and ε ≥ 0, the hockey-stick divergence is
// δ(ε) = sup_S P(S) − e^ε Q(S) = ∫[p − e^ε q]₊, the supremum being attained
// by the level set S_ε = {p > e^ε q} (Neyman–Pearson; this is the
// divergence D_{e^ε} of Balle et al. 2019, App., and Heller & Fetaya's
// Def. III.1 taken over every event). The release is (ε, δ)-DP for this
// pair iff δ(ε) ≤ δ in both directions, so the exact ε(δ) in the direction
// P over Q is the ε* with δ(ε*) = δ. For a fixed event S the largest ε with
// P(S) ≥ e^ε Q(S) + δ is F_S = ln(P(S) − δ) − ln Q(S); F_S ≤ ε* for every
// S, with equality at S = S_ε*. Write F(ε) = F_{S_ε}. Below ε*, δ(ε) > δ
// gives F(ε) > ε; above it F(ε) ≤ ε* < ε; and F is flat at ε* (dF/dε ∝
// e^ε Q(S) − (P(S) − δ) = 0 there). The engine brackets the root of
// F(ε) − ε from a valid start (the best half-line, or 0) and refines it by
// Brent's method; every F value is itself a valid lower bound and the
// largest is reported, so an inexact root costs only second-order
// tightness, never validity.
//
// Writing ℓ(τ) = ln p(τ) − ln q(τ) in the offset τ = θ − μ_j, S_ε = {ℓ > ε}
// for P over Q and {ℓ < −ε} for Q over P. When every mixture component's
// variance is at least P's, ln q − ln p is a log-sum-exp of convex
// quadratics, hence convex: ℓ is concave, {ℓ > ε} is one interval and
// {ℓ < −ε} the complement of one. Its ends are found by Brent's method on
// either side of the maximiser of ℓ (golden-section search). Otherwise ℓ is
// tabulated on a grid and every sign change refined (gridLevelSets), which
// gives a valid but not certified event. Outside the span (both P and Q
// have mass < e^(−50) there) S is continued to ±∞.

// profileBound returns Profile and whether it is certified exact (ℓ
// concave). seed is the best half-line bound, a valid starting point.
func (q mixture) profileBound(delta float64, seed Bound) (Bound, bool) {
	lnDelta := math.Log(delta)
	lo, hi, sd, _ := q.span(delta)
	exact := q.concave()
	ell := func(t float64) float64 {
		lq, _ := q.logDensity(t)
		return -t*t/(2*q.v) - 0.5*math.Log(q.v) - halfLog2Pi - lq
	}
	xtol := 1e-9 * sd
	var levelSet func(level float64, above bool) []Interval
	if exact {
		levelSet = concaveLevelSets(ell, lo, hi, xtol)
	} else {
		levelSet = gridLevelSets(ell, lo, hi, xtol)
	}

	var best Bound
	for _, d1First := range []bool{true, false} {
		var bestSet []Interval
		bestEps := math.Inf(-1)
		// F(ε) = F_{S_ε}; every value is a valid bound, the largest is kept.
		F := func(eps float64) float64 {
			var set []Interval
			if d1First {
				set = levelSet(eps, true)
			} else {
				set = levelSet(-eps, false)
			}
			if len(set) == 0 {
				return math.Inf(-1)
			}
			lnP, _, lnQ, _ := q.setMass(set, sd)
			var v float64
			if d1First {
				v = epsFromMasses(lnP, lnQ, lnDelta)
			} else {
				v = epsFromMasses(lnQ, lnP, lnDelta)
			}
			if v > bestEps {
				bestEps, bestSet = v, set
			}
			return v
		}
		lo := 0.0
		if seed.D1First == d1First && seed.Epsilon > 0 {
			lo = seed.Epsilon
		}
		// G(ε) = F(ε) − ε is ≥ 0 below ε* and < 0 above it; F(ε) ≤ ε* for
		// every ε, so each F value raises the lower end of the bracket.
		G := func(eps float64) float64 {
			v := F(eps) - eps
			if math.IsInf(v, -1) {
				return -1 - eps
			}
			return v
		}
		if flo := F(lo); flo > lo {
			solveFixedPoint(F, G, flo, &bestEps)
		}
		if bestSet == nil {
			continue
		}
		lnP, eP, lnQ, eQ := q.setMass(bestSet, sd)
		b := massBound(lnP, eP, lnQ, eQ, lnDelta, bestSet, d1First)
		if b.Epsilon > best.Epsilon || best.Set == nil && b.Set != nil {
			best = b
		}
	}
	// The root of G is found to 1e-13 relative; F is flat there, so the
	// bound misses ε* by far less, but charge the tolerance anyway.
	if best.Set != nil {
		best.Err += 1e-12 * math.Max(1, best.Epsilon)
	}
	// Every half-line is an event too: the profile is never below it.
	if seed.Epsilon > best.Epsilon {
		return seed, exact
	}
	return best, exact
}

// concaveLevelSets returns a function giving {ℓ > level} (above) or
// {ℓ < level} on [lo, hi] for a concave ℓ: one interval around ℓ's
// maximiser or its complement, continued to ±∞ where ℓ is above the level
// at the ends.
func concaveLevelSets(ell func(float64) float64, lo, hi, xtol float64) func(float64, bool) []Interval {
	tm, lm := goldenMax(ell, lo, hi, 60)
	lLo, lHi := ell(lo), ell(hi)
	return func(level float64, above bool) []Interval {
		if !(lm > level) {
			if above {
				return nil
			}
			return []Interval{{math.Inf(-1), math.Inf(1)}}
		}
		f := func(t float64) float64 { return ell(t) - level }
		left, right := math.Inf(-1), math.Inf(1)
		if !(lLo > level) {
			if r, err := numeric.Root(f, lo, tm, xtol); err == nil {
				left = r
			} else {
				left = lo
			}
		}
		if !(lHi > level) {
			if r, err := numeric.Root(f, tm, hi, xtol); err == nil {
				right = r
			} else {
				right = hi
			}
		}
		if above {
			return []Interval{{left, right}}
		}
		var s []Interval
		if !math.IsInf(left, -1) {
			s = append(s, Interval{math.Inf(-1), left})
		}
		if !math.IsInf(right, 1) {
			s = append(s, Interval{right, math.Inf(1)})
		}
		return s
	}
}

// levelGrid is the number of points on which gridLevelSets tabulates ℓ.
const levelGrid = 512

// gridLevelSets is the fallback for an ℓ that need not be concave: ℓ is
// tabulated once on levelGrid points of [lo, hi], every sign change of
// ℓ − level between neighbours is refined by Brent's method, and the set is
// the union of the pieces where ℓ is above (or below) the level, continued
// to ±∞ past the ends. Features of ℓ narrower than the grid spacing can be
// missed; the event is still valid, only possibly not optimal.
func gridLevelSets(ell func(float64) float64, lo, hi, xtol float64) func(float64, bool) []Interval {
	ts := make([]float64, levelGrid)
	ls := make([]float64, levelGrid)
	for i := range ts {
		ts[i] = lo + (hi-lo)*float64(i)/(levelGrid-1)
		ls[i] = ell(ts[i])
	}
	return func(level float64, above bool) []Interval {
		in := func(v float64) bool {
			if above {
				return v > level
			}
			return v < level
		}
		f := func(t float64) float64 { return ell(t) - level }
		var s []Interval
		start := math.NaN()
		if in(ls[0]) {
			start = math.Inf(-1)
		}
		for i := 1; i < len(ts); i++ {
			a, b := in(ls[i-1]), in(ls[i])
			if a == b {
				continue
			}
			r, err := numeric.Root(f, ts[i-1], ts[i], xtol)
			if err != nil {
				r = (ts[i-1] + ts[i]) / 2
			}
			if b {
				start = r
			} else {
				s = append(s, Interval{start, r})
			}
		}
		if in(ls[len(ls)-1]) {
			s = append(s, Interval{start, math.Inf(1)})
		}
		return s
	}
}

// solveFixedPoint brackets the root of G above lo (where G ≥ 0), growing
// the step until G < 0, then refines it by Brent's method; F records the
// best event on the way.
func solveFixedPoint(F, G func(float64) float64, lo float64, bestEps *float64) {
	step := math.Max(1, lo) * 0.05
	hi := lo + step
	for G(hi) >= 0 {
		lo = math.Max(hi, *bestEps)
		step *= 2
		hi = lo + step
		if math.IsInf(hi, 1) {
			return
		}
	}
	if G(lo) > 0 {
		if r, err := numeric.Root(G, lo, hi, 1e-13*math.Max(1, hi)); err == nil {
			F(r)
		}
	}
}

// concave reports whether every component variance V0 + V1u² (u ∈
// [λ^(n−1), 1]) is at least P's variance v.
func (q mixture) concave() bool {
	return q.v0+q.v1*q.uMin*q.uMin >= q.v
}

// setMass returns ln P(S), ln Q(S) and bounds on their absolute errors for
// a union of disjoint intervals.
func (q mixture) setMass(set []Interval, sd float64) (lnP, eP, lnQ, eQ float64) {
	lnP, lnQ = math.Inf(-1), math.Inf(-1)
	type part struct{ lp, ep, lq, eq float64 }
	var parts []part
	for _, iv := range set {
		lp, ep := gaussInterval(iv, sd)
		lq, eq := q.mixInterval(iv)
		parts = append(parts, part{lp, ep, lq, eq})
		lnP = numeric.LogAddExp(lnP, lp)
		lnQ = numeric.LogAddExp(lnQ, lq)
	}
	if len(parts) == 1 {
		return lnP, parts[0].ep, lnQ, parts[0].eq
	}
	// A sum of positive parts: its relative error is at most the largest
	// relative error of a part.
	for _, p := range parts {
		eP = math.Max(eP, p.ep)
		eQ = math.Max(eQ, p.eq)
	}
	return lnP, eP, lnQ, eQ
}

// gaussInterval returns ln P(Lo < τ < Hi) for P = N(0, sd²) and a bound on
// the absolute error of that log.
func gaussInterval(iv Interval, sd float64) (float64, float64) {
	a, b := iv.Lo, iv.Hi
	switch {
	case math.IsInf(a, -1) && math.IsInf(b, 1):
		return 0, 0
	case math.IsInf(a, -1):
		l := gaussLogCDF(b, sd, false)
		return l, gaussLogErr(l)
	case math.IsInf(b, 1):
		l := gaussLogCDF(a, sd, true)
		return l, gaussLogErr(l)
	}
	la, lb := gaussLogCDF(a, sd, false), gaussLogCDF(b, sd, true) // the two tails left out
	return complementOfTails(la, gaussLogErr(la), lb, gaussLogErr(lb),
		func() (float64, float64) { l := gaussLogCDF(a, sd, true); return l, gaussLogErr(l) },
		func() (float64, float64) { l := gaussLogCDF(b, sd, false); return l, gaussLogErr(l) })
}

// mixInterval returns ln Q(Lo < τ < Hi) and a bound on the absolute error
// of that log.
func (q mixture) mixInterval(iv Interval) (float64, float64) {
	a, b := iv.Lo, iv.Hi
	switch {
	case math.IsInf(a, -1) && math.IsInf(b, 1):
		return 0, 0
	case math.IsInf(a, -1):
		return q.logCDF(b, false)
	case math.IsInf(b, 1):
		return q.logCDF(a, true)
	}
	la, ea := q.logCDF(a, false)
	lb, eb := q.logCDF(b, true)
	return complementOfTails(la, ea, lb, eb,
		func() (float64, float64) { return q.logCDF(a, true) },
		func() (float64, float64) { return q.logCDF(b, false) })
}

// complementOfTails returns ln(1 − L − R) for the left tail L = e^la below
// a and the right tail R = e^lb above b (log errors ea, eb), and its log
// error. When the two tails hold more than half of the mass the difference
// would lose precision, so it is taken between the larger tail's complement
// (upperA = mass above a, or lowerB = mass below b) and the other tail.
func complementOfTails(la, ea, lb, eb float64, upperA, lowerB func() (float64, float64)) (float64, float64) {
	t := numeric.LogAddExp(la, lb)
	if t <= -math.Ln2 {
		l := numeric.Log1mExp(t)
		abs := relErr(ea)*math.Exp(la) + relErr(eb)*math.Exp(lb)
		return l, logErr(abs / math.Exp(l))
	}
	var big, ebig, small, esmall float64
	if la >= lb {
		// Most mass lies below a: S = (a, ∞) minus (b, ∞).
		big, ebig = upperA()
		small, esmall = lb, eb
	} else {
		big, ebig = lowerB()
		small, esmall = la, ea
	}
	if !(big > small) {
		return math.Inf(-1), math.Inf(1)
	}
	l := numeric.LogSubExp(big, small)
	rel := relErr(ebig)*math.Exp(big-l) + relErr(esmall)*math.Exp(small-l)
	return l, logErr(rel)
}
