package mechanisms

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// SGLD's path statistic, accumulated inside the sampler's loop, equals the
// same statistic recomputed from the saved path: a run with the path
// threat model releasing Λ_t after every step, and a run of the same
// chain with the same random stream releasing its state after every step
// (release mode trajectory, every 1), from whose canary coordinate the
// increments y_t are read and Λ_t = Σ ln p_D(y_s) − ln p_D′(y_s) is
// recomputed here with the densities written out directly (a Gaussian,
// the Bernoulli or the binomial mixture; docs/derivations/path.md). Every
// Λ_t of both sides must agree to 1e-12 of the sum of the terms' sizes
// (the scale of Λ's rounding). Each loop of SGLD that computes the
// statistic is covered: the general one (a linear regression beside the
// canary, whose ordinary records are clipped too) and the affine ones
// (the canary among inert records: fixed-size batches, and Poisson
// batches drawing the canary alone), with a constant and a decaying step.
func TestSGLDPathRecomputedFromSavedPath(t *testing.T) {
	for _, tc := range []struct {
		name   string
		linreg bool
		n, b   int
		scheme IndexScheme
		gamma  float64
		clip   float64
		iters  int
	}{
		{"full batch, linreg", true, 10, 10, WithoutReplacement, 0, 1, 12},
		{"full batch, inert, decaying step", false, 10, 10, WithoutReplacement, 0.55, 1, 12},
		{"uniform subsets, inert", false, 10, 3, WithoutReplacement, 0, 0.5, 40},
		{"poisson, linreg", true, 12, 3, Poisson, 0, 0.5, 40},
		{"poisson, inert", false, 200, 8, Poisson, 0, 0.2, 300},
		{"poisson, inert, decaying step", false, 200, 8, Poisson, 0.55, 0.2, 300},
		{"with replacement, inert", false, 6, 3, WithReplacement, 0.55, 0.3, 60},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var inner Model = Inert{}
			if tc.linreg {
				inner = NewLinReg1D(0.5, 1)
			}
			m, err := NewGradientCanary(inner, 0)
			if err != nil {
				t.Fatal(err)
			}
			pair := pathPair(t, tc.linreg, tc.n)
			spec, err := PathSpecOf(m, pair)
			if err != nil {
				t.Fatal(err)
			}
			s := &SGLD{Step: StepSchedule{Eta: 0.04, B: 20, Gamma: tc.gamma}, Batch: tc.b, Scheme: tc.scheme, Iters: tc.iters, Clip: tc.clip}
			traj := ReleaseSpec{Mode: ReleaseTrajectory, Every: 1}
			plain := &Chain{Model: m, Sampler: s, Release: traj}
			path := &Chain{Model: m, Sampler: s, Release: traj, Path: spec}
			for side, d := range []*dataset.Dataset{pair.D, pair.DPrime} {
				if err := path.Check(d); err != nil {
					t.Fatal(err)
				}
				for k := 0; k < 3; k++ {
					states := chainReleases(t, plain, d, dataset.Side(side), k)
					lams := chainReleases(t, path, d, dataset.Side(side), k)
					checkRecomputed(t, s, spec, m, states, lams, fmt.Sprintf("side %d, run %d", side, k))
				}
			}
		})
	}
}

// pathPair returns n records (each the canary sign 0 after the ordinary
// features: x = ±0.5, y = 1 for the linear regression, none for inert
// records) with record 0 the canary of sign −1 in D and +1 in D′.
func pathPair(t *testing.T, linreg bool, n int) dataset.Pair {
	t.Helper()
	d := &dataset.Dataset{Name: "D"}
	for i := 0; i < n; i++ {
		r := dataset.Record{X: []float64{0}}
		if linreg {
			r = dataset.Record{X: []float64{0.5 - float64(i%2), 0}, Y: 1}
		}
		d.Records = append(d.Records, r)
	}
	canary := func(s float64) dataset.Record {
		x := make([]float64, len(d.Records[0].X))
		x[len(x)-1] = s
		return dataset.Record{X: x}
	}
	d.Records[0] = canary(-1)
	p, err := dataset.Neighbour(d, dataset.ReplaceOne, 0, canary(1))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// chainReleases runs trial k of the chain on side's dataset and returns
// every release, copied.
func chainReleases(t *testing.T, c *Chain, d *dataset.Dataset, side dataset.Side, k int) [][]float64 {
	t.Helper()
	var out [][]float64
	_, err := c.Run(context.Background(), Trial{Index: k, Side: side, RNG: TrialRNG(7, side, k, 0)}, d, func(_ int, th []float64) error {
		out = append(out, append([]float64(nil), th...))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkRecomputed recomputes Λ_t from the canary coordinate of the saved
// states and compares it with the released Λ_t.
func checkRecomputed(t *testing.T, s *SGLD, spec *PathSpec, m Model, states, lams [][]float64, what string) {
	t.Helper()
	if len(states) != s.Iters || len(lams) != s.Iters {
		t.Fatalf("%s: %d states and %d path releases for %d iterations", what, len(states), len(lams), s.Iters)
	}
	g := CanaryOf(m)
	c := g.Coord()
	mag := math.Min(g.Slope(), s.Clip)
	prev := 0.0 // θ_c starts at 0
	var lam, scale float64
	moved := 0
	for i := range states {
		y := states[i][c] - prev
		prev = states[i][c]
		eta := s.Step.At(i)
		sd := math.Sqrt(eta)
		var lh [2]float64
		for h := range lh {
			nh := float64(spec.N[h])
			a := eta / 2 * nh / float64(s.Batch) * spec.Sign[h] * mag
			lh[h] = math.Log(directDensity(s, y, a, sd, nh))
		}
		term := lh[0] - lh[1]
		lam += term
		scale += math.Abs(term)
		if term != 0 {
			moved++
		}
		got := lams[i][0]
		if math.Abs(got-lam) > 1e-12*math.Max(scale, math.Abs(lam)) {
			t.Fatalf("%s, step %d: released Λ %.17g, recomputed from the path %.17g (scale %g)", what, i+1, got, lam, scale)
		}
	}
	if moved == 0 || lam == 0 {
		t.Fatalf("%s: every term is 0 (Λ = %g): nothing was compared", what, lam)
	}
}

// directDensity returns the density of the increment y (up to the factor
// 1/(sd·sqrt(2π)), common to both hypotheses) when the canary adds a each
// time it is in the minibatch: once for a full batch; with probability
// q = b/n (Poisson, uniform subsets); k ~ Bin(b, 1/n) times with
// replacement.
func directDensity(s *SGLD, y, a, sd, n float64) float64 {
	phi := func(mean float64) float64 { return math.Exp(-(y - mean) * (y - mean) / (2 * sd * sd)) }
	b := s.Batch
	if s.Scheme == WithReplacement {
		p := 1 / n
		var sum float64
		for k := 0; k <= b; k++ {
			binom := math.Exp(lgammaOf(b+1) - lgammaOf(k+1) - lgammaOf(b-k+1))
			sum += binom * math.Pow(p, float64(k)) * math.Pow(1-p, float64(b-k)) * phi(float64(k)*a)
		}
		return sum
	}
	q := math.Min(1, float64(b)/n)
	return (1-q)*phi(0) + q*phi(a)
}

func lgammaOf(k int) float64 {
	v, _ := math.Lgamma(float64(k))
	return v
}
