package mechanisms

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// With a public N, the Poisson rate b/N and the gradient scale N/b do not
// depend on the size of the dataset a run is given; without it they do.
func TestSGLDPublicN(t *testing.T) {
	s := &SGLD{Step: StepSchedule{Eta: 0.01}, Batch: 32, Scheme: Poisson, Iters: 10, Clip: 0.2, N: 1438}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1438, 1439, 500} {
		bt := s.batcher(n, rng)
		if bt.q != 32.0/1438 || bt.scale(7) != 1438.0/32 {
			t.Errorf("n = %d: rate %g, scale %g; want 32/1438 and 1438/32 whatever n", n, bt.q, bt.scale(7))
		}
	}
	s.N = 0
	if bt := s.batcher(1439, rng); bt.q != 32.0/1439 || bt.scale(7) != 1439.0/32 {
		t.Errorf("without N: rate %g, scale %g; want the dataset's 32/1439 and 1439/32", bt.q, bt.scale(7))
	}
	// Epochs follow the public size too, so D and D′ run as long.
	s.N, s.Iters, s.Epochs = 1438, 0, 2
	d, dp := &dataset.Dataset{Virtual: 1438}, &dataset.Dataset{Virtual: 1439}
	if s.Iterations(d) != s.Iterations(dp) || s.Iterations(d) != 2*45 {
		t.Errorf("iterations %d and %d, want 90 on both", s.Iterations(d), s.Iterations(dp))
	}
}

// The add/remove guarantees apply to add-one pairs with a public N (and
// equal those of one canary in the canary design); without it they do
// not, and the reason says to set it. N is only for scheme poisson.
func TestSGLDPublicNGuarantees(t *testing.T) {
	s := &SGLD{Step: StepSchedule{Eta: 0.01}, Batch: 32, Scheme: Poisson, Iters: 900, Clip: 0.2, N: 1438}
	gs := sgldGuarantees(s, GradientConstants{}, dataset.AddOne, 1439, 900)
	if len(gs) == 0 || !gs[0].Applies || gs[0].Variant != "add/remove (n public)" {
		t.Fatalf("with N: %+v", gs)
	}
	cp := &CanaryPaths{Sampler: s, Release: ReleaseSpec{Mode: ReleaseFinal}, Base: &dataset.Dataset{Virtual: 1438}, Count: 2, Runs: 1}
	e1, _ := gs[0].Epsilon(1e-5)
	e2, _ := cp.Guarantees(dataset.Pair{}, ReleasePoint{Iteration: 900})[0].Epsilon(1e-5)
	if math.Abs(e1-1.2352) > 5e-5 || e1 != e2 {
		t.Errorf("ε at 1e-5: add-one %.6f, one canary %.6f; want both 1.2352", e1, e2)
	}
	s.N = 0
	gs = sgldGuarantees(s, GradientConstants{}, dataset.AddOne, 1439, 900)
	if len(gs) != 1 || gs[0].Applies || !strings.Contains(gs[0].Reason, "set the sampler's n") {
		t.Errorf("without N: %+v", gs)
	}
	for _, bad := range []*SGLD{
		{Step: StepSchedule{Eta: 0.01}, Batch: 32, Scheme: WithoutReplacement, Iters: 9, Clip: 0.2, N: 1438},
		{Step: StepSchedule{Eta: 0.01}, Batch: 32, Scheme: Poisson, Iters: 9, Clip: 0.2, N: 31},
	} {
		err := bad.Check(Inert{}, &dataset.Dataset{Records: make([]dataset.Record, 100)})
		if err == nil || !strings.Contains(err.Error(), "a public n is for scheme poisson") {
			t.Errorf("%s with n = %d: %v", bad.Scheme, bad.N, err)
		}
	}
}
