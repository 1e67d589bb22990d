package closedform

import (
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/stats"
	"gonum.org/v1/gonum/integrate/quad"
)

func fig1Domain() LinRegDomain {
	return LinRegDomain{N: 17864389, Alpha: 2, Beta: 1, Gamma1: 0.1, XH: 1.8, XL: 0.9}
}

// Lemma IV.2 against Bayes' rule integrated numerically: prior N(0, 1/α)
// times the Gaussian likelihood of a small dataset, normalised by
// Gauss–Legendre quadrature (gonum) over ±12 posterior standard deviations.
func TestLinRegPosteriorMatchesQuadrature(t *testing.T) {
	const alpha, beta = 1.5, 2.5
	xs := []float64{0.3, 1.1, -0.7, 2.0}
	ys := []float64{0.5, 1.9, -1.0, 3.1}
	var sxy, sxx float64
	for i := range xs {
		sxy += xs[i] * ys[i]
		sxx += xs[i] * xs[i]
	}
	post := LinRegPosterior(alpha, beta, sxy, sxx)
	logDens := func(th float64) float64 {
		l := -alpha * th * th / 2
		for i := range xs {
			r := ys[i] - th*xs[i]
			l -= beta * r * r / 2
		}
		return l
	}
	ref := logDens(post.Mu)
	a, b := post.Mu-12*post.Sigma, post.Mu+12*post.Sigma
	z := quad.Fixed(func(th float64) float64 { return math.Exp(logDens(th) - ref) }, a, b, 200, quad.Legendre{}, 0)
	m1 := quad.Fixed(func(th float64) float64 { return th * math.Exp(logDens(th)-ref) }, a, b, 200, quad.Legendre{}, 0) / z
	m2 := quad.Fixed(func(th float64) float64 { return th * th * math.Exp(logDens(th)-ref) }, a, b, 200, quad.Legendre{}, 0) / z
	if relDiff(post.Mu, m1) > 1e-12 || relDiff(post.Sigma*post.Sigma, m2-m1*m1) > 1e-10 {
		t.Errorf("posterior N(%.15g, %.15g²); quadrature mean %.15g, variance %.15g", post.Mu, post.Sigma, m1, m2-m1*m1)
	}
}

// The posterior mean difference of D1 and D2 against the difference of the
// two means computed in 256-bit arithmetic, at the Fig. 1 parameters where
// the means agree to 15 digits.
func TestPosteriorMeanDiffBigFloat(t *testing.T) {
	c := fig1()
	_, _, dm := c.Posteriors()
	f := func(x float64) *big.Float { return new(big.Float).SetPrec(256).SetFloat64(x) }
	mean := func(nEff float64) *big.Float {
		num := new(big.Float).Mul(f(c.Beta), f(nEff))
		num.Mul(num, f(c.C*c.XH*c.XH))
		den := new(big.Float).Mul(f(c.Beta), f(nEff))
		den.Mul(den, f(c.XH*c.XH))
		den.Add(den, f(c.Alpha))
		return num.Quo(num, den)
	}
	n := float64(c.N)
	ref, _ := new(big.Float).Sub(mean(n), mean(n-0.75)).Float64()
	if relDiff(dm, ref) > 1e-13 {
		t.Errorf("μ1 − μ2 = %.17g, 256-bit %.17g", dm, ref)
	}
}

