//go:build slow

package audit

import "testing"

// The built-in one-run null of TestCanaryNullBuiltinSampler over 3,000
// seeds: the counts must stay at most 188, the 0.999 quantile of
// Bin(3000, 0.05). The figures are in docs/derivations/one-run.md.
func TestCanaryNullBuiltinSamplerSlow(t *testing.T) {
	pos, posMu := nullBuiltinRates(t, 0, 3000)
	if pos > 188 || posMu > 188 {
		t.Errorf("null: ε_lb > 0 in %d, μ_lb > 0 in %d of 3000 seeds (limit 188)", pos, posMu)
	}
	t.Logf("null, built-in ULA: ε_lb > 0 in %d/3000, μ_lb > 0 in %d/3000", pos, posMu)
}
