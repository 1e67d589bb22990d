package mechanisms_test

import (
	"context"
	"fmt"

	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/synthetic"
)

// Running a sampler: SGLD (Heller & Fetaya eq. 3, batch 5, reshuffled every
// epoch) on Bayesian linear regression over 200 synthetic records, the
// state released after every 10th epoch. One run is a deterministic
// function of its trial's seed: an audit runs thousands of these on D
// and D′.
func Example() {
	d, err := synthetic.LinReg(200, []float64{0.5}, 1, 1, 7)
	if err != nil {
		fmt.Println(err)
		return
	}
	chain := &mechanisms.Chain{
		Model:   mechanisms.NewLinReg1D(1, 1),
		Sampler: &mechanisms.SGLD{Step: mechanisms.StepSchedule{Eta: 1e-3}, Batch: 5, Scheme: mechanisms.Reshuffle, Epochs: 30},
		Init:    mechanisms.Init{FromPrior: true},
		Release: mechanisms.ReleaseSpec{Mode: mechanisms.ReleaseEpochs, Every: 10},
	}
	trial := mechanisms.NewTrial(42, dataset.SideD, 0)
	info, err := chain.Run(context.Background(), trial, d, func(k int, theta []float64) error {
		fmt.Printf("release %d: θ = %.4f\n", k, theta[0])
		return nil
	})
	fmt.Println(info.Iterations, "iterations,", err)
	// Output:
	// release 0: θ = 0.6179
	// release 1: θ = 0.5482
	// release 2: θ = 0.5816
	// 1200 iterations, <nil>
}
