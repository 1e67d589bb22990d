package mechanisms

import (
	"fmt"
	"math"
	"sort"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"

	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
)

// Log-likelihood and gradient of eq. 25 against mpmath (30 digits): the
// log of ½N(x; θ₁, 2) + ½N(x; θ₁+θ₂, 2) evaluated directly, and its
// partial derivatives by mpmath.diff (testdata/barker_refs.py, section
// mixture). The third and fourth points are far in a component's tail,
// where a naive sum of densities would lose the other component.
func TestMixtureLogLikReference(t *testing.T) {
	m := heikkilaMixture()
	cases := []struct {
		t1, t2, x      float64
		ll, g1, g2     float64
		relLL, absGrad float64
	}{
		{0, 1, 0.3, -1.336762643971019812, -0.087510406260530011809, -0.16625728438237100702, 1e-15, 1e-15},
		{-0.7, 2.5, 1.9, -1.7914322258614399444, 0.24513112180682172007, 0.042194755127727072318, 1e-15, 1e-15},
		{3, -4, -20, -92.208659304044590705, -9.5000000000000000011, -9.4999999999999999945, 1e-15, 1e-13},
		{0.5, 0.5, 40, -382.20860454277541528, 19.500013689942451124, 19.498932184488812354, 1e-15, 1e-13},
	}
	grad := make([]float64, 2)
	for _, c := range cases {
		th := []float64{c.t1, c.t2}
		r := dataset.Record{X: []float64{c.x}}
		if got := m.LogLik(th, r); math.Abs(got-c.ll) > c.relLL*math.Abs(c.ll) {
			t.Errorf("LogLik(%v, %g) = %.17g, want %.17g", th, c.x, got, c.ll)
		}
		m.GradLogLik(th, r, grad)
		if math.Abs(grad[0]-c.g1) > c.absGrad || math.Abs(grad[1]-c.g2) > c.absGrad {
			t.Errorf("GradLogLik(%v, %g) = %v, want [%.17g %.17g]", th, c.x, grad, c.g1, c.g2)
		}
	}
}

// Gradients against central finite differences, (f(θ+h) − f(θ−h))/(2h)
// with h = 1e-5: truncation error h²·f‴/6 ≲ 1e-9 here, rounding ≈
// 1e-16·|f|/h ≲ 1e-9; tolerance 1e-7 (relative to 1 + |g|).
func TestMixtureGradFiniteDifferences(t *testing.T) {
	m := heikkilaMixture()
	rng := TrialRNG(3, dataset.SideD, 0, 0)
	const h = 1e-5
	grad := make([]float64, 2)
	for k := 0; k < 200; k++ {
		th := []float64{3 * rng.NormFloat64(), 2 * rng.NormFloat64()}
		r := dataset.Record{X: []float64{4 * rng.NormFloat64()}}
		m.GradLogLik(th, r, grad)
		gp := make([]float64, 2)
		m.GradLogPrior(th, gp)
		for j := 0; j < 2; j++ {
			tp := append([]float64(nil), th...)
			tm := append([]float64(nil), th...)
			tp[j] += h
			tm[j] -= h
			fd := (m.LogLik(tp, r) - m.LogLik(tm, r)) / (2 * h)
			if math.Abs(fd-grad[j]) > 1e-7*(1+math.Abs(grad[j])) {
				t.Fatalf("∂LogLik/∂θ%d at %v, x = %g: %.10g, finite differences %.10g", j+1, th, r.X[0], grad[j], fd)
			}
			fdp := (m.LogPrior(tp) - m.LogPrior(tm)) / (2 * h)
			if math.Abs(fdp-gp[j]) > 1e-7*(1+math.Abs(gp[j])) {
				t.Fatalf("∂LogPrior/∂θ%d at %v: %.10g, finite differences %.10g", j+1, th, gp[j], fdp)
			}
		}
	}
	// The log-likelihood is a normalised density in x: ∫ p(x|θ) dx = 1
	// (midpoint sum on [−30, 30], error far below 1e-9).
	var s float64
	for x := -30.0 + 0.0005; x < 30; x += 0.001 {
		s += math.Exp(m.LogLik([]float64{0.4, -1.3}, dataset.Record{X: []float64{x}})) * 0.001
	}
	if math.Abs(s-1) > 1e-9 {
		t.Errorf("∫ p(x|θ) dx = %.12g", s)
	}
}

// The generator draws from eq. 25 at the paper's θ = (0, 1): mean
// θ₁ + θ₂/2 = 0.5, variance σ_x² + θ₂²/4 = 2.25 and P(x ≤ 0) =
// ½Φ(0) + ½Φ(−1/√2) = 0.36987... (the bimodal CDF), each within 4.5 SE of
// n = 200,000 draws. Power: a generator using only the first component
// has mean 0, 350 SE away.
func TestSyntheticMixture(t *testing.T) {
	m := heikkilaMixture()
	const n = 200000
	d, err := syntheticMixture(n, heikkilaTheta(), m, 7)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Validate(m.DataDim()); err != nil {
		t.Fatal(err)
	}
	xs := make([]float64, n)
	below := 0
	for i, r := range d.Records {
		xs[i] = r.X[0]
		if xs[i] <= 0 {
			below++
		}
	}
	gm, gv, sem, sev := testutil.SampleMoments(xs)
	checkMoment(t, "mixture data mean", gm, 0.5, sem)
	checkMoment(t, "mixture data variance", gv, 2.25, sev)
	p := 0.25 + 0.5*0.5*math.Erfc(1/(math.Sqrt2*math.Sqrt2))
	checkMoment(t, "P(x ≤ 0)", float64(below)/n, p, math.Sqrt(p*(1-p)/n))
	if 0.5/sem < 100 {
		t.Errorf("power: one-component generator only %.1f SE away", 0.5/sem)
	}
	again, _ := syntheticMixture(n, heikkilaTheta(), m, 7)
	other, _ := syntheticMixture(n, heikkilaTheta(), m, 8)
	for i := range d.Records {
		if again.Records[i].X[0] != d.Records[i].X[0] {
			t.Fatal("same seed, different data")
		}
	}
	if other.Records[0].X[0] == d.Records[0].X[0] {
		t.Error("different seeds give the same first record")
	}
}

