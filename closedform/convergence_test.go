package closedform

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/stats"
	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"
)

// TestHockeyStickGaussian1DReferences checks the exact hockey-stick
// divergence (TV at ε = 0) against 40-digit references: mpmath 1.3
// (mp.dps = 40) integrating [p − e^ε q]₊ with mp.quad, split at the real
// roots of the quadratic ln p − ln q − ε found by mp.polyroots
// (docs/derivations/convergence-transfer.md, "References").
func TestHockeyStickGaussian1DReferences(t *testing.T) {
	cases := []struct{ eps, dm, s1, s2, want float64 }{
		{0, 1, 1, 1, 0.38292492254802620728},
		// Hand-derived: TV(N(0, 1), N(2, 1)) = 2Φ(1) − 1 = erf(1/√2).
		{0, 2, 1, 1, 0.68268949213708589717},
		{0, 0.3, 1, 1.5, 0.21001199171673151372},
		{0, 0, 1, 2, 0.32267456883476866475},
		{0.5, 1, 1, 1.3, 0.13730353649546764784},
		{1, 0.2, 2, 1, 0.1999155641177271405},
		{2, 3, 1, 0.7, 0.84846984173307780433},
		{0, 1e-4, 1, 1 + 1e-6, 0.000039896202637239302668},
		{0.1, -0.5, 0.8, 0.8, 0.20884441131734333018},
	}
	for _, c := range cases {
		got, e, err := HockeyStickGaussian1D(c.eps, c.dm, c.s1, c.s2)
		if err != nil {
			t.Fatal(err)
		}
		// The error bound must cover the difference (with 2 ulps for the
		// reference's rounding to float64).
		if d := math.Abs(got - c.want); d > e+4e-16*c.want {
			t.Errorf("H(ε=%g, dm=%g, %g, %g) = %.17g ± %.3g, reference %.17g (off by %.3g)", c.eps, c.dm, c.s1, c.s2, got, e, c.want, d)
		}
		if e > 1e-12 {
			t.Errorf("H(ε=%g, dm=%g, %g, %g): error bound %.3g is not small", c.eps, c.dm, c.s1, c.s2, e)
		}
	}
}

// TestHockeyStickGaussian1DQuadrature checks random configurations
// against gonum's Gauss–Legendre quadrature of [p − e^ε q]₊ on a fine
// grid (an independent computation: no roots are located).
func TestHockeyStickGaussian1DQuadrature(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 3))
	for i := 0; i < 40; i++ {
		eps := 2 * rng.Float64()
		if i%4 == 0 {
			eps = 0
		}
		dm := 3 * rng.NormFloat64()
		s1, s2 := 0.3+2*rng.Float64(), 0.3+2*rng.Float64()
		got, e, err := HockeyStickGaussian1D(eps, dm, s1, s2)
		if err != nil {
			t.Fatal(err)
		}
		ee := math.Exp(eps)
		f := func(x float64) float64 {
			p := math.Exp(-x*x/(2*s1*s1)) / (s1 * math.Sqrt(2*math.Pi))
			q := math.Exp(-(x-dm)*(x-dm)/(2*s2*s2)) / (s2 * math.Sqrt(2*math.Pi))
			return math.Max(0, p-ee*q)
		}
		lo, hi := -12*(s1+s2)-math.Abs(dm), 12*(s1+s2)+math.Abs(dm)
		const cells = 4000
		var ref float64
		h := (hi - lo) / cells
		for k := 0; k < cells; k++ {
			ref += quad.Fixed(f, lo+float64(k)*h, lo+float64(k+1)*h, 16, nil, 0)
		}
		// The integrand has kinks at the roots: Gauss–Legendre on a cell
		// of width h containing a kink errs by O(h²·max|f′|) ≲ 1e-6 here.
		if math.Abs(got-ref) > 2e-6+e {
			t.Errorf("H(ε=%.3g, dm=%.3g, %.3g, %.3g) = %.12g, quadrature %.12g", eps, dm, s1, s2, got, ref)
		}
	}
}

