package mechanisms

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// The estimator mechanism's output against the law its guarantees assume:
// 20,000 runs of ULA on a 2-D Gauss model, f = (0.6, −1.1), averaged over
// iterations 11–60, plus N(0, 0.05²) noise, so the release is exactly
// N(μ, v + 0.05²) with μ, v from closedform.ErgodicAverage. The sample
// mean has standard error sqrt(V/n) and the sample variance
// V·sqrt(2/(n − 1)) (Gaussian output); each must lie within 5 of them.
func TestEstimatorMatchesErgodicLaw(t *testing.T) {
	if testing.Short() {
		t.Skip("20,000 chains: skipped by -short")
	}
	g, pair := transferPair(t)
	spec := EstimatorSpec{F: []float64{0.6, -1.1}, From: 11, To: 60, Gaussian: 0.05}
	ch := &Chain{Model: g, Sampler: &ULA{Gamma: 0.004, Iters: 60}, Init: Init{Theta: []float64{1, 1}},
		Release: ReleaseSpec{Mode: ReleaseEstimator, Estimator: &spec}}
	e, err := NewEstimator(ch)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Check(pair.D); err != nil {
		t.Fatal(err)
	}
	m, cov, err := g.Posterior(pair.D)
	if err != nil {
		t.Fatal(err)
	}
	law := closedform.LinearLangevin{Step: 0.004, NoiseVar: 0.008, Mean: m, Cov: cov, InitMean: []float64{1, 1}}
	mu, v, err := law.ErgodicAverage(spec.F, spec.From, spec.To)
	if err != nil {
		t.Fatal(err)
	}
	want := v + 0.05*0.05
	const n = 20000
	xs := make([]float64, 0, n)
	for i := range n {
		tr := NewTrial(17, dataset.SideD, i)
		if _, err := e.Run(context.Background(), tr, pair.D, func(k int, th []float64) error {
			if k != 0 || len(th) != 1 {
				t.Fatalf("release %d of %d values", k, len(th))
			}
			xs = append(xs, th[0])
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	var mean, ss float64
	for _, x := range xs {
		mean += x / n
	}
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	variance := ss / (n - 1)
	if math.Abs(mean-mu) > 5*math.Sqrt(want/n) || math.Abs(variance-want) > 5*want*math.Sqrt(2.0/(n-1)) {
		t.Errorf("release mean %.6g variance %.6g; closed form %.6g and %.6g", mean, variance, mu, want)
	}
	t.Logf("release mean %.6g (closed form %.6g), variance %.6g (closed form %.6g)", mean, mu, variance, want)

	gs := e.Guarantees(pair, ReleasePoint{Iteration: 60})
	if len(gs) != 2 || !gs[0].Applies || !gs[1].Applies {
		t.Fatalf("guarantees %+v", gs)
	}
	// A chain's state is not an estimator: both propositions say why not.
	var found int
	for _, g := range ch0(g).Guarantees(pair, ReleasePoint{Iteration: 60}) {
		if (g.Source == closedform.Prop37Source || g.Source == closedform.Prop310Source) && !g.Applies && strings.Contains(g.Reason, "not a Monte Carlo estimator") {
			found++
		}
	}
	if found != 2 {
		t.Errorf("a chain's guarantees list Props. 3.7/3.10 %d times with the reason, want 2", found)
	}
	// Elsewhere the assumptions are reported as not verified.
	mh := &Chain{Model: g, Sampler: &ULA{Gamma: 0.004, Iters: 60, Radius: 3}, Release: ReleaseSpec{Mode: ReleaseEstimator, Estimator: &spec}}
	pe, _ := NewEstimator(mh)
	for _, g := range pe.Guarantees(pair, ReleasePoint{Iteration: 60}) {
		if g.Applies || !strings.Contains(g.Reason, "not verified") {
			t.Errorf("projected ULA: %+v", g)
		}
	}
}

func ch0(g *Gauss) *Chain {
	return &Chain{Model: g, Sampler: &ULA{Gamma: 0.004, Iters: 60}, Release: ReleaseSpec{Mode: ReleaseFinal}}
}
