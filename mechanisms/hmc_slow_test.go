//go:build slow

package mechanisms

import "testing"

// The exactness tests of hmc_test.go with ten times the chains: the SEs
// shrink by √10, so a bias of ~1.5% of a posterior SD in a mean (or ~2% in
// a variance) would show.
func TestSlowDPHMCTargetsPosterior(t *testing.T)     { testDPHMCTargetsPosterior(t, 100000) }
func TestSlowDPHMCTargetsBanana(t *testing.T)        { testDPHMCTargetsBanana(t, 100000) }
func TestSlowDPPenaltyTargetsPosterior(t *testing.T) { testDPPenaltyTargetsPosterior(t, 100000) }

// Räisä et al.'s Gauss model in its paper dimension, d = 10, with a
// covariance from RaisaCovariance (seed 0: eigenvalues 0.13 … 4.0, the
// best-conditioned of seeds 0–19, so that a short leapfrog mixes), n = 200
// records; DP-HMC and DP-penalty with noise on and nothing clipped keep
// the posterior, all 10 means, variances and 45 covariances within 4.5 SE.
func TestSlowRaisaGauss10(t *testing.T) {
	cov, err := raisaCovariance(10, 0.5, 0)
	if err != nil {
		t.Fatal(err)
	}
	g := mustGauss(t, nil, 100, cov)
	theta := make([]float64, 10)
	theta[1] = 3
	d, err := syntheticGauss(200, theta, cov, 1)
	if err != nil {
		t.Fatal(err)
	}
	mean, pcov, err := g.Posterior(d)
	if err != nil {
		t.Fatal(err)
	}
	half := make([]float64, len(pcov))
	for i, c := range pcov {
		half[i] = c / 2
	}
	alts := map[string][2][]float64{"tempered π²": {mean, half}}
	for _, s := range []Sampler{
		&DPHMC{Iters: 15, Step: 0.015, LeapfrogSteps: 15, ClipLLR: 40, ClipGrad: 40, TauL: 0.02, TauG: 0.02},
		&DPPenalty{Iters: 500, ProposalSD: []float64{0.025}, ClipLLR: 40, Tau: 0.02},
	} {
		start, final, info := runFromPosterior(t, s, g, d, posteriorDraw(mean, pcov), 20000, 6)
		if info.ClippedGrads != 0 || info.ClippedLLRs != 0 {
			t.Errorf("%s: %d gradients and %d ratios clipped", s.Name(), info.ClippedGrads, info.ClippedLLRs)
		}
		t.Logf("%s: acceptance rate %.3f", s.Name(), info.AcceptanceRate())
		checkStationary(t, s.Name(), start, final, mean, pcov, alts)
	}
}
