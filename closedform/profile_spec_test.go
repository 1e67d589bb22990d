package closedform

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/stats"
)

// SpecGrid returns the ε at which a rebuilt profile is compared with the
// original: 0, a geometric grid from 1e-8 to 1e3, a linear grid on
// [0, 30], and every number of the spec (its scalar parameters, a quarter
// of them, where common forms jump) with its two neighbours. The grids are
// coarser for the accountants that minimise numerically at every ε
// (milliseconds per value).
func specGrid(s ProfileSpec) []float64 {
	ratio, n := 1.07, 3000
	if strings.HasPrefix(s.Kind, "estimator-") || s.Kind == "transfer" || s.Kind == "linreg-posterior" {
		ratio, n = 2, 30
	}
	eps := []float64{0, math.SmallestNonzeroFloat64, 800, 1e300}
	for x := 1e-8; x <= 1e3; x *= ratio {
		eps = append(eps, x)
	}
	for i := 0; i <= n; i++ {
		eps = append(eps, float64(i)*30/float64(n))
	}
	var walk func(ProfileSpec)
	walk = func(s ProfileSpec) {
		for _, v := range s.Params {
			for _, x := range []float64{float64(v), float64(v) / 4} {
				if x >= 0 && !math.IsInf(x, 0) {
					eps = append(eps, x, math.Nextafter(x, 0), math.Nextafter(x, math.Inf(1)))
				}
			}
		}
		for _, a := range s.Args {
			walk(a)
		}
	}
	walk(s)
	return eps
}

// sameProfileAsSpec checks that g carries a spec that survives a JSON round
// trip and rebuilds g.Profile bit for bit on specGrid.
func sameProfileAsSpec(t *testing.T, name string, g Guarantee) {
	t.Helper()
	if !g.Applies {
		t.Fatalf("%s: does not apply: %s", name, g.Reason)
	}
	if g.Spec == nil {
		t.Fatalf("%s (%s): no profile spec", name, g.Source)
	}
	b, err := json.Marshal(g.Spec)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var s ProfileSpec
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if b2, _ := json.Marshal(s); string(b2) != string(b) {
		t.Fatalf("%s: the spec's JSON changes on a round trip:\n%s\n%s", name, b, b2)
	}
	rebuilt, err := s.Profile()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for _, e := range specGrid(s) {
		if a, r := g.Profile(e), rebuilt(e); math.Float64bits(a) != math.Float64bits(r) {
			t.Fatalf("%s (%s): δ(%v) = %v, rebuilt from %s: %v", name, s.Kind, e, a, b, r)
		}
	}
}

// specKinds adds the kinds of a spec tree to seen.
func specKinds(s ProfileSpec, seen map[string]bool) {
	seen[s.Kind] = true
	for _, a := range s.Args {
		specKinds(a, seen)
	}
}

