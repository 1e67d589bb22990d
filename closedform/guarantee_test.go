package closedform

import (
	"math"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/stats"
)

// stepProfile is the profile of a pure (ε₀, δ₀) claim: δ₀ for ε ≥ ε₀ and 1
// below (the shape of the audit's pure claims).
func stepProfile(eps0, delta0 float64) func(float64) float64 {
	return func(e float64) float64 {
		if e >= eps0 {
			return delta0
		}
		return 1
	}
}

// A step profile inverts to its own jump, exactly: the claims (3, 1e-5) and
// (0.3, 1e-5) read back as ε = 3 and 0.3 (the bracketing end, 4 and 1, was
// returned before), also when δ lies above the step, and never below it.
func TestInvertProfileStep(t *testing.T) {
	for _, c := range []struct{ eps0, delta0, delta float64 }{
		{3, 1e-5, 1e-5}, {0.3, 1e-5, 1e-5}, {3, 1e-5, 0.5}, {0.3, 1e-5, 2e-5},
		{1e-9, 1e-3, 1e-3}, {1234.5678, 1e-8, 1e-8}, {1, 0, 1e-9},
	} {
		got, err := InvertProfile(stepProfile(c.eps0, c.delta0), c.delta)
		if err != nil || got != c.eps0 {
			t.Errorf("step at %g (δ₀ = %g), δ = %g: %v, %v; want exactly %g", c.eps0, c.delta0, c.delta, got, err, c.eps0)
		}
	}
	// δ below the step's floor: no finite ε certifies it.
	if got, err := InvertProfile(stepProfile(3, 1e-5), 1e-6); err != nil || !math.IsInf(got, 1) {
		t.Errorf("δ below δ₀: %v, %v; want +Inf", got, err)
	}
	// A staircase: 1 below 0.5, 0.1 on [0.5, 2), 1e-4 on [2, 7), 0 from 7.
	stairs := func(e float64) float64 {
		switch {
		case e < 0.5:
			return 1
		case e < 2:
			return 0.1
		case e < 7:
			return 1e-4
		}
		return 0
	}
	for _, c := range []struct{ delta, want float64 }{{0.5, 0.5}, {0.1, 0.5}, {0.05, 2}, {1e-4, 2}, {1e-5, 7}, {0.9999, 0.5}} {
		if got, _ := InvertProfile(stairs, c.delta); got != c.want {
			t.Errorf("staircase δ = %g: %v, want %v", c.delta, got, c.want)
		}
	}
}

// A profile equal to δ on a whole interval inverts to the interval's left
// end; one that is already below δ at 0 inverts to 0.
func TestInvertProfileFlat(t *testing.T) {
	const d = 1e-3
	prof := func(e float64) float64 {
		switch {
		case e < 1.25:
			return math.Exp(-(e - 1.25)) * d // continuous into the flat part
		case e <= 2.5:
			return d
		}
		return d * math.Exp(-(e - 2.5))
	}
	if got, _ := InvertProfile(prof, d); got != 1.25 {
		t.Errorf("flat at δ on [1.25, 2.5]: %v, want 1.25", got)
	}
	if got, _ := InvertProfile(prof, d/math.E); !withinRel(got, 3.5, 1e-15) {
		t.Errorf("beyond the flat part: %.17g, want 3.5", got)
	}
	if got, _ := InvertProfile(func(float64) float64 { return 0.2 }, 0.2); got != 0 {
		t.Errorf("profile(0) = δ: %v, want 0", got)
	}
	if _, err := InvertProfile(func(e float64) float64 {
		if e > 0.7 {
			return math.NaN()
		}
		return 1
	}, 0.1); err == nil {
		t.Error("NaN profile accepted")
	}
}

// On a continuous profile the result is the crossing to the last float:
// the μ-GDP profile against stats.GDPEpsilon (Brent's method on ln δ(ε), a
// different algorithm), and the returned ε is the smallest float with
// profile ≤ δ.
func TestInvertProfileContinuous(t *testing.T) {
	for _, mu := range []float64{0.1, 1, 1.5, 5} {
		prof := func(e float64) float64 { return stats.GDPDelta(mu, e) }
		for _, d := range []float64{1e-10, 1e-5, 1e-2, 0.2} {
			want, err := stats.GDPEpsilon(mu, d)
			if err != nil {
				t.Fatal(err)
			}
			got, err := InvertProfile(prof, d)
			if err != nil || !withinRel(got, want, 1e-12) {
				t.Errorf("μ = %g, δ = %g: %.17g, %v; GDPEpsilon %.17g", mu, d, got, err, want)
			}
			if got > 0 && (prof(got) > d || prof(math.Nextafter(got, 0)) <= d) {
				t.Errorf("μ = %g, δ = %g: ε = %.17g is not the smallest float with profile ≤ δ", mu, d, got)
			}
		}
	}
}