// TestTransferHandCases checks Props. A.2, A.3, A.4 on the hand-derived
// cases of docs/derivations/convergence-transfer.md.
func TestTransferHandCases(t *testing.T) {
	// Prop. A.2: posteriors N(0, 1), N(1, 1) are exactly 1-GDP; with
	// β = 0.01, δ(1) = Φ(−1/2) − eΦ(−3/2) + 0.01(e + 1) (mpmath, 40 digits).
	prof, err := NewGaussianPairProfile([]float64{1}, []float64{1}, []float64{1})
	if err != nil {
		t.Fatal(err)
	}
	g := TransferGuarantee("x", prof.Upper, 0.01, nil, "")
	if got, want := g.Profile(1), 0.16411955579123439815; math.Abs(got-want) > 1e-12 {
		t.Errorf("Prop. A.2 δ(1) = %.17g, want %.17g", got, want)
	}
	// The profile is non-increasing (g grows again beyond its minimiser,
	// where the larger ε keeps the smaller δ), and its floor is g's
	// minimum: the grid's minimum to within what a step of 0.01 can miss
	// (g″·0.005²/2 < 1e-5).
	gmin, prev := 1.0, 1.0
	for e := 0.0; e < 12; e += 0.01 {
		v := g.Profile(e)
		if v > prev+1e-15 {
			t.Fatalf("profile increases at ε = %g: %.15g after %.15g", e, v, prev)
		}
		prev = v
		gmin = math.Min(gmin, TransferDelta(e, prof.Upper(e), 0.01))
	}
	if math.Abs(prev-gmin) > 1e-5 {
		t.Errorf("profile's floor %.15g, minimum of δπ + β(1 + e^ε) on the grid %.15g", prev, gmin)
	}
	// Prop. A.3: the largest ε with δ_μ(ε) − (1 + e^ε)β > δ (mpmath
	// findroot on the GDP profile).
	for _, c := range []struct{ mu, beta, delta, want float64 }{
		{3, 1e-3, 1e-5, 5.5527191087073409876},
		{5, 1e-6, 1e-5, 12.883601305765830426},
	} {
		p, err := NewGaussianPairProfile([]float64{c.mu}, []float64{1}, []float64{1})
		if err != nil {
			t.Fatal(err)
		}
		got, ok := NotDPEpsilon(p.Lower, c.beta, c.delta)
		if !ok || math.Abs(got-c.want) > 1e-8*c.want || got > c.want {
			t.Errorf("Prop. A.3 at μ = %g, β = %g: ε = %.15g (ok %v), want %.15g from below", c.mu, c.beta, got, ok, c.want)
		}
	}
	// Nothing is proved when β is too large for any ε.
	if _, ok := NotDPEpsilon(prof.Lower, 0.5, 1e-5); ok {
		t.Error("Prop. A.3 with β = 0.5 proves something")
	}
	// Prop. A.4: ε = ln 2 gives the factor (1/2)/(3/2) = 1/3.
	if got := RequiredTV(math.Ln2, 0.4, 0.1); math.Abs(got-0.1) > 1e-15 {
		t.Errorf("Prop. A.4: %.17g, want 0.1", got)
	}
	if got := RequiredTV(1, 0.1, 0.2); got != 0 {
		t.Errorf("Prop. A.4 with δ ≤ δ̄: %g, want 0", got)
	}
}

// explicitLaw iterates the chain's mean and covariance in matrix form,
// m ← (I − hS⁻¹)m + hS⁻¹μ, C ← (I − hS⁻¹)C(I − hS⁻¹)ᵀ + σ²I: an
// independent check of the eigen-coordinate solution.
func explicitLaw(l LinearLangevin, k int) (*mat.VecDense, *mat.Dense) {
	d := len(l.Mean)
	s := mat.NewDense(d, d, append([]float64(nil), l.Cov...))
	var p mat.Dense
	if err := p.Inverse(s); err != nil {
		panic(err)
	}
	a := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			v := -l.Step * p.At(i, j)
			if i == j {
				v++
			}
			a.Set(i, j, v)
		}
	}
	var shift mat.VecDense
	shift.MulVec(&p, mat.NewVecDense(d, append([]float64(nil), l.Mean...)))
	shift.ScaleVec(l.Step, &shift)
	m := mat.NewVecDense(d, nil)
	if len(l.InitMean) > 0 {
		m = mat.NewVecDense(d, append([]float64(nil), l.InitMean...))
	}
	c := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		c.Set(i, i, l.InitVar)
	}
	for t := 0; t < k; t++ {
		var nm mat.VecDense
		nm.MulVec(a, m)
		nm.AddVec(&nm, &shift)
		m = &nm
		var ac, nc mat.Dense
		ac.Mul(a, c)
		nc.Mul(&ac, a.T())
		for i := 0; i < d; i++ {
			nc.Set(i, i, nc.At(i, i)+l.NoiseVar)
		}
		c = &nc
	}
	return m, c
}

