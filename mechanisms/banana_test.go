package mechanisms

import (
	"fmt"
	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"gonum.org/v1/gonum/stat/distuv"
)

// The banana's densities against gonum's univariate normal evaluated at
// the unbent coordinates g⁻¹(θ) = (θ₁, θ₂ + aθ₁²) (an independent
// implementation of the same definition), its gradients against finite
// differences, and LogLikRatio against the difference of log-likelihoods.
func TestBananaDensities(t *testing.T) {
	b := Banana{A: 3, PriorVar: 4, Var1: 1.5, Var2: 0.7}
	if err := b.Check(); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	grad := make([]float64, 2)
	for trial := 0; trial < 50; trial++ {
		theta := []float64{rng.NormFloat64(), 2 * rng.NormFloat64()}
		thetaNew := []float64{theta[0] + 0.2*rng.NormFloat64(), theta[1] + 0.2*rng.NormFloat64()}
		r := dataset.Record{X: []float64{rng.NormFloat64(), 3 * rng.NormFloat64()}}
		phi2 := theta[1] + b.A*theta[0]*theta[0]
		p0 := distuv.Normal{Mu: 0, Sigma: math.Sqrt(b.PriorVar)}
		wantPrior := p0.LogProb(theta[0]) + p0.LogProb(phi2) - 2*p0.LogProb(0) // constant dropped
		if got := b.LogPrior(theta); math.Abs(got-wantPrior) > 1e-12*math.Max(1, math.Abs(wantPrior)) {
			t.Fatalf("LogPrior = %.15g, want %.15g", got, wantPrior)
		}
		n1 := distuv.Normal{Mu: theta[0], Sigma: math.Sqrt(b.Var1)}
		n2 := distuv.Normal{Mu: phi2, Sigma: math.Sqrt(b.Var2)}
		wantLik := n1.LogProb(r.X[0]) + n2.LogProb(r.X[1])
		if got := b.LogLik(theta, r); math.Abs(got-wantLik) > 1e-12*math.Max(1, math.Abs(wantLik)) {
			t.Fatalf("LogLik = %.15g, want %.15g", got, wantLik)
		}
		if got, want := b.LogLikRatio(theta, thetaNew, r), b.LogLik(thetaNew, r)-b.LogLik(theta, r); math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Fatalf("LogLikRatio = %.15g, difference %.15g", got, want)
		}
		b.GradLogLik(theta, r, grad)
		checkGradFD(t, "banana loglik", func(th []float64) float64 { return b.LogLik(th, r) }, theta, grad)
		b.GradLogPrior(theta, grad)
		checkGradFD(t, "banana prior", b.LogPrior, theta, grad)
	}
}

// The posterior Ban(μ, Σ, a) of Räisä et al. §4.1 against Bayes' rule:
// ln π(θ | D) − (ln p(θ) + Σ ln p(xᵢ | θ)) must not depend on θ. Checked at
// 30 points spread over the posterior, to 1e-9 of the log-density scale.
func TestBananaPosteriorIsBayes(t *testing.T) {
	b := Banana{A: 2, PriorVar: 9, Var1: 2, Var2: 3}
	d, err := syntheticBanana(30, [2]float64{0.5, 1}, b, 2)
	if err != nil {
		t.Fatal(err)
	}
	law, err := b.BananaPosterior(d)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	theta := make([]float64, 2)
	var ref float64
	for k := 0; k < 30; k++ {
		law.Sample(rng, theta)
		theta[0] += 0.5 * rng.NormFloat64() // also off the bulk
		un := b.LogPrior(theta)
		for _, r := range d.Records {
			un += b.LogLik(theta, r)
		}
		diff := law.LogDensity(theta) - un
		if k == 0 {
			ref = diff
			continue
		}
		if math.Abs(diff-ref) > 1e-9*math.Max(1, math.Abs(un)) {
			t.Fatalf("posterior/unnormalised ratio varies: %.12g at θ=%v vs %.12g", diff, theta, ref)
		}
	}
}

