package mechanisms

import (
	"math"
	"testing"
)

// The hand-computed cases of docs/derivations/path.md ("A case by hand"):
// each per-step term of SGLD's path statistic worked out on paper (the
// exponents and mixture weights written out, the logarithms to 30 digits)
// against GaussShift, BernoulliShiftLogLik and BinomialShiftLogLik, and
// against sgldPath.step, which picks their arguments from the sampler's
// settings.

// handTol is the agreement required with a value computed by hand to 30
// digits: a few float64 roundings of numbers of order 1.
const handTol = 1e-14

func handClose(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > handTol*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.17g, by hand %.17g", what, got, want)
	}
}

// Full batch, the constants of testdata/tight/dp-sgld-full-path.yaml
// (η = 0.5625, C = 1, n = b = 10, replace-one with the canary's sign −1
// in D and +1 in D′): the canary's drift is ∓(η/2)·C = ∓0.28125 against
// noise sd sqrt(η) = 0.75, so each term is −(ηC)·y/η = −C·y and four
// increments 0.3, −0.5, 0.1, 0.4 give Λ = −0.3.
func TestPathHandFullBatch(t *testing.T) {
	ys := []float64{0.3, -0.5, 0.1, 0.4}
	var sum float64
	for _, y := range ys {
		term := GaussShift(y, -0.28125, 0.28125, 0.75)
		handClose(t, "GaussShift term", term, -y)
		sum += term
	}
	handClose(t, "Λ by GaussShift", sum, -0.3)

	s := &SGLD{Step: StepSchedule{Eta: 0.5625}, Batch: 10, Scheme: WithoutReplacement, Iters: 4, Clip: 1}
	lr := NewPathLR(&PathSpec{Sign: [2]float64{-1, 1}, N: [2]int{10, 10}})
	p := s.newPath(lr, handCanary(t))
	for _, y := range ys {
		p.step(y, 0.5625)
	}
	handClose(t, "Λ by sgldPath", lr.Value(), -0.3)
}

// Poisson subsampling, round numbers: q = 0.1, a = 1, sd = 1, y = 0.5.
// Under D the canary adds −a with probability q: the exponent is
// −a(2y + a)/(2sd²) = −1, ln(0.9 + 0.1·e⁻¹) = −0.065298335998833695…;
// under D′ it adds +a: a(2y − a)/(2sd²) = 0, ln(0.9 + 0.1) = 0.
func TestPathHandPoissonRound(t *testing.T) {
	handClose(t, "ln p_D/φ", BernoulliShiftLogLik(0.5, 0.1, -1, 1), -0.0652983359988336953631635041609)
	handClose(t, "ln p_D′/φ", BernoulliShiftLogLik(0.5, 0.1, 1, 1), 0)
}

// Poisson subsampling, the constants of
// testdata/tight/dp-sgld-poisson-path.yaml: n = 1438, b = 32, so
// q = 32/1438 = 0.022253129346…; η = 0.01, C = 0.2, so the canary's drift
// when included is a = (η/2)(n/b)C = 0.0449375 against sd = 0.1. At
// y = 0.1 the exponents are −a(2y + a)/(2sd²) = −0.5503439453125 (D) and
// a(2y − a)/(2sd²) = 0.3484060546875 (D′); the logarithms of the mixture
// ratios are −0.00946324128085055… and 0.00923251858158834…, and the
// term −0.0186957598624388944….
func TestPathHandPoissonScenario(t *testing.T) {
	q := 32.0 / 1438
	a := 0.005 * 1438 / 32 * 0.2
	handClose(t, "a", a, 0.0449375)
	lD := BernoulliShiftLogLik(0.1, q, -a, 0.1)
	lDp := BernoulliShiftLogLik(0.1, q, a, 0.1)
	handClose(t, "ln p_D/φ", lD, -0.00946324128085055488430196429101)
	handClose(t, "ln p_D′/φ", lDp, 0.00923251858158833955995518530003)
	handClose(t, "term", lD-lDp, -0.018695759862438894444257149591)

	s := &SGLD{Step: StepSchedule{Eta: 0.01}, Batch: 32, Scheme: Poisson, Iters: 900, Clip: 0.2}
	lr := NewPathLR(&PathSpec{Sign: [2]float64{-1, 1}, N: [2]int{1438, 1438}})
	s.newPath(lr, handCanary(t)).step(0.1, 0.01)
	handClose(t, "sgldPath term", lr.Value(), -0.018695759862438894444257149591)
}

// With replacement, round numbers: b = 2 draws, p = 1/n = 1/2, a = 1,
// sd = 1, y = 0.5. The canary is drawn k ~ Bin(2, ½) times, adding k·a:
// under D (a → −1) the ratio to N(0, 1) is ¼ + ½e⁻¹ + ¼e⁻³ =
// 0.446386487677687…, under D′ ¼ + ½e⁰ + ¼e⁻¹ = 0.841969860292861…, and
// the term is ln of their quotient, −0.634559077155268669….
func TestPathHandBinomial(t *testing.T) {
	lD := BinomialShiftLogLik(0.5, 2, 0.5, -1, 1)
	lDp := BinomialShiftLogLik(0.5, 2, 0.5, 1, 1)
	handClose(t, "ln p_D/φ", lD, -0.806570137912398919850268115912)
	handClose(t, "ln p_D′/φ", lDp, -0.172011060757130250577955900142)
	handClose(t, "term", lD-lDp, -0.634559077155268669272312215769)

	// The same through sgldPath: n = 2, b = 2 draws, (η/2)(n/b)C = a = 1
	// with η = 1 (sd = 1) and C = 2.
	s := &SGLD{Step: StepSchedule{Eta: 1}, Batch: 2, Scheme: WithReplacement, Iters: 1, Clip: 2}
	lr := NewPathLR(&PathSpec{Sign: [2]float64{-1, 1}, N: [2]int{2, 2}})
	s.newPath(lr, handCanary(t)).step(0.5, 1)
	handClose(t, "sgldPath term", lr.Value(), -0.634559077155268669272312215769)
}

// handCanary returns a gradient canary on inert records (slope 10⁶, so
// every clip bound here is reached).
func handCanary(t *testing.T) Model {
	t.Helper()
	m, err := NewGradientCanary(Inert{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