func testChain() LinearLangevin {
	return LinearLangevin{Step: 0.02, NoiseVar: 0.04,
		Mean:     []float64{1, -2, 0.5},
		Cov:      []float64{0.5, 0.1, 0, 0.1, 0.3, -0.05, 0, -0.05, 0.8},
		InitMean: []float64{0, 0, 3}, InitVar: 2}
}

// TestLinearLangevinLaw compares the eigen-coordinate law with the explicit
// matrix recursion.
func TestLinearLangevinLaw(t *testing.T) {
	l := testChain()
	for _, k := range []int{0, 1, 7, 60} {
		mean, cov, err := l.Law(k)
		if err != nil {
			t.Fatal(err)
		}
		m, c := explicitLaw(l, k)
		for i := range mean {
			if math.Abs(mean[i]-m.AtVec(i)) > 1e-12 {
				t.Errorf("k = %d: mean[%d] = %.15g, recursion %.15g", k, i, mean[i], m.AtVec(i))
			}
			for j := range mean {
				if math.Abs(cov[i*3+j]-c.At(i, j)) > 1e-12 {
					t.Errorf("k = %d: cov[%d][%d] = %.15g, recursion %.15g", k, i, j, cov[i*3+j], c.At(i, j))
				}
			}
		}
	}
}

// gaussKL is the textbook KL(N(m1, C1) ‖ N(m2, C2)) =
// ½[tr(C2⁻¹C1) + (m2 − m1)ᵀC2⁻¹(m2 − m1) − d + ln det C2 − ln det C1].
func gaussKL(m1, c1, m2, c2 []float64) float64 {
	d := len(m1)
	a, b := mat.NewDense(d, d, append([]float64(nil), c1...)), mat.NewDense(d, d, append([]float64(nil), c2...))
	var bi mat.Dense
	if err := bi.Inverse(b); err != nil {
		panic(err)
	}
	var pr mat.Dense
	pr.Mul(&bi, a)
	dm := make([]float64, d)
	for i := range dm {
		dm[i] = m2[i] - m1[i]
	}
	v := mat.NewVecDense(d, dm)
	ldb, _ := mat.LogDet(b)
	lda, _ := mat.LogDet(a)
	return 0.5 * (mat.Trace(&pr) + mat.Inner(v, &bi, v) - float64(d) + ldb - lda)
}

// TestTVToTargetBounds checks the d-dimensional TV bound against (i) the
// Pinsker bound of the textbook KL computed from the matrix law, which it
// must not exceed, and (ii) a Monte Carlo estimate of the true distance,
// TV = E_P[(1 − q/p)₊] with P the chain's law and Q the target, which it
// must not fall below (200,000 draws; the estimate's standard error is at
// most 0.5/√200000 ≈ 0.0011, and 5 standard errors are allowed).
func TestTVToTargetBounds(t *testing.T) {
	l := testChain()
	for _, k := range []int{3, 20, 200} {
		b, err := l.TVToTarget(k)
		if err != nil {
			t.Fatal(err)
		}
		mean, cov, _ := l.Law(k)
		kl := gaussKL(mean, cov, l.Mean, l.Cov)
		if pk := TVFromKL(kl); b.Value > pk*(1+1e-9)+1e-15 {
			t.Errorf("k = %d: bound %.12g above the textbook Pinsker/BH bound %.12g (%s)", k, b.Value, pk, b.Method)
		}
		est, se := mcTV(mean, cov, l.Mean, l.Cov, 200000, uint64(k))
		if b.Value < est-5*se {
			t.Errorf("k = %d: bound %.6g below the Monte Carlo TV %.6g ± %.2g", k, b.Value, est, se)
		}
		t.Logf("k = %d: β = %.6g (%s), Monte Carlo TV %.6g ± %.2g", k, b.Value, b.Method, est, se)
	}
	// An unstable step (hλ > 2) overflows after enough steps: the bound is
	// the trivial 1, not an error.
	unstable := LinearLangevin{Step: 5, NoiseVar: 10, Mean: []float64{1}, Cov: []float64{1}, InitVar: 1}
	if b, err := unstable.TVToTarget(2000); err != nil || b.Value != 1 {
		t.Errorf("unstable chain: %+v, %v", b, err)
	}
	// One dimension: the bound is the exact distance.
	one := LinearLangevin{Step: 0.1, NoiseVar: 0.2, Mean: []float64{2}, Cov: []float64{0.5}, InitVar: 1}
	b, err := one.TVToTarget(5)
	if err != nil {
		t.Fatal(err)
	}
	mean, cov, _ := one.Law(5)
	want, _, _ := HockeyStickGaussian1D(0, 2-mean[0], math.Sqrt(cov[0]), math.Sqrt(0.5))
	if math.Abs(b.Value-want) > 1e-12 {
		t.Errorf("1-D bound %.15g, exact TV %.15g", b.Value, want)
	}
}

