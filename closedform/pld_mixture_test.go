package closedform

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/stats"
)

// barkerPair is one iteration of the subsampled DP Barker test under the
// path threat model with the constants of testdata/tight/dp-barker-path.yaml:
// b = 200 of n = 2000, N0 = 20, clip √b/N0, C = 2; the canary's statistic
// is shifted by ∓N0/b·clip = ∓1/√200 with variance C − s², s² = 199/40000.
func barkerPair() (p, q GaussMix2) {
	a, s2 := 1/math.Sqrt(200), 199.0/40000
	return GaussMix2{W: 0.1, V0: 2, M1: -a, V1: 2 - s2}, GaussMix2{W: 0.1, V0: 2, M1: a, V1: 2 - s2}
}

// TestMixturePLDOneStep checks one step's profile against the hockey-stick
// divergence ∫(p − e^ε q)₊ integrated by mpmath (30 digits, split at the
// root of p = e^ε q): 8.37354764361816e-4 at ε = 0.01 and
// 8.4425394630048e-5 at ε = 0.02.
func TestMixturePLDOneStep(t *testing.T) {
	p, q := barkerPair()
	acc, err := MixturePLD(p, q, nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := acc.Profile(1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ eps, want float64 }{{0.01, 8.37354764361816e-4}, {0.02, 8.4425394630048e-5}} {
		up, lo := pr.Delta(c.eps), pr.OptimisticDelta(c.eps)
		if !(up >= c.want*(1-1e-6) && lo <= c.want*(1+1e-6) && (up-lo) < 0.02*c.want) {
			t.Errorf("δ(%g): PLD [%.6g, %.6g], reference %.6g", c.eps, lo, up, c.want)
		}
	}
}

// TestMixturePLDGaussian checks the pair against a closed form: with
// W = 1 and equal variances it is a Gaussian shift, μ-GDP for
// μ = |M1 − M1′|/√V, and T steps are √T·μ-GDP (stats.GDPEpsilon).
func TestMixturePLDGaussian(t *testing.T) {
	a := 1 / math.Sqrt(200)
	acc, err := MixturePLD(GaussMix2{W: 1, V0: 2, M1: -a, V1: 2}, GaussMix2{W: 1, V0: 2, M1: a, V1: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := acc.Profile(200)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := stats.GDPEpsilon(2*a/math.Sqrt(2)*math.Sqrt(200), 1e-5)
	if got := pr.Epsilon(1e-5); math.Abs(got-want) > 0.005*want {
		t.Errorf("ε = %.6g, GDP %.6g", got, want)
	}
}

// TestMixturePLDComposed checks the 200-fold composition against a Monte
// Carlo of the privacy loss: δ(ε) = E_P[(1 − e^{ε − L})₊] with L the sum
// of 200 per-step losses drawn under P, at ε = 0.1 and 0.2, within four
// standard errors; and reports ε at δ = 1e-5 (0.497).
func TestMixturePLDComposed(t *testing.T) {
	p, q := barkerPair()
	acc, err := MixturePLD(p, q, nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := acc.Profile(200)
	if err != nil {
		t.Fatal(err)
	}
	dens := func(g GaussMix2, y float64) float64 {
		n := func(m, v float64) float64 { return math.Exp(-(y-m)*(y-m)/(2*v)) / math.Sqrt(2*math.Pi*v) }
		return (1-g.W)*n(g.M0, g.V0) + g.W*n(g.M1, g.V1)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	const runs = 20000
	eps := []float64{0.1, 0.2}
	sum, sum2 := make([]float64, len(eps)), make([]float64, len(eps))
	for r := 0; r < runs; r++ {
		var l float64
		for s := 0; s < 200; s++ {
			y := math.Sqrt(p.V0) * rng.NormFloat64()
			if rng.Float64() < p.W {
				y = p.M1 + math.Sqrt(p.V1)*rng.NormFloat64()
			}
			l += math.Log(dens(p, y)) - math.Log(dens(q, y))
		}
		for i, e := range eps {
			v := math.Max(0, -math.Expm1(e-l))
			sum[i] += v
			sum2[i] += v * v
		}
	}
	for i, e := range eps {
		m := sum[i] / runs
		se := math.Sqrt((sum2[i]/runs - m*m) / runs)
		if d := pr.Delta(e); math.Abs(d-m) > 4*se {
			t.Errorf("δ(%g): PLD %.5g, Monte Carlo %.5g ± %.2g", e, d, m, se)
		}
	}
	if e := pr.Epsilon(1e-5); math.Abs(e-0.4974) > 0.002 {
		t.Errorf("ε(1e-5) = %.5g, want 0.497", e)
	}
}

// TestMixturePLDValidate checks the refused mixtures.
func TestMixturePLDValidate(t *testing.T) {
	p, q := barkerPair()
	for _, bad := range []GaussMix2{{W: 1.5, V0: 1, V1: 1}, {W: 0.5, V0: 0, V1: 1}, {W: 0.5, V0: 1, V1: 1, M1: math.NaN()}} {
		if _, err := MixturePLD(bad, q, nil); err == nil {
			t.Errorf("P = %+v accepted", bad)
		}
		if _, err := MixturePLD(p, bad, nil); err == nil {
			t.Errorf("Q = %+v accepted", bad)
		}
	}
}
