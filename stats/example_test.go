package stats_test

import (
	"fmt"

	"github.com/mcmcaudit/mcmcaudit/stats"
)

// From an attack's error counts on the evaluation runs to an ε lower
// bound: 3 false positives among 500 runs on D and 7 false negatives among
// 500 runs on D′, at δ = 1e-5 and 95% confidence. The region bound is
// rigorous; the GDP μ_lb is too, while the ε it implies assumes a
// Gaussian trade-off curve; the ceiling is what zero errors would give.
func Example() {
	c := stats.Counts{FP: 3, Negatives: 500, FN: 7, Positives: 500}
	region, _ := stats.RegionBound(c, 1e-5, 0.95)
	gdp, _ := stats.GDPBound(c, 1e-5, 0.95)
	ceiling, _ := stats.Ceiling(500, 500, 1e-5, 0.95)
	fmt.Printf("region bound ε_lb = %.6f (FPR ≤ %.5f, FNR ≤ %.5f)\n", region.Epsilon, region.FPR, region.FNR)
	fmt.Printf("GDP μ_lb = %.6f, ε(μ_lb) = %.4f (Gaussian trade-off assumed)\n", gdp.Mu, gdp.Epsilon)
	fmt.Printf("ceiling with 500 runs per side: %.4f\n", ceiling.Epsilon)
	// Output:
	// region bound ε_lb = 4.020292 (FPR ≤ 0.01743, FNR ≤ 0.02863)
	// GDP μ_lb = 4.011192, ε(μ_lb) = 24.4736 (Gaussian trade-off assumed)
	// ceiling with 500 runs per side: 4.9056
}

// The privacy profile of μ-GDP and its inverse (Dong, Roth & Su 2019,
// Cor. 2.13).
func ExampleGDPEpsilon() {
	eps, _ := stats.GDPEpsilon(1, 1e-5)
	fmt.Printf("1-GDP is (%.6f, 1e-5)-DP; δ(1) = %.10f\n", eps, stats.GDPDelta(1, 1))
	// Output:
	// 1-GDP is (4.377178, 1e-5)-DP; δ(1) = 0.1269367375
}
