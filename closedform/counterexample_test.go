package closedform

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/internal/numeric"
	"gonum.org/v1/gonum/integrate/quad"
)

// fig1 is the configuration of Heller & Fetaya's Fig. 1 caption with the
// c and η that the CLI's README example uses.
func fig1() Counterexample {
	c := Counterexample{N: 17864389, Alpha: 2, Beta: 1, XH: 1.8, C: 2e7}
	c.Eta = c.EtaScaled(1)
	return c
}

// The moments against a direct simulation of cyclic SGLD with the real
// update rule θ ← θ + (η/2)(−αθ + n(yᵢ − θxᵢ)xᵢβ) + √η·ξ (eq. 3 / eq. 23),
// started from θ₀ ~ N(0, 1/α).
//
// Tolerances: each comparison is a z-test at 5 standard errors. A sample
// mean of N draws has standard error sqrt(v/N); a sample variance has
// standard error v·sqrt(2/(N−1)) (Gaussian draws); a fraction has
// sqrt(p(1−p)/N). About 80 comparisons at |z| ≤ 5 fail by chance with
// probability < 1e-4 in total (and the seed is fixed).
func TestMomentsMatchSimulation(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	c := Counterexample{N: 8, Alpha: 2, Beta: 1, XH: 1.8, C: 1.5}
	c.Eta = 0.2 / c.S() // λ = 0.9
	epochs := []int{1, 2, 3, 5}
	const chains = 100000
	rng := rand.New(rand.NewPCG(20240611, 8))
	n := c.N
	sqEta := math.Sqrt(c.Eta)
	step := func(th, x, y float64) float64 {
		return th + c.Eta/2*(-c.Alpha*th+float64(n)*(y-th*x)*x*c.Beta) + sqEta*rng.NormFloat64()
	}
	type acc struct{ s, s2 float64 }
	add := func(a *acc, x float64) { a.s += x; a.s2 += x * x }
	meanVar := func(a acc, N int) (float64, float64) {
		m := a.s / float64(N)
		return m, (a.s2 - float64(N)*m*m) / float64(N-1)
	}
	// run simulates chains; special is the position (0-based) of the
	// datum (x_h/2, c·x_h/2) in the fixed order, −1 for D1, −2 for a random
	// position per chain (the shuffle).
	run := func(special int) (map[int]*acc, map[int]int) {
		accs := map[int]*acc{}
		above := map[int]int{}
		for _, e := range epochs {
			accs[e] = new(acc)
		}
		ms := map[int]float64{}
		for _, e := range epochs {
			m, _ := c.Moments(e)
			ms[e] = m.Mean
		}
		for ch := 0; ch < chains; ch++ {
			pos := special
			if special == -2 {
				pos = rng.IntN(n)
			}
			th := rng.NormFloat64() / math.Sqrt(c.Alpha)
			k := 0
			for e := 1; e <= epochs[len(epochs)-1]; e++ {
				for i := 0; i < n; i++ {
					if i == pos {
						th = step(th, c.XH/2, c.C*c.XH/2)
					} else {
						th = step(th, c.XH, c.C*c.XH)
					}
				}
				if k < len(epochs) && epochs[k] == e {
					add(accs[e], th)
					if th > ms[e] {
						above[e]++
					}
					k++
				}
			}
		}
		return accs, above
	}
	check := func(what string, got, want, se float64) {
		t.Helper()
		if z := (got - want) / se; math.Abs(z) > 5 {
			t.Errorf("%s: simulated %.6g, exact %.6g (%.1f standard errors)", what, got, want, z)
		}
	}
	d1, _ := run(-1)
	for _, e := range epochs {
		m, _ := c.Moments(e)
		mean, v := meanVar(*d1[e], chains)
		check("D1 mean, epoch "+itoa(e), mean, m.Mean, math.Sqrt(m.Var/chains))
		check("D1 variance, epoch "+itoa(e), v, m.Var, m.Var*math.Sqrt(2.0/(chains-1)))
	}
	for r := 1; r <= n; r++ {
		d2, _ := run(r - 1)
		for _, e := range epochs {
			m, _ := c.Moments(e)
			diff, mu, vr := m.Order(r)
			mean, v := meanVar(*d2[e], chains)
			mean1, _ := meanVar(*d1[e], chains)
			tag := ", r = " + itoa(r) + ", epoch " + itoa(e)
			check("D2 mean"+tag, mean, mu, math.Sqrt(vr/chains))
			check("D2 variance"+tag, v, vr, vr*math.Sqrt(2.0/(chains-1)))
			check("d_r = μ − μ̂_r"+tag, mean1-mean, diff, math.Sqrt((m.Var+vr)/chains))
		}
	}
	// The shuffled chains: the uniform mixture over r.
	mix, above := run(-2)
	for _, e := range epochs {
		m, _ := c.Moments(e)
		var md, m2 float64
		for r := 1; r <= n; r++ {
			d, mu, vr := m.Order(r)
			_ = d
			md += mu / float64(n)
			m2 += (vr + mu*mu) / float64(n)
		}
		vmix := m2 - md*md
		mean, _ := meanVar(*mix[e], chains)
		check("mixture mean, epoch "+itoa(e), mean, md, math.Sqrt(vmix/chains))
		lq, _ := m.mixture().logCDF(0, true)
		p := math.Exp(lq)
		check("mixture P(θ̂ > μ), epoch "+itoa(e), float64(above[e])/chains, p, math.Sqrt(p*(1-p)/chains))
	}
}