// mcTV estimates ‖P − Q‖_TV = E_P[(1 − q/p)₊] for two Gaussians from n
// draws of P, with its standard error.
func mcTV(m1, c1, m2, c2 []float64, n int, seed uint64) (float64, float64) {
	d := len(m1)
	logpdf := func(m, c []float64) func(x []float64) float64 {
		sym := mat.NewSymDense(d, append([]float64(nil), c...))
		var ch mat.Cholesky
		ch.Factorize(sym)
		ld := ch.LogDet()
		return func(x []float64) float64 {
			dx := make([]float64, d)
			for i := range dx {
				dx[i] = x[i] - m[i]
			}
			var s mat.VecDense
			if err := ch.SolveVecTo(&s, mat.NewVecDense(d, dx)); err != nil {
				panic(err)
			}
			return -0.5 * (mat.Dot(mat.NewVecDense(d, dx), &s) + ld)
		}
	}
	lp, lq := logpdf(m1, c1), logpdf(m2, c2)
	sym := mat.NewSymDense(d, append([]float64(nil), c1...))
	var ch mat.Cholesky
	ch.Factorize(sym)
	var L mat.TriDense
	ch.LTo(&L)
	rng := rand.New(rand.NewPCG(seed, 77))
	var sum, sum2 float64
	x := make([]float64, d)
	z := make([]float64, d)
	for i := 0; i < n; i++ {
		for j := range z {
			z[j] = rng.NormFloat64()
		}
		for r := 0; r < d; r++ {
			x[r] = m1[r]
			for c := 0; c <= r; c++ {
				x[r] += L.At(r, c) * z[c]
			}
		}
		v := math.Max(0, -math.Expm1(lq(x)-lp(x)))
		sum += v
		sum2 += v * v
	}
	mean := sum / float64(n)
	return mean, math.Sqrt((sum2/float64(n) - mean*mean) / float64(n))
}

// smallCex is the counterexample at a size where the mixture can be
// integrated directly.
func smallCex() Counterexample {
	c := Counterexample{N: 6, Alpha: 2, Beta: 1, XH: 1.8, C: 1}
	c.Eta = c.EtaScaled(2) * 5
	return c
}

// TestCounterexamplePosteriorTV checks β1 against quadrature of ½∫|p − π1|
// and β2 against quadrature of ½∫|q − π2| (q the mixture of n components
// built here from Moments.Order), which it must bound from above.
func TestCounterexamplePosteriorTV(t *testing.T) {
	c := smallCex()
	p1, p2, dm := c.Posteriors()
	for _, k := range []int{1, 3, 10, 40} {
		b1, b2, err := c.PosteriorTV(k)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := c.Moments(k)
		norm := func(x, mu, v float64) float64 { return math.Exp(-(x-mu)*(x-mu)/(2*v)) / math.Sqrt(2*math.Pi*v) }
		// Offsets from μ1: π1 at 0, π2 at −dm, D1's law at m.Mean − p1.Mu.
		off := m.Mean - p1.Mu
		f1 := func(x float64) float64 { return 0.5 * math.Abs(norm(x, off, m.Var)-norm(x, 0, p1.Sigma*p1.Sigma)) }
		f2 := func(x float64) float64 {
			var q float64
			for r := 1; r <= c.N; r++ {
				d, _, v := m.Order(r)
				q += norm(x, off-d, v) / float64(c.N)
			}
			return 0.5 * math.Abs(q-norm(x, -dm, p2.Sigma*p2.Sigma))
		}
		sd := math.Sqrt(m.Var) + p1.Sigma
		ref1, ref2 := integrate(f1, -40*sd-math.Abs(off), 40*sd+math.Abs(off)), integrate(f2, -40*sd-math.Abs(off), 40*sd+math.Abs(off))
		if math.Abs(b1.Value-ref1) > 1e-6 {
			t.Errorf("epoch %d: β1 = %.10g, quadrature %.10g", k, b1.Value, ref1)
		}
		if b2.Value < ref2-1e-6 {
			t.Errorf("epoch %d: β2 = %.10g below the mixture's TV %.10g", k, b2.Value, ref2)
		}
		t.Logf("epoch %d: β1 = %.6g (TV %.6g), β2 = %.6g (TV %.6g)", k, b1.Value, ref1, b2.Value, ref2)
	}
}