// The exact Rényi divergence between the two posteriors against numerical
// integration of ∫ p^ν q^(1−ν), and Lemma A.1's ε1(ν) as an upper bound
// on it (the lemma bounds every neighbouring pair of the domain, D1/D2
// included: x_l = x_h/2 puts D2's special datum in it).
func TestPosteriorRenyi(t *testing.T) {
	// n = 400 allows orders up to (n−1)/40 ≈ 10 in Lemma A.1; with c = 5000
	// the means differ by half a posterior standard deviation.
	c := Counterexample{N: 400, Alpha: 2, Beta: 1, XH: 1.8, C: 5000}
	p1, p2, dm := c.Posteriors()
	bounded := 0
	for _, nu := range []float64{1.5, 2, 7} {
		d12, d21, err := c.PosteriorRenyi(nu)
		if err != nil {
			t.Fatal(err)
		}
		num := func(a, b distNorm, nu float64) float64 {
			lo, hi := -dm-15*math.Max(a.s, b.s), 15*math.Max(a.s, b.s)
			v := quad.Fixed(func(x float64) float64 {
				return math.Exp(nu*a.logPdf(x) + (1-nu)*b.logPdf(x))
			}, lo, hi, 400, quad.Legendre{}, 0)
			return math.Log(v) / (nu - 1)
		}
		a := distNorm{dm, p1.Sigma}
		b := distNorm{0, p2.Sigma}
		if r := num(a, b, nu); math.Abs(d12-r) > 1e-10*math.Max(1, r) {
			t.Errorf("ν = %g: D(P1‖P2) = %.15g, quadrature %.15g", nu, d12, r)
		}
		if r := num(b, a, nu); math.Abs(d21-r) > 1e-10*math.Max(1, r) {
			t.Errorf("ν = %g: D(P2‖P1) = %.15g, quadrature %.15g", nu, d21, r)
		}
		for _, v := range []LemmaA1Variant{A1Printed, A1Conservative} {
			dom := c.Domain(0.1, c.XH/2)
			if nu >= dom.MaxOrder() {
				continue
			}
			e1, err := dom.Epsilon1(nu, v)
			if err != nil {
				t.Fatal(err)
			}
			if e1 < math.Max(d12, d21) {
				t.Errorf("ν = %g, %v: ε1 = %g below the exact divergence %g", nu, v, e1, math.Max(d12, d21))
			}
			bounded++
		}
	}
	if bounded != 6 {
		t.Errorf("Lemma A.1 compared at %d (ν, variant) pairs, want 6", bounded)
	}
	if _, _, err := c.PosteriorRenyi(1); err == nil {
		t.Error("ν = 1 accepted")
	}
}

type distNorm struct{ mu, s float64 }

func (d distNorm) logPdf(x float64) float64 {
	z := (x - d.mu) / d.s
	return -z*z/2 - math.Log(d.s) - halfLog2Pi
}

// The largest c with a (0.5, 0.001)-DP posterior at the Fig. 1 domain,
// against an independent SciPy evaluation of Lemma A.1 + Lemma IV.4
// (minimize_scalar over ln(ν−1) with xatol 1e-12, brentq over c;
// /usr/bin/python3, scipy 1.10): 377117972.1453293 (printed variant).
func TestMaxPrivateCReference(t *testing.T) {
	d := fig1Domain()
	c, err := d.MaxPrivateC(0.5, 1e-3, A1Printed)
	if err != nil {
		t.Fatal(err)
	}
	if relDiff(c, 377117972.1453293) > 1e-9 {
		t.Errorf("c_max = %.17g, SciPy 377117972.1453293", c)
	}
	cc, err := d.MaxPrivateC(0.5, 1e-3, A1Conservative)
	if err != nil {
		t.Fatal(err)
	}
	if !(cc < c && cc > c*(1-1e-6)) {
		t.Errorf("conservative c_max = %.17g, printed %.17g", cc, c)
	}
	// At c_max the posterior ε is 0.5; just above, it is not.
	d.C = c
	e, _, _ := d.PosteriorDP(1e-3, A1Printed)
	d.C = c * (1 + 1e-9)
	e2, _, _ := d.PosteriorDP(1e-3, A1Printed)
	if math.Abs(e-0.5) > 1e-12 || !(e2 > 0.5) {
		t.Errorf("ε(c_max) = %.17g, ε(c_max·(1+1e-9)) = %.17g", e, e2)
	}
	// Too small an n for any c.
	small := LinRegDomain{N: 200, Alpha: 2, Beta: 1, Gamma1: 0.1, XH: 1.8, XL: 0.9}
	if _, err := small.MaxPrivateC(0.5, 1e-3, A1Printed); err == nil {
		t.Error("n = 200: expected no private c")
	}
}

