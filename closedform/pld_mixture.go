package closedform

import (
	"fmt"
	"math"
	"sort"
)

// GaussMix2 is the law (1 − W)·N(M0, V0) + W·N(M1, V1) on the real line:
// the law of one released statistic of a test whose input holds a given
// record with probability W (DP-Barker's noisy test statistic under the
// path threat model, mechanisms/barker_path.go).
type GaussMix2 struct {
	W      float64
	M0, V0 float64
	M1, V1 float64
}

// Validate checks the mixture.
func (g GaussMix2) Validate() error {
	switch {
	case !(g.W >= 0 && g.W <= 1):
		return fmt.Errorf("W: must be in [0, 1], got %g", g.W)
	case !(g.V0 > 0) || math.IsInf(g.V0, 1) || !(g.V1 > 0) || math.IsInf(g.V1, 1):
		return fmt.Errorf("V0, V1: must be finite and > 0, got %g and %g", g.V0, g.V1)
	case math.IsNaN(g.M0) || math.IsInf(g.M0, 0) || math.IsNaN(g.M1) || math.IsInf(g.M1, 0):
		return fmt.Errorf("M0, M1: must be finite, got %g and %g", g.M0, g.M1)
	}
	return nil
}

// cellMass returns the mass of [a, b] under the mixture, each component's
// share a difference of tails taken on the side of its mean that keeps it
// accurate in relative terms.
func (g GaussMix2) cellMass(a, b float64) float64 {
	comp := func(m, v float64) float64 {
		sd := math.Sqrt(v)
		za, zb := (a-m)/sd, (b-m)/sd
		if za > 0 {
			return normSF(za) - normSF(zb)
		}
		return normCDF(zb) - normCDF(za)
	}
	var s float64
	if g.W < 1 {
		s += (1 - g.W) * comp(g.M0, g.V0)
	}
	if g.W > 0 {
		s += g.W * comp(g.M1, g.V1)
	}
	return math.Max(s, 0)
}

// mixtureGridCells is the number of cells of the statistic's grid.
const mixtureGridCells = 1 << 17

// mixtureGridSDs is the half-width of the statistic's grid in standard
// deviations beyond the outermost component mean: the mass outside is
// below 10⁻³⁰⁰.
const mixtureGridSDs = 37.0

// quantizedPair is the pair (P, Q) of two laws on the real line after the
// statistic is rounded to a fine grid of cells: its privacy loss takes the
// value ln(P(cell)/Q(cell)) on each cell. Rounding is post-processing, so
// its profile is at most the pair's, and it converges to it as the cells
// shrink (the loss varies by less than 10⁻³ of its spread within a cell at
// the grid used here). Sorted by loss, the cells give every tail by a
// binary search.
type quantizedPair struct {
	loss []float64 // ascending
	// cumP[k], cumQ[k]: mass of the k cells of smallest loss; tailP[k],
	// tailQ[k]: mass of the others (each summed from its own end, so that
	// small tails stay accurate in relative terms).
	cumP, cumQ, tailP, tailQ []float64
}

// newQuantizedPair builds the quantized pair (P, Q).
func newQuantizedPair(p, q GaussMix2) *quantizedPair {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, g := range []GaussMix2{p, q} {
		for _, c := range [][2]float64{{g.M0, g.V0}, {g.M1, g.V1}} {
			w := mixtureGridSDs * math.Sqrt(c[1])
			lo, hi = math.Min(lo, c[0]-w), math.Max(hi, c[0]+w)
		}
	}
	type cell struct{ l, p, q float64 }
	cells := make([]cell, 0, mixtureGridCells)
	w := (hi - lo) / mixtureGridCells
	for i := 0; i < mixtureGridCells; i++ {
		a, b := lo+float64(i)*w, lo+float64(i+1)*w
		mp, mq := p.cellMass(a, b), q.cellMass(a, b)
		if mp > 0 && mq > 0 { // cells of no mass on one side lie beyond 10⁻³⁰⁰
			cells = append(cells, cell{math.Log(mp) - math.Log(mq), mp, mq})
		}
	}
	sort.Slice(cells, func(i, j int) bool { return cells[i].l < cells[j].l })
	n := len(cells)
	qp := &quantizedPair{loss: make([]float64, n), cumP: make([]float64, n+1), cumQ: make([]float64, n+1),
		tailP: make([]float64, n+1), tailQ: make([]float64, n+1)}
	for i, c := range cells {
		qp.loss[i] = c.l
		qp.cumP[i+1], qp.cumQ[i+1] = qp.cumP[i]+c.p, qp.cumQ[i]+c.q
	}
	for i := n - 1; i >= 0; i-- {
		qp.tailP[i], qp.tailQ[i] = qp.tailP[i+1]+cells[i].p, qp.tailQ[i+1]+cells[i].q
	}
	return qp
}

// tails implements lossPair.
func (p *quantizedPair) tails(l float64) (sp, fp, sq, fq float64) {
	k := sort.SearchFloat64s(p.loss, math.Nextafter(l, math.Inf(1))) // cells with loss ≤ l
	return p.tailP[k], p.cumP[k], p.tailQ[k], p.cumQ[k]
}

