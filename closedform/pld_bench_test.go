package closedform

import "testing"

// clearSGMCaches empties the accountants' caches (benchmarks measure cold
// starts).
func clearSGMCaches() {
	sgmPLDMu.Lock()
	clear(sgmPLDCache)
	sgmPLDMu.Unlock()
	sgmTableMu.Lock()
	clear(sgmTableCache)
	sgmTableMu.Unlock()
}

// digitsRelease is digits-dp-sgld's DP-SGLD at release k of 20 (45 steps per
// epoch).
func digitsRelease(k int) DPSGLD {
	return DPSGLD{N: 1438, Sampling: Poisson, Rate: 32.0 / 1438, Clip: 0.2, Drift: 0.005, NoiseVar: 0.01, Steps: 45 * k}
}

// benchDigits runs what an audit of digits-dp-sgld asks of its accountant:
// the guarantee at each of the 20 release points, ε at δ = 1e-5, and the
// profile at 2000 values of ε (the refutation grid), from cold caches.
func benchDigits(b *testing.B, guarantee func(k int) (Guarantee, error)) {
	for b.Loop() {
		clearSGMCaches()
		for k := 1; k <= 20; k++ {
			g, err := guarantee(k)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := g.Epsilon(1e-5); err != nil {
				b.Fatal(err)
			}
			for i := range 2000 {
				g.Profile(float64(i) * 0.005)
			}
		}
	}
}

// BenchmarkDigitsAccountant is the accountant the audit uses (pointwise
// min of PLD and RDP); compare with BenchmarkDigitsAccountantRDPOnly in the
// same run.
func BenchmarkDigitsAccountant(b *testing.B) {
	benchDigits(b, func(k int) (Guarantee, error) {
		gs, err := digitsRelease(k).Guarantees()
		if err != nil {
			return Guarantee{}, err
		}
		return gs[0], nil
	})
}

// BenchmarkDigitsAccountantPLDOnly is the PLD accountant alone.
func BenchmarkDigitsAccountantPLDOnly(b *testing.B) {
	benchDigits(b, func(k int) (Guarantee, error) {
		m, err := digitsRelease(k).SGM()
		if err != nil {
			return Guarantee{}, err
		}
		return m.ReplaceOnePLD()
	})
}

// BenchmarkDigitsAccountantRDPOnly is the RDP accountant alone.
func BenchmarkDigitsAccountantRDPOnly(b *testing.B) {
	benchDigits(b, func(k int) (Guarantee, error) {
		m, err := digitsRelease(k).SGM()
		if err != nil {
			return Guarantee{}, err
		}
		return m.ReplaceOne()
	})
}