func integrate(f func(float64) float64, lo, hi float64) float64 {
	const cells = 8000
	h := (hi - lo) / cells
	var s float64
	for k := 0; k < cells; k++ {
		s += quad.Fixed(f, lo+float64(k)*h, lo+float64(k+1)*h, 12, nil, 0)
	}
	return s
}

// TestCounterexampleBoxBound checks the large-n bound on the mixture's
// distance (the box over offsets and variances) against the average of
// the exact component distances, which it must not fall below.
func TestCounterexampleBoxBound(t *testing.T) {
	c := Counterexample{N: 30000, Alpha: 2, Beta: 1, XH: 1.8, C: 1}
	c.Eta = c.EtaScaled(2) * 20
	_, p2, _ := c.Posteriors()
	for _, k := range []int{1, 3} {
		_, b2, err := c.PosteriorTV(k)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := c.Moments(k)
		p1, _, dm := c.Posteriors()
		off := m.Mean - p1.Mu + dm
		var avg float64
		for r := 1; r <= c.N; r++ {
			d, _, v := m.Order(r)
			tv, _ := TVGaussian1D(off-d, math.Sqrt(v), 0, p2.Sigma)
			avg += tv / float64(c.N)
		}
		if b2.Value < avg*(1-1e-12) {
			t.Errorf("epoch %d: box bound %.10g below the average of the component TVs %.10g", k, b2.Value, avg)
		}
		t.Logf("epoch %d: box bound %.6g (%s), average %.6g", k, b2.Value, b2.Method, avg)
	}
}

// TestTransferAgainstExactCounterexample: the counterexample's exact
// profile (Curves) is the truth the two propositions bracket: Prop. 3.3's
// ε may not exceed it, and Prop. 3.2's may not fall below it.
func TestTransferAgainstExactCounterexample(t *testing.T) {
	c := smallCex()
	// A posterior far from private and a small step (η = 2/s², the
	// paper's), so that the chain comes close to it and Prop. 3.3 proves
	// something.
	c.C, c.Eta = 10, c.EtaScaled(2)
	const delta = 1e-3
	proved := false
	for _, k := range []int{5, 20, 80, 300, 1000} {
		tr, err := c.Transfer(k, delta)
		if err != nil {
			t.Fatal(err)
		}
		cv, err := c.Curves(k, delta)
		if err != nil {
			t.Fatal(err)
		}
		truth := cv.Profile.Epsilon + cv.Profile.Err
		if tr.Proves && tr.NotDPEpsilon > truth*(1+1e-9)+1e-12 {
			t.Errorf("epoch %d: Prop. 3.3 proves ε = %.10g above the exact ε %.10g", k, tr.NotDPEpsilon, truth)
		}
		proved = proved || tr.Proves
		prof, _ := c.PosteriorPairProfile()
		beta := math.Max(tr.Beta1.Value, tr.Beta2.Value)
		g := TransferGuarantee("x", prof.Upper, beta, nil, "")
		g.Applies = true
		up, err := g.Epsilon(delta)
		if err != nil {
			t.Fatal(err)
		}
		if up < cv.Profile.Epsilon*(1-1e-9) {
			t.Errorf("epoch %d: Prop. 3.2's ε %.10g below the exact ε %.10g", k, up, cv.Profile.Epsilon)
		}
		// At δ = 0.1 > 2β (late epochs) Prop. 3.2 gives a finite ε.
		cv2, err := c.Curves(k, 0.1)
		if err != nil {
			t.Fatal(err)
		}
		up2, _ := g.Epsilon(0.1)
		if up2 < cv2.Profile.Epsilon*(1-1e-9) || (k >= 80 && math.IsInf(up2, 1)) {
			t.Errorf("epoch %d, δ = 0.1: Prop. 3.2's ε %.10g, exact ε %.10g", k, up2, cv2.Profile.Epsilon)
		}
		t.Logf("epoch %d, δ = 0.1: exact ε %.6g, Prop. 3.2 ε ≤ %.6g", k, cv2.Profile.Epsilon, up2)
		t.Logf("epoch %d: β = %.4g, Prop. 3.3 ε ≥ %.6g (%v), exact ε %.6g, Prop. 3.2 ε ≤ %.6g", k, beta, tr.NotDPEpsilon, tr.Proves, cv.Profile.Epsilon, up)
	}
	if !proved {
		t.Error("Prop. 3.3 proved nothing at any epoch: the test exercises nothing")
	}
}