func itoa(i int) string { return big.NewInt(int64(i)).String() }

// bigMoments runs the exact recursions in 256-bit arithmetic. perStep
// applies every SGLD step (the affine maps of eq. 23); otherwise the epoch
// maps of docs/derivations/interim-region.md (B_r, C_r) are used. It returns μ, v of D1 and, for
// r = 1..n, d_r = μ − μ̂_r and v̂_r, all after `epochs` epochs.
func bigMoments(c Counterexample, epochs int, perStep bool) (mu, v *big.Float, d, vr []*big.Float) {
	const prec = 256
	f := func(x float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(x) }
	nf := f(float64(c.N))
	one := f(1)
	half := f(0.5)
	eta := f(c.Eta)
	al, be, xh, cc := f(c.Alpha), f(c.Beta), f(c.XH), f(c.C)
	mul := func(a ...*big.Float) *big.Float {
		r := f(1)
		for _, x := range a {
			r.Mul(r, x)
		}
		return r
	}
	add := func(a ...*big.Float) *big.Float {
		r := f(0)
		for _, x := range a {
			r.Add(r, x)
		}
		return r
	}
	sub := func(a, b *big.Float) *big.Float { return new(big.Float).SetPrec(prec).Sub(a, b) }
	quo := func(a, b *big.Float) *big.Float { return new(big.Float).SetPrec(prec).Quo(a, b) }
	// Step map for datum (x, y): a = 1 − (η/2)(α + n x² β), b = (η/2) n x y β.
	coef := func(x, y *big.Float) (a, b *big.Float) {
		a = sub(one, mul(half, eta, add(al, mul(nf, x, x, be))))
		b = mul(half, eta, nf, x, y, be)
		return a, b
	}
	xs := mul(half, xh)
	aD, bD := coef(xh, mul(cc, xh))
	aS, bS := coef(xs, mul(cc, xs))
	n := c.N
	mu, v = f(0), quo(one, al)
	for k := 0; k < epochs*n; k++ {
		mu = add(mul(aD, mu), bD)
		v = add(mul(aD, aD, v), eta)
	}
	d = make([]*big.Float, n)
	vr = make([]*big.Float, n)
	if perStep {
		for r := 1; r <= n; r++ {
			m, w := f(0), quo(one, al)
			for e := 0; e < epochs; e++ {
				for i := 1; i <= n; i++ {
					a, b := aD, bD
					if i == r {
						a, b = aS, bS
					}
					m = add(mul(a, m), b)
					w = add(mul(a, a, w), eta)
				}
			}
			d[r-1], vr[r-1] = sub(mu, m), w
		}
		return mu, v, d, vr
	}
	// Epoch maps: powers λ^k, S(k) = (1 − λ^k)/(1 − λ), S2(k) = (1 − λ^2k)/(1 − λ²).
	lam, lamH := aD, aS
	rho, rhoH := bD, bS
	pow := make([]*big.Float, n+1)
	pow[0] = f(1)
	for k := 1; k <= n; k++ {
		pow[k] = mul(pow[k-1], lam)
	}
	oneML, oneML2 := sub(one, lam), sub(one, mul(lam, lam))
	S := func(k int) *big.Float { return quo(sub(one, pow[k]), oneML) }
	S2 := func(k int) *big.Float { return quo(sub(one, mul(pow[k], pow[k])), oneML2) }
	A := mul(lamH, pow[n-1])
	for r := 1; r <= n; r++ {
		u := pow[n-r]
		B := add(mul(u, add(mul(lamH, rho, S(r-1)), rhoH)), mul(rho, S(n-r)))
		C := add(mul(u, u, add(mul(lamH, lamH, eta, S2(r-1)), eta)), mul(eta, S2(n-r)))
		m, w := f(0), quo(one, al)
		for e := 0; e < epochs; e++ {
			m = add(mul(A, m), B)
			w = add(mul(A, A, w), C)
		}
		d[r-1], vr[r-1] = sub(mu, m), w
	}
	return mu, v, d, vr
}

