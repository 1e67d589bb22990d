package closedform

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// fig1Eta1 is the Fig. 1 configuration with η = 1/s² (its C is replaced by
// the solvers).
func fig1Eta1() Counterexample {
	c := fig1()
	c.Eta = c.EtaScaled(1)
	return c
}

// The c at which epoch 48 of the Fig. 1 configuration (η = 1/s², δ = 1e-3)
// reaches ε′ = 38, against an independent evaluation: the epoch maps
// iterated 48 times in mpmath at 60 digits with the order carried as
// u = λ^(n−r), z_r(1) for all 17,864,389 orders in NumPy, the paper's
// Chernoff quantity (and the exact tail, scipy.special.log_ndtr) summed by
// logsumexp, and brentq over c (rtol 1e-15); /usr/bin/python3, mpmath 1.2,
// SciPy 1.10. The same script reproduces TestCurvesFig1Reference's values
// at c = 2e7 to 6e-14. See docs/derivations/interim-region.md.
func TestSolveCFig1(t *testing.T) {
	c := fig1Eta1()
	for _, ref := range []struct {
		q Quantity
		c float64
	}{{QChernoff, 20920252.44623471}, {QTail, 20074437.745707087}} {
		sol, err := c.SolveC(ref.q, 48, 1e-3, 38)
		if err != nil {
			t.Fatal(err)
		}
		// ε grows like c², and the reference is good to ~1e-15: 1e-12
		// relative in c allows for the engine's 1e-13 in ε.
		if relDiff(sol.C, ref.c) > 1e-12 || math.Abs(sol.Bound.Epsilon-38) > 1e-9 || !sol.Unique || sol.AtZero != 0 {
			t.Errorf("%v: c = %.17g (reference %.17g), ε = %.15g, unique %v, at 0 %g",
				ref.q, sol.C, ref.c, sol.Bound.Epsilon, sol.Unique, sol.AtZero)
		}
		cc := c
		cc.C = sol.C
		ec, err := cc.Curves(48, 1e-3)
		if err != nil || math.Abs(ref.q.Of(ec).Epsilon-38) > 1e-9 {
			t.Errorf("%v: Curves at the solution: %v, %v", ref.q, ref.q.Of(ec).Epsilon, err)
		}
	}
}

// Threshold and profile have no external reference; the root must be a
// root, below it the quantity is below the target and above it above
// (threshold is proven increasing in c; profile is checked the same way
// here), and the order chernoff ≤ tail ≤ threshold ≤ profile of the
// curves gives the order of the solutions.
func TestSolveCAllQuantities(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	c := fig1Eta1()
	prev := math.Inf(1)
	for _, q := range Quantities {
		sol, err := c.SolveC(q, 48, 1e-3, 38)
		if err != nil {
			t.Fatal(err)
		}
		if !(sol.C <= prev*(1+1e-12)) {
			t.Errorf("%v: c = %g above the previous quantity's %g", q, sol.C, prev)
		}
		prev = sol.C
		for _, f := range []float64{0.999, 1.001} {
			cc := c
			cc.C = sol.C * f
			b, err := cc.QuantityAt(q, 48, 1e-3)
			if err != nil || (f < 1) != (b.Epsilon < 38) {
				t.Errorf("%v at %g·c: ε = %g (%v)", q, f, b.Epsilon, err)
			}
		}
		if sol.Unique != (q != QProfile) {
			t.Errorf("%v: Unique = %v", q, sol.Unique)
		}
	}
}

func TestSolveCErrors(t *testing.T) {
	c := fig1Eta1()
	if _, err := c.SolveC(QChernoff, 0, 1e-3, 38); err == nil || !strings.Contains(err.Error(), "epoch: must be ≥ 1") {
		t.Errorf("epoch 0: %v", err)
	}
	if _, err := c.SolveC(QChernoff, 48, 1e-3, 0); err == nil || !strings.Contains(err.Error(), "target") {
		t.Errorf("target 0: %v", err)
	}
	if _, err := c.SolveC(QTail, 48, 0.6, 3); err == nil || !strings.Contains(err.Error(), "δ < 1/2") {
		t.Errorf("tail at δ = 0.6: %v", err)
	}
	// A tiny configuration whose variances alone separate the datasets:
	// the profile is 0.55 at c = 1 (TestCurvesMpmathReference) and stays
	// positive as c → 0, so a target below that limit is unreachable.
	small := Counterexample{N: 5, Alpha: 2, Beta: 1, XH: 1.8, C: 1, Eta: 0.05}
	sol, err := small.SolveC(QProfile, 3, 1e-3, 1e-6)
	if !errors.Is(err, ErrUnreachable) || !(sol.AtZero > 1e-6) {
		t.Errorf("below the c → 0 limit: %v (limit %g)", err, sol.AtZero)
	}
	if sol, err := small.SolveC(QProfile, 3, 1e-3, 5); err != nil || math.Abs(sol.Bound.Epsilon-5) > 1e-9 {
		t.Errorf("small profile: %+v, %v", sol, err)
	}
}

