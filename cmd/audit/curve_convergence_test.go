package main

import (
	"encoding/json"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/internal/curve"
)

// "audit curve --json" carries, per epoch, the ε that Bertazzi et al.'s
// Prop. 3.3 proves from convergence alone. It is a lower bound, so it may
// not exceed the exact profile's ε (plus its error bound); for a small
// counterexample whose posterior is far from private (n = 6, c = 10, the
// default η = 2/s²) it proves a positive ε once the chain has converged,
// and nothing at epoch 0 (the prior draw is far from the posterior).
func TestCurveJSONConvergenceLowerBound(t *testing.T) {
	stdout, stderr, code := runCLI(t, "curve", "--n", "6", "--c", "10", "--epochs", "0:300:50", "--json", "-")
	var doc struct {
		Rows []curve.Row `json:"rows"`
	}
	if code != exitOK || json.Unmarshal([]byte(stdout), &doc) != nil || len(doc.Rows) != 7 {
		t.Fatalf("curve --json: exit %d, stderr %q", code, stderr)
	}
	for _, r := range doc.Rows {
		lb, exact := float64(r.EpsConvergenceLB), float64(r.EpsProfile)+float64(r.Err.Profile)
		if lb > exact*(1+1e-9) {
			t.Errorf("epoch %d: Prop. 3.3 ε %.10g above the exact ε %.10g", r.Epoch, lb, exact)
		}
		if r.Epoch == 0 && lb != 0 {
			t.Errorf("epoch 0: Prop. 3.3 proves ε = %g from a prior draw", lb)
		}
		if r.Epoch >= 100 && !(lb > 0.5) {
			t.Errorf("epoch %d: Prop. 3.3 proves only ε = %g (0.716 expected, docs/derivations/convergence-transfer.md)", r.Epoch, lb)
		}
	}
}
