//go:build slow

package stats

import "testing"

// TestOneRunValiditySlow: the validity check at larger scale — 5000 seeds
// at m = 1000 and 1000 seeds at m = 10⁴ with 1000 guesses — so that the
// observed rates pin the true ones to about ±0.6 and ±1.4 points.
func TestOneRunValiditySlow(t *testing.T) {
	runOneRunValidity(t, []oneRunSimConfig{
		{1000, 50, 50, 5000, nullMech(), 1e-5, 0.95},
		{1000, 50, 50, 5000, rrMech(1), 1e-5, 0.95},
		{1000, 10, 10, 5000, gaussMech(2), 1e-5, 0.95},
		{1000, 30, 0, 5000, gaussMech(3), 1e-5, 0.95},
		{10000, 500, 500, 1000, nullMech(), 1e-6, 0.95},
		{10000, 1000, 0, 1000, rrMech(0.5), 1e-6, 0.95},
		{10000, 100, 100, 1000, gaussMech(2), 1e-6, 0.95},
	})
}
