package mechanisms

import (
	"math"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// Clipped DP-SGLD on add-one and remove-one neighbours: the add/remove
// accountant does not apply, and the reason says the sampler's scale and
// rate follow the dataset's size.
func TestDPSGLDAddRemoveUncovered(t *testing.T) {
	d, _ := syntheticLinReg(30, []float64{0.8, -0.5}, 1, 1, 3)
	for _, adj := range []dataset.Adjacency{dataset.AddOne, dataset.RemoveOne} {
		p, err := dataset.Neighbour(d, adj, 0, dataset.Record{X: []float64{2, 2}, Y: -3})
		if err != nil {
			t.Fatal(err)
		}
		for _, scheme := range []IndexScheme{Poisson, WithoutReplacement} {
			c := &Chain{Model: LinReg{D: 2, Alpha: 1, Beta: 1}, Sampler: &SGLD{Step: StepSchedule{Eta: 0.01}, Batch: 6, Scheme: scheme, Iters: 5, Clip: 1}}
			g := find(t, guaranteesAt(c, p, 5), "add/remove", "")
			if g.Applies || !strings.Contains(g.Reason, "n/b") || !strings.Contains(g.Reason, string(adj)) {
				t.Errorf("%s, %s: applies %v, reason %q", adj, scheme, g.Applies, g.Reason)
			}
			if other := OtherAdjacencyGuarantees(c, p, ReleasePoint{Iteration: 5}); len(other) == 0 ||
				!other[0].Applies || !strings.HasPrefix(other[0].Variant, "replace-one") {
				t.Errorf("%s, %s: other adjacency %+v", adj, scheme, other)
			}
		}
	}
}

// A replace-one full-batch DP-SGLD (the constants of
// testdata/dp-sgld-correct.yaml) gets, as the other adjacency, the
// add/remove accountant and the exact C·sqrt(Tη)/2-GDP of full batches; the
// accountant is an upper bound within 0.1% of the exact ε.
func TestOtherAdjacencyFullBatch(t *testing.T) {
	d, _ := syntheticLinReg(10, []float64{0.8}, 1, 1, 3)
	p, err := dataset.Neighbour(d, dataset.ReplaceOne, 0, dataset.Record{X: []float64{1}, Y: 100})
	if err != nil {
		t.Fatal(err)
	}
	c := &Chain{Model: LinReg{D: 1, Alpha: 0.01, Beta: 1}, Sampler: &SGLD{Step: StepSchedule{Eta: 0.5625}, Batch: 10, Scheme: WithoutReplacement, Iters: 4, Clip: 1}}
	gs := OtherAdjacencyGuarantees(c, p, ReleasePoint{Iteration: 4})
	acc := find(t, gs, closedform.SGMPoissonAddRemoveTightestSource, "add/remove")
	gdp := find(t, gs, "Gaussian mechanism composition", "add/remove")
	exact, _ := stats.GDPEpsilon(0.75, 1e-5)
	if math.Abs(gdp.Profile(exact)-1e-5) > 1e-12 {
		t.Errorf("GDP row: δ(ε_exact) = %g", gdp.Profile(exact))
	}
	if e := acc.EpsilonAt(1e-5); !(e >= exact && e <= 1.001*exact) {
		t.Errorf("accountant ε = %g, exact %g", e, exact)
	}
	// The scenario's own guarantees are unchanged: replace-one, μ = 1.5.
	own := find(t, guaranteesAt(c, p, 4), "Gaussian mechanism composition", "")
	if want, _ := stats.GDPEpsilon(1.5, 1e-5); math.Abs(own.Profile(want)-1e-5) > 1e-12 || own.Variant != "" {
		t.Errorf("own GDP row: %q, δ = %g", own.Variant, own.Profile(want))
	}
}