// PosteriorDP's optimisation over ν against stats.RDPCurve.Epsilon (Mironov) (a grid
// of 400 orders refined by golden-section search) on the same RDP curve.
func TestPosteriorDPMatchesRDPConversion(t *testing.T) {
	for _, c := range []float64{0, 2e7, 3e8} {
		d := fig1Domain()
		d.C = c
		for _, v := range []LemmaA1Variant{A1Printed, A1Conservative} {
			g := d.PosteriorGuarantee(v)
			if !g.Applies {
				t.Fatalf("c = %g: guarantee does not apply: %s", c, g.Reason)
			}
			e, nu, err := d.PosteriorDP(1e-3, v)
			if err != nil {
				t.Fatal(err)
			}
			ref, refNu, err := g.RDP.Epsilon(1e-3, stats.Mironov, nil)
			if err != nil {
				t.Fatal(err)
			}
			if relDiff(e, ref) > 1e-9 || e > ref*(1+1e-12) {
				t.Errorf("c = %g %v: ε = %.15g at ν = %g; RDPCurve.Epsilon %.15g at ν = %g", c, v, e, nu, ref, refNu)
			}
			if got, _ := g.Epsilon(1e-3); got != e {
				t.Errorf("Guarantee.Epsilon = %g, PosteriorDP %g", got, e)
			}
			// Inverting the profile gives the same ε.
			if inv, err := InvertProfile(g.Profile, 1e-3); err != nil || relDiff(inv, e) > 1e-6 {
				t.Errorf("c = %g %v: profile inverts to %.10g (err %v), want %.10g", c, v, inv, err, e)
			}
		}
	}
	small := LinRegDomain{N: 20, Alpha: 2, Beta: 1, Gamma1: 0.1, XH: 1.8, XL: 0.9}
	if g := small.PosteriorGuarantee(A1Printed); g.Applies || !strings.Contains(g.Reason, "n >") {
		t.Errorf("n = 20: Applies %v, reason %q", g.Applies, g.Reason)
	}
}

func TestDomainErrors(t *testing.T) {
	d := fig1Domain()
	d.C = 1
	cases := []struct {
		mod  func(*LinRegDomain)
		want string
	}{
		{func(d *LinRegDomain) { d.Gamma1 = 0.5 }, "gamma1: must be in (0, 0.5)"},
		{func(d *LinRegDomain) { d.XL = 2 }, "xl: must be in (0, x_h]"},
		{func(d *LinRegDomain) { d.N = 1 }, "n: must be an integer in [2, 2^53]"},
		{func(d *LinRegDomain) { d.C = -1 }, "c: must be a finite number ≥ 0"},
	}
	for _, c := range cases {
		dd := d
		c.mod(&dd)
		if _, _, err := dd.PosteriorDP(1e-3, A1Printed); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want %q", err, c.want)
		}
	}
	if _, err := d.Epsilon1(d.MaxOrder()+1, A1Printed); err == nil || !strings.Contains(err.Error(), "nu: Lemma A.1 needs ν in (1,") {
		t.Errorf("ν too large: %v", err)
	}
	// A c whose Lemma A.1 terms overflow is an error, not a panic.
	huge := d
	huge.C = 1e200
	if _, _, err := huge.PosteriorDP(1e-3, A1Printed); err == nil || !strings.Contains(err.Error(), "c: too large for float64") {
		t.Errorf("c = 1e200: %v", err)
	}
	if _, _, err := d.PosteriorDP(0, A1Printed); err == nil {
		t.Error("δ = 0 accepted")
	}
}

