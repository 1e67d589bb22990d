//go:build slow

package mechanisms

import "testing"

// TestFastNormalMatchesReferenceLong: 2·10⁸ draws from 200 seeds, bit for
// bit the reference's (≈ 5.4·10⁶ through the wedges).
func TestFastNormalMatchesReferenceLong(t *testing.T) {
	checkNormStreams(t, 200, 1_000_000)
}