// TestGaussianPairProfileEqualCov checks the GDP branch against the
// hockey-stick formula in d = 2: μ is the Mahalanobis distance.
func TestGaussianPairProfileEqualCov(t *testing.T) {
	cov := []float64{2, 0.5, 0.5, 1}
	dm := []float64{0.7, -0.4}
	p, err := NewGaussianPairProfile(dm, cov, cov)
	if err != nil {
		t.Fatal(err)
	}
	// μ² = dmᵀS⁻¹dm with S⁻¹ = [1 −0.5; −0.5 2]/1.75 (hand-inverted).
	mu := math.Sqrt((0.49*1 - 2*0.5*0.7*-0.4 + 2*0.16) / 1.75)
	for _, e := range []float64{0, 0.3, 1} {
		want := stats.GDPDelta(mu, e)
		if got := p.Upper(e); math.Abs(got-want) > 1e-11*want+1e-300 || p.Lower(e) > want {
			t.Errorf("ε = %g: upper %.15g lower %.15g, GDP %.15g", e, got, p.Lower(e), want)
		}
	}
}

// TestGaussianPairProfileUnequalCov checks the bracket used for unequal
// covariances in d > 1. (i) When the second coordinate is the same N(0, 1)
// under both laws the pair is, up to a bijection, the 1-D pair of the first
// coordinates: the lower bound (projection) must equal the exact 1-D
// profile and the upper bound (Rényi) must lie above it. (ii) In a genuinely
// 2-D case both must bracket a Monte Carlo estimate of
// δ(ε) = E_P[(1 − e^ε q/p)₊] (200,000 draws, 5 standard errors).
func TestGaussianPairProfileUnequalCov(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	p, err := NewGaussianPairProfile([]float64{0.8, 0}, []float64{1, 0, 0, 1}, []float64{1.7, 0, 0, 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []float64{0, 0.5, 1.5} {
		a, ea, _ := HockeyStickGaussian1D(e, -0.8, 1, math.Sqrt(1.7))
		b, eb, _ := HockeyStickGaussian1D(e, 0.8, math.Sqrt(1.7), 1)
		exact, er := math.Max(a, b), math.Max(ea, eb)
		if lo := p.Lower(e); math.Abs(lo-exact) > er+1e-12 {
			t.Errorf("ε = %g: projection %.12g, exact 1-D profile %.12g", e, lo, exact)
		}
		if up := p.Upper(e); up < exact-er {
			t.Errorf("ε = %g: Rényi bound %.12g below the exact profile %.12g", e, up, exact)
		}
	}
	m1, c1 := []float64{0, 0}, []float64{1, 0.4, 0.4, 0.8}
	m2, c2 := []float64{0.5, -0.3}, []float64{1.4, -0.2, -0.2, 0.6}
	q, err := NewGaussianPairProfile([]float64{-0.5, 0.3}, c1, c2)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []float64{0, 0.7} {
		// Both directions; the profile is the larger.
		est1, se1 := mcHockey(m1, c1, m2, c2, e, 200000, 1)
		est2, se2 := mcHockey(m2, c2, m1, c1, e, 200000, 2)
		est, se := est1, se1
		if est2 > est1 {
			est, se = est2, se2
		}
		if lo, up := q.Lower(e), q.Upper(e); lo > est+5*se || up < est-5*se {
			t.Errorf("ε = %g: bracket [%.6g, %.6g] misses the Monte Carlo δ %.6g ± %.2g", e, lo, up, est, se)
		} else {
			t.Logf("ε = %g: %.6g ≤ δ ≈ %.6g ± %.2g ≤ %.6g", e, lo, est, se, up)
		}
	}
}

// mcHockey estimates sup_B P(B) − e^ε Q(B) = E_P[(1 − e^ε q/p)₊] for two
// Gaussians from n draws of P, with its standard error.
func mcHockey(m1, c1, m2, c2 []float64, eps float64, n int, seed uint64) (float64, float64) {
	d := len(m1)
	chol := func(c []float64) *mat.Cholesky {
		var ch mat.Cholesky
		ch.Factorize(mat.NewSymDense(d, append([]float64(nil), c...)))
		return &ch
	}
	ch1, ch2 := chol(c1), chol(c2)
	logpdf := func(ch *mat.Cholesky, m, x []float64) float64 {
		dx := make([]float64, d)
		for i := range dx {
			dx[i] = x[i] - m[i]
		}
		var s mat.VecDense
		if err := ch.SolveVecTo(&s, mat.NewVecDense(d, dx)); err != nil {
			panic(err)
		}
		return -0.5 * (mat.Dot(mat.NewVecDense(d, dx), &s) + ch.LogDet())
	}
	var L mat.TriDense
	ch1.LTo(&L)
	rng := rand.New(rand.NewPCG(seed, 99))
	var sum, sum2 float64
	x, z := make([]float64, d), make([]float64, d)
	for i := 0; i < n; i++ {
		for j := range z {
			z[j] = rng.NormFloat64()
		}
		for r := 0; r < d; r++ {
			x[r] = m1[r]
			for c := 0; c <= r; c++ {
				x[r] += L.At(r, c) * z[c]
			}
		}
		v := math.Max(0, -math.Expm1(eps+logpdf(ch2, m2, x)-logpdf(ch1, m1, x)))
		sum += v
		sum2 += v * v
	}
	mean := sum / float64(n)
	return mean, math.Sqrt((sum2/float64(n) - mean*mean) / float64(n))
}

// TestGaussRenyiUnivariate compares the multivariate Rényi formula in one
// dimension with stats.RenyiGaussian (Gil, Alajaji & Linder 2013), and in
// two dimensions with a block-diagonal pair, where the divergence is the
// sum over the blocks.
func TestGaussRenyiUnivariate(t *testing.T) {
	for _, c := range []struct{ a, dm, v1, v2 float64 }{{2, 0.7, 1, 1.5}, {1.3, -0.2, 2, 0.9}, {5, 1.1, 0.5, 0.6}} {
		s1, s2 := mat.NewSymDense(1, []float64{c.v1}), mat.NewSymDense(1, []float64{c.v2})
		got := gaussRenyi(c.a, mat.NewVecDense(1, []float64{c.dm}), s1, s2, math.Log(c.v1), math.Log(c.v2))
		want := stats.RenyiGaussian(c.a, c.dm, math.Sqrt(c.v1), 0, math.Sqrt(c.v2))
		if math.Abs(got-want) > 1e-12*(1+math.Abs(want)) {
			t.Errorf("D_%g: %.15g, univariate %.15g", c.a, got, want)
		}
	}
	s1 := mat.NewSymDense(2, []float64{1, 0, 0, 2})
	s2 := mat.NewSymDense(2, []float64{1.5, 0, 0, 0.9})
	got := gaussRenyi(2, mat.NewVecDense(2, []float64{0.7, -0.2}), s1, s2, math.Log(2), math.Log(1.35))
	want := stats.RenyiGaussian(2, 0.7, 1, 0, math.Sqrt(1.5)) + stats.RenyiGaussian(2, -0.2, math.Sqrt(2), 0, math.Sqrt(0.9))
	if math.Abs(got-want) > 1e-12 {
		t.Errorf("block-diagonal D_2: %.15g, sum of blocks %.15g", got, want)
	}
}
