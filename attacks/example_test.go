package attacks_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// The threshold attack (Heller & Fetaya §V): a rule chosen on training
// runs, then counted on evaluation runs that played no part in the choice
// — that separation is what makes the Clopper–Pearson bound valid. Here
// the scores are 1-GDP Gaussian releases, N(0, 1) on D and N(1, 1) on D′,
// 20,000 runs a side in each half; 1-GDP is (4.3772, 1e-5)-DP, which the
// bound may approach from below but must not exceed. (At the chosen
// threshold the true rates are Φ(−3.1979) = 6.9e-4 and Φ(−2.1979) = 0.014:
// ε = ln((TPR − δ)/FPR) = 3.00 there, the bound lower by its confidence margin.)
func Example() {
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func(n int) ([]float64, []bool) {
		scores, labels := make([]float64, 2*n), make([]bool, 2*n)
		for i := range scores {
			labels[i] = i >= n // the second half ran on D′
			scores[i] = rng.NormFloat64()
			if labels[i] {
				scores[i]++
			}
		}
		return scores, labels
	}
	train, trainLabels := draw(20000)
	sel, err := attacks.ChooseRule(train, trainLabels, 1e-5, 0.95)
	if err != nil {
		fmt.Println(err)
		return
	}
	eval, evalLabels := draw(20000)
	counts := attacks.Count(sel.Rule, eval, evalLabels)
	est, err := stats.RegionBound(counts, 1e-5, 0.95)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("rule: D′ when score %s %.4f (training bound %.4f)\n", map[int]string{1: ">", -1: "<"}[sel.Rule.Orientation], sel.Rule.Threshold, sel.Epsilon)
	fmt.Printf("evaluation: FP %d/%d, FN %d/%d\n", counts.FP, counts.Negatives, counts.FN, counts.Positives)
	fmt.Printf("ε_lb = %.4f at 95%% confidence, δ = 1e-5\n", est.Epsilon)
	// Output:
	// rule: D′ when score > 3.1979 (training bound 2.8983)
	// evaluation: FP 12/20000, FN 19699/20000
	// ε_lb = 2.5484 at 95% confidence, δ = 1e-5
}
