package audit

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"gonum.org/v1/gonum/mathext"
)

// RepeatLevel is the level at which repeated runs are judged: runs are
// refused as copied (or as sharing a seed) only when independent runs at
// the values' resolution would repeat at least as often with probability
// below RepeatLevel (docs/derivations/duplicate-rows.md). A false alarm
// blocks an audit, hence a level far below the bounds' own.
const RepeatLevel = 1e-6

// repeatMargin multiplies the estimated expectation of chance repeats
// before the Poisson limit is taken: it covers the estimate's own error
// (the study in docs/derivations/duplicate-rows.md measures it).
const repeatMargin = 1.5

// repeatProbes is the number of values of each run, its last ones, from
// which the chance of a repeat is estimated. A run repeats only if all
// its values do, so any of them bounds that chance from above; the last
// ones are the most mixed states of a chain.
const repeatProbes = 4

// repeatNeighbours is k of the k-nearest-neighbour density estimate.
const repeatNeighbours = 32

// RepeatBound is what independent runs would repeat by chance: the
// estimated expectation of the repeats at the values' resolution and the
// largest count accepted at Level.
type RepeatBound struct {
	// Expected is the expected number of repeats of independent runs,
	// estimated from the runs' values at their resolution.
	Expected float64 `json:"expected"`
	// Limit is the largest number of repeats accepted: a Poisson count
	// whose mean is 1.5 × Expected (a margin for the estimate's error)
	// exceeds it with probability at most Level.
	Limit int `json:"limit"`
	// Level is RepeatLevel.
	Level float64 `json:"level"`
	// Bits is the values' resolution: the most significant bits any of
	// them holds (24 for float32, 53 for float64); 0 when there are no
	// values to estimate from (trials files written before they were
	// kept, or values that are all 0), and then Expected is 0.
	Bits int `json:"bits"`
}

// Exceeded reports whether the repeats d exceed the limit.
func (b RepeatBound) Exceeded(d Duplicates) bool { return d.Total() > b.Limit }

// String states the expectation in words.
func (b RepeatBound) String() string {
	if b.Bits == 0 {
		return fmt.Sprintf("independent runs would not repeat (no values to estimate a chance repeat from; at most %d at level %s)", b.Limit, levelText(b.Level))
	}
	return fmt.Sprintf("independent runs at the values' resolution (%d significant bits) would repeat about %s times (at most %d at level %s)",
		b.Bits, expectedText(b.Expected), b.Limit, levelText(b.Level))
}

