package closedform

import (
	"math"
	"strings"
	"testing"
)

// thmRef holds the bounds of the construction computed independently:
// App. A-A's formulas written out again in mpmath at 50 digits
// (/usr/bin/python3, mpmath 1.2), with Claim D.28's exponent for n_2's
// fourth term — ln n_1, ln of n_2's five terms, ln n_3, ln of eq. 16's
// bound, n_p = ⌈max⌉ and c_p = n_p^γ2.
type thmRef struct {
	p  TheoremIV1Params
	ln [8]float64
	np float64
	cp float64
}

var thmRefs = []thmRef{
	{TheoremIV1Params{Epsilon: 0.5, EpsilonPrime: 38, Delta: 1e-3, Gamma1: 0.1, Gamma2: 1.2, Alpha: 2, Beta: 1, XH: 1.8},
		[8]float64{0.48074816852871276, 4.1743872698956371, 10.834592064982068, 11.85931861724751, 16.22132663916116,
			19.726846733179541, 7.045115072974756, 32.875378889484978}, 189494078034468, 135867245431480277.57},
	{TheoremIV1Params{Epsilon: 1, EpsilonPrime: 10, Delta: 1e-5, Gamma1: 0.25, Gamma2: 1.3, Alpha: 1, Beta: 4, XH: 1},
		[8]float64{0.22314355131420976, 3.4965075614664802, 9.786953993977263, 17.659336665772836, 23.205004205079604,
			26.671352726413337, 5.4900053762609016, 21.435579260902741}, 383019878326, 1143372409611416.7632},
}

func TestTheoremIV1Bounds(t *testing.T) {
	for _, ref := range thmRefs {
		th, err := NewTheoremIV1(ref.p)
		if err != nil {
			t.Fatal(err)
		}
		got := [8]float64{th.LnN1, th.LnN2[0], th.LnN2[1], th.LnN2[2], th.LnN2[3], th.LnN2[4], th.LnN3, th.LnNSGLD}
		for i := range got {
			if math.Abs(got[i]-ref.ln[i]) > 1e-13*math.Max(1, ref.ln[i]) {
				t.Errorf("%+v: bound %d: ln = %.17g, mpmath %.17g", ref.p, i, got[i], ref.ln[i])
			}
		}
		if th.NP != ref.np || relDiff(th.CP, ref.cp) > 1e-14 || th.Gamma2Chosen || len(th.Limits) != 0 {
			t.Errorf("%+v: n_p = %.17g (mpmath %.17g), c_p = %g, limits %q", ref.p, th.NP, ref.np, th.CP, th.Limits)
		}
		if s := th.Alpha + th.NP*th.XH*th.XH*th.Beta; relDiff(th.Eta, 2/(s*s)) > 1e-13 {
			t.Errorf("η = %g, 2/s² = %g", th.Eta, 2/(s*s))
		}
	}
}