// SolveEta at epoch 48 for c = 2.1e7 against the same mpmath/NumPy
// evaluation as TestSolveCFig1, brentq over k = η·s² on [0.9, 1.03] and
// [1.03, 1.2] (xtol 1e-15): the Chernoff quantity crosses 38 rising at
// k = 0.9906698634682091 and falling at k = 1.0681278979567463. With
// c = 2e7 it peaks below 38 and the target is unreachable.
func TestSolveEtaFig1(t *testing.T) {
	c := fig1Eta1()
	c.C = 2.1e7
	sol, err := c.SolveEta(QChernoff, 48, 1e-3, 38)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.9906698634682091, 1.0681278979567463}
	if len(sol.Crossings) != 2 || !sol.Crossings[0].Rising || sol.Crossings[1].Rising {
		t.Fatalf("crossings %+v", sol.Crossings)
	}
	s := c.S()
	for i, x := range sol.Crossings {
		if relDiff(x.Scale, want[i]) > 1e-10 || relDiff(x.Eta*s*s, x.Scale) > 1e-14 {
			t.Errorf("crossing %d: k = %.17g, reference %.17g", i, x.Scale, want[i])
		}
	}
	if !(sol.PeakEpsilon > 38 && sol.PeakEta > sol.Crossings[0].Eta && sol.PeakEta < sol.Crossings[1].Eta) {
		t.Errorf("peak %g at η = %g", sol.PeakEpsilon, sol.PeakEta)
	}
	// A target just below the peak: the two crossings lie far inside one
	// grid cell (1/40 decade) and are still both found.
	near, err := c.SolveEta(QChernoff, 48, 1e-3, sol.PeakEpsilon-1e-4)
	if err != nil || len(near.Crossings) != 2 || !(near.Crossings[1].Scale/near.Crossings[0].Scale < math.Pow(10, 1.0/40)) {
		t.Errorf("narrow peak: %+v, %v", near.Crossings, err)
	}
	c.C = 2e7
	sol, err = c.SolveEta(QChernoff, 48, 1e-3, 38)
	if !errors.Is(err, ErrUnreachable) || !(sol.PeakEpsilon > 34.67 && sol.PeakEpsilon < 38) || !strings.Contains(err.Error(), "below the target 38") {
		t.Errorf("c = 2e7: %v, peak %g", err, sol.PeakEpsilon)
	}
}

// ε_chernoff and ε_tail are increasing in c: at a fixed epoch and η,
// along a geometric sequence of c, each value is above the previous one
// once positive (the proof is in docs/derivations/interim-region.md).
func TestQuantityIncreasingInC(t *testing.T) {
	c := fig1Eta1()
	for _, q := range []Quantity{QChernoff, QTail} {
		prev := -1.0
		for cv := 1e5; cv < 1e9; cv *= 1.7 {
			c.C = cv
			b, err := c.QuantityAt(q, 30, 1e-3)
			if err != nil {
				t.Fatal(err)
			}
			if b.Epsilon < prev || (prev > 0 && b.Epsilon == prev) {
				t.Errorf("%v: ε(c = %g) = %g after %g", q, cv, b.Epsilon, prev)
			}
			prev = b.Epsilon
		}
	}
}

func TestParseQuantity(t *testing.T) {
	for _, q := range Quantities {
		if p, err := ParseQuantity(q.String()); err != nil || p != q {
			t.Errorf("%v: %v, %v", q, p, err)
		}
	}
	if _, err := ParseQuantity("exact"); err == nil || !strings.Contains(err.Error(), "chernoff, tail, threshold or profile") {
		t.Errorf("bad name: %v", err)
	}
}
