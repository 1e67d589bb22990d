// Command mysampler is a minimal module of its own that audits its own
// sampler with the mcmcaudit packages: a few steps of noisy clipped
// gradient ascent on the mean of one-dimensional data (DP Langevin-style),
// the last iterate released, audited over 20,000 runs on two datasets that
// differ in one record, against the guarantee it claims.
package main

import (
	"context"
	"fmt"
	"math"
	"os"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// noisyMean takes Steps steps θ ← θ + (Eta/n)·(Σᵢ clip(xᵢ − θ, Clip) + N(0, Sigma²))
// from θ = 0 and releases θ after the last. Replacing one record moves the
// clipped sum by at most 2·Clip, so each step is a Gaussian mechanism of
// μ = 2·Clip/Sigma and the run is √Steps·2·Clip/Sigma-GDP (Dong, Roth &
// Su 2022, Cor. 3.3; the release is post-processing).
type noisyMean struct {
	Steps            int
	Eta, Clip, Sigma float64
}

// mu is the mechanism's GDP parameter (see noisyMean).
func (m noisyMean) mu() float64 { return math.Sqrt(float64(m.Steps)) * 2 * m.Clip / m.Sigma }

// Dim implements mechanisms.Mechanism: θ is one number.
func (noisyMean) Dim() int { return 1 }

// Points implements mechanisms.Mechanism: one release, the last iterate.
func (m noisyMean) Points(*dataset.Dataset) ([]mechanisms.ReleasePoint, error) {
	return []mechanisms.ReleasePoint{{Iteration: m.Steps, Label: "last iterate"}}, nil
}

// Run implements mechanisms.Mechanism: one run on d, its random numbers
// drawn from the trial's generator t.RNG.
func (m noisyMean) Run(ctx context.Context, t mechanisms.Trial, d *dataset.Dataset, emit mechanisms.Emit) (mechanisms.Info, error) {
	theta, n := 0.0, float64(d.Len())
	for range m.Steps {
		if err := ctx.Err(); err != nil {
			return mechanisms.Info{}, err
		}
		g := 0.0
		for _, r := range d.Records {
			g += math.Max(-m.Clip, math.Min(m.Clip, r.X[0]-theta))
		}
		// Every random number comes from the trial's own generator: the
		// audit reruns a few trials and refuses a mechanism whose
		// releases differ (math/rand's global functions would).
		theta += m.Eta / n * (g + m.Sigma*t.RNG.NormFloat64())
	}
	return mechanisms.Info{Iterations: m.Steps}, emit(0, []float64{theta})
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mysampler:", err)
		os.Exit(1)
	}
}

func run() error {
	m := noisyMean{Steps: 10, Eta: 0.5, Clip: 1, Sigma: 2 * math.Sqrt(10)}
	d := &dataset.Dataset{Name: "D"}
	for _, x := range []float64{-0.4, 0.1, 0.3, -0.2, 0.6, -1, 0.2, 0.05} {
		d.Records = append(d.Records, dataset.Record{X: []float64{x}})
	}
	// D′ replaces the record −1 by 5: the clipped sums differ by the
	// whole 2·Clip at every step.
	pair, err := dataset.Neighbour(d, dataset.ReplaceOne, 5, dataset.Record{X: []float64{5}})
	if err != nil {
		return err
	}
	r, err := audit.Run(context.Background(),
		audit.Target{Name: "noisy mean", Mechanism: m, Pair: pair},
		audit.Options{Trials: 20000, Seed: 7, Delta: 1e-5, Claims: []audit.Claim{audit.GDPClaim(m.mu())}},
		audit.Execution{})
	if err != nil {
		return err
	}
	e := r.Epsilon
	fmt.Printf("ε_lb = %.3f at δ = %g (confidence %g; %s; %d evaluation runs of %d)\n",
		e.Epsilon, r.Delta, e.Confidence, e.Estimator, r.EvalRuns, r.Trials)
	fmt.Printf("claim %.3g-GDP: %s\n", m.mu(), r.Verdict)
	return nil
}
