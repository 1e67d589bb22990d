package closedform

import (
	"math"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/stats"
)

// addRemoveReference is ε(δ) of the add/remove subsampled Gaussian (Poisson
// rate q, noise multiplier z, T steps), bracketed by an independent NumPy
// computation (docs/derivations/pld-reference/addremove_bracket.py: the
// remove pair and its swap, each step's loss rounded down and up to a grid
// of width h, FFT composition): the true ε lies in [lo, hi].
type addRemoveReference struct {
	q, z   float64
	steps  int
	delta  float64
	lo, hi float64
}

// addRemoveTable: q = 1 rows are full batches (the Gaussian mechanism of
// sensitivity C); the digits row has the constants of
// testdata/digits-dp-sgld.yaml.
var addRemoveTable = []addRemoveReference{
	{1.0, 1.0, 1, 1e-05, 4.3771681, 4.3771881},
	{1.0, 2.0, 10, 1e-05, 7.5111759, 7.5113759},
	{1.0, 4.0, 100, 1e-06, 14.450677, 14.450877},
	{1.0, 2.6666666666666665, 4, 1e-05, 3.14675799, 3.14683799},
	{1.0, 0.5, 1, 0.001, 7.58126992, 7.58128992},
	{0.5, 1.0, 1, 1e-05, 3.53398799, 3.53400799},
	{0.5, 2.0, 20, 1e-05, 5.68935772, 5.68955772},
	{0.2, 1.0, 10, 1e-05, 4.9841134, 4.9843134},
	{0.2, 2.0, 50, 1e-06, 3.97430612, 3.97450612},
	{0.2, 0.8, 1, 1e-05, 3.60557659, 3.60559659},
	{0.1, 1.0, 100, 1e-05, 7.0463388, 7.04686644},
	{0.1, 1.5, 30, 0.001, 1.23304782, 1.23324782},
	{0.05, 1.0, 100, 1e-05, 3.50190166, 3.50239464},
	{0.05, 0.7, 10, 1e-05, 3.92972977, 3.92992977},
	{0.05, 2.0, 200, 1e-06, 1.79188578, 1.7922199},
	{0.01, 1.0, 100, 1e-05, 0.717829401, 0.718241924},
	{0.01, 1.0, 1000, 1e-05, 1.82617405, 1.83029929},
	{0.01, 0.6, 50, 1e-05, 3.35345384, 3.35388824},
	{0.01, 2.0, 1000, 1e-06, 0.720450026, 0.721382098},
	{32.0 / 1438, 2.2253129346314324, 900, 1e-05, 1.23370937, 1.23460541},
	{0.001, 1.0, 1000, 1e-05, 0.147414023, 0.150389141},
	{0.001, 0.5, 100, 1e-05, 2.10815758, 2.10914773},
}

// The add/remove guarantee of the Poisson (and full-batch) subsampled
// Gaussian is never below the independent reference's lower end (it is an
// upper bound on the truth) and at most 1.0012 times its upper end.
func TestAddRemoveAgainstReference(t *testing.T) {
	worst, margin := 0.0, math.Inf(1)
	for _, r := range addRemoveTable {
		m := SGM{Sampling: Poisson, Rate: r.q, NoiseMultiplier: r.z, Steps: r.steps}
		g, err := m.AddRemoveTightest()
		if err != nil {
			t.Fatalf("%+v: %v", r, err)
		}
		eps, err := g.Epsilon(r.delta)
		if err != nil {
			t.Fatalf("%+v: %v", r, err)
		}
		worst, margin = math.Max(worst, eps/r.hi), math.Min(margin, eps/r.lo)
		if !(eps >= r.lo && eps <= 1.0012*r.hi) {
			t.Errorf("q = %g, z = %g, T = %d, δ = %g: ε = %.9g, reference [%.9g, %.9g] (ratio %.6f)",
				r.q, r.z, r.steps, r.delta, eps, r.lo, r.hi, eps/r.hi)
		}
	}
	t.Logf("over %d rows: largest ε / reference upper end %.6f, smallest ε / lower end %.6f", len(addRemoveTable), worst, margin)
}