// gridPosterior2D evaluates an unnormalised 2-D log density on the square
// grid [lo, hi]² with n points per side and returns the normalised cell
// weights and the posterior moments (means, variances, covariance) by the
// trapezoid-free rectangle rule, which for smooth densities that vanish at
// the border is spectrally accurate.
func gridPosterior2D(logp func(th []float64) float64, lo, hi float64, n int) (w []float64, mom [5]float64) {
	h := (hi - lo) / float64(n-1)
	w = make([]float64, n*n)
	mx := math.Inf(-1)
	th := make([]float64, 2)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			th[0], th[1] = lo+float64(i)*h, lo+float64(j)*h
			w[i*n+j] = logp(th)
			mx = math.Max(mx, w[i*n+j])
		}
	}
	var z, s1, s2, s11, s22, s12 float64
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			a, b := lo+float64(i)*h, lo+float64(j)*h
			e := math.Exp(w[i*n+j] - mx)
			w[i*n+j] = e
			z += e
			s1 += e * a
			s2 += e * b
			s11 += e * a * a
			s22 += e * b * b
			s12 += e * a * b
		}
	}
	for k := range w {
		w[k] /= z
	}
	m1, m2 := s1/z, s2/z
	return w, [5]float64{m1, m2, s11/z - m1*m1, s22/z - m2*m2, s12/z - m1*m2}
}

// DP-Barker (full data, C = 2) on the paper's mixture model with 20 records:
// the posterior is bimodal (modes near (0, 1) and (1, −1)) and has no closed
// form, so the reference is a brute-force grid evaluation on [−7, 7]²
// (281² points, step 0.05; mass outside < 1e-7). 10,000 chains start from
// exact draws of the grid posterior (a cell by its weight, then uniform
// within it, which adds h²/12 = 2e-4 to each variance, 0.05%, corrected
// below) and run 100 iterations; a π-invariant kernel keeps them at π, so
// the final states must match the grid moments within 4.5 SE (V_cor's
// error, < 0.5% in variance, is under 0.3 SE). Power: the likelihood-only
// target (prior left out) has Var(θ₂) = 3.8 instead of 1.2; a chain
// targeting it drifts away by far more than 10 SE within 100 iterations,
// which the test checks with the sampler run on a model without prior.
func TestBarkerMixturePosterior(t *testing.T) {
	testutil.Slow(t)
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	m := heikkilaMixture()
	d, err := syntheticMixture(20, heikkilaTheta(), m, 3)
	if err != nil {
		t.Fatal(err)
	}
	const (
		lo, hi, n = -7.0, 7.0, 281
		chains    = 10000
		iters     = 100
	)
	h := (hi - lo) / (n - 1)
	logPost := func(th []float64) float64 {
		v := m.LogPrior(th)
		for _, r := range d.Records {
			v += m.LogLik(th, r)
		}
		return v
	}
	w, ref := gridPosterior2D(logPost, lo, hi, n)
	cum := make([]float64, len(w))
	var acc float64
	for k, x := range w {
		acc += x
		cum[k] = acc
	}
	run := func(model Model) [][]float64 {
		s := &DPBarker{Step: 0.6, Iters: iters}
		if err := s.Check(model, d); err != nil {
			t.Fatal(err)
		}
		out := make([][]float64, chains)
		for k := range out {
			init := TrialRNG(9, dataset.SideD, k, 1)
			u := init.Float64() * acc
			cell := sort.SearchFloat64s(cum, u)
			th := []float64{lo + float64(cell/n)*h + (init.Float64()-0.5)*h, lo + float64(cell%n)*h + (init.Float64()-0.5)*h}
			if _, err := s.Run(model, d, th, TrialRNG(9, dataset.SideD, k, 0), []int{iters}, nil); err != nil {
				t.Fatal(err)
			}
			out[k] = th
		}
		return out
	}
	states := run(m)
	jitter := h * h / 12
	var sev [2]float64
	for i := 0; i < 2; i++ {
		gm, gv, sem, se := testutil.SampleMoments(column(states, i))
		checkMoment(t, fmt.Sprintf("mixture posterior mean[%d]", i), gm, ref[i], sem)
		checkMoment(t, fmt.Sprintf("mixture posterior var[%d]", i), gv, ref[2+i]+jitter, se)
		sev[i] = se
	}
	// Power: the same chains on the likelihood alone.
	flat := run(flatPrior{m})
	_, fv, _, _ := testutil.SampleMoments(column(flat, 1))
	t.Logf("grid posterior %v; without the prior, Var(θ₂) after %d iterations: %.4g (%.0f SE)", ref, iters, fv, math.Abs(fv-ref[3])/sev[1])
	if math.Abs(fv-ref[3]) < 10*sev[1] {
		t.Errorf("power: without the prior Var(θ₂) = %g, only %.1f SE from %g", fv, math.Abs(fv-ref[3])/sev[1], ref[3])
	}
}

// flatPrior drops a model's prior.
type flatPrior struct{ Model }

func (flatPrior) LogPrior([]float64) float64 { return 0 }
