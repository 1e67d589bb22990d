package mechanisms

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// Emit receives the k-th release of a run. theta is only valid during the
// call: copy what must be kept.
type Emit func(k int, theta []float64) error

// Info summarises one run: work done and the counters of the samplers that
// have an accept/reject step or clipping.
type Info struct {
	Iterations   int `json:"iterations"`
	Proposals    int `json:"proposals,omitempty"`
	Accepted     int `json:"accepted,omitempty"`
	ClippedGrads int `json:"clipped_grads,omitempty"`
	GradEvals    int `json:"grad_evals,omitempty"`
	ClippedLLRs  int `json:"clipped_llrs,omitempty"`
	LLREvals     int `json:"llr_evals,omitempty"`
	Projections  int `json:"projections,omitempty"`
	// VarianceCheckFailures counts Barker-test iterations whose minibatch
	// variance exceeded the noise budget.
	VarianceCheckFailures int `json:"variance_check_failures,omitempty"`
}

// AcceptanceRate returns Accepted/Proposals, or NaN without proposals.
func (i Info) AcceptanceRate() float64 {
	if i.Proposals == 0 {
		return math.NaN()
	}
	return float64(i.Accepted) / float64(i.Proposals)
}

// Add accumulates another run's counters; a total beyond the int range
// saturates rather than wrapping to a negative count.
func (i *Info) Add(o Info) {
	i.Iterations = satAdd(i.Iterations, o.Iterations)
	i.Proposals = satAdd(i.Proposals, o.Proposals)
	i.Accepted = satAdd(i.Accepted, o.Accepted)
	i.ClippedGrads = satAdd(i.ClippedGrads, o.ClippedGrads)
	i.GradEvals = satAdd(i.GradEvals, o.GradEvals)
	i.ClippedLLRs = satAdd(i.ClippedLLRs, o.ClippedLLRs)
	i.LLREvals = satAdd(i.LLREvals, o.LLREvals)
	i.Projections = satAdd(i.Projections, o.Projections)
	i.VarianceCheckFailures = satAdd(i.VarianceCheckFailures, o.VarianceCheckFailures)
}

// DivergedError reports a chain whose state became NaN or infinite.
type DivergedError struct {
	Iteration int
	Theta     []float64
}

func (e *DivergedError) Error() string {
	return fmt.Sprintf("chain diverged at iteration %d (state %v): reduce the step size", e.Iteration, e.Theta)
}

// finite reports whether every coordinate is finite.
func finite(theta []float64) bool {
	for _, t := range theta {
		if t-t != 0 { // NaN or ±Inf
			return false
		}
	}
	return true
}

// Sampler is an MCMC algorithm under audit.
type Sampler interface {
	// Name identifies the algorithm and its main settings.
	Name() string
	// Check validates the sampler's settings for this model and dataset;
	// errors name the field and its allowed range.
	Check(m Model, d *dataset.Dataset) error
	// Iterations is the number of updates of one run on d.
	Iterations(d *dataset.Dataset) int
	// IterationsPerEpoch is the number of updates in one pass over d
	// (1 for full-data samplers).
	IterationsPerEpoch(d *dataset.Dataset) int
	// Run performs one run starting from theta (updated in place), drawing
	// all randomness from rng, and calls emit(k, θ) after iteration at[k]
	// for every k (at is ascending). A non-finite state ends the run with
	// a *DivergedError.
	Run(m Model, d *dataset.Dataset, theta []float64, rng *rand.Rand, at []int, emit Emit) (Info, error)
}

// Init chooses a chain's starting point.
type Init struct {
	// FromPrior draws θ₀ from the prior (the model must be a PriorSampler).
	FromPrior bool `yaml:"from_prior" json:"from_prior"`
	// Theta is the fixed starting point when FromPrior is false
	// (zeros when empty).
	Theta []float64 `yaml:"theta,omitempty" json:"theta,omitempty"`
}

// releaser walks the ascending list of release iterations during a run.
type releaser struct {
	at   []int
	next int
	emit Emit
}

// due reports whether iteration it must be released.
func (r *releaser) due(it int) bool { return r.next < len(r.at) && r.at[r.next] == it }

// release emits theta for the current release point and advances.
func (r *releaser) release(theta []float64) error {
	k := r.next
	r.next++
	if r.emit == nil {
		return nil
	}
	return r.emit(k, theta)
}

// nextAt returns the next release iteration, or -1 when none is left.
func (r *releaser) nextAt() int {
	if r.next < len(r.at) {
		return r.at[r.next]
	}
	return -1
}