// specGuarantees builds a guarantee of every accountant of the package.
func specGuarantees(t *testing.T) map[string]Guarantee {
	t.Helper()
	out := map[string]Guarantee{}
	add := func(name string, g Guarantee, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = g
	}
	addAll := func(name string, gs []Guarantee, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i, g := range gs {
			if g.Applies {
				out[name+"/"+g.Source+"/"+g.Variant+"/"+string(rune('0'+i))] = g
			}
		}
	}
	for _, m := range []SGM{{Sampling: Poisson, Rate: 0.01, NoiseMultiplier: 1.1, Steps: 100},
		{Sampling: WithoutReplacement, Rate: 0.05, NoiseMultiplier: 1, Steps: 30}} {
		g, err := m.ReplaceOneTightest()
		add("sgm tightest "+m.Sampling.String(), g, err)
		g, err = m.AddRemovePLD()
		add("sgm add/remove PLD "+m.Sampling.String(), g, err)
		g, err = m.AddRemoveTightest()
		add("sgm add/remove tightest "+m.Sampling.String(), g, err)
	}
	for _, c := range []DPSGLD{{N: 10, Sampling: WithoutReplacement, BatchSize: 10, Clip: 1, Drift: 0.28125, NoiseVar: 0.5625, Steps: 4},
		{N: 1438, Sampling: Poisson, Rate: 32.0 / 1438, Clip: 0.2, Drift: 0.005, NoiseVar: 0.01, Steps: 45}} {
		gs, err := c.AddRemoveGuarantees()
		addAll(fmt.Sprintf("dp-sgld add/remove %v b=%d", c.Sampling, c.BatchSize), gs, err)
	}
	m := SGM{Sampling: Poisson, Rate: 0.02, NoiseMultiplier: 0.9, Steps: 20}
	g, err := m.AddRemove()
	add("sgm add/remove RDP", g, err)
	m.Steps = 0
	g, err = m.ReplaceOne()
	add("sgm zero steps", g, err)
	gs, err := BarkerFull{LLRBound: 0.1, C: 1, Iterations: 100}.Guarantees()
	addAll("barker full", gs, err)
	gs, err = BarkerFull{LLRBound: 0.1, C: 1, Iterations: 0}.Guarantees()
	addAll("barker full, T = 0", gs, err)
	gs, err = BarkerSubsampled{N: 100000, BatchSize: 1000, Iterations: 10, C: 2, LLRBound: 0.3, N0: 100}.Guarantees()
	addAll("barker subsampled", gs, err)
	gs, err = RaisaPenalty{TauL: 3, Iterations: 10}.Guarantees()
	addAll("raisa penalty", gs, err)
	p := NoisySGDParams{Eta: 0.1, Sigma: 2, N: 4, Lipschitz: math.Inf(1), GradDiff: 1, Smoothness: 2, StrongConvexity: 1}
	thm5, err := BalleThm5(p, 0)
	add("balle thm 5", thm5, err)
	g, err = BalleThm5Shuffled(p, []float64{0.1, 0.2, 0.3, 0.15, 0.25})
	add("balle thm 5 shuffled", g, err)
	g, err = BalleCor7Chain(OUChain{A: 0.5, NoiseVar: 0.02, Steps: 5, MeanShift: 0.09})
	add("balle cor 7", g, err)
	for _, gamma := range []float64{0, 0.3, 1} {
		g, err = AmplifyDobrushin(thm5, gamma)
		add("dobrushin "+string(rune('0'+int(10*gamma))), g, err)
		g, err = AmplifyUltraMixing(thm5, gamma)
		add("ultra-mixing "+string(rune('0'+int(10*gamma))), g, err)
	}
	for _, v := range []Variant{Printed, Conservative} {
		gs, err = ULAGuarantees(ULAParams{Gamma: 0.1, N: 100, GradBound: 1, Lipschitz: 1, Convexity: 1}, v)
		addAll("ula "+string(v), gs, err)
		gs, err = SGLDGuarantees(SGLDParams{Gamma: 0.05, N: 40, Beta: 2, BatchSize: 3, DatasetSize: 30,
			GradBound: 1, ConstantGrad: true, Lipschitz: 2, Convexity: 1}, v)
		addAll("sgld "+string(v), gs, err)
	}
	g, err = Posterior4B(0.5)
	add("posterior 4B", g, err)
	for _, v := range []LemmaA1Variant{A1Conservative, A1Printed} {
		out["linreg posterior "+v.String()] = LinRegDomain{N: 17864389, Alpha: 2, Beta: 1, Gamma1: 0.1, XH: 1.8, XL: 0.9, C: 0.01}.PosteriorGuarantee(v)
	}
	for i, c := range []struct{ dm, c1, c2 []float64 }{
		{[]float64{0.3}, []float64{1}, []float64{1}},
		{[]float64{0.3}, []float64{1}, []float64{1.2}},
		{[]float64{0.3, -0.1}, []float64{1, 0.2, 0.2, 1}, []float64{1.1, 0.1, 0.1, 0.9}},
	} {
		pair, err := NewGaussianPairProfile(c.dm, c.c1, c.c2)
		if err != nil {
			t.Fatal(err)
		}
		for _, beta := range []float64{0, 1e-4} {
			g := TransferGuarantee("state", pair.Upper, beta, nil, "")
			s := TransferSpec(beta, *pair.Spec)
			g.Spec = &s
			out["transfer "+string(rune('0'+i))+" "+s.Kind+string(rune('0'+int(beta*1e4)))] = g
		}
	}
	// The DP Barker path's pair (mechanisms.DPBarker.PathStepPair) at the
	// constants of testdata/tight/dp-barker-path.yaml, over 20 steps.
	bp := GaussMix2{W: 0.1, V0: 2, M1: -0.707106781186548, V1: 1.995}
	bq := GaussMix2{W: 0.1, V0: 2, M1: 0.707106781186548, V1: 1.995}
	g, err = MixturePathGuarantee(bp, bq, 20)
	add("mixture path", g, err)
	for _, e := range []EstimatorPair{{MeanD: 0.42, VarD: 0.0016, MeanDPrime: 0.49, VarDPrime: 0.002, PiD: 0.41, PiDPrime: 0.5,
		Noise: EstimatorNoise{Gaussian: 0.2}}, {VarD: 0.01, VarDPrime: 0.01, Noise: EstimatorNoise{Laplace: 0.5}}} {
		s37, s310 := e.Prop37Spec(), e.Prop310Spec()
		out["prop 3.7 "+e.Noise.String()] = Guarantee{Applies: true, Spec: &s37,
			Profile: func(eps float64) float64 { d, _ := e.Prop37(eps); return d }}
		out["prop 3.10 "+e.Noise.String()] = Guarantee{Applies: true, Spec: &s310,
			Profile: func(eps float64) float64 { d, _ := e.Prop310(eps); return d }}
	}
	return out
}