// The law's closed-form moments against a Monte Carlo sample of the
// transformation g(φ), φ ~ N(μ, Σ) drawn here directly with gonum (not by
// Sample); and Sample against the same moments. Tolerance 4.5 SEs
// (delta-method SEs of helpers_test.go). Power: ignoring the bend's effect
// on the mean (E θ₂ = μ₂) would be a·V₁/SE ≫ 4.5 off (asserted).
func TestBananaLawMoments(t *testing.T) {
	law := BananaLaw{Mu: [2]float64{0.4, -1}, Var: [2]float64{0.3, 0.2}, A: 1.5}
	mean, cov := law.Mean(), law.Cov()
	const N = 200000
	src := rand.New(rand.NewPCG(8, 9))
	n1 := distuv.Normal{Mu: law.Mu[0], Sigma: math.Sqrt(law.Var[0]), Src: src}
	n2 := distuv.Normal{Mu: law.Mu[1], Sigma: math.Sqrt(law.Var[1]), Src: src}
	b := Banana{A: law.A, PriorVar: 1, Var1: 1, Var2: 1}
	rng := rand.New(rand.NewPCG(10, 11))
	for _, how := range []string{"transform", "Sample"} {
		xs := [2][]float64{make([]float64, N), make([]float64, N)}
		th := make([]float64, 2)
		for k := 0; k < N; k++ {
			if how == "transform" {
				b.Bend(n1.Rand(), n2.Rand(), th)
			} else {
				law.Sample(rng, th)
			}
			xs[0][k], xs[1][k] = th[0], th[1]
		}
		for i := 0; i < 2; i++ {
			m, v, sem, sev := testutil.SampleMoments(xs[i])
			checkMoment(t, fmt.Sprintf("%s: θ%d mean", how, i+1), m, mean[i], sem)
			checkMoment(t, fmt.Sprintf("%s: θ%d var", how, i+1), v, cov[i][i], sev)
			if i == 1 && law.A*law.Var[0]/sem < 20 {
				t.Errorf("bend's mean shift only %.1f SE", law.A*law.Var[0]/sem)
			}
		}
		checkCovariance(t, how+": cov(θ1, θ2)", xs[0], xs[1], cov[0][1])
	}
	// The prior is the same construction with μ = 0, Σ = σ₀² I.
	xs := [2][]float64{make([]float64, N), make([]float64, N)}
	th := make([]float64, 2)
	pb := Banana{A: 0.7, PriorVar: 0.5, Var1: 1, Var2: 1}
	for k := 0; k < N; k++ {
		pb.SamplePrior(rng, th)
		p1, p2 := pb.Unbend(th)
		xs[0][k], xs[1][k] = p1, p2
	}
	for i := 0; i < 2; i++ {
		m, v, sem, sev := testutil.SampleMoments(xs[i])
		checkMoment(t, fmt.Sprintf("prior φ%d mean", i+1), m, 0, sem)
		checkMoment(t, fmt.Sprintf("prior φ%d var", i+1), v, pb.PriorVar, sev)
	}
}

// The paper's setting: n = 100000 records at θ = (0, 3). The posterior of
// φ concentrates at the data means with Σ = diag(1/(n/2000 + 10⁻⁶),
// 1/(n/2500 + 10⁻⁶)) ≈ diag(0.02, 0.025); the data mean of x₁ is within
// 4.5·sqrt(2000/n) of 0 and that of x₂ within 4.5·sqrt(2500/n) of 3.
func TestRaisaBananaSetting(t *testing.T) {
	b := raisaBanana()
	d, err := syntheticBanana(100000, [2]float64{0, 3}, b, 1)
	if err != nil {
		t.Fatal(err)
	}
	law, err := b.BananaPosterior(d)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(law.Var[0]-1/(100000.0/2000+1e-6)) > 1e-15 || math.Abs(law.Var[1]-1/(100000.0/2500+1e-6)) > 1e-15 {
		t.Errorf("posterior variances %v", law.Var)
	}
	if math.Abs(law.Mu[0]) > 4.5*math.Sqrt(2000/1e5) || math.Abs(law.Mu[1]-3) > 4.5*math.Sqrt(2500/1e5) {
		t.Errorf("posterior φ mean %v, want ≈ (0, 3)", law.Mu)
	}
	for _, bad := range []Banana{{A: math.NaN(), PriorVar: 1, Var1: 1, Var2: 1}, {A: 1, PriorVar: 0, Var1: 1, Var2: 1},
		{A: 1, PriorVar: 1, Var1: -1, Var2: 1}, {A: 1, PriorVar: 1, Var1: 1, Var2: math.Inf(1)}} {
		if bad.Check() == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