func bigF(x *big.Float) float64 { f, _ := x.Float64(); return f }

func relDiff(a, b float64) float64 {
	if a == b {
		return 0
	}
	return math.Abs(a-b) / math.Max(math.Abs(a), math.Abs(b))
}

// The closed-form moments against the 256-bit recursions: the per-step
// recursion for n = 12 (which also checks the epoch maps), and the
// epoch maps for n = 3000 with the paper's η = 2/s², where μ − μ̂_r is
// about 10⁻⁶ of μ and a float64 subtraction of the means would keep only
// ten digits.
func TestMomentsMatchBigFloat(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	cases := []struct {
		c       Counterexample
		epochs  []int
		perStep bool
	}{
		{Counterexample{N: 12, Alpha: 2, Beta: 1, XH: 1.8, C: 3, Eta: 0.004}, []int{1, 2, 6}, true},
		{Counterexample{N: 12, Alpha: 0.5, Beta: 3, XH: 0.7, C: 40, Eta: 0.02}, []int{1, 4}, true},
		{Counterexample{N: 3000, Alpha: 2, Beta: 1, XH: 1.8, C: 1e6}, []int{1, 7, 40}, false},
	}
	cases[2].c.Eta = cases[2].c.EtaScaled(2)
	for ci, tc := range cases {
		for _, e := range tc.epochs {
			mu, v, d, vr := bigMoments(tc.c, e, tc.perStep)
			if tc.perStep {
				_, _, d2, vr2 := bigMoments(tc.c, e, false)
				for r := range d {
					if relDiff(bigF(d[r]), bigF(d2[r])) > 1e-60 || relDiff(bigF(vr[r]), bigF(vr2[r])) > 1e-60 {
						t.Fatalf("case %d epoch %d r %d: epoch maps disagree with the steps", ci, e, r+1)
					}
				}
			}
			m, err := tc.c.Moments(e)
			if err != nil {
				t.Fatal(err)
			}
			if rd := relDiff(m.Mean, bigF(mu)); rd > 1e-13 {
				t.Errorf("case %d epoch %d: μ = %.17g, 256-bit %.17g", ci, e, m.Mean, bigF(mu))
			}
			if rd := relDiff(m.Var, bigF(v)); rd > 1e-13 {
				t.Errorf("case %d epoch %d: v = %.17g, 256-bit %.17g", ci, e, m.Var, bigF(v))
			}
			worstD, worstV := 0.0, 0.0
			for r := 1; r <= tc.c.N; r++ {
				diff, _, variance := m.Order(r)
				worstD = math.Max(worstD, relDiff(diff, bigF(d[r-1])))
				worstV = math.Max(worstV, relDiff(variance, bigF(vr[r-1])))
			}
			if worstD > 1e-12 || worstV > 1e-12 {
				t.Errorf("case %d epoch %d: worst relative error d_r %.2g, v̂_r %.2g", ci, e, worstD, worstV)
			}
		}
	}
}

// Lemma A.4's lower bound on μ − μ̂_r holds for the exact differences.
func TestLemmaA4Holds(t *testing.T) {
	c := Counterexample{N: 500, Alpha: 2, Beta: 1, XH: 1.8, C: 100}
	c.Eta = c.EtaScaled(2)
	k := c.consts()
	for K := 0; K < 30; K++ {
		m, _ := c.Moments(K + 1)
		// λ^(n−1) M∞ λ^(K(n−1)) (λ̂^(K+1) − λ^(K+1))
		lb := math.Exp(-float64(c.N-1)*k.L*float64(K+1)) * k.mInf *
			math.Exp(-float64(K+1)*k.L) * math.Expm1(float64(K+1)*k.dLog)
		for r := 1; r <= c.N; r += 37 {
			d, _, _ := m.Order(r)
			if d < lb*(1-1e-12) {
				t.Fatalf("epoch %d, r %d: d_r = %g below Lemma A.4's %g", K+1, r, d, lb)
			}
		}
	}
}

