package closedform_test

import (
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// The counterexample curve (Heller & Fetaya §IV, Fig. 1): the exact lower
// bounds on the ε of releasing cyclic SGLD's iterate after K epochs, at
// δ = 0.001, for the Fig. 1 data set (n = 17,864,389, α = 2, β = 1,
// x_h = 1.8) with c = 2·10⁷ and η = 1/s² (Claim IV.9). The leak rises
// through the interim region and falls as the chain converges, although
// one posterior draw of this c is (0.065, 0.001)-DP.
func ExampleCounterexample_CurveRange() {
	c := closedform.Counterexample{N: 17864389, Alpha: 2, Beta: 1, XH: 1.8, C: 2e7}
	c.Eta = c.EtaScaled(1)
	curves, err := c.CurveRange(10, 70, 1e-3)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("epoch  Chernoff   tail  profile")
	for _, e := range curves {
		if e.Epoch%20 == 10 || e.Epoch == 50 {
			fmt.Printf("%5d %9.2f %6.2f %8.2f\n", e.Epoch, e.Chernoff.Epsilon, e.Tail.Epsilon, e.Profile.Epsilon)
		}
	}
	// Output:
	// epoch  Chernoff   tail  profile
	//    10      0.98   2.70     6.76
	//    30     14.41  17.06    31.30
	//    50     35.06  38.13    61.04
	//    70      0.28   1.81     4.77
}

// The privacy profile of an accountant: DP-SGD's subsampled Gaussian
// mechanism under replace-one adjacency, composed by the PLD accountant
// (an upper bound on δ(ε)). With every record in every batch (rate 1) it
// is exactly Gaussian: T steps of noise multiplier z with sensitivity 2C
// are μ-GDP with μ = 2√T/z (Dong, Roth & Su 2019, Cor. 3.3), so the
// accountant's ε can be set against the exact one. With Poisson batches of
// rate 0.01 a second implementation (NumPy, TestPLDPoissonThirdImplementation)
// gives ε(1e-5) = 0.8951 and 2.8435 at T = 100 and 1000: the accountant's
// values lie above, as an upper bound must, by less than 0.1%.
func ExampleSGM_PLD() {
	full := closedform.SGM{Sampling: closedform.Poisson, Rate: 1, NoiseMultiplier: 8, Steps: 36}
	acc, err := full.PLD(closedform.AdjacencyReplaceOne, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	prof, err := acc.Profile(full.Steps)
	if err != nil {
		fmt.Println(err)
		return
	}
	exact, _ := stats.GDPEpsilon(2*math.Sqrt(36)/8, 1e-5)
	fmt.Printf("full batches, T = 36, z = 8:  ε(1e-5) = %.4f (PLD), %.4f (exact 1.5-GDP)\n", prof.Epsilon(1e-5), exact)

	sub := closedform.SGM{Sampling: closedform.Poisson, Rate: 0.01, NoiseMultiplier: 1, Steps: 1000}
	acc, err = sub.PLD(closedform.AdjacencyReplaceOne, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, T := range []int{100, 1000} {
		prof, err := acc.Profile(T)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("Poisson q = 0.01, z = 1, T = %4d: ε(1e-5) = %.4f, δ(1) = %.3g\n", T, prof.Epsilon(1e-5), prof.Delta(1))
	}
	// Output:
	// full batches, T = 36, z = 8:  ε(1e-5) = 7.0585 (PLD), 7.0514 (exact 1.5-GDP)
	// Poisson q = 0.01, z = 1, T =  100: ε(1e-5) = 0.8956, δ(1) = 3.12e-06
	// Poisson q = 0.01, z = 1, T = 1000: ε(1e-5) = 2.8460, δ(1) = 0.0331
}