// swap returns the pair (Q, P).
func (p *quantizedPair) swap() *quantizedPair {
	n := len(p.loss)
	s := &quantizedPair{loss: make([]float64, n), cumP: make([]float64, n+1), cumQ: make([]float64, n+1),
		tailP: make([]float64, n+1), tailQ: make([]float64, n+1)}
	for i := range p.loss {
		s.loss[i] = -p.loss[n-1-i]
	}
	for k := 0; k <= n; k++ {
		// The k cells of smallest −L are the k of largest L.
		s.cumP[k], s.cumQ[k] = p.tailQ[n-k], p.tailP[n-k]
		s.tailP[k], s.tailQ[k] = p.cumQ[n-k], p.cumP[n-k]
	}
	return s
}

// MixturePLD returns the PLD accountant of one step that releases a
// statistic of law P under one dataset and Q under its neighbour, P and Q
// two-component Gaussian mixtures, in both directions ((P, Q) and (Q, P));
// the T-fold composition of its Profile is the exact privacy profile of T
// such steps when every step has this pair (an adaptive composition whose
// steps all have it: Dong, Roth & Su 2019, Thm 3.2). The pair's loss need
// not be monotone in the statistic (the components' variances may differ):
// the statistic is rounded to a grid of 2¹⁷ cells (quantizedPair), whose
// error is far below the accountant's discretisation gap.
func MixturePLD(p, q GaussMix2, opt *PLDOptions) (*PLDAccountant, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("P: %w", err)
	}
	if err := q.Validate(); err != nil {
		return nil, fmt.Errorf("Q: %w", err)
	}
	var o PLDOptions
	if opt != nil {
		o = *opt
	}
	qp := newQuantizedPair(p, q)
	if len(qp.loss) == 0 {
		return nil, fmt.Errorf("closedform: the mixtures share no mass on the grid")
	}
	return newPLDAccountant([]lossPair{qp, qp.swap()}, o)
}

// MixturePathSource names the guarantee of MixturePathGuarantee.
const MixturePathSource = "Exact profile of this pair's path: the per-step laws of the released statistic composed by PLD"

// MixturePathGuarantee is the exact privacy profile, for one pair of
// datasets, of T steps that each release a statistic of law P under one and
// Q under the other (MixturePLD's T-fold composition, pessimistic): an
// upper bound on every test between the two paths, and the tightest one.
// It is not a theorem about the sampler (another pair has another
// profile); the path threat model computes it for the pair it audits. The
// statistic is rounded to MixturePLD's grid, an error far below the
// accountant's discretisation gap, which the pessimistic profile adds.
func MixturePathGuarantee(p, q GaussMix2, steps int) (Guarantee, error) {
	spec := mixtureSpec(p, q, steps)
	prof, err := spec.Profile()
	if err != nil {
		return Guarantee{}, err
	}
	return Guarantee{
		Source: MixturePathSource, Release: "path", Applies: true, Profile: prof, Spec: &spec,
		Checks: []Check{{Name: "the canary's contribution at its bound in every step", Holds: true,
			Detail: "the exact profile of this pair's path, computed; not a bound for other pairs"}},
		Note: fmt.Sprintf("%d steps; per step P = (1−%.6g)·N(%.6g, %.6g) + %.6g·N(%.6g, %.6g), Q = (1−%.6g)·N(%.6g, %.6g) + %.6g·N(%.6g, %.6g)",
			steps, p.W, p.M0, p.V0, p.W, p.M1, p.V1, q.W, q.M0, q.V0, q.W, q.M1, q.V1),
	}, nil
}

// mixtureSpec is the spec of MixturePathGuarantee's profile.
func mixtureSpec(p, q GaussMix2, steps int) ProfileSpec {
	return newSpec("mixture-pld", "w_p", p.W, "m0_p", p.M0, "v0_p", p.V0, "m1_p", p.M1, "v1_p", p.V1,
		"w_q", q.W, "m0_q", q.M0, "v0_q", q.V0, "m1_q", q.M1, "v1_q", q.V1, "steps", steps)
}

// buildMixturePLD rebuilds MixturePathGuarantee's profile from its spec.
func buildMixturePLD(s ProfileSpec, _ []func(float64) float64) (func(float64) float64, error) {
	steps, err := s.integer("steps", 1, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	p := GaussMix2{W: s.num("w_p"), M0: s.num("m0_p"), V0: s.num("v0_p"), M1: s.num("m1_p"), V1: s.num("v1_p")}
	q := GaussMix2{W: s.num("w_q"), M0: s.num("m0_q"), V0: s.num("v0_q"), M1: s.num("m1_q"), V1: s.num("v1_q")}
	a, err := MixturePLD(p, q, nil)
	if err != nil {
		return nil, err
	}
	pr, err := a.Profile(steps)
	if err != nil {
		return nil, err
	}
	return pr.Delta, nil
}
