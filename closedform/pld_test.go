package closedform

import (
	"math"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/stats"
)

// pldProfile returns the default-option profile of T steps of an SGM.
func pldProfile(t *testing.T, s Sampling, adj Adjacency, q, z float64, T int) *PLDProfile {
	t.Helper()
	a, err := SGM{s, q, z, T}.PLD(adj, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := a.Profile(T)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checkBracket asserts OptimisticDelta ≤ want ≤ Delta at ε (want is exact
// up to relTol).
func checkBracket(t *testing.T, label string, p *PLDProfile, eps, want, relTol float64) {
	t.Helper()
	lo, hi := p.OptimisticDelta(eps), p.Delta(eps)
	if !(lo <= want*(1+relTol) && hi >= want*(1-relTol)) {
		t.Errorf("%s ε = %g: exact δ = %.12g outside [optimistic %.12g, pessimistic %.12g]", label, eps, want, lo, hi)
	}
}

// Without subsampling (q = 1) every accountant is a Gaussian mechanism and T
// steps compose exactly to μ-GDP with μ = √T·sensitivity/z (Dong, Roth &
// Su 2019, Cor. 3.3): sensitivity 2C under replace-one, C under add/remove
// with Poisson sampling, 2C under add/remove without replacement. The
// exact profile is stats.GDPDelta; the PLD brackets it at every ε and its
// ε(δ) is within 1% above GDPEpsilon. Among them: full-batch DP-SGLD of
// testdata/dp-sgld-correct.yaml (z = 8/3, T = 4: μ = 1.5, exact ε(1e-5) =
// 7.0514132237939579, mpmath).
func TestPLDGaussianExact(t *testing.T) {
	for _, c := range []struct {
		s    Sampling
		adj  Adjacency
		z    float64
		T    int
		sens float64
	}{
		{WithoutReplacement, AdjacencyReplaceOne, 8.0 / 3, 4, 2},
		{Poisson, AdjacencyReplaceOne, 8.0 / 3, 4, 2},
		{Poisson, AdjacencyReplaceOne, 4, 1, 2},
		{WithoutReplacement, AdjacencyReplaceOne, 20, 900, 2},
		{Poisson, AdjacencyAddRemove, 1.1, 100, 1},
		{WithoutReplacement, AdjacencyAddRemove, 3, 10, 2},
		{Poisson, AdjacencyReplaceOne, 0.5, 3, 2},
	} {
		mu := math.Sqrt(float64(c.T)) * c.sens / c.z
		p := pldProfile(t, c.s, c.adj, 1, c.z, c.T)
		label := c.s.String() + " " + c.adj.String()
		for _, e := range []float64{0, 0.3, 1, 2.5, 5, 10} {
			if want := stats.GDPDelta(mu, e); want > 1e-11 {
				checkBracket(t, label, p, e, want, 1e-12)
			}
		}
		for _, d := range []float64{1e-9, 1e-5, 1e-2} {
			exact, _ := stats.GDPEpsilon(mu, d)
			if e := p.Epsilon(d); !(e >= exact && e <= exact*1.01) {
				t.Errorf("%s μ = %.4g δ = %g: PLD ε = %.10g, exact %.10g", label, mu, d, e, exact)
			}
			if e := p.OptimisticEpsilon(d); !(e <= exact) {
				t.Errorf("%s μ = %.4g δ = %g: optimistic ε = %.10g above the exact %.10g", label, mu, d, e, exact)
			}
		}
	}
	exact, _ := stats.GDPEpsilon(1.5, 1e-5)
	if !withinRel(exact, 7.0514132237939579, 1e-10) {
		t.Errorf("1.5-GDP ε(1e-5) = %.17g", exact)
	}
}

// One step, closed forms of the hockey-stick divergence. Without
// replacement (replace-one and add/remove), H_{e^ε}((1−q)N(0) + qN(s) ‖
// N(0)) = q·GDPDelta(s/z, ln(1 + (e^ε − 1)/q)) for ε ≥ 0 (the identity of
// Balle, Barthe & Gaboardi 2018, Thm 2 with μ0 = μ1′); the add direction
// H_{e^ε}(N(0) ‖ (1−q)N(0) + qN(s)) = (1 − e^ε(1−q))·GDPDelta(s/z, ε′) with
// e^{ε′} = e^ε·q/(1 − e^ε(1−q)) while e^ε(1−q) < 1, else 0
// (docs/derivations/pld.md, §2.3). For the Poisson antipodal pair the
// reference is scipy: brentq for the loss threshold x_ε and
// P(X > x_ε) − e^ε·Q(X > x_ε) (docs/derivations/pld-reference/
// hockey_stick_quadrature.py).
func TestPLDOneStepExact(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	bbg := func(q, mu, e float64) float64 { return q * stats.GDPDelta(mu, math.Log1p(math.Expm1(e)/q)) }
	add := func(q, mu, e float64) float64 {
		r := math.Exp(e) * (1 - q)
		if r >= 1 {
			return 0
		}
		return (1 - r) * stats.GDPDelta(mu, math.Log(math.Exp(e)*q/(1-r)))
	}
	for _, c := range []struct{ q, z float64 }{{0.1, 1.5}, {0.01, 0.8}, {0.5, 3}} {
		p := pldProfile(t, WithoutReplacement, AdjacencyReplaceOne, c.q, c.z, 1)
		for _, e := range []float64{0, 0.1, 0.5, 1.5, 3} {
			if w := bbg(c.q, 2/c.z, e); w > 1e-11 {
				checkBracket(t, "WOR replace-one T=1", p, e, w, 1e-12)
			}
		}
		for _, s := range []Sampling{Poisson, WithoutReplacement} {
			sens := 1.0
			if s == WithoutReplacement {
				sens = 2
			}
			p := pldProfile(t, s, AdjacencyAddRemove, c.q, c.z, 1)
			for _, e := range []float64{0, 0.1, 0.5, 1.5, 3} {
				if w := math.Max(bbg(c.q, sens/c.z, e), add(c.q, sens/c.z, e)); w > 1e-11 {
					checkBracket(t, s.String()+" add/remove T=1", p, e, w, 1e-12)
				}
			}
		}
	}
	// scipy references for the antipodal pair, q = 0.2, z = 0.8.
	p := pldProfile(t, Poisson, AdjacencyReplaceOne, 0.2, 0.8, 1)
	for _, c := range []struct{ eps, want float64 }{
		{0.5, 0.044873920918116539}, {1.5, 0.0050366042696887471}, {3, 0.0001216415562860047},
	} {
		checkBracket(t, "Poisson replace-one T=1", p, c.eps, c.want, 1e-9)
	}
}

// digits-dp-sgld (testdata/digits-dp-sgld.yaml): 1438 training records,
// Poisson batches of expected size 32 (q = 32/1438), clip C = 0.2, η = 0.01,
// so z = 2q/(C·√η) = 100q = 2.2253; 20 epochs of 45 steps, T = 900,
// replace-one. At δ = 1e-5 the RDP accountant gives 3.3231370467388263
// (order 8) with Mironov's conversion and 2.8790825783824195 (order 7) with
// the better of it and Balle et al. 2020, Thm 21 (mpmath evaluation of the
// same per-step bound at orders 2…64,
// docs/derivations/pld-reference/rdp_reference.py); the PLD gives ≤ 2.5. A
// separate NumPy implementation of the same two discretisations at
// h = 5e-4 (docs/derivations/pld-reference/ctd_numpy.py) brackets the
// dominating pair's ε(1e-5) in [2.448616, 2.449045]: the Go pessimistic
// value must lie above its lower end and the optimistic one below its upper
// end.
func TestPLDDigits(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	q := 32.0 / 1438
	c := DPSGLD{N: 1438, Sampling: Poisson, Rate: q, Clip: 0.2, Drift: 0.005, NoiseVar: 0.01, Steps: 900}
	m, err := c.SGM()
	if err != nil || !withinRel(m.NoiseMultiplier, 100*q, 1e-14) {
		t.Fatalf("SGM: %+v, %v", m, err)
	}
	a, err := m.PLD(AdjacencyReplaceOne, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := a.Profile(900)
	if err != nil {
		t.Fatal(err)
	}
	ep, eo := p.Epsilon(1e-5), p.OptimisticEpsilon(1e-5)
	t.Logf("digits: PLD ε(1e-5) = %.6f (optimistic %.6f, gap %.3f%%), h = %g, %d points, floor %.2g",
		ep, eo, 100*p.Gap(1e-5), p.GridStep, p.WindowSize, p.Floor())
	if !(ep <= 2.5 && ep >= 2.448616 && eo <= 2.449045 && eo <= ep) || p.Gap(1e-5) > 0.01 {
		t.Errorf("digits PLD: ε = %.6f, optimistic %.6f", ep, eo)
	}
	tab, err := m.ReplaceOneTable()
	if err != nil {
		t.Fatal(err)
	}
	mir, mo, _ := tab.Epsilon(1e-5, stats.Mironov)
	imp, io, _ := tab.Epsilon(1e-5, stats.Improved)
	t.Logf("digits: RDP ε(1e-5) = %.4f (Mironov), %.4f (improved)", mir, imp)
	if !withinRel(mir, 3.3231370467388263, 1e-10) || mo != 8 || !withinRel(imp, 2.8790825783824195, 1e-10) || io != 7 {
		t.Errorf("digits RDP: Mironov %.17g at %d, improved %.17g at %d", mir, mo, imp, io)
	}
	gs, err := c.Guarantees()
	if err != nil || len(gs) != 1 {
		t.Fatal(err)
	}
	if e, _ := gs[0].Epsilon(1e-5); e != ep || !strings.Contains(gs[0].Note, "PLD") {
		t.Errorf("DPSGLD guarantee ε = %g (PLD %g), note %q", e, ep, gs[0].Note)
	}
}

// The PLD profile of a realistic configuration lies below the RDP
// accountant's wherever δ is above the PLD's floor: both are valid bounds of
// the same mechanism, the PLD is the tight one. (Not a validity check.)
func TestPLDBelowRDP(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	for _, m := range []SGM{
		{Poisson, 0.02225, 2.2253, 900}, {WithoutReplacement, 0.01, 2, 1000}, {Poisson, 0.1, 1, 50}, {WithoutReplacement, 0.2, 3, 20},
	} {
		pld, err := m.ReplaceOnePLD()
		if err != nil {
			t.Fatal(err)
		}
		rdp, _ := m.ReplaceOne()
		for _, e := range []float64{0, 0.5, 1, 2, 4, 8} {
			if d := rdp.Profile(e); d > 1e-10 && pld.Profile(e) > d {
				t.Errorf("%+v ε = %g: PLD δ %g above RDP δ %g", m, e, pld.Profile(e), d)
			}
		}
	}
}

// FFT composition against direct convolution (sums of non-negative
// products, accurate to a few ulps): on a window wide enough to hold the
// whole support, the summed absolute difference stays below the round-off
// allowance added to the profile, for T up to 40.
func TestPLDRoundoffAllowance(t *testing.T) {
	a, err := SGM{Poisson, 0.02225, 2.2253, 1}.PLD(AdjacencyReplaceOne, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := a.step(a.h0)[0]
	direct := append([]float64(nil), s.pess...)
	for T := 2; T <= 40; T++ {
		next := make([]float64, len(direct)+len(s.pess)-1)
		for i, x := range direct {
			if x == 0 {
				continue
			}
			for j, y := range s.pess {
				next[i+j] += x * y
			}
		}
		direct = next
		if T%13 != 1 && T != 2 {
			continue
		}
		n := nextPow2(len(direct))
		base := T * s.lo
		g := composeFFT(s.pess, s.lo, T, base, n)
		var diff float64
		for i := range g {
			var want float64
			if i < len(direct) {
				want = direct[i]
			}
			diff += math.Abs(g[i] - want)
		}
		if allow := roundoffAllowance(g); diff > allow {
			t.Errorf("T = %d, n = %d: Σ|FFT − direct| = %g above the allowance %g", T, n, diff, allow)
		}
	}
}

// Delta and Epsilon are consistent: Delta is non-increasing, Epsilon(δ) is
// the smallest float with Delta ≤ δ, δ at or below the floor gives +Inf,
// and the optimistic profile never exceeds the pessimistic one.
func TestPLDProfileInversion(t *testing.T) {
	for _, c := range []struct {
		s   Sampling
		adj Adjacency
		q   float64
		z   float64
		T   int
	}{
		{Poisson, AdjacencyReplaceOne, 0.02225, 2.2253, 90}, {WithoutReplacement, AdjacencyReplaceOne, 0.05, 1, 7},
		{Poisson, AdjacencyAddRemove, 0.01, 1.1, 300}, {WithoutReplacement, AdjacencyAddRemove, 1, 2, 1},
	} {
		p := pldProfile(t, c.s, c.adj, c.q, c.z, c.T)
		prev := math.Inf(1)
		for e := 0.0; e < 20; e += 0.01 {
			d := p.Delta(e)
			if d > prev || p.OptimisticDelta(e) > d || d < p.Floor() {
				t.Fatalf("%+v ε = %g: δ = %g after %g (optimistic %g, floor %g)", c, e, d, prev, p.OptimisticDelta(e), p.Floor())
			}
			prev = d
		}
		for _, d := range []float64{0.5, 1e-2, 1e-5, 1e-9} {
			e := p.Epsilon(d)
			if e > 0 && (p.Delta(e) > d || p.Delta(math.Nextafter(e, 0)) <= d) {
				t.Errorf("%+v δ = %g: Epsilon = %.17g, Delta there %g, just below %g", c, d, e, p.Delta(e), p.Delta(math.Nextafter(e, 0)))
			}
			if inv, _ := InvertProfile(p.Delta, d); inv != e {
				t.Errorf("%+v δ = %g: Epsilon %.17g, InvertProfile %.17g", c, d, e, inv)
			}
		}
		if e := p.Epsilon(p.Floor()); !math.IsInf(e, 1) {
			t.Errorf("%+v: Epsilon(floor) = %g, want +Inf", c, e)
		}
	}
}

// Options and arguments a user can get wrong are errors naming the field.
func TestPLDErrors(t *testing.T) {
	for _, c := range []struct {
		o    PLDOptions
		want string
	}{
		{PLDOptions{GridStep: -1}, "GridStep"}, {PLDOptions{TailMass: 0.1}, "TailMass"},
		{PLDOptions{GapTarget: 1}, "GapTarget"}, {PLDOptions{ReferenceDelta: 2}, "ReferenceDelta"},
		{PLDOptions{GridStep: 1e-12}, "GridStep"},
	} {
		if _, err := (SGM{Poisson, 0.1, 1, 1}).PLD(AdjacencyReplaceOne, &c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
	if _, err := (SGM{Poisson, 0.1, 1, 1}).PLD(7, nil); err == nil || !strings.Contains(err.Error(), "adjacency") {
		t.Errorf("adjacency 7: %v", err)
	}
	if _, err := (SGM{Poisson, 1.1, 1, 1}).PLD(AdjacencyReplaceOne, nil); err == nil || !strings.Contains(err.Error(), "Rate") {
		t.Errorf("rate 1.1: %v", err)
	}
	a, _ := SGM{Poisson, 0.1, 1, 1}.PLD(AdjacencyReplaceOne, nil)
	if _, err := a.Profile(0); err == nil || !strings.Contains(err.Error(), "Steps") {
		t.Errorf("T = 0: %v", err)
	}
	// Noise far too small for the grid: per-step losses beyond ±500.
	if _, err := (SGM{Poisson, 0.5, 0.01, 1}).PLD(AdjacencyReplaceOne, nil); err == nil || !strings.Contains(err.Error(), "PLD accountant does not cover") {
		t.Errorf("z = 0.01: %v", err)
	}
}

// The combined guarantee is the pointwise minimum of the PLD and RDP
// guarantees, ε included; without a usable PLD it is the RDP one with a
// note; with no step it certifies nothing leaks.
func TestSGMTightest(t *testing.T) {
	m := SGM{Poisson, 0.05, 1.5, 200}
	g, err := m.ReplaceOneTightest()
	if err != nil || !g.Applies || g.Source != SGMPoissonTightestSource {
		t.Fatal(g.Source, err)
	}
	pld, _ := m.ReplaceOnePLD()
	rdp, _ := m.ReplaceOne()
	for _, e := range []float64{0, 0.7, 2, 5, 12, 30} {
		if got, want := g.Profile(e), math.Min(pld.Profile(e), rdp.Profile(e)); got != want {
			t.Errorf("ε = %g: profile %g, min %g", e, got, want)
		}
	}
	for _, d := range []float64{1e-3, 1e-5, 1e-14, 1e-20} {
		ge, _ := g.Epsilon(d)
		pe, _ := pld.Epsilon(d)
		re, _ := rdp.Epsilon(d)
		if ge != math.Min(pe, re) {
			t.Errorf("δ = %g: ε = %g, PLD %g, RDP %g", d, ge, pe, re)
		}
		if inv, _ := InvertProfile(g.Profile, d); !withinRel(inv, ge, 1e-9) {
			t.Errorf("δ = %g: ε = %g, profile inverts to %g", d, ge, inv)
		}
	}
	// At δ = 1e-20, below the PLD's floor, the RDP bound must be the one used.
	if e, _ := g.Epsilon(1e-20); math.IsInf(e, 1) {
		t.Error("δ = 1e-20: no finite ε")
	}
	if !strings.Contains(g.Note, "the PLD bound is the tighter") || !strings.Contains(g.Note, "RDP bound is the tighter from δ") {
		t.Errorf("note: %s", g.Note)
	}
	w, err := SGM{WithoutReplacement, 0.5, 0.01, 3}.ReplaceOneTightest()
	if err != nil || !w.Applies || !strings.Contains(w.Note, "PLD accountant unavailable") || w.Source != SGMWithoutReplacementTightestSource {
		t.Errorf("z = 0.01: %v %q", err, w.Note)
	}
	if z, _ := (SGM{Poisson, 0.05, 1.5, 0}).ReplaceOneTightest(); z.Profile(0) != 0 || z.Source != SGMPoissonTightestSource {
		t.Errorf("T = 0: δ(0) = %g, source %q", z.Profile(0), z.Source)
	}
}

// Two and three compositions against quadrature over the densities, with
// no loss grid: δ_T(ε) = E_P[δ_{T−1}(ε − L)] with δ_1 in closed form at the
// exact loss threshold (docs/derivations/pld-reference/
// hockey_stick_quadrature.py: scipy quad, relative tolerance 1e-11, for
// T = 2 of the symmetrised pair; pld_vectorised.py: Gauss–Legendre with
// 2000 nodes for T = 2 and 600 per level for T = 3, which agrees with quad
// to 15 digits on the antipodal pair). The symmetrised pair's δ_1 has a
// kink at 0 that Gauss–Legendre resolves only to about 1e-5 relative, hence
// its looser tolerance at T = 3. The PLD must bracket every value.
func TestPLDQuadrature(t *testing.T) {
	for _, c := range []struct {
		s        Sampling
		adj      Adjacency
		q, z     float64
		T        int
		eps, ref float64
		tol      float64
	}{
		{Poisson, AdjacencyReplaceOne, 0.2, 0.8, 2, 0.5, 0.0986487670218871, 1e-12},
		{Poisson, AdjacencyReplaceOne, 0.2, 0.8, 2, 1.5, 0.0156603305985077, 1e-12},
		{Poisson, AdjacencyReplaceOne, 0.2, 0.8, 2, 3, 0.000719143882572191, 1e-12},
		{Poisson, AdjacencyReplaceOne, 0.2, 0.8, 3, 1, 0.0707640714521688, 1e-11},
		{Poisson, AdjacencyReplaceOne, 0.2, 0.8, 3, 2, 0.0134823899038111, 1e-11},
		{Poisson, AdjacencyReplaceOne, 32.0 / 1438, 3200.0 / 1438, 2, 0.05, 0.000537755390344567, 1e-11},
		{Poisson, AdjacencyReplaceOne, 32.0 / 1438, 3200.0 / 1438, 2, 0.2, 6.1951049047948e-09, 1e-9},
		{Poisson, AdjacencyReplaceOne, 32.0 / 1438, 3200.0 / 1438, 3, 0.1, 4.53803091016355e-05, 1e-10},
		{WithoutReplacement, AdjacencyReplaceOne, 0.1, 1.5, 2, 0.5, 0.018956643252813949, 1e-10},
		{WithoutReplacement, AdjacencyReplaceOne, 0.1, 1.5, 2, 1.5, 0.0017490748120205552, 1e-10},
		{WithoutReplacement, AdjacencyReplaceOne, 0.1, 1.5, 2, 3, 4.1608335557829345e-05, 1e-10},
		{WithoutReplacement, AdjacencyReplaceOne, 0.1, 1.5, 3, 1, 0.00935018269085312, 1e-4},
		{WithoutReplacement, AdjacencyReplaceOne, 0.1, 1.5, 3, 2, 0.000971857288569586, 1e-4},
		{Poisson, AdjacencyAddRemove, 0.1, 1, 2, 0.2, 0.0196334165497145, 1e-11},
		{Poisson, AdjacencyAddRemove, 0.1, 1, 2, 0.6, 0.00292827802179227, 1e-11},
		{Poisson, AdjacencyAddRemove, 0.1, 1, 2, 1.2, 0.000219498645475597, 1e-11},
		{Poisson, AdjacencyAddRemove, 0.1, 1, 3, 0.5, 0.00759724845073782, 1e-11},
		{Poisson, AdjacencyAddRemove, 0.1, 1, 3, 1, 0.000928394558565927, 1e-11},
		{WithoutReplacement, AdjacencyAddRemove, 0.05, 2, 2, 0.2, 0.00420434925159484, 1e-11},
		{WithoutReplacement, AdjacencyAddRemove, 0.05, 2, 2, 0.6, 0.000261066022026355, 1e-11},
		{WithoutReplacement, AdjacencyAddRemove, 0.05, 2, 3, 0.5, 0.000805125033527499, 1e-11},
	} {
		p := pldProfile(t, c.s, c.adj, c.q, c.z, c.T)
		label := c.s.String() + " " + c.adj.String()
		checkBracket(t, label, p, c.eps, c.ref, c.tol)
		// Within 1% of the exact δ at this ε (the grid is chosen for ε).
		if d := p.Delta(c.eps); d > c.ref*1.01+p.Floor() {
			t.Errorf("%s T=%d ε=%g: pessimistic δ %g more than 1%% above %g", label, c.T, c.eps, d, c.ref)
		}
	}
}

// The dominating pairs cover realisable one-step pairs that are not on a
// line (docs/derivations/pld.md, §2.2–2.3). References: scipy dblquad of
// (p − e^ε q)₊ over the plane (docs/derivations/pld-reference/
// dominance_2d.py). Poisson, q = 0.2, z = 0.8: P = 0.8φ_0 + 0.2φ_u against
// 0.8φ_0 + 0.2φ_v, ‖u‖ = 1 with v at 180° (the antipodal pair itself),
// 150°, 120°, 90°, 60°, v = 0, v = −u/2, and ‖u‖ = ‖v‖ = 0.7 at 210°.
// Without replacement, q = 0.1, z = 1.5: 0.9φ_{g_j} + 0.1φ_{g_i} against
// 0.9φ_{g_j} + 0.1φ_{g′_i} for three points of the unit disc: g′_i = g_j
// opposite g_i (the Balle–Barthe–Gaboardi pair itself), an inscribed
// equilateral triangle, g_j = 0 with g_i = −g′_i, g_j = 0 with g_i, g′_i at
// 120°, and the reverse of the first. Every value must be at most the
// one-step pessimistic profile; the two pairs on a line must be bracketed.
func TestPLDDominance2D(t *testing.T) {
	pois := pldProfile(t, Poisson, AdjacencyReplaceOne, 0.2, 0.8, 1)
	wor := pldProfile(t, WithoutReplacement, AdjacencyReplaceOne, 0.1, 1.5, 1)
	for _, c := range []struct {
		p     *PLDProfile
		eps   float64
		vals  []float64 // the first is the dominating pair itself
		label string
	}{
		{pois, 0.5, []float64{0.0448739209182, 0.044181698695, 0.0410417346772, 0.0329383854915, 0.0185731334598,
			0.027751987464, 0.0401109475133, 0.0156076206026}, "Poisson"},
		{pois, 1.5, []float64{0.00503660426969, 0.00500715246001, 0.00476676619764, 0.00362434569036, 0.00126557502678,
			0.00306369201978, 0.00473672848692, 0.000210604914817}, "Poisson"},
		{wor, 0.5, []float64{0.00890642454595, 0.00265277539228, 0.000173673163706, 0.000137658330219, 0}, "without replacement"},
		{wor, 1.5, []float64{0.000739306930546, 5.57598540196e-05, 7.47497960043e-09, 6.5581818862e-09, 0}, "without replacement"},
	} {
		checkBracket(t, c.label+" dominating pair", c.p, c.eps, c.vals[0], 1e-9)
		for i, v := range c.vals {
			if v > c.p.Delta(c.eps)*(1+1e-9) {
				t.Errorf("%s ε = %g: configuration #%d has δ = %g above the PLD's %g", c.label, c.eps, i, v, c.p.Delta(c.eps))
			}
		}
	}
}

// ExampleSGM_PLD's subsampled configuration (Poisson q = 0.01, z = 1,
// replace-one) against a third implementation: a NumPy FFT composition of
// the antipodal pair with mean-preserving two-point rounding
// (docs/derivations/pld-reference/poisson_fft_mean_preserving.py; h = 2e-4,
// its values moved by ≤ 6e-5 in ε and ≤ 2e-4 relative in δ from h = 4e-4).
// The accountant is pessimistic: never below the reference (less its
// discretisation error), and above it by at most its gap target (0.5%).
func TestPLDPoissonThirdImplementation(t *testing.T) {
	m := SGM{Sampling: Poisson, Rate: 0.01, NoiseMultiplier: 1, Steps: 1000}
	a, err := m.PLD(AdjacencyReplaceOne, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		T           int
		eps, delta1 float64
	}{
		{100, 0.8951289, 3.108608e-06},
		{1000, 2.8434592, 0.03296282},
	} {
		p, err := a.Profile(c.T)
		if err != nil {
			t.Fatal(err)
		}
		e, d := p.Epsilon(1e-5), p.Delta(1)
		t.Logf("T = %d: ε(1e-5) = %.7f (reference %.7f, +%.3f%%), δ(1) = %.7g (reference %.7g)",
			c.T, e, c.eps, 100*(e/c.eps-1), d, c.delta1)
		if e < c.eps-2e-4 || e > c.eps*1.005 {
			t.Errorf("T = %d: ε(1e-5) = %.7f, reference %.7f", c.T, e, c.eps)
		}
		if d < c.delta1*(1-1e-3) || d > c.delta1*1.02 {
			t.Errorf("T = %d: δ(1) = %.7g, reference %.7g", c.T, d, c.delta1)
		}
	}
}