// The curves against the 256-bit moments summed term by term, for n = 300
// (enough for the engine to use its Euler–Maclaurin panels) in a regime
// where z_r varies strongly with r. Chernoff and Tail must agree within the
// reported error and never exceed the reference; Threshold must be at least
// the best of 2000 half-lines and equal its reference at its own threshold;
// Profile is checked against the hockey-stick integral computed by
// quadrature of the term-by-term mixture density: δ(ε) ≥ δ just below the
// reported ε and ≤ δ just above it (up to the stated error).
func TestCurvesMatchBigFloat(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	const delta = 1e-3
	// c = 30 gives ε below 1 (Chernoff 0); c = 4000 gives ε ≈ 500 at epoch
	// 2 and ε ≈ 1–3.5 at epochs 6 and 20, where z_r varies by a factor 2.5–4.5
	// across the orders.
	for _, cc := range []float64{30, 4000} {
		c := Counterexample{N: 300, Alpha: 2, Beta: 1, XH: 1.8, C: cc}
		c.Eta = 3 / c.S() / float64(c.N) // λ^n ≈ e^-1.5
		for _, e := range []int{2, 6, 20} {
			mu, v, d, vr := bigMoments(c, e, false)
			_ = mu
			sd := math.Sqrt(bigF(v))
			n := c.N
			ds, ss := make([]float64, n), make([]float64, n)
			for i := range ds {
				ds[i], ss[i] = bigF(d[i]), math.Sqrt(bigF(vr[i]))
			}
			logMean := func(g func(i int) float64) float64 {
				xs := make([]float64, n)
				for i := range xs {
					xs[i] = g(i)
				}
				return numeric.LogSumExp(xs) - math.Log(float64(n))
			}
			lnHalf := math.Log(0.5 - delta)
			refCh := math.Max(0, lnHalf-logMean(func(i int) float64 { z := ds[i] / ss[i]; return -z * z / 2 }))
			refTail := math.Max(0, lnHalf-logMean(func(i int) float64 { return numeric.LogNormCDF(-ds[i] / ss[i]) }))
			ec, err := c.Curves(e, delta)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range []struct {
				name string
				b    Bound
				ref  float64
			}{{"Chernoff", ec.Chernoff, refCh}, {"Tail", ec.Tail, refTail}} {
				if x.b.Epsilon > x.ref+1e-13 || x.ref > x.b.Epsilon+x.b.Err+1e-13 || x.b.Err > 1e-10 {
					t.Errorf("epoch %d %s = %.15g (err %.2g), reference %.15g", e, x.name, x.b.Epsilon, x.b.Err, x.ref)
				}
			}
			// Half-lines by brute force.
			qUpper := func(t float64) float64 {
				return logMean(func(i int) float64 { return numeric.LogNormCDF(-(t + ds[i]) / ss[i]) })
			}
			qLower := func(t float64) float64 {
				return logMean(func(i int) float64 { return numeric.LogNormCDF((t + ds[i]) / ss[i]) })
			}
			lnD := math.Log(delta)
			halfLine := func(t float64) float64 {
				pu, pl := numeric.LogNormCDF(-t/sd), numeric.LogNormCDF(t/sd)
				qu, ql := qUpper(t), qLower(t)
				return max(epsFromMasses(pu, qu, lnD), epsFromMasses(pl, ql, lnD),
					epsFromMasses(qu, pu, lnD), epsFromMasses(ql, pl, lnD), 0)
			}
			lo, hi := -ds[n-1]-10*ss[n-1], 10*sd
			best := 0.0
			for i := 0; i <= 2000; i++ {
				best = math.Max(best, halfLine(lo+(hi-lo)*float64(i)/2000))
			}
			th := ec.Threshold
			if th.Epsilon < best-1e-9 {
				t.Errorf("epoch %d Threshold = %.12g below the best of a 2000-point grid, %.12g", e, th.Epsilon, best)
			}
			if len(th.Set) == 1 {
				tt := th.Set[0].Hi
				if math.IsInf(tt, 1) {
					tt = th.Set[0].Lo
				}
				if ref := halfLine(tt); th.Epsilon > ref+1e-12 || ref > th.Epsilon+th.Err+1e-12 {
					t.Errorf("epoch %d Threshold = %.15g at t = %g, reference there %.15g", e, th.Epsilon, tt, ref)
				}
			}
			// Profile: the hockey-stick integral by quadrature.
			hs := hockeyStick(sd, ds, ss)
			eps := ec.Profile.Epsilon
			tol := 1e-7 + ec.Profile.Err
			if got := hs(eps - tol); got < delta {
				t.Errorf("epoch %d: δ(ε_profile − %.1g) = %.10g < δ: Profile %.12g too large", e, tol, got, eps)
			}
			if got := hs(eps + tol); got > delta {
				t.Errorf("epoch %d: δ(ε_profile + %.1g) = %.10g > δ: Profile %.12g not tight", e, tol, got, eps)
			}
			if !ec.ProfileExact {
				t.Errorf("epoch %d: profile not certified exact", e)
			}
			pure, _ := m2mix(c, e).profileBound(delta, Bound{})
			if pure.Epsilon < th.Epsilon-1e-9 {
				t.Errorf("epoch %d: profile from ε₀ = 0 is %.12g, below Threshold %.12g", e, pure.Epsilon, th.Epsilon)
			}
		}
	}
}

