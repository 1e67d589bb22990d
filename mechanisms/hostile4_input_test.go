package mechanisms

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
)

// An estimator window of 10⁹ iterations is refused by NewEstimator before
// the snapshot list is sized from it: it allocated 8 GB (10⁹ ints) before
// the window was checked against the run's length. The refusal names the
// field and the limit and allocates next to nothing; windows at the limit
// and below it are still accepted.
func TestEstimatorWindowCheckedBeforeAllocating(t *testing.T) {
	g, err := NewGauss(nil, 10, []float64{1})
	if err != nil {
		t.Fatal(err)
	}
	chain := func(s EstimatorSpec) *Chain {
		return &Chain{Model: g, Sampler: &ULA{Gamma: 0.01, Iters: 100}, Init: Init{Theta: []float64{0}},
			Release: ReleaseSpec{Mode: ReleaseEstimator, Estimator: &s}}
	}
	for _, c := range []struct {
		spec       EstimatorSpec
		path, want string
	}{
		// Just past the limit first: code that sizes before checking
		// fails here, before the 8 GB case.
		{EstimatorSpec{F: []float64{1}, From: 1, To: MaxReleasePoints + 1, Laplace: 0.5}, "Release.Estimator.From", "at most 100000 iterations, got 100001"},
		{EstimatorSpec{F: []float64{1}, From: 1, To: 1_000_000_000, Laplace: 0.5}, "Release.Estimator.From", "at most 100000 iterations, got 1000000000"},
		{EstimatorSpec{F: []float64{1}, From: 0, To: 10, Laplace: 0.5}, "Release.Estimator.To", "1 ≤ from ≤ to"},
		{EstimatorSpec{F: []float64{1}, From: 50, To: 10, Laplace: 0.5}, "Release.Estimator.To", "1 ≤ from ≤ to"},
		{EstimatorSpec{F: []float64{1}, From: 1, To: 10}, "Release.Estimator.Laplace", "exactly one noise scale"},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := NewEstimator(chain(c.spec))
		runtime.ReadMemStats(&after)
		var fe *field.Error
		if !errors.As(err, &fe) || fe.Path.Go() != c.path || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%+v: error %v, want %s: …%s", c.spec, err, c.path, c.want)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
			t.Errorf("%+v: %d bytes allocated to refuse it", c.spec, alloc)
		}
	}
	for _, to := range []int{100, MaxReleasePoints} {
		if _, err := NewEstimator(chain(EstimatorSpec{F: []float64{1}, From: 1, To: to, Gaussian: 0.2})); err != nil {
			t.Errorf("window [1, %d]: %v", to, err)
		}
	}
}
