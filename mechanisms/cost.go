package mechanisms

import (
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// Work units. RunCost estimates the work of one run in units of one
// parameter-sized pass of arithmetic: evaluating one record's
// log-likelihood or gradient costs Dim() units, the prior and the update
// of θ cost Dim() units per iteration, a random index costs one unit. The
// estimate is an order of magnitude, not a timing (a unit took 2 to 10 ns
// of CPU on the bundled scenarios); its derivation for every sampler, and those
// measurements, are in docs/derivations/work-limits.md. Arithmetic is in float64, so an
// estimate never overflows: a configuration too large to count is simply
// a very large number.

// Coster is implemented by mechanisms that estimate the work of one run on
// d in work units (see RunCost); the audit engine bounds an audit's total
// work with it before any run.
type Coster interface {
	RunCost(d *dataset.Dataset) float64
}

// iterationCoster is implemented by the built-in samplers: the work of one
// iteration of model m on n records.
type iterationCoster interface {
	iterationCost(m Model, n int) float64
}

// RunCost estimates the work of one run of m on d: the mechanism's own
// estimate when it is a Coster, otherwise the work of its releases alone
// (release points × Dim), the only part the engine can see.
func RunCost(m Mechanism, d *dataset.Dataset) float64 {
	if c, ok := m.(Coster); ok {
		return c.RunCost(d)
	}
	pts, err := m.Points(d)
	if err != nil {
		return 0
	}
	return float64(len(pts)) * float64(max(m.Dim(), 1))
}

// RunCost implements Coster: iterations × the sampler's cost per iteration,
// plus the releases. A sampler of another package is costed as a
// full-data sampler (every record's gradient in every iteration).
func (c *Chain) RunCost(d *dataset.Dataset) float64 {
	n := d.Len()
	dim := float64(max(c.Model.Dim(), 1))
	per := float64(n)*dim + dim
	if ic, ok := c.Sampler.(iterationCoster); ok {
		per = ic.iterationCost(c.Model, n)
	}
	pts, err := c.Points(d)
	if err != nil {
		pts = nil
	}
	return float64(c.Sampler.Iterations(d))*per + float64(len(pts))*dim
}

// modelDim is the work of one record's gradient or likelihood.
func modelDim(m Model) float64 { return float64(max(m.Dim(), 1)) }

// iterationCost: b gradients and the update; Poisson draws a uniform per
// record to form its batch.
func (s *SGLD) iterationCost(m Model, n int) float64 {
	if g := CanaryOf(m); g != nil && g.Inner().Dim() == 0 && s.Scheme == Poisson {
		// A gradient canary among inert records: only the canary's
		// inclusion is drawn (runAffine1DSparse), then one normal.
		return 3
	}
	dim := modelDim(m)
	idx := float64(s.Batch)
	if s.Scheme == Poisson {
		idx = float64(n)
	}
	return float64(s.Batch)*dim + dim + idx
}

// iterationCost: the full gradient and the update.
func (u *ULA) iterationCost(m Model, n int) float64 {
	dim := modelDim(m)
	return float64(n)*dim + 2*dim
}

// iterationCost: the clipped log-likelihood ratio over every record, the
// proposal and the prior.
func (s *DPPenalty) iterationCost(m Model, n int) float64 {
	dim := modelDim(m)
	return float64(n)*dim + 2*dim
}

// iterationCost: L + 1 full clipped gradients, the log-likelihood ratio
// over every record, and L + 1 position and momentum updates.
func (h *DPHMC) iterationCost(m Model, n int) float64 {
	dim := modelDim(m)
	l := float64(max(h.LeapfrogSteps, 1))
	return (l+1)*float64(n)*dim + float64(n)*dim + 2*(l+1)*dim
}

// iterationCost: the log-likelihood ratio and the proposal. The full-data
// test evaluates the proposal on every record (the current state's terms
// are kept); the subsampled one evaluates both states on b records drawn
// without replacement (an index each).
func (s *DPBarker) iterationCost(m Model, n int) float64 {
	dim := modelDim(m)
	if s.Batch > 0 {
		return float64(s.Batch)*(2*dim+1) + 2*dim
	}
	return float64(n)*dim + 2*dim
}

// iterationCost: the (clipped) sum over every record, once.
func (g *GaussianQuery) iterationCost(m Model, n int) float64 {
	return float64(n)*float64(max(m.DataDim(), 1)) + modelDim(m)
}

// RunCost implements Coster: a handful of operations per release, whatever
// n and the number of epochs (nothing is simulated step by step).
func (e *ExactCounterexample) RunCost(*dataset.Dataset) float64 {
	return 10 * float64(len(e.points)+1)
}