func expectedText(x float64) string {
	if x < 0.01 {
		return strconv.FormatFloat(x, 'e', 1, 64)
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

func levelText(a float64) string {
	if a == 1e-6 {
		return "10⁻⁶"
	}
	return strconv.FormatFloat(a, 'g', -1, 64)
}

// newRepeatBound turns an estimated expectation into a bound.
func newRepeatBound(expected float64, bits int) RepeatBound {
	return RepeatBound{Expected: expected, Limit: poissonLimit(repeatMargin*expected, RepeatLevel), Level: RepeatLevel, Bits: bits}
}

// poissonLimit returns the smallest L ≥ 0 such that a Poisson count of
// mean lambda exceeds L with probability at most alpha:
// P(X > L) = P(L+1, λ), the regularized lower incomplete gamma function.
func poissonLimit(lambda, alpha float64) int {
	if !(lambda > 0) {
		return 0
	}
	tail := func(l int) float64 { return mathext.GammaIncReg(float64(l+1), lambda) }
	hi := int(lambda + 20*math.Sqrt(lambda) + 40)
	for tail(hi) > alpha {
		hi *= 2
	}
	return sort.Search(hi+1, func(l int) bool { return tail(l) <= alpha })
}

// probeColumns holds the probe values of the runs of one dataset, column
// by column, with each column's resolution (from both datasets' values).
type probeColumns struct {
	n    int
	cols []*probeColumn
}

// probeColumn is one probe value of every run of a dataset: its distinct
// values in increasing order and how often each occurs, and the grid the
// values lie on.
type probeColumn struct {
	vals   []float64
	counts []int
	grid   valueGrid
}

// valueGrid is the coarsest grid of the form "p significant bits, and
// multiples of 2^q" on which all of a column's values lie: the spacing at
// v is 2^max(e(v)−p, q) for v in [2^(e−1), 2^e). Values printed as the
// shortest decimals of float32 numbers (and parsed as float64) are put on
// the float32 grid of the numbers they print.
type valueGrid struct {
	bits int  // p
	q    int  // exponent of the smallest unit
	f32  bool // the values are float32 numbers printed as shortest decimals
	zero bool // every value is 0
}

// bitsOf returns the significant bits of a finite v ≠ 0, the exponent of
// its lowest set bit, and e with |v| in [2^(e−1), 2^e); ok is false for 0
// and for values that are not finite.
func bitsOf(v float64) (sig, low, e int, ok bool) {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, 0, 0, false
	}
	m, e := math.Frexp(math.Abs(v))
	mant := uint64(m * (1 << 53))
	tz := 0
	for mant&1 == 0 {
		mant >>= 1
		tz++
	}
	return 53 - tz, e - 53 + tz, e, true
}

// shortestFloat32 reports whether v is the float64 parse of the shortest
// decimal that prints a float32 number.
func shortestFloat32(v float64) bool {
	f := float32(v)
	if math.IsInf(float64(f), 0) {
		return false
	}
	w, err := strconv.ParseFloat(strconv.FormatFloat(float64(f), 'g', -1, 32), 64)
	return err == nil && w == v
}

// gridOf finds the grid of a column's values (both datasets').
func gridOf(cols ...[]float64) valueGrid {
	g := scanGrid(cols, false)
	if g.bits > 24 && allShortestFloat32(cols) {
		g = scanGrid(cols, true)
		g.f32 = true
	}
	return g
}

func allShortestFloat32(cols [][]float64) bool {
	for _, c := range cols {
		for _, v := range c {
			if !shortestFloat32(v) {
				return false
			}
		}
	}
	return true
}

func scanGrid(cols [][]float64, f32 bool) valueGrid {
	g := valueGrid{q: math.MaxInt, zero: true}
	for _, c := range cols {
		for _, v := range c {
			if f32 {
				v = float64(float32(v))
			}
			if sig, low, _, ok := bitsOf(v); ok {
				g.bits, g.q, g.zero = max(g.bits, sig), min(g.q, low), false
			}
		}
	}
	return g
}

// spacing returns the grid's spacing at v: the width of the interval of
// reals that round to v.
func (g valueGrid) spacing(v float64) float64 {
	if g.f32 {
		v = float64(float32(v))
	}
	_, _, e, ok := bitsOf(v)
	if !ok {
		if v == 0 && !g.zero {
			return math.Ldexp(1, g.q)
		}
		return 0
	}
	return math.Ldexp(1, max(e-g.bits, g.q))
}

// newProbeColumn sorts a dataset's values of one probe.
func newProbeColumn(x []float64, g valueGrid) *probeColumn {
	s := make([]float64, 0, len(x))
	for _, v := range x {
		if !math.IsNaN(v) && !math.IsInf(v, 0) { // refused elsewhere
			s = append(s, v)
		}
	}
	sort.Float64s(s)
	c := &probeColumn{grid: g}
	for i, v := range s {
		if i > 0 && v == s[i-1] {
			c.counts[len(c.counts)-1]++
			continue
		}
		c.vals, c.counts = append(c.vals, v), append(c.counts, 1)
	}
	return c
}

// mass estimates the probability that a run of this dataset releases
// exactly v at this probe: the density near v, from the values other than
// v (so that copies of v do not raise it), times the grid's spacing at v.
// The density is the k-nearest-neighbour estimate c/(m·2d), d the
// distance to the k-th nearest value other than v and c the values within
// d (ties at d included); m, others, is the number of runs the estimate
// counts (n − 1 when v is one of the column's own values). ok is false
// when the column holds no value other than v.
func (c *probeColumn) mass(v float64, others int) (float64, bool) {
	if math.IsNaN(v) || math.IsInf(v, 0) || others < 1 {
		return 0, false
	}
	count, d := c.nearest(v, repeatNeighbours)
	if count == 0 || !(d > 0) {
		return 0, false
	}
	p := c.grid.spacing(v) * float64(count) / (float64(others) * 2 * d)
	return min(p, 1), true
}

// nearest returns d, the distance from v to the k-th nearest value other
// than v, and count, the number of values other than v within d (all
// those at distance d included); count is 0 when there are none.
func (c *probeColumn) nearest(v float64, k int) (count int, d float64) {
	r := sort.SearchFloat64s(c.vals, v) // the first value ≥ v
	l := r - 1
	if r < len(c.vals) && c.vals[r] == v {
		r++
	}
	dist := func(j int) float64 {
		if j < 0 || j >= len(c.vals) {
			return math.Inf(1)
		}
		return math.Abs(c.vals[j] - v)
	}
	for count < k {
		next := min(dist(l), dist(r))
		if math.IsInf(next, 1) {
			break
		}
		d = next
		for ; dist(l) == d; l-- {
			count += c.counts[l]
		}
		for ; dist(r) == d; r++ {
			count += c.counts[r]
		}
	}
	return count, d
}

// rowMass bounds the probability that a run releases exactly the probe
// values x: the least of the probes' masses (a run repeats only if every
// value does). 0 when no probe can be estimated.
func (pc *probeColumns) rowMass(x []float64, others int) float64 {
	m, any := 1.0, false
	for k, c := range pc.cols {
		if p, ok := c.mass(x[k], others); ok {
			m, any = min(m, p), true
		}
	}
	if !any {
		return 0
	}
	return m
}

// withinExpected is the expected number of repeats among n independent
// draws of a law whose draw X has probability π(X) of each value:
// E[n − distinct] = E[h(π(X))] with h(π) = n − (1 − (1 − π)ⁿ)/π
// (the birthday count C(n, 2)·π for small π), estimated by the average
// over the draws.
func withinExpected(n int, pi func(i int) float64) float64 {
	if n < 2 {
		return 0
	}
	s := 0.0
	for i := 0; i < n; i++ {
		s += birthday(n, pi(i))
	}
	return s / float64(n)
}

// birthday is h(π) = n − (1 − (1 − π)ⁿ)/π, the term of a value of
// probability π in E[n − distinct] = Σ_v π_v·h(π_v) (withinExpected).
func birthday(n int, p float64) float64 {
	fn := float64(n)
	if p <= 0 {
		return 0
	}
	if fn*p < 1e-4 {
		// Series: C(n,2)π − C(n,3)π² + …, to relative 1e-8.
		return fn * (fn - 1) / 2 * p * (1 - (fn-2)*p/3)
	}
	return fn + math.Expm1(fn*math.Log1p(-p))/p
}

// acrossExpected is the expected number of the draws x'ⱼ of one dataset
// that equal one of n draws of the other, whose law gives x'ⱼ's value
// probability π(j): Σⱼ 1 − (1 − π(j))ⁿ.
func acrossExpected(m, n int, pi func(j int) float64) float64 {
	s := 0.0
	for j := 0; j < m; j++ {
		if p := pi(j); p > 0 {
			s += -math.Expm1(float64(n) * math.Log1p(-p))
		}
	}
	return s
}

// probeSet is the probe values of every run of both datasets: probes[s]
// holds dataset s's runs, K values each.
type probeSet struct {
	k      int
	probes [2][]float64
}

// columns builds the probe columns of both datasets, with the grids of
// both datasets' values, and returns the grids' finest resolution.
func (ps *probeSet) columns() ([2]probeColumns, int) {
	var out [2]probeColumns
	bits := 0
	for s := range out {
		out[s].n = len(ps.probes[s]) / max(ps.k, 1)
	}
	for k := 0; k < ps.k; k++ {
		var x [2][]float64
		for s := range x {
			x[s] = make([]float64, out[s].n)
			for i := range x[s] {
				x[s][i] = ps.probes[s][i*ps.k+k]
			}
		}
		g := gridOf(x[0], x[1])
		if !g.zero {
			bits = max(bits, g.bits)
		}
		for s := range out {
			out[s].cols = append(out[s].cols, newProbeColumn(x[s], g))
		}
	}
	return out, bits
}

// expected estimates the expected number of repeats of independent runs:
// within each dataset, and, when across is set, of runs of D′ that repeat
// a run of D; it returns the estimate and the values' resolution.
func (ps *probeSet) expected(across bool) (float64, int) {
	cols, bits := ps.columns()
	total := 0.0
	for s := range cols {
		n, k, p := cols[s].n, ps.k, ps.probes[s]
		total += withinExpected(n, func(i int) float64 { return cols[s].rowMass(p[i*k:(i+1)*k], n-1) })
	}
	if across {
		n, m, k, p := cols[0].n, cols[1].n, ps.k, ps.probes[1]
		total += acrossExpected(m, n, func(j int) float64 { return cols[0].rowMass(p[j*k:(j+1)*k], n) })
	}
	return total, bits
}

// probesOf takes the last K values of each row (K = min(repeatProbes,
// the shortest row's length)), dataset by dataset.
func probesOf(d, dprime [][]float64) probeSet {
	w := repeatProbes
	for _, rows := range [2][][]float64{d, dprime} {
		for _, r := range rows {
			w = min(w, len(r))
		}
	}
	ps := probeSet{k: w}
	for s, rows := range [2][][]float64{d, dprime} {
		for _, r := range rows {
			ps.probes[s] = append(ps.probes[s], r[len(r)-ps.k:]...)
		}
	}
	return ps
}

// ExpectedDuplicateRows bounds what CountDuplicateRows counts in all for
// independent rows: the expected repeats within each file and across,
// estimated from the last values of each row at their resolution, and
// the limit at RepeatLevel (docs/derivations/duplicate-rows.md).
func ExpectedDuplicateRows(d, dprime [][]float64) RepeatBound {
	ps := probesOf(d, dprime)
	if ps.k == 0 {
		return newRepeatBound(0, 0)
	}
	e, bits := ps.expected(true)
	return newRepeatBound(e, bits)
}

// repeatBound bounds what RepeatedRuns counts for independent runs: the
// expected repeats within each dataset, estimated from the probe values
// the trials kept (Trials.Probe); without them (trials files written
// before they were kept) nothing is expected, and any repeat exceeds the
// bound.
func (t *Trials) repeatBound() RepeatBound {
	m := t.Hi - t.Lo
	if t.Probes < 1 || len(t.Probe) != m*t.Probes || len(t.Side) != m {
		return newRepeatBound(0, 0)
	}
	ps := probeSet{k: t.Probes}
	for i, s := range t.Side {
		ps.probes[s&1] = append(ps.probes[s&1], t.Probe[i*t.Probes:(i+1)*t.Probes]...)
	}
	e, bits := ps.expected(false)
	return newRepeatBound(e, bits)
}
