package closedform

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// eq. 33 against the formulas written out again in mpmath at 50 digits
// (/usr/bin/python3, mpmath 1.2; docs/derivations/interim-region.md).
// The first case is Claim IV.9's eq. 34 (ρ2 = 0.45, γ1 = 0.49, β = 3,
// x_h = 1, x_l = 0.5, α = 1) with ε = 1, δ = 1e-3, n_1 = 1e13 and
// m̆ = n_1^1.15 (ρ3 = 1.15): its third term, exponent 1/(1 − 2γ1) = 50,
// makes n_min ≈ 9.7e174.
func TestNMinReference(t *testing.T) {
	cases := []struct {
		a    ProposeTestSample
		m    float64
		b1   [7]float64
		b2   [2]float64
		n1t  float64
		want float64
	}{
		{ProposeTestSample{Epsilon: 1, Delta: 1e-3, XL: 0.5, XH: 1, Alpha: 1, Beta: 3, Rho1: 1.25, Rho2: 0.45, Gamma1: 0.49, N1: 1e13},
			math.Pow(10, 13*1.15),
			[7]float64{33, 6610.1450033578283, 9.7446687100611067e+174, 7928809622329.163, 27480.43438188764, 414881687431.59985, 283.37580771256488},
			[2]float64{198.54014077285699, 60.262042231857096}, 868511373751.35365, 9.7446687100611067e+174},
		{ProposeTestSample{Epsilon: 2, Delta: 0.01, XL: 0.9, XH: 1.8, Alpha: 2, Beta: 1, Rho1: 1.25, Rho2: 0.1, Gamma1: 0.3, N1: 1e8},
			5e4,
			[7]float64{17, 436.4248827903793, 10595054.768242569, 117790.5158776058, 632.95039589340052, 40727.830421738678, 70.235351099445705},
			[2]float64{225.20680743952365, 23.420680743952365}, 464.15888336127815, 10595054.768242569},
	}
	for i, c := range cases {
		r, err := c.a.NMin(c.m)
		if err != nil {
			t.Fatal(err)
		}
		for j := range r.B1 {
			if relDiff(r.B1[j], c.b1[j]) > 1e-13 {
				t.Errorf("case %d: n_b1 term %d = %.17g, mpmath %.17g", i, j+1, r.B1[j], c.b1[j])
			}
		}
		for j := range r.B2 {
			if relDiff(r.B2[j], c.b2[j]) > 1e-14 {
				t.Errorf("case %d: n_b2 term %d = %.17g, mpmath %.17g", i, j+1, r.B2[j], c.b2[j])
			}
		}
		if relDiff(r.N1Term, c.n1t) > 1e-13 || relDiff(r.Value, c.want) > 1e-13 {
			t.Errorf("case %d: n_1 term %.17g (mpmath %.17g), n_min %.17g (mpmath %.17g)", i, r.N1Term, c.n1t, r.Value, c.want)
		}
	}
	// m̆ < 0 is read as 0: the m̆ terms vanish.
	r, _ := cases[1].a.NMin(-5)
	if r.B1[3] != 0 || r.B1[5] != 0 {
		t.Errorf("m̆ < 0: terms %g, %g", r.B1[3], r.B1[5])
	}
}

// pts is a configuration where Algorithm 1 releases at n_1 = 1e7: γ1 =
// 0.25 keeps n_min near 4e5, and ρ1 − 1 < ρ2 keeps line 17's noise on the
// slope (scale ≈ 4·n^(ρ1−1)) well inside the width n_2^ρ2 of line 19.
func pts() ProposeTestSample {
	return ProposeTestSample{Epsilon: 2, Delta: 0.01, XL: 0.9, XH: 1.8, Alpha: 2, Beta: 1, Rho1: 1.01, Rho2: 0.2, Gamma1: 0.25, N1: 1e7}
}

// Each branch of the algorithm with chosen Laplace draws, against values
// worked out by hand: with all draws 0, n̆1 = n_1 − (1/ε) ln(1/(2δ)) =
// 1e7 − 0.5·ln 50, |V| counts the records with y/x ≤ n̆1^1.01 after
// clipping, m = Σxy/Σx² over V, and W keeps |y/x − m̆| ≤ n_2^0.2.
func TestProposeTestSampleBranches(t *testing.T) {
	a := pts()
	shift := 0.5 * math.Log(50)
	// 1e7 records at slope 3 (x = 1.8, clipped from 2.5 for half of them),
	// and one record at slope 1e12 that line 10 drops.
	d := []WeightedPoint{{X: 1.8, Y: 5.4, Count: 5e6}, {X: 2.5, Y: 5.4, Count: 5e6 - 1}, {X: 1, Y: 1e12, Count: 1}}
	r := a.run(d, [4]float64{}, 0.5)
	if r.N1Breve != 1e7-shift || r.SizeV != 1e7-1 || r.N2 != 1e7-1-shift {
		t.Errorf("n̆1 = %.17g, |V| = %g, n_2 = %.17g", r.N1Breve, r.SizeV, r.N2)
	}
	// All kept records are (1.8, 5.4) after clipping: m = 3 exactly, W = V.
	if r.M != 3 || r.MBreve != 3 || r.SizeW != 1e7-1 || r.NW != 1e7-1-shift {
		t.Errorf("m = %g, m̆ = %g, |W| = %g, n_W = %g", r.M, r.MBreve, r.SizeW, r.NW)
	}
	if !r.Released || r.Line != 25 || !(r.NMin.Value < r.NW) {
		t.Fatalf("not released: line %d, n_min %g", r.Line, r.NMin.Value)
	}
	// Posterior on W (Lemma IV.2): precision α + β·|W|·1.8², mean
	// β·|W|·1.8·5.4/precision; θ = mean + 0.5·sd.
	prec := 2 + (1e7-1)*1.8*1.8
	mu := (1e7 - 1) * 1.8 * 5.4 / prec
	if relDiff(r.PostMean, mu) > 1e-14 || relDiff(r.PostVar, 1/prec) > 1e-14 || relDiff(r.Theta, mu+0.5/math.Sqrt(prec)) > 1e-14 {
		t.Errorf("posterior N(%g, %g), θ = %g; want N(%g, %g)", r.PostMean, r.PostVar, r.Theta, mu, 1/prec)
	}
	// Line 14: a Laplace draw that pushes n_2 to 1.
	r = a.run(d, [4]float64{0, -(1e7 - 2 - shift) / 0.5}, 0)
	if r.Line != 14 || r.Released || !math.IsNaN(r.M) {
		t.Errorf("n_2 = %g: line %d", r.N2, r.Line)
	}
	// Line 23: m̆ pushed far from 3 (l3 scaled by the line-17 scale), W
	// empty, n_W < n_min.
	r = a.run(d, [4]float64{0, 0, 1e9}, 0)
	if r.Line != 23 || r.SizeW != 0 || r.Released {
		t.Errorf("m̆ = %g: line %d, |W| = %g", r.MBreve, r.Line, r.SizeW)
	}
	// Too few records for n_min: line 23 with W = V.
	small := []WeightedPoint{{X: 1.8, Y: 5.4, Count: 100}}
	r = a.run(small, [4]float64{}, 0)
	if r.Line != 23 || r.SizeW != 100 {
		t.Errorf("n = 100: line %d, |W| = %g, n_min = %g", r.Line, r.SizeW, r.NMin.Value)
	}
}

