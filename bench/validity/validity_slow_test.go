//go:build slow

package main

import (
	"context"
	"testing"
)

// A reduced validity table (100 seeds for the full batch, 50 for Poisson
// subsampling, 10⁴ runs each; the full one is `go run ./bench/validity`):
// every rate at which an audit proves more than is true — ε_lb > 0 or
// μ_lb > 0 for a canary with no contribution, μ_lb > μ or ε_lb > ε_μ(δ)
// for the full-batch path of exact μ = 1.5, a correct configuration's
// theorem claim refuted or exceeded — must be compatible with at most 5%:
// its 95% Clopper–Pearson interval must reach down to 0.05. So that a
// statistic stuck at 0 cannot pass, the known-μ audits must also prove
// μ_lb > 0 in at least 95% of seeds with a mean μ_lb of at least 0.7·μ
// (0.90·μ and 0.81·μ over 500 seeds at 10⁴ runs).
func TestValidityReduced(t *testing.T) {
	rows := Table("../..", 100, 50, 10000)
	for _, row := range rows {
		res, err := Run(context.Background(), row, nil)
		if err != nil {
			t.Fatal(err)
		}
		rates := res.Rates()
		t.Logf("%s: %v, mean μ_lb %.3f", row.Label, rates, res.SumMu/float64(row.Seeds))
		check := []string{"refuted", "eps>claim"}
		switch {
		case row.Mu > 0:
			check = append(check, "mu>mu", "eps>exact")
			if r := rates["mu>0"]; float64(r.K) < 0.95*float64(r.N) {
				t.Errorf("%s: μ_lb > 0 in only %v of the audits of a path with μ = %g", row.Label, r, row.Mu)
			}
			if mean := res.SumMu / float64(row.Seeds); mean < 0.7*row.Mu {
				t.Errorf("%s: mean μ_lb %.3f below 0.7·μ = %.3f", row.Label, mean, 0.7*row.Mu)
			}
		case row.Null:
			check = append(check, "eps>0", "mu>0")
		}
		for _, k := range check {
			if r := rates[k]; !r.Compatible(0.05) {
				t.Errorf("%s: rate of %s is %v, incompatible with ≤ 5%%", row.Label, k, r)
			}
		}
	}
}
