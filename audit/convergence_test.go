package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"gonum.org/v1/gonum/stat/distuv"
)

// handTV is ½∫|p − q| for two 1-D Gaussians by the composite Simpson rule
// on 400,001 points over ±14 of the larger standard deviation: an
// evaluation independent of closedform's (which solves for the crossing
// points and uses erfc). The kinks of |p − q| at the crossings cost
// O(h²·max|p′ − q′|) < 1e-8 with h = 7e-5; the tails beyond 14 sd are
// below 1e-40.
func handTV(m1, s1, m2, s2 float64) float64 {
	c := 0.5 * (m1 + m2)
	w := 14*math.Max(s1, s2) + math.Abs(m1-m2)
	const n = 400000
	h := 2 * w / n
	p, q := distuv.Normal{Mu: m1, Sigma: s1}, distuv.Normal{Mu: m2, Sigma: s2}
	var sum float64
	for i := 0; i <= n; i++ {
		x := c - w + float64(i)*h
		f := math.Abs(p.Prob(x) - q.Prob(x))
		switch {
		case i == 0 || i == n:
			sum += f
		case i%2 == 1:
			sum += 4 * f
		default:
			sum += 2 * f
		}
	}
	return 0.5 * sum * h / 3
}

// TestConvergenceLowerBoundHandCase derives Prop. 3.3's bound for ULA on
// a one-dimensional Gaussian-mean model by hand and checks that the audit
// carries it per release point, into the report and its JSON.
//
// Model: x ~ N(θ, 1), θ ~ N(0, 2²). D = {0.2, −0.1, 0.4, 0}, D′ replaces
// the first record by 3. Posterior precision p = 1/4 + 4 = 4.25, means
// m = Σx/p: 0.5/4.25 on D, 3.3/4.25 on D′, equal variances, so the
// posterior pair is exactly μ-GDP with μ = 2.8/√4.25 (Dong, Roth & Su,
// Cor. 2.13): δ′(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ). ULA with γ = 0.01
// from θ₀ = 0: its law after k steps is Gaussian, mean and variance by the
// recursion mean ← mean + γp(m − mean), var ← (1 − γp)²var + 2γ, iterated
// here step by step. β = max over D, D′ of the TV to the posterior
// (handTV), and the bound is the root of δ′(ε) − (1 + e^ε)β = δ, found by
// bisection. After 2 steps the chain is far from the posterior and the
// proposition proves nothing ("—"); after 400 it proves ε ≈ 3.
func TestConvergenceLowerBoundHandCase(t *testing.T) {
	g, err := mechanisms.NewGauss([]float64{0}, 2, []float64{1})
	if err != nil {
		t.Fatal(err)
	}
	rec := func(x float64) dataset.Record { return dataset.Record{X: []float64{x}} }
	d := &dataset.Dataset{Name: "D", Records: []dataset.Record{rec(0.2), rec(-0.1), rec(0.4), rec(0)}}
	pair, err := dataset.Neighbour(d, dataset.ReplaceOne, 0, rec(3))
	if err != nil {
		t.Fatal(err)
	}
	const gamma, delta = 0.01, 1e-5
	ch := &mechanisms.Chain{Model: g, Sampler: &mechanisms.ULA{Gamma: gamma, Iters: 400}, Init: mechanisms.Init{Theta: []float64{0}},
		Release: mechanisms.ReleaseSpec{Mode: mechanisms.ReleaseSnapshots, At: []int{2, 400}}}

	p := 4.25
	sd := 1 / math.Sqrt(p)
	mu := 2.8 / math.Sqrt(p)
	beta := func(k int) float64 {
		b := 0.0
		for _, m := range []float64{0.5 / p, 3.3 / p} {
			mean, v := 0.0, 0.0
			for range k {
				mean += gamma * p * (m - mean)
				v = (1-gamma*p)*(1-gamma*p)*v + 2*gamma
			}
			b = math.Max(b, handTV(mean, math.Sqrt(v), m, sd))
		}
		return b
	}
	phi := distuv.UnitNormal.CDF
	h := func(e, b float64) float64 {
		return phi(mu/2-e/mu) - math.Exp(e)*phi(-mu/2-e/mu) - (1+math.Exp(e))*b - delta
	}
	b2, b400 := beta(2), beta(400)
	if h(0, b2) > 0 {
		t.Fatalf("hand case: after 2 steps β = %g should prove nothing", b2)
	}
	lo, hi := 0.0, 20.0
	for range 200 {
		if m := (lo + hi) / 2; h(m, b400) > 0 {
			lo = m
		} else {
			hi = m
		}
	}
	want := lo
	t.Logf("μ = %.6g; β after 2 steps %.6g, after 400 %.6g; Prop. 3.3 ε = %.8g", mu, b2, b400, want)

	r, err := Run(context.Background(), Target{Name: "conv", Mechanism: ch, Pair: pair}, Options{Trials: 200, Seed: 3, Delta: delta}, Execution{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !r.HasConvergenceBound() {
		t.Fatal("no convergence bound in the report")
	}
	c0, c1 := r.Points[0].Convergence, r.Points[1].Convergence
	if c0.Epsilon != nil || !strings.Contains(c0.Reason, "proves nothing") {
		t.Errorf("after 2 steps: %+v, want no ε and a reason", c0)
	}
	if c1.Epsilon == nil {
		t.Fatalf("after 400 steps: %+v, want ε ≈ %g", c1, want)
	}
	// β agrees with the Simpson value to 1e-7; dε/dβ is of order 10 here.
	if got := float64(*c1.Epsilon); math.Abs(got-want) > 1e-5 || math.Abs(math.Max(c1.BetaD, c1.BetaDPrime)-b400) > 1e-7 {
		t.Errorf("after 400 steps: ε %.10g β %g/%g, want ε %.10g β %g", got, c1.BetaD, c1.BetaDPrime, want, b400)
	}
	if !(want > 2 && want < 4) {
		t.Errorf("hand case drifted: ε = %g", want)
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Points []struct {
			Conv *struct {
				Source  string   `json:"source"`
				Epsilon *float64 `json:"epsilon"`
				Reason  string   `json:"reason"`
			} `json:"convergence_lb"`
		} `json:"points"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if c := doc.Points[1].Conv; c == nil || c.Epsilon == nil || *c.Epsilon != float64(*c1.Epsilon) || !strings.Contains(c.Source, "Prop. 3.3") ||
		doc.Points[0].Conv == nil || doc.Points[0].Conv.Epsilon != nil {
		t.Errorf("JSON convergence_lb: %s", buf.String())
	}
	// The design carries it to an analysis without the mechanism.
	b, err := json.Marshal(r0Design(t, ch, pair))
	if err != nil {
		t.Fatal(err)
	}
	var back Design
	if err := json.Unmarshal(b, &back); err != nil || len(back.Convergence) != 2 || back.Convergence[1].Epsilon == nil ||
		*back.Convergence[1].Epsilon != *c1.Epsilon {
		t.Errorf("design round trip: %v %+v", err, back.Convergence)
	}
}

func r0Design(t *testing.T, ch mechanisms.Mechanism, pair dataset.Pair) Design {
	a, err := New(Target{Name: "conv", Mechanism: ch, Pair: pair}, Options{Trials: 200, Seed: 3, Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	return a.Design()
}

// A sampler whose law is not known in closed form gets no column at all.
func TestConvergenceLowerBoundAbsent(t *testing.T) {
	g, _ := mechanisms.NewGauss([]float64{0}, 2, []float64{1})
	d := &dataset.Dataset{Name: "D", Records: []dataset.Record{{X: []float64{0.2}}, {X: []float64{0.1}}}}
	pair, _ := dataset.Neighbour(d, dataset.ReplaceOne, 0, dataset.Record{X: []float64{3}})
	ch := &mechanisms.Chain{Model: g, Sampler: &mechanisms.ULA{Gamma: 0.01, Iters: 50, Radius: 5}, Init: mechanisms.Init{Theta: []float64{0}},
		Release: mechanisms.ReleaseSpec{Mode: mechanisms.ReleaseFinal}}
	if got := ConvergenceLowerBounds(ch, pair, []mechanisms.ReleasePoint{{Iteration: 50}}, 1e-5); got != nil {
		t.Errorf("projected ULA: %+v, want none", got)
	}
}
