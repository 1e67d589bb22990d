package mechanisms

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"

	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
)

// finalStates runs N independent chains (trial seeds 0..N−1) and returns
// the released 1-D states, indexed [point][trial].
func finalStates(t *testing.T, c *Chain, d *dataset.Dataset, n int, seed uint64) [][]float64 {
	t.Helper()
	if err := c.Check(d); err != nil {
		t.Fatal(err)
	}
	pts, _ := c.Points(d)
	out := make([][]float64, len(pts))
	for i := range out {
		out[i] = make([]float64, n)
	}
	for k := 0; k < n; k++ {
		rng := TrialRNG(seed, dataset.SideD, k, 0)
		_, err := c.Run(context.Background(), Trial{RNG: rng}, d, func(p int, th []float64) error {
			out[p][k] = th[0]
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// affineStep is one SGLD iteration of Heller eq. 3 on 1-D linear regression
// written as θ ← a·θ + b + sqrt(η)·ξ: with P = α + s·Σ_batch β x², Q = s·Σ_batch β x y
// (s the batch scaling), a = 1 − (η/2)P and b = (η/2)Q.
func affineStep(m LinReg, d *dataset.Dataset, batch []int, scale, eta float64) (a, b float64) {
	p, q := m.Alpha, 0.0
	for _, i := range batch {
		x := d.Records[i].X[0]
		p += scale * m.Beta * x * x
		q += scale * m.Beta * x * d.Records[i].Y
	}
	return 1 - eta/2*p, eta / 2 * q
}

// weightedMap is a random affine map θ ← Aθ + B + N(0, C) with probability W.
type weightedMap struct{ W, A, B, C float64 }

// stationaryIID returns the stationary mean and variance of θ_{t+1} = A_t θ_t
// + B_t + N(0, C_t) with (A_t, B_t, C_t) i.i.d. from maps: m = E[B]/(1−E[A]),
// E[θ²] = (2E[AB]m + E[B²] + E[C])/(1 − E[A²]).
func stationaryIID(maps []weightedMap) (mean, variance float64) {
	var ea, eb, ea2, eab, eb2, ec, w float64
	for _, mp := range maps {
		w += mp.W
		ea += mp.W * mp.A
		eb += mp.W * mp.B
		ea2 += mp.W * mp.A * mp.A
		eab += mp.W * mp.A * mp.B
		eb2 += mp.W * mp.B * mp.B
		ec += mp.W * mp.C
	}
	ea, eb, ea2, eab, eb2, ec = ea/w, eb/w, ea2/w, eab/w, eb2/w, ec/w
	mean = eb / (1 - ea)
	s2 := (2*eab*mean + eb2 + ec) / (1 - ea2)
	return mean, s2 - mean*mean
}

func permutations(n int) [][]int {
	if n == 1 {
		return [][]int{{0}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for pos := 0; pos <= len(p); pos++ {
			q := append(append(append([]int{}, p[:pos]...), n-1), p[pos:]...)
			out = append(out, q)
		}
	}
	return out
}

// epochMap composes the per-iteration maps of one epoch that visits the
// data in order perm in batches of b.
func epochMap(m LinReg, d *dataset.Dataset, perm []int, b int, eta float64) (A, B, C float64) {
	A, B, C = 1, 0, 0
	n := len(perm)
	for pos := 0; pos < n; pos += b {
		batch := perm[pos:min(pos+b, n)]
		a, bb := affineStep(m, d, batch, float64(n)/float64(len(batch)), eta)
		A, B, C = a*A, a*B+bb, a*a*C+eta
	}
	return
}

// The exact stationary law of SGLD on 1-D linear regression, at epoch
// boundaries, by enumerating every minibatch (i.i.d. schemes) or every
// permutation (reshuffle, cyclic) of a 5-record dataset. The step size is
// large enough that the discretisation bias is ≥ 20 SE away from the
// posterior, so the test sees the O(η) bias rather than waving it away.
func TestSGLDStationaryExact(t *testing.T) {
	testutil.Slow(t)
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	m := NewLinReg1D(1, 2)
	d := &dataset.Dataset{Name: "five", Records: []dataset.Record{
		{X: []float64{0.3}, Y: 0.5}, {X: []float64{-1.1}, Y: -0.2}, {X: []float64{0.8}, Y: 1.4},
		{X: []float64{1.5}, Y: 0.9}, {X: []float64{-0.4}, Y: -1.0},
	}}
	n := d.Len()
	post, postCov, _ := m.Posterior(d)
	const eta = 0.12
	const chains = 20000
	for _, b := range []int{1, 2} {
		for _, scheme := range []IndexScheme{WithReplacement, WithoutReplacement, Poisson, Reshuffle, Cyclic} {
			var mean, variance float64
			var maps []weightedMap
			q := float64(b) / float64(n)
			switch scheme {
			case WithReplacement:
				// Every ordered b-tuple of indices, equally likely.
				var rec func(prefix []int)
				rec = func(prefix []int) {
					if len(prefix) == b {
						a, bb := affineStep(m, d, prefix, float64(n)/float64(b), eta)
						maps = append(maps, weightedMap{1, a, bb, eta})
						return
					}
					for i := 0; i < n; i++ {
						rec(append(append([]int{}, prefix...), i))
					}
				}
				rec(nil)
			case WithoutReplacement, Poisson:
				// Every subset; uniform over size-b subsets, or q^|S|(1−q)^{n−|S|}.
				for mask := 0; mask < 1<<n; mask++ {
					var s []int
					for i := 0; i < n; i++ {
						if mask&(1<<i) != 0 {
							s = append(s, i)
						}
					}
					w := math.Pow(q, float64(len(s))) * math.Pow(1-q, float64(n-len(s)))
					if scheme == WithoutReplacement {
						if len(s) != b {
							continue
						}
						w = 1
					}
					a, bb := affineStep(m, d, s, float64(n)/float64(b), eta)
					maps = append(maps, weightedMap{w, a, bb, eta})
				}
			case Reshuffle:
				for _, p := range permutations(n) {
					A, B, C := epochMap(m, d, p, b, eta)
					maps = append(maps, weightedMap{1, A, B, C})
				}
			case Cyclic:
				// A fixed random order: a uniform mixture over permutations of
				// each order's stationary Gaussian N(B/(1−A), C/(1−A²)).
				var s1, s2 float64
				perms := permutations(n)
				for _, p := range perms {
					A, B, C := epochMap(m, d, p, b, eta)
					mu, v := B/(1-A), C/(1-A*A)
					s1 += mu
					s2 += v + mu*mu
				}
				mean = s1 / float64(len(perms))
				variance = s2/float64(len(perms)) - mean*mean
			}
			if scheme != Cyclic {
				if scheme == Reshuffle {
					mean, variance = stationaryIID(maps)
				} else {
					// Per iteration; epoch boundaries are iterations too.
					mean, variance = stationaryIID(maps)
				}
			}
			for _, model := range []Model{m, hideAffine{m}} {
				path := "fast"
				if _, ok := model.(Affine1D); !ok {
					path = "generic"
				}
				name := fmt.Sprintf("%s b=%d %s", scheme, b, path)
				c := &Chain{Model: model, Init: Init{FromPrior: true},
					Sampler: &SGLD{Step: StepSchedule{Eta: eta}, Batch: b, Scheme: scheme, Epochs: 40},
					Release: ReleaseSpec{Mode: ReleaseFinal}}
				xs := finalStates(t, c, d, chains, 7)[0]
				gm, gv, sem, sev := testutil.SampleMoments(xs)
				checkMoment(t, name+" mean", gm, mean, sem)
				checkMoment(t, name+" variance", gv, variance, sev)
				// The reference is not the posterior: the bias is visible.
				if math.Abs(variance-postCov[0])/sev < 20 && math.Abs(mean-post[0])/sem < 20 {
					t.Errorf("%s: exact stationary law (%g, %g) too close to the posterior (%g, %g) for this test to see a wrong drift",
						name, mean, variance, post[0], postCov[0])
				}
			}
		}
	}
}

// ULA on d-dimensional linear regression: ∇U(x) = Hx − h with H the
// posterior precision, so x ← (I − γH)x + γh + sqrt(2γ)z has the stationary
// law N(H⁻¹h, (H(I − γH/2))⁻¹) — the posterior mean exactly and the
// covariance inflated by the O(γ) discretisation bias.
func TestULAStationaryLinReg(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	m := LinReg{D: 2, Alpha: 1, Beta: 1}
	d, err := syntheticLinReg(10, []float64{0.7, -0.4}, 1, 0.6, 3)
	if err != nil {
		t.Fatal(err)
	}
	mean, cov, _ := m.Posterior(d)
	// Precision H = cov⁻¹ (2×2) and the exact stationary covariance.
	det := cov[0]*cov[3] - cov[1]*cov[2]
	H := [4]float64{cov[3] / det, -cov[1] / det, -cov[2] / det, cov[0] / det}
	const gamma = 0.15
	// S = (H − γH²/2)⁻¹.
	H2 := [4]float64{H[0]*H[0] + H[1]*H[2], H[0]*H[1] + H[1]*H[3], H[2]*H[0] + H[3]*H[2], H[2]*H[1] + H[3]*H[3]}
	M := [4]float64{H[0] - gamma*H2[0]/2, H[1] - gamma*H2[1]/2, H[2] - gamma*H2[2]/2, H[3] - gamma*H2[3]/2}
	dm := M[0]*M[3] - M[1]*M[2]
	S := [4]float64{M[3] / dm, -M[1] / dm, -M[2] / dm, M[0] / dm}
	c := &Chain{Model: m, Init: Init{FromPrior: true}, Sampler: &ULA{Gamma: gamma, Iters: 400},
		Release: ReleaseSpec{Mode: ReleaseFinal}}
	if err := c.Check(d); err != nil {
		t.Fatal(err)
	}
	const N = 20000
	xs := [2][]float64{make([]float64, N), make([]float64, N)}
	prod := make([]float64, N)
	for k := 0; k < N; k++ {
		_, err := c.Run(context.Background(), Trial{RNG: TrialRNG(11, dataset.SideD, k, 0)}, d, func(_ int, th []float64) error {
			xs[0][k], xs[1][k] = th[0], th[1]
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 2; i++ {
		gm, gv, sem, sev := testutil.SampleMoments(xs[i])
		checkMoment(t, fmt.Sprintf("ULA mean[%d]", i), gm, mean[i], sem)
		checkMoment(t, fmt.Sprintf("ULA var[%d]", i), gv, S[3*i], sev)
		if math.Abs(S[3*i]-cov[3*i])/sev < 10 {
			t.Errorf("stationary variance %g too close to the posterior's %g to test the bias", S[3*i], cov[3*i])
		}
	}
	m0, _, _, _ := testutil.SampleMoments(xs[0])
	m1, _, _, _ := testutil.SampleMoments(xs[1])
	for k := range prod {
		prod[k] = (xs[0][k] - m0) * (xs[1][k] - m1)
	}
	gc, _, sec, _ := testutil.SampleMoments(prod)
	checkMoment(t, "ULA covariance", gc, S[1], sec)
}

// Heller & Fetaya §IV.B (epoch maps in docs/derivations/interim-region.md):
// cyclic SGLD (b = 1) on the counterexample pair. Exact per-order
// moments from the epoch maps, averaged over the uniform position r of the
// special record, against a simulation of the sampler itself.
func TestCyclicSGLDCounterexampleMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	const (
		n            = 6
		alpha, beta  = 2.0, 1.0
		xh, c        = 1.8, 3.0
		epochs       = 5
		chains       = 40000
		stepFraction = 0.2 // ηs/2: λ = 0.8
	)
	s := alpha + n*xh*xh*beta
	eta := 2 * stepFraction / s
	pair, err := dataset.CounterexamplePair(n, xh, c)
	if err != nil {
		t.Fatal(err)
	}
	lam := 1 - eta*s/2
	lamHat := 1 - eta/2*(alpha+n*xh*xh*beta/4)
	rho := eta / 2 * n * c * xh * xh * beta
	rhoHat := rho / 4
	S := func(k int) float64 { return (1 - math.Pow(lam, float64(k))) / (1 - lam) }
	S2 := func(k int) float64 { return (1 - math.Pow(lam, float64(2*k))) / (1 - lam*lam) }
	A := lamHat * math.Pow(lam, n-1)
	// Exact moments per epoch for D1 and the D2 mixture.
	type mom struct{ mean, variance float64 }
	var exactD1, exactD2 [epochs]mom
	m1, v1 := 0.0, 1/alpha
	mr := make([]float64, n+1)
	vr := make([]float64, n+1)
	for r := 1; r <= n; r++ {
		mr[r], vr[r] = 0, 1/alpha
	}
	for e := 0; e < epochs; e++ {
		m1 = math.Pow(lam, n)*m1 + rho*S(n)
		v1 = math.Pow(lam, 2*n)*v1 + eta*S2(n)
		exactD1[e] = mom{m1, v1}
		var s1, s2 float64
		for r := 1; r <= n; r++ {
			Br := math.Pow(lam, float64(n-r))*(lamHat*rho*S(r-1)+rhoHat) + rho*S(n-r)
			Cr := math.Pow(lam, float64(2*(n-r)))*(lamHat*lamHat*eta*S2(r-1)+eta) + eta*S2(n-r)
			mr[r] = A*mr[r] + Br
			vr[r] = A*A*vr[r] + Cr
			s1 += mr[r]
			s2 += vr[r] + mr[r]*mr[r]
		}
		mean := s1 / n
		exactD2[e] = mom{mean, s2/n - mean*mean}
	}
	m := NewLinReg1D(alpha, beta)
	for side, d := range []*dataset.Dataset{pair.D, pair.DPrime} {
		ch := &Chain{Model: m, Init: Init{FromPrior: true},
			Sampler: &SGLD{Step: StepSchedule{Eta: eta}, Batch: 1, Scheme: Cyclic, Epochs: epochs},
			Release: ReleaseSpec{Mode: ReleaseEpochs}}
		got := finalStates(t, ch, d, chains, 99)
		for e := 0; e < epochs; e++ {
			want := exactD1[e]
			if side == 1 {
				want = exactD2[e]
			}
			gm, gv, sem, sev := testutil.SampleMoments(got[e])
			checkMoment(t, fmt.Sprintf("%s epoch %d mean", d.Name, e+1), gm, want.mean, sem)
			checkMoment(t, fmt.Sprintf("%s epoch %d variance", d.Name, e+1), gv, want.variance, sev)
		}
	}
	// The two datasets' laws differ by far more than the Monte Carlo error,
	// so the comparison above is not vacuous.
	if d := exactD1[epochs-1].mean - exactD2[epochs-1].mean; d < 20*math.Sqrt(exactD1[epochs-1].variance/chains) {
		t.Errorf("D1 and D2 means differ by only %g", d)
	}
}