// Both halves of the theorem hold at the constructed instance, checked
// with exact quantities: the posterior's ε (minimised over ν, either
// reading of Lemma A.1; and at the construction's own order ν1 in the
// printed reading Claim D.28 uses) is at most ε; at Lemma A.9's epoch,
// Lemma A.9's bound is at least ε′ and the exact Chernoff quantity (the
// proof's route) and the exact profile (the theorem's claim) exceed it.
func TestTheoremIV1Verify(t *testing.T) {
	params := []TheoremIV1Params{thmRefs[0].p, thmRefs[1].p}
	auto := thmRefs[0].p
	auto.Gamma2 = 0
	// ε′ = 1e6: Lemma A.9's bound at n_p is 1e6 up to rounding.
	big := auto
	big.EpsilonPrime = 1e6
	params = append(params, auto, big)
	for _, p := range params {
		th, err := NewTheoremIV1(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []LemmaA1Variant{A1Printed, A1Conservative} {
			chk, err := th.Verify(v)
			if err != nil {
				t.Fatalf("%+v: %v", p, err)
			}
			if !chk.PosteriorHolds || chk.PosteriorEpsilon > p.Epsilon || chk.PosteriorEpsilon > chk.PosteriorEpsilonNu1 {
				t.Errorf("%+v %v: posterior ε = %g (at ν1 %g)", p, v, chk.PosteriorEpsilon, chk.PosteriorEpsilonNu1)
			}
			if v == A1Printed && chk.PosteriorEpsilonNu1 > p.Epsilon {
				t.Errorf("%+v: posterior ε at ν1 = %.17g > ε (Claim D.28)", p, chk.PosteriorEpsilonNu1)
			}
			for _, c := range chk.LemmaA9Checks {
				if !c.Holds {
					t.Errorf("%+v: Lemma A.9 condition fails: %s (%s)", p, c.Name, c.Detail)
				}
			}
			ec := chk.Curves
			if chk.LemmaA9 < p.EpsilonPrime*(1-1e-12) || !(ec.Chernoff.Epsilon >= chk.LemmaA9) || !chk.ProofHolds || !chk.ClaimHolds ||
				!(ec.Chernoff.Epsilon <= ec.Profile.Epsilon+ec.Profile.Err) {
				t.Errorf("%+v: epoch %d: Lemma A.9 %g, exact %+v", p, chk.Epoch, chk.LemmaA9, ec)
			}
		}
	}
}

// The γ2 chosen to minimise n_p against a brute-force scan of 200,000
// interior points of (1 + γ1, 3/2): the scan can only do worse, and by
// little.
func TestTheoremIV1ChosenGamma2(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	for _, ref := range thmRefs {
		p := ref.p
		p.Gamma2 = 0
		th, err := NewTheoremIV1(p)
		if err != nil {
			t.Fatal(err)
		}
		scan := math.Inf(1)
		for i := 1; i < 200000; i++ {
			g := 1 + p.Gamma1 + (0.5-p.Gamma1)*float64(i)/200000
			if v, _ := th.lnMax(g); v < scan {
				scan = v
			}
		}
		if !th.Gamma2Chosen || th.MinLnNP > scan+1e-12 || th.MinLnNP < scan-1e-4 || th.Gamma2 != th.MinGamma2 {
			t.Errorf("%+v: chosen γ2 = %g with ln n_p = %.15g; scan %.15g", p, th.Gamma2, th.MinLnNP, scan)
		}
		if math.Abs(math.Log(th.NP)-th.MinLnNP) > 1e-9 {
			t.Errorf("n_p = %g, min %g", th.NP, math.Exp(th.MinLnNP))
		}
	}
}

// Out of range: n_p above 2^53 for γ2 near 1 + γ1 (eq. 16's exponent
// 1/(2(γ2 − 1)) is large), beyond float64 altogether for a small γ1, and
// η = 2/s² underflowing for a huge x_h. Each limit names the quantity, its
// order of magnitude and the limit.
func TestTheoremIV1Limits(t *testing.T) {
	base := thmRefs[0].p
	cases := []struct {
		mod  func(*TheoremIV1Params)
		want []string
	}{
		{func(p *TheoremIV1Params) { p.Gamma2 = 1.11 }, []string{
			"n_p ≈ 9.105e+25 exceeds 2^53 ≈ 9.007e15", "set by eq. 16", "γ2 = 1.2631"}},
		{func(p *TheoremIV1Params) { p.Gamma1, p.Gamma2 = 0.001, 1.0015 }, []string{
			"exceeds 2^53", "n_p ≈ ", "overflows float64 (largest 1.798e+308)", "c_p = n_p^γ2 ≈ ", "η = 2/s² ≈ ", "underflows float64"}},
		{func(p *TheoremIV1Params) { p.XH = 1e160; p.Gamma2 = 0 }, []string{"η = 2/s² ≈ ", "underflows float64 (smallest normal 2.225e-308)"}},
	}
	for i, c := range cases {
		p := base
		c.mod(&p)
		th, err := NewTheoremIV1(p)
		if err != nil {
			t.Fatal(err)
		}
		all := strings.Join(th.Limits, "\n")
		for _, w := range c.want {
			if !strings.Contains(all, w) {
				t.Errorf("case %d: limits %q lack %q", i, th.Limits, w)
			}
		}
		if _, err := th.Verify(A1Conservative); err == nil || !strings.Contains(err.Error(), "no instance of the construction can be built") {
			t.Errorf("case %d: Verify: %v", i, err)
		}
	}
}

func TestTheoremIV1Errors(t *testing.T) {
	base := thmRefs[0].p
	cases := []struct {
		mod  func(*TheoremIV1Params)
		want string
	}{
		{func(p *TheoremIV1Params) { p.Epsilon = 0 }, "epsilon: must be a finite number > 0"},
		{func(p *TheoremIV1Params) { p.EpsilonPrime = math.Inf(1) }, "epsilon-prime: must be"},
		{func(p *TheoremIV1Params) { p.Delta = 0.5 }, "delta: must be in (0, 0.5)"},
		{func(p *TheoremIV1Params) { p.Gamma1 = 0.5 }, "gamma1: must be in (0, 0.5)"},
		{func(p *TheoremIV1Params) { p.Gamma2 = 1.05 }, "gamma2: must be in (1 + γ1, 1.5) = (1.1, 1.5)"},
		{func(p *TheoremIV1Params) { p.Gamma2 = 1.5 }, "gamma2: must be in"},
		{func(p *TheoremIV1Params) { p.Beta = -1 }, "beta: must be"},
		{func(p *TheoremIV1Params) { p.XH = 1 }, "xh: the domain of eq. 5 needs x_h²β > 3, got x_h²β = 1"},
	}
	for _, c := range cases {
		p := base
		c.mod(&p)
		if _, err := NewTheoremIV1(p); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want %q", err, c.want)
		}
	}
}
