package mechanisms

import (
	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// transferPair is a Gaussian-mean model in d = 2 on 20 records and its
// replace-one neighbour, whose replaced record is moved far enough that
// the posteriors are clearly distinguishable.
func transferPair(t *testing.T) (*Gauss, dataset.Pair) { return transferPairAt(t, []float64{9, -6}) }

// transferPairAt is transferPair with the replacing record x.
func transferPairAt(t *testing.T, x []float64) (*Gauss, dataset.Pair) {
	t.Helper()
	cov := []float64{1, 0.3, 0.3, 0.5}
	g, err := NewGauss([]float64{0.5, -1}, 3, cov)
	if err != nil {
		t.Fatal(err)
	}
	d, err := syntheticGauss(20, []float64{1, 2}, cov, 5)
	if err != nil {
		t.Fatal(err)
	}
	dp := &dataset.Dataset{Name: "D′", Records: append([]dataset.Record(nil), d.Records...)}
	dp.Records[0] = dataset.Record{X: x}
	return g, dataset.Pair{D: d, DPrime: dp, Adjacency: dataset.ReplaceOne}
}

// TestTransferLawMatchesSamplers runs the real ULA and full-batch SGLD
// samplers and compares the moments of their state after k steps (20,000
// runs, per-coordinate mean and variance, zTol standard errors) with the
// closed-form law the convergence transfer uses.
func TestTransferLawMatchesSamplers(t *testing.T) {
	g, p := transferPair(t)
	const k, runs = 12, 20000
	samplers := []Sampler{
		&ULA{Gamma: 0.01, Iters: k},
		&SGLD{Step: StepSchedule{Eta: 0.02}, Batch: 20, Scheme: WithoutReplacement, Iters: k},
	}
	for _, s := range samplers {
		st := SettingOf(g, p, k)
		st.Init = Init{FromPrior: true}
		h, noise, _, reason := langevinStep(s, st)
		if reason != "" {
			t.Fatalf("%s: %s", s.Name(), reason)
		}
		m, c, err := g.Posterior(p.D)
		if err != nil {
			t.Fatal(err)
		}
		law := closedform.LinearLangevin{Step: h, NoiseVar: noise, Mean: m, Cov: c, InitMean: g.PriorMean(), InitVar: 9}
		mean, cov, err := law.Law(k)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(11, 12))
		xs := [2][]float64{}
		theta := make([]float64, 2)
		for r := 0; r < runs; r++ {
			g.SamplePrior(rng, theta)
			if _, err := s.Run(g, p.D, theta, rng, []int{k}, func(_ int, th []float64) error {
				xs[0] = append(xs[0], th[0])
				xs[1] = append(xs[1], th[1])
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		for j := 0; j < 2; j++ {
			mu, v, seM, seV := testutil.SampleMoments(xs[j])
			checkMoment(t, s.Name()+" mean", mu, mean[j], seM)
			checkMoment(t, s.Name()+" variance", v, cov[j*2+j], seV)
		}
	}
}

// TestTransferBracketsExactChain: for ULA on the Gaussian-mean model with
// replace-one, both chains have the same covariance, so the release is
// exactly μ-GDP with μ the Mahalanobis distance of their means (computed
// here from LinearLangevin.Law). Prop. 3.2's ε must lie above the exact ε
// and Prop. 3.3's below it.
func TestTransferBracketsExactChain(t *testing.T) {
	// Far apart at δ = 1e-5 (Prop. 3.3 proves something), close at
	// δ = 0.1 (Prop. 3.2 gives a finite ε).
	for _, c := range []struct {
		x     []float64
		delta float64
	}{{[]float64{9, -6}, 1e-5}, {[]float64{1.5, 2}, 0.1}} {
		g, p := transferPairAt(t, c.x)
		bracketExactChain(t, g, p, c.delta)
	}
}

func bracketExactChain(t *testing.T, g *Gauss, p dataset.Pair, delta float64) {
	const k = 3000
	u := &ULA{Gamma: 1e-3, Iters: k}
	ch := &Chain{Model: g, Sampler: u, Init: Init{FromPrior: true}}
	tr, reason := TransferOf(ch, p, ReleasePoint{Iteration: k})
	if tr == nil {
		t.Fatal(reason)
	}
	var means [2][]float64
	var cov []float64
	for i, d := range []*dataset.Dataset{p.D, p.DPrime} {
		m, c, _ := g.Posterior(d)
		law := closedform.LinearLangevin{Step: u.Gamma, NoiseVar: 2 * u.Gamma, Mean: m, Cov: c, InitMean: g.PriorMean(), InitVar: 9}
		means[i], cov, _ = law.Law(k)
	}
	// μ² = ΔᵀC⁻¹Δ for the 2×2 covariance C, inverted by hand.
	dx, dy := means[0][0]-means[1][0], means[0][1]-means[1][1]
	det := cov[0]*cov[3] - cov[1]*cov[2]
	mu := math.Sqrt((cov[3]*dx*dx - 2*cov[1]*dx*dy + cov[0]*dy*dy) / det)
	{
		exact, err := stats.GDPEpsilon(mu, delta)
		if err != nil {
			t.Fatal(err)
		}
		lo, ok := tr.NotDPEpsilon(delta)
		gu := tr.Guarantee("x")
		up, err := gu.Epsilon(delta)
		if err != nil {
			t.Fatal(err)
		}
		if lo > exact || up < exact {
			t.Errorf("δ = %g: Prop. 3.3 ε %.6g (%v), exact %.6g, Prop. 3.2 ε %.6g: not bracketed", delta, lo, ok, exact, up)
		}
		if delta == 1e-5 && !ok {
			t.Errorf("δ = %g: Prop. 3.3 proves nothing (β = %.4g): the test exercises nothing", delta, tr.Beta())
		}
		if delta == 0.1 && math.IsInf(up, 1) {
			t.Errorf("δ = %g: Prop. 3.2 gives no finite ε (β = %.4g)", delta, tr.Beta())
		}
		t.Logf("δ = %g: β = %.4g, Prop. 3.3 ε ≥ %.6g, exact ε = %.6g (μ = %.4g), Prop. 3.2 ε ≤ %.6g", delta, tr.Beta(), lo, exact, mu, up)
	}
}

// TestConvergenceGuaranteeReasons: where the law is not known in closed
// form the listing says why.
func TestConvergenceGuaranteeReasons(t *testing.T) {
	g, p := transferPair(t)
	cases := []struct {
		s    Sampler
		want string
	}{
		{&SGLD{Step: StepSchedule{Eta: 0.02}, Batch: 5, Scheme: WithoutReplacement, Iters: 3}, "mixture"},
		{&SGLD{Step: StepSchedule{Eta: 0.02}, Batch: 20, Scheme: WithoutReplacement, Iters: 3, Clip: 1}, "clipping"},
		{&ULA{Gamma: 0.01, Iters: 3, Radius: 5}, "projection"},
	}
	for _, c := range cases {
		st := SettingOf(g, p, 3)
		gu := convergenceGuarantee(c.s, st)
		if gu.Applies || !strings.Contains(gu.Reason, c.want) {
			t.Errorf("%s: applies %v, reason %q (want it to mention %q)", c.s.Name(), gu.Applies, gu.Reason, c.want)
		}
	}
	st := SettingOf(g, p, 3)
	if gu := convergenceGuarantee(&ULA{Gamma: 0.01, Iters: 3}, st); !gu.Applies {
		t.Errorf("ULA on the Gaussian model: %s", gu.Reason)
	}
}

// TestTransferRecognisesCounterexample: plain cyclic SGLD with batch 1 on
// the counterexample's pair gets the transfer of the closed-form
// counterexample (materialised and virtual pairs alike); a pair that
// differs in any other way does not.
func TestTransferRecognisesCounterexample(t *testing.T) {
	const n, xh, c, alpha, beta = 10, 1.8, 3.0, 2.0, 1.0
	ce := closedform.Counterexample{N: n, Alpha: alpha, Beta: beta, XH: xh, C: c}
	ce.Eta = ce.EtaScaled(2)
	d1 := &dataset.Dataset{Name: "D1"}
	for i := 0; i < n; i++ {
		d1.Records = append(d1.Records, dataset.Record{X: []float64{xh}, Y: c * xh})
	}
	d2 := &dataset.Dataset{Name: "D2", Records: append([]dataset.Record(nil), d1.Records...)}
	d2.Records[4] = dataset.Record{X: []float64{xh / 2}, Y: c * xh / 2}
	virt, err := dataset.VirtualCounterexamplePair(n, xh, c)
	if err != nil {
		t.Fatal(err)
	}
	s := &SGLD{Step: StepSchedule{Eta: ce.Eta}, Batch: 1, Scheme: Cyclic, Epochs: 30}
	b1, b2, err := ce.PosteriorTV(30)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []dataset.Pair{{D: d1, DPrime: d2, Adjacency: dataset.ReplaceOne}, virt} {
		ch := &Chain{Model: NewLinReg1D(alpha, beta), Sampler: s, Init: Init{FromPrior: true}}
		tr, reason := TransferOf(ch, p, ReleasePoint{Iteration: 30 * n})
		if tr == nil {
			t.Fatalf("%s: %s", p.D.Name, reason)
		}
		if math.Abs(tr.BetaD.Value-b1.Value) > 1e-12 || math.Abs(tr.BetaDPrime.Value-b2.Value) > 1e-12 {
			t.Errorf("β = (%g, %g), closed form (%g, %g)", tr.BetaD.Value, tr.BetaDPrime.Value, b1.Value, b2.Value)
		}
	}
	bad := &dataset.Dataset{Name: "D2", Records: append([]dataset.Record(nil), d2.Records...)}
	bad.Records[7] = dataset.Record{X: []float64{xh / 2}, Y: c * xh / 2}
	ch := &Chain{Model: NewLinReg1D(alpha, beta), Sampler: s, Init: Init{FromPrior: true}}
	if tr, _ := TransferOf(ch, dataset.Pair{D: d1, DPrime: bad}, ReleasePoint{Iteration: 30 * n}); tr != nil {
		t.Error("a pair with two special records was taken for the counterexample")
	}
}