// The randomness: with a dataset whose V is fixed (every y = 0, so y/x = 0
// is under every cap), line 14 stops the run exactly when the Laplace draw
// l2 ≤ 1 − |V| + (1/ε)ln(1/(2δ)), whose probability is the Laplace CDF;
// and a released θ follows the posterior on W. 20,000 runs, fixed seed;
// the rate is compared at 4.5 binomial standard errors, the draws' mean and
// variance by z-tests at 4.5 standard errors (sd/√N and v·√(2/(N−1))).
func TestProposeTestSampleDistribution(t *testing.T) {
	a := pts()
	a.N1 = 5
	d := []WeightedPoint{{X: 1, Y: 0, Count: 5}}
	rng := rand.New(rand.NewPCG(11, 12))
	const N = 20000
	stops := 0
	for range N {
		r, err := a.Run(d, rng)
		if err != nil {
			t.Fatal(err)
		}
		if r.Line == 14 {
			stops++
		}
	}
	// P(l ≤ x) for Laplace(0, 1/ε), x = 1 − 5 + 0.5 ln 50 < 0.
	x := 1 - 5 + 0.5*math.Log(50)
	p := 0.5 * math.Exp(2*x)
	if se := math.Sqrt(p * (1 - p) / N); math.Abs(float64(stops)/N-p) > 4.5*se {
		t.Errorf("line-14 rate %g, Laplace CDF %g (se %g)", float64(stops)/N, p, se)
	}
	// Released draws on a large dataset at slope 3.
	a = pts()
	big := []WeightedPoint{{X: 1.8, Y: 5.4, Count: 1e7}}
	var sum, sum2 float64
	released := 0
	var mu, v float64
	for range N {
		r, _ := a.Run(big, rng)
		if !r.Released {
			continue
		}
		if r.SizeW != 1e7 {
			t.Fatalf("|W| = %g", r.SizeW)
		}
		mu, v = r.PostMean, r.PostVar
		released++
		sum += r.Theta - mu
		sum2 += (r.Theta - mu) * (r.Theta - mu)
	}
	if released < N*9/10 {
		t.Fatalf("only %d of %d runs released", released, N)
	}
	n := float64(released)
	m := sum / n
	s2 := (sum2 - n*m*m) / (n - 1)
	if math.Abs(m) > 4.5*math.Sqrt(v/n) || math.Abs(s2-v) > 4.5*v*math.Sqrt(2/(n-1)) {
		t.Errorf("θ − μ: mean %g (sd %g), variance %g, posterior %g", m, math.Sqrt(v/n), s2, v)
	}
}

func TestProposeTestSampleErrors(t *testing.T) {
	cases := []struct {
		mod  func(*ProposeTestSample)
		want string
	}{
		{func(a *ProposeTestSample) { a.Delta = 0.5 }, "delta: must be in (0, 0.5)"},
		{func(a *ProposeTestSample) { a.XH = 0.5 }, "xh: must be finite and > x_l"},
		{func(a *ProposeTestSample) { a.Beta = 0.5 }, "beta: must be ≥ 3/x_h²"},
		{func(a *ProposeTestSample) { a.Rho1 = 1.5 }, "rho1: must be in (1, 1.5)"},
		{func(a *ProposeTestSample) { a.Gamma1 = 0.1 }, "gamma1: must be in (ρ2, 0.5) = (0.2, 0.5)"},
		{func(a *ProposeTestSample) { a.N1 = 2.5 }, "n1: must be an integer"},
	}
	for _, c := range cases {
		a := pts()
		c.mod(&a)
		if _, err := a.NMin(1); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want %q", err, c.want)
		}
	}
	if _, err := pts().Run([]WeightedPoint{{X: math.NaN(), Y: 1, Count: 1}}, rand.New(rand.NewPCG(1, 2))); err == nil || !strings.Contains(err.Error(), "data: record 0") {
		t.Errorf("NaN record: %v", err)
	}
}
