package scenario

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// pathBase is a small full-batch DP-SGLD path scenario.
const pathBase = `name: path
seed: 3
model: {linreg: {dim: 1, alpha: 1, beta: 1}}
data: {synthetic_linreg: {n: 8, theta_star: [0.5], seed: 1}}
neighbour: {adjacency: replace-one, index: 2, gradient_canary: {}}
threat: path
sampler: {sgld: {step: {eta: 0.25}, batch: 8, scheme: without-replacement, iterations: 3, clip: 0.5}}
init: {theta: [0]}
release: {mode: final}
audit: {trials: 400, split: {train: 0.5, eval: 0.5}, delta: 1.0e-5, confidence: 0.95}
claim: {theorems: true}
`

// Bad uses of the path threat model and of gradient canaries are one-line
// errors naming the field.
func TestPathThreatRefusals(t *testing.T) {
	for _, c := range []struct{ name, from, to, want string }{
		{"unknown threat", "threat: path", "threat: paths", "threat: must be releases or path"},
		{"no gradient canary", "neighbour: {adjacency: replace-one, index: 2, gradient_canary: {}}", "neighbour: {adjacency: replace-one, index: 2, record: {x: [3], y: 1}}", "threat: path needs a gradient canary"},
		{"record beside it", "gradient_canary: {}}", "gradient_canary: {}, record: {x: [3], y: 1}}", "neighbour.record: not used with a gradient canary"},
		{"remove-one", "adjacency: replace-one", "adjacency: remove-one", "neighbour.adjacency: a gradient canary replaces a record"},
		{"ula", "sampler: {sgld: {step: {eta: 0.25}, batch: 8, scheme: without-replacement, iterations: 3, clip: 0.5}}", "sampler: {ula: {gamma: 0.01, iterations: 3}}", "threat: path is built for sampler sgld, dp_hmc, dp_penalty or dp_barker"},
		{"feature", "confidence: 0.95}", "confidence: 0.95, features: [loglik]}", "audit.features: under threat: path every release is one value"},
		{"bad slope", "gradient_canary: {}", "gradient_canary: {slope: -1}", "neighbour.gradient_canary.slope: must be finite and > 0"},
		{"unclipped sgld", "clip: 0.5", "clip: 0", "clip: under the path threat model SGLD must clip"},
		{"cyclic batches", "batch: 8, scheme: without-replacement", "batch: 2, scheme: cyclic", "scheme: under the path threat model, scheme cyclic ties"},
	} {
		y := strings.Replace(pathBase, c.from, c.to, 1)
		if y == pathBase {
			t.Fatalf("%s: %q not in the base", c.name, c.from)
		}
		cfg, err := ParseConfig([]byte(y))
		if err == nil {
			var p *Plan
			if p, err = Build(cfg); err == nil {
				p.Close()
			}
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.name, err, c.want)
		}
	}
	inert := strings.Replace(strings.Replace(pathBase, "linreg: {dim: 1, alpha: 1, beta: 1}", "inert: {}", 1),
		"neighbour: {adjacency: replace-one, index: 2, gradient_canary: {}}", "neighbour: {adjacency: replace-one, index: 2, record: {x: []}}", 1)
	inert = strings.Replace(strings.Replace(inert, "synthetic_linreg: {n: 8, theta_star: [0.5], seed: 1}", "inert: {n: 8}", 1), "threat: path\n", "", 1)
	if cfg, err := ParseConfig([]byte(inert)); err != nil {
		t.Fatal(err)
	} else if _, err := Build(cfg); err == nil || !strings.Contains(err.Error(), "model.inert: only with neighbour.gradient_canary") {
		t.Errorf("inert model without a gradient canary: %v", err)
	}
}

// The pair of a replace-one gradient canary: record index is the canary of
// sign −1 in D and +1 in D′, every other record keeps its features with a
// sign 0; θ_c is appended to a starting point that omits it; the chain
// releases one value, Λ, whose law differs between D and D′ as the exact
// μ of the path says: Λ ~ N(±μ²/2, μ²).
func TestGradientCanaryPairAndPathRelease(t *testing.T) {
	cfg, err := ParseConfig([]byte(pathBase))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	d, dp := p.Pair.D, p.Pair.DPrime
	for i := range d.Records {
		sd, sdp := d.Records[i].X[1], dp.Records[i].X[1]
		switch {
		case i == 2 && (sd != -1 || sdp != 1 || d.Records[i].X[0] != 0):
			t.Errorf("record 2: D %v, D′ %v; want the canary x = [0, -1] and [0, 1]", d.Records[i].X, dp.Records[i].X)
		case i != 2 && (sd != 0 || sdp != 0 || d.Records[i].X[0] != dp.Records[i].X[0]):
			t.Errorf("record %d: D %v, D′ %v; want the same features and sign 0", i, d.Records[i].X, dp.Records[i].X)
		}
	}
	ch := p.Mechanism.(*mechanisms.Chain)
	if ch.Dim() != 1 || len(ch.Init.Theta) != 2 || ch.Init.Theta[1] != 0 || len(cfg.Init.Theta) != 1 {
		t.Fatalf("chain dim %d, start %v (config's %v)", ch.Dim(), ch.Init.Theta, cfg.Init.Theta)
	}
	// Per step the canary's drift differs by (η/2)·2C = 0.125 against a
	// noise sd of 0.5: μ² = 3·(0.125/0.5)² = 0.1875.
	mu, ok := ch.PathMu(d, 3)
	if !ok || math.Abs(mu*mu-0.1875) > 1e-15 {
		t.Fatalf("PathMu = %v, %v; want sqrt(0.1875)", mu, ok)
	}
	const n = 20000
	for _, side := range []dataset.Side{dataset.SideD, dataset.SideDPrime} {
		ds := d
		if side == dataset.SideDPrime {
			ds = dp
		}
		var s, s2 float64
		for i := 0; i < n; i++ {
			var lam float64
			if _, err := ch.Run(context.Background(), mechanisms.NewTrial(5, side, i), ds, func(_ int, v []float64) error { lam = v[0]; return nil }); err != nil {
				t.Fatal(err)
			}
			s += lam
			s2 += lam * lam
		}
		mean, v := s/n, s2/n-(s/n)*(s/n)
		want := mu * mu / 2
		if side == dataset.SideDPrime {
			want = -want
		}
		// 5 standard errors of the mean (sd μ) and of the variance (√2·μ²/√n).
		if math.Abs(mean-want) > 5*mu/math.Sqrt(n) || math.Abs(v-mu*mu) > 5*math.Sqrt2*mu*mu/math.Sqrt(n) {
			t.Errorf("%v: Λ mean %.5f (want %.5f), variance %.5f (want %.5f)", side, mean, want, v, mu*mu)
		}
	}
}
