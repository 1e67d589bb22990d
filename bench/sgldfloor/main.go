// Command sgldfloor does only the work that any implementation of
// bench/sgld-linreg.yaml has to do, in plain Go (standard library only, one
// goroutine), so that bench/compare.py can show how far the tool is from
// it: 4000 runs of batch-1 SGLD on 1-D Bayesian linear regression (n =
// 1000 records, α = β = 1, η = 10⁻⁴), 10⁴ steps each, every step one
// record drawn uniformly with replacement and one standard normal, the
// update θ ← a_i·θ + c_i + √η·z with the per-record coefficients
// a_i = 1 − (η/2)(α + nβx_i²) and c_i = (η/2)nβx_i·y_i tabulated once; the
// chain starts from the prior. The final states are sorted once (the
// threshold attack's scan reads them in order). The records are drawn as
// the scenario's synthetic data are (x ~ N(0, 1), y = 0.5x + N(0, 1)), not
// bit for bit the same ones: the work does not depend on their values.
//
// Usage: go run ./bench/sgldfloor [-runs N] [-steps T] [-seed S]
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

func main() {
	runs := flag.Int("runs", 4000, "runs")
	steps := flag.Int("steps", 10_000, "steps per run")
	seed := flag.Uint64("seed", 7, "seed")
	flag.Parse()
	t0 := time.Now()
	const n, alpha, beta, eta = 1000, 1.0, 1.0, 1e-4
	data := rand.New(rand.NewPCG(1, 1))
	a, c := make([]float64, n), make([]float64, n)
	for i := range n {
		x := data.NormFloat64()
		y := 0.5*x + data.NormFloat64()
		a[i] = 1 - eta/2*(alpha+n*beta*x*x)
		c[i] = eta / 2 * n * beta * x * y
	}
	sd := math.Sqrt(eta)
	final := make([]float64, *runs)
	var pcg rand.PCG
	rng := rand.New(&pcg)
	for r := range *runs {
		pcg.Seed(*seed, uint64(r))
		th := rng.NormFloat64() / math.Sqrt(alpha)
		for range *steps {
			i := rng.IntN(n)
			th = math.FMA(a[i], th, c[i]+sd*rng.NormFloat64())
		}
		final[r] = th
	}
	slices.Sort(final)
	fmt.Printf("sgld floor: %d runs × %d steps, %.2f s wall, median final state %.6f\n",
		*runs, *steps, time.Since(t0).Seconds(), final[len(final)/2])
}