// Every guarantee built here carries a spec that rebuilds its profile bit
// for bit after a JSON round trip, and every registered kind is among them.
func TestProfileSpecRebuildsGuarantees(t *testing.T) {
	seen := map[string]bool{}
	gs := specGuarantees(t)
	names := make([]string, 0, len(gs))
	for n := range gs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		sameProfileAsSpec(t, n, gs[n])
		specKinds(*gs[n].Spec, seen)
	}
	for _, k := range ProfileKinds() {
		if !seen[k] {
			t.Errorf("profile kind %q: no guarantee of the test uses it", k)
		}
	}
}

// A spec that does not describe a profile is refused with an error naming
// what is wrong.
func TestProfileSpecErrors(t *testing.T) {
	inf := stats.JSONFloat(math.Inf(1))
	for _, c := range []struct {
		spec ProfileSpec
		want string
	}{
		{ProfileSpec{Kind: "nope"}, "profile kind: must be one of"},
		{ProfileSpec{Kind: "gdp"}, `"mu" is missing`},
		{ProfileSpec{Kind: "gdp", Params: map[string]stats.JSONFloat{"mu": 1, "x": 2}}, "must hold exactly mu"},
		{ProfileSpec{Kind: "gdp", Params: map[string]stats.JSONFloat{"mu": 1}, Args: []ProfileSpec{GDPSpec(1)}}, "args: must hold 0"},
		{ProfileSpec{Kind: "min"}, "args: must hold at least 1"},
		{MinSpec(ProfileSpec{Kind: "pure"}), `args[0]: profile pure: params`},
		{ProfileSpec{Kind: "rdp-table"}.withVector("orders", []float64{2, 3}).withVector("eps", []float64{1}), "one value each per order"},
		{ProfileSpec{Kind: "rdp-table"}.withVector("orders", []float64{1.5}).withVector("eps", []float64{1}), "orders[0] must be an integer"},
		{newSpec("rdp-linear", "rho", float64(inf)), "rho must be finite"},
		{newSpec("sgm-pld", "sampling", 3, "adjacency", 1, "rate", 0.1, "noise_multiplier", 1, "steps", 10), "sampling must be an integer in [1, 2]"},
		{newSpec("sgm-pld", "sampling", 1, "adjacency", 1, "rate", 2, "noise_multiplier", 1, "steps", 10), "Rate: must be in (0, 1]"},
		{newSpec("dobrushin", "gamma", 2), "args: must hold 1"},
		{ProfileSpec{Kind: "gaussian-pair"}.withVector("dm", []float64{1}).withVector("cov1", []float64{1, 2}).withVector("cov2", []float64{1}), "cov: must hold"},
		{EstimatorPair{}.Prop37Spec(), "laplace or gaussian must be > 0"},
	} {
		_, err := c.spec.Profile()
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: error %v, want one line with %q", c.spec, err, c.want)
		}
	}
	deep := GDPSpec(1)
	for i := 0; i <= maxProfileDepth+1; i++ {
		deep = MinSpec(deep)
	}
	if _, err := deep.Profile(); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("deep spec: %v", err)
	}
}