// Full batches: the Gaussian mechanism of sensitivity C, exactly
// √T/z-GDP (stats.GDPEpsilon, an independent closed form), and both
// accountants are upper bounds on it.
func TestAddRemoveFullBatchIsGaussian(t *testing.T) {
	for _, z := range []float64{0.7, 8.0 / 3, 5} {
		for _, steps := range []int{1, 4, 50} {
			m := SGM{Sampling: Poisson, Rate: 1, NoiseMultiplier: z, Steps: steps}
			g, err := m.AddRemoveTightest()
			if err != nil {
				t.Fatal(err)
			}
			exact, err := stats.GDPEpsilon(math.Sqrt(float64(steps))/z, 1e-5)
			if err != nil {
				t.Fatal(err)
			}
			eps := g.EpsilonAt(1e-5)
			if !(eps >= exact && eps <= 1.005*exact) {
				t.Errorf("z = %g, T = %d: ε = %.9g, exact %.9g", z, steps, eps, exact)
			}
		}
	}
}

// The RDP accountant for Poisson sampling is Mironov, Talwar & Zhang's
// closed form (the same as SGM.AddRemove); without replacement it is that
// form at shift 2C, which is larger; and add/remove is below replace-one.
func TestAddRemoveRDP(t *testing.T) {
	m := SGM{Sampling: Poisson, Rate: 0.02, NoiseMultiplier: 0.9, Steps: 20}
	a, err := m.AddRemoveRDP()
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.AddRemove()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []float64{1e-3, 1e-5, 1e-9} {
		if a.EpsilonAt(d) != b.EpsilonAt(d) {
			t.Errorf("δ = %g: AddRemoveRDP %v, AddRemove %v", d, a.EpsilonAt(d), b.EpsilonAt(d))
		}
	}
	for _, alpha := range []int{2, 8, 64} {
		p, w := AddRemoveStepRDP(Poisson, 0.05, 1.2, alpha), AddRemoveStepRDP(WithoutReplacement, 0.05, 1.2, alpha)
		if !(w > p) || w != PoissonSGMAddRemoveRDP(0.05, 0.6, alpha) {
			t.Errorf("α = %d: Poisson %g, without replacement %g", alpha, p, w)
		}
	}
	for _, s := range []Sampling{Poisson, WithoutReplacement} {
		m := SGM{Sampling: s, Rate: 0.05, NoiseMultiplier: 1, Steps: 30}
		ar, err := m.AddRemoveTightest()
		if err != nil {
			t.Fatal(err)
		}
		ro, err := m.ReplaceOneTightest()
		if err != nil {
			t.Fatal(err)
		}
		if !(ar.EpsilonAt(1e-5) < ro.EpsilonAt(1e-5)) || ar.Variant != "add/remove" {
			t.Errorf("%v: add/remove ε %g (%q), replace-one ε %g", s, ar.EpsilonAt(1e-5), ar.Variant, ro.EpsilonAt(1e-5))
		}
	}
}

// A DP-SGLD full batch is accounted as q = 1 (sensitivity C), and the
// mapping to z is the replace-one one.
func TestDPSGLDAddRemove(t *testing.T) {
	c := DPSGLD{N: 10, Sampling: WithoutReplacement, BatchSize: 10, Clip: 1, Drift: 0.28125, NoiseVar: 0.5625, Steps: 4}
	gs, err := c.AddRemoveGuarantees()
	if err != nil || len(gs) != 1 {
		t.Fatalf("%v, %v", gs, err)
	}
	exact, _ := stats.GDPEpsilon(0.75, 1e-5)
	if eps := gs[0].EpsilonAt(1e-5); !(eps >= exact && eps <= 1.001*exact) || gs[0].Source != SGMPoissonAddRemoveTightestSource {
		t.Errorf("full batch: ε = %g (%s), exact 0.75-GDP %g", eps, gs[0].Source, exact)
	}
	c.BatchSize = 5
	gs, err = c.AddRemoveGuarantees()
	if err != nil || gs[0].Source != SGMWithoutReplacementAddRemoveTightestSource {
		t.Fatalf("b = 5: %v, %v", gs, err)
	}
}