func m2mix(c Counterexample, e int) mixture {
	m, _ := c.Moments(e)
	return m.mixture()
}

// hockeyStick returns ε ↦ max over both directions of ∫[p − e^ε q]₊ for
// p = N(0, sd²) and q the equal-weight mixture of N(−ds[i], ss[i]²),
// evaluated term by term: the integrand's kinks are located on a fine grid
// and refined by bisection, and each smooth piece is integrated by
// 40-point Gauss–Legendre on sub-panels.
func hockeyStick(sd float64, ds, ss []float64) func(float64) float64 {
	n := len(ds)
	lo, hi := -ds[n-1]-14*ss[n-1], 14*sd
	for i := range ds {
		lo = math.Min(lo, -ds[i]-14*ss[i])
		hi = math.Max(hi, -ds[i]+14*ss[i])
	}
	p := func(x float64) float64 { return math.Exp(numeric.LogNormPDF(x/sd)) / sd }
	q := func(x float64) float64 {
		var s float64
		for i := range ds {
			s += math.Exp(numeric.LogNormPDF((x+ds[i])/ss[i])) / ss[i]
		}
		return s / float64(n)
	}
	xs, ws := make([]float64, 40), make([]float64, 40)
	quad.Legendre{}.FixedLocations(xs, ws, -1, 1)
	integrate := func(f func(float64) float64, a, b float64) float64 {
		const panels = 8
		var s float64
		h := (b - a) / panels
		for k := 0; k < panels; k++ {
			c, r := a+h*(float64(k)+0.5), h/2
			for i := range xs {
				s += ws[i] * r * f(c+r*xs[i])
			}
		}
		return s
	}
	return func(eps float64) float64 {
		best := 0.0
		for _, dir := range []bool{true, false} {
			g := func(x float64) float64 {
				if dir {
					return p(x) - math.Exp(eps)*q(x)
				}
				return q(x) - math.Exp(eps)*p(x)
			}
			const grid = 4000
			cuts := []float64{lo}
			prev := g(lo)
			for i := 1; i <= grid; i++ {
				x := lo + (hi-lo)*float64(i)/grid
				cur := g(x)
				if (cur > 0) != (prev > 0) {
					a, b := x-(hi-lo)/grid, x
					for k := 0; k < 100; k++ {
						m := (a + b) / 2
						if (g(m) > 0) == (prev > 0) {
							a = m
						} else {
							b = m
						}
					}
					cuts = append(cuts, (a+b)/2)
				}
				prev = cur
			}
			cuts = append(cuts, hi)
			var tot float64
			for i := 0; i+1 < len(cuts); i++ {
				a, b := cuts[i], cuts[i+1]
				if g((a+b)/2) > 0 {
					tot += integrate(g, a, b)
				}
			}
			best = math.Max(best, tot)
		}
		return best
	}
}