// scanPosteriorDP minimises ε1(ν) + ln(1/δ)/(ν−1) by brute force: 200,001
// orders evenly spaced in ln(ν − 1) from e^−30 to the largest allowed
// order, no derivative, no root finder.
func scanPosteriorDP(d LinRegDomain, delta float64, v LemmaA1Variant) (eps, nu float64) {
	top := math.Log((d.MaxOrder() - 1) * (1 - 1e-9))
	eps = math.Inf(1)
	const k = 200000
	for i := 0; i <= k; i++ {
		x := 1 + math.Exp(-30+(top+30)*float64(i)/k)
		if e := d.eps1(x, v) - math.Log(delta)/(x-1); e < eps {
			eps, nu = e, x
		}
	}
	return eps, nu
}

// At n = 7e12 the largest allowed order is 1.75e11; the order search used
// to start at ν = 1 + 1e-9·(MaxOrder − 1) ≈ 176 and reported ε = 1.587 at
// ν = 176 for c = 1e17 (true minimum 0.502 near ν = 29). Reference values:
// SciPy (/usr/bin/python3, scipy 1.10) minimising over t = ln(ν − 1) — a
// 200,001-point grid on [−30, ln(MaxOrder − 1)] refined by minimize_scalar
// (tol 1e-14) — with Lemma A.1 written out independently; the c of
// MaxPrivateC is brentq over c of that minimum (rtol 1e-15). See
// docs/derivations/interim-region.md, "The order search".
func TestPosteriorDPLargeN(t *testing.T) {
	d := LinRegDomain{N: 7e12, Alpha: 2, Beta: 1, Gamma1: 0.1, XH: 1.8, XL: 0.9, C: 5e16}
	for _, ref := range []struct {
		v       LemmaA1Variant
		eps, nu float64
	}{
		{A1Conservative, 0.24874456972104464, 57.03653139353795},
		{A1Printed, 0.24874456972099088, 57.0365310973814},
	} {
		eps, nu, err := d.PosteriorDP(1e-3, ref.v)
		if err != nil {
			t.Fatal(err)
		}
		// The minimum is flat: ε is known to ~1e-15, ν only to ~1e-7.
		if relDiff(eps, ref.eps) > 1e-12 || relDiff(nu, ref.nu) > 1e-6 {
			t.Errorf("%v: ε = %.17g at ν = %.10g; SciPy %.17g at ν = %.10g", ref.v, eps, nu, ref.eps, ref.nu)
		}
	}
	c, err := d.MaxPrivateC(0.5, 1e-3, A1Conservative)
	if err != nil || relDiff(c, 9.967147117361442e16) > 1e-10 {
		t.Errorf("MaxPrivateC = %.17g (%v), SciPy 9.967147117361442e16", c, err)
	}
	// Against the brute-force scan, at orders from near 1 to the open end:
	// the scan's minimum can only lie above the true one, by at most the
	// curvature times the squared grid step (≈ 1e-7 relative here).
	for _, cs := range []struct {
		n int
		c float64
	}{{7e12, 5e16}, {7e12, 1e17}, {7e12, 0}, {1e6, 1e13}, {500, 10}, {2e4, 1e4}} {
		dd := LinRegDomain{N: cs.n, Alpha: 2, Beta: 1, Gamma1: 0.1, XH: 1.8, XL: 0.9, C: cs.c}
		for _, v := range []LemmaA1Variant{A1Conservative, A1Printed} {
			eps, nu, err := dd.PosteriorDP(1e-3, v)
			if err != nil {
				t.Fatal(err)
			}
			se, snu := scanPosteriorDP(dd, 1e-3, v)
			if eps > se*(1+1e-13) || eps < se*(1-1e-6) {
				t.Errorf("n = %d, c = %g, %v: ε = %.15g at ν = %.8g; scan %.15g at ν = %.8g", cs.n, cs.c, v, eps, nu, se, snu)
			}
		}
	}
}
