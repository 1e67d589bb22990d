//go:build slow

package scenario

import "testing"

// Heller & Fetaya §V on the digits (issue: real data): plain SGLD leaks
// (ε_lb > 0 at some epoch, 500 + 500 runs, 20 epochs), the clipped DP-SGLD
// variant never shows more than its accountant allows, and clipping costs
// accuracy.
func TestDigitsAudits(t *testing.T) {
	plain := runFile(t, "../../testdata/digits-sgld.yaml", 0)
	if plain.TrainRuns < 500 || plain.EvalRuns < 500 || len(plain.Points) < 20 {
		t.Fatalf("scenario too small: %d + %d runs, %d epochs", plain.TrainRuns, plain.EvalRuns, len(plain.Points))
	}
	best := 0.0
	for _, pr := range plain.Points {
		if pr.Region().Epsilon > best {
			best = pr.Region().Epsilon
		}
	}
	t.Logf("plain SGLD: largest per-epoch ε_lb %.3f, final accuracy %.3f", best, *plain.Points[len(plain.Points)-1].TestAccuracy)
	if best <= 0 {
		t.Error("plain SGLD: ε_lb = 0 at every epoch")
	}
	clipped := runFile(t, "../../testdata/digits-dp-sgld.yaml", 0)
	for _, pr := range clipped.Points {
		if len(pr.Claims) == 0 || !pr.Claims[0].Covered {
			t.Fatalf("%s: no accountant", pr.Point.Label)
		}
		if ub := float64(pr.Claims[0].EpsilonAtDelta); pr.Region().Epsilon > ub {
			t.Errorf("%s: clipped ε_lb %.3f above the accountant's %.3f", pr.Point.Label, pr.Region().Epsilon, ub)
		}
	}
	if clipped.Violated() {
		t.Errorf("the accountant is refuted: %v", clipped.Violations)
	}
	a1 := *plain.Points[len(plain.Points)-1].TestAccuracy
	a2 := *clipped.Points[len(clipped.Points)-1].TestAccuracy
	t.Logf("final test accuracy: SGLD %.3f, clipped %.3f", a1, a2)
	if a2 >= a1 {
		t.Errorf("clipping did not cost accuracy: %.3f vs %.3f", a2, a1)
	}
}
