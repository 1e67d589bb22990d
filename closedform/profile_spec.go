package closedform

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/internal/numeric"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// ProfileSpec is a privacy profile as data: the name of an accountant
// (Kind) and the numbers it is rebuilt from, so that a theorem's profile
// can be written to a file and read back. Profile rebuilds the function by
// the same arithmetic as the guarantee that carries the spec: the two agree
// bit for bit at every ε. Params holds the accountant's scalars by name,
// Vectors its lists by name, Args the profiles a composite kind combines.
// Non-finite numbers are written as the strings of stats.JSONFloat.
//
// The kinds (ProfileKinds lists them; params, vectors, arguments):
//
//	const          value                                  δ(ε) = value
//	gdp            mu                                     μ-GDP, stats.GDPDelta (Dong, Roth & Su 2019, Cor. 2.13)
//	pure           epsilon                                ε₀-DP, PureDPProfile
//	common-form    c                                      CommonFormProfile (Bertazzi et al. 2025, Lemma 4.1)
//	printed-form   c                                      PrintedFormProfile (Thms 5.7–5.8 as printed)
//	min, max       ≥ 1 argument                           pointwise minimum / maximum
//	rdp-table      vectors orders, eps                    stats.RDPTable.Profile(stats.Improved)
//	rdp-linear     rho                                    (α, αρ)-RDP converted over real orders (Heikkilä et al. 2019, Cor. 1)
//	rdp-mixture    rest; vectors weights, eps             Balle et al. 2019, Thm 5 over a random position (BalleThm5Shuffled)
//	gaussian-pair  vectors dm, cov1, cov2                 NewGaussianPairProfile's upper profile
//	transfer       beta; 1 argument (the posteriors')     Bertazzi et al. 2025, Prop. 3.2 (i) (TransferGuarantee)
//	dobrushin      gamma; 1 argument                      Balle et al. 2019, Thm 10 (AmplifyDobrushin)
//	ultra-mixing   gamma; 1 argument                      Balle et al. 2019, Thms 10 + 15 (AmplifyUltraMixing)
//	linreg-posterior
//	               n, alpha, beta, gamma1, xh, xl, c,     Heller & Fetaya, Lemma A.1 + IV.4, one posterior
//	               variant                                draw (LinRegDomain.PosteriorGuarantee)
//	sgm-pld        sampling, adjacency, rate,             the PLD accountant of SGM (default options),
//	               noise_multiplier, steps                pessimistic profile
//	mixture-pld    w, m0, v0, m1, v1 of P (_p) and Q      MixturePathGuarantee: T steps of a pair of
//	               (_q), steps                            two-component Gaussian mixtures, by PLD
//	estimator-prop37, estimator-prop310
//	               mean_d, var_d, mean_d_prime,           Bertazzi et al. 2025, Props. 3.7 / 3.10 (EstimatorPair)
//	               var_d_prime, pi_d, pi_d_prime,
//	               laplace, gaussian
type ProfileSpec struct {
	Kind    string                       `json:"kind"`
	Params  map[string]stats.JSONFloat   `json:"params,omitempty"`
	Vectors map[string][]stats.JSONFloat `json:"vectors,omitempty"`
	Args    []ProfileSpec                `json:"args,omitempty"`
}

// profileKind is one accountant of the registry: the names of its
// parameters and vectors, its number of arguments (-1: one or more) and how
// its profile is built from them.
type profileKind struct {
	params, vectors []string
	args            int
	build           func(s ProfileSpec, args []func(float64) float64) (func(float64) float64, error)
}

// maxProfileDepth bounds the nesting of composite specs read from a file.
const maxProfileDepth = 16

var estimatorPairParams = []string{"mean_d", "var_d", "mean_d_prime", "var_d_prime", "pi_d", "pi_d_prime", "laplace", "gaussian"}

// profileKinds is the registry of accountants.
var profileKinds = map[string]profileKind{
	"const": {params: []string{"value"}, build: func(s ProfileSpec, _ []func(float64) float64) (func(float64) float64, error) {
		v := s.num("value")
		return func(float64) float64 { return v }, nil
	}},
	"gdp": {params: []string{"mu"}, build: func(s ProfileSpec, _ []func(float64) float64) (func(float64) float64, error) {
		mu := s.num("mu")
		return func(eps float64) float64 { return stats.GDPDelta(mu, eps) }, nil
	}},
	"pure": {params: []string{"epsilon"}, build: func(s ProfileSpec, _ []func(float64) float64) (func(float64) float64, error) {
		return PureDPProfile(s.num("epsilon")), nil
	}},
	"common-form": {params: []string{"c"}, build: func(s ProfileSpec, _ []func(float64) float64) (func(float64) float64, error) {
		return CommonFormProfile(s.num("c")), nil
	}},
	"printed-form": {params: []string{"c"}, build: func(s ProfileSpec, _ []func(float64) float64) (func(float64) float64, error) {
		return PrintedFormProfile(s.num("c")), nil
	}},
	"min": {args: -1, build: func(_ ProfileSpec, args []func(float64) float64) (func(float64) float64, error) {
		return foldProfiles(args, math.Inf(1), math.Min), nil
	}},
	"max": {args: -1, build: func(_ ProfileSpec, args []func(float64) float64) (func(float64) float64, error) {
		return foldProfiles(args, math.Inf(-1), math.Max), nil
	}},
	"rdp-table":     {vectors: []string{"orders", "eps"}, build: buildRDPTable},
	"rdp-linear":    {params: []string{"rho"}, build: buildRDPLinear},
	"rdp-mixture":   {params: []string{"rest"}, vectors: []string{"weights", "eps"}, build: buildRDPMixture},
	"gaussian-pair": {vectors: []string{"dm", "cov1", "cov2"}, build: buildGaussianPair},
	"transfer": {params: []string{"beta"}, args: 1, build: func(s ProfileSpec, args []func(float64) float64) (func(float64) float64, error) {
		return transferProfile(args[0], s.num("beta")), nil
	}},
	"dobrushin": {params: []string{"gamma"}, args: 1, build: func(s ProfileSpec, args []func(float64) float64) (func(float64) float64, error) {
		gamma := s.num("gamma")
		if !(gamma >= 0 && gamma <= 1) {
			return nil, fmt.Errorf("gamma: must be in [0, 1], got %g", gamma)
		}
		return dobrushinProfile(args[0], gamma), nil
	}},
	"ultra-mixing": {params: []string{"gamma"}, args: 1, build: func(s ProfileSpec, args []func(float64) float64) (func(float64) float64, error) {
		gamma := s.num("gamma")
		if !(gamma >= 0 && gamma <= 1) {
			return nil, fmt.Errorf("gamma: must be in [0, 1], got %g", gamma)
		}
		return ultraMixingProfile(args[0], gamma), nil
	}},
	"sgm-pld":           {params: []string{"sampling", "adjacency", "rate", "noise_multiplier", "steps"}, build: buildSGMPLD},
	"mixture-pld":       {params: []string{"w_p", "m0_p", "v0_p", "m1_p", "v1_p", "w_q", "m0_q", "v0_q", "m1_q", "v1_q", "steps"}, build: buildMixturePLD},
	"linreg-posterior":  {params: []string{"n", "alpha", "beta", "gamma1", "xh", "xl", "c", "variant"}, build: buildLinRegPosterior},
	"estimator-prop37":  {params: estimatorPairParams, build: buildEstimatorPair(false)},
	"estimator-prop310": {params: estimatorPairParams, build: buildEstimatorPair(true)},
}

// ProfileKinds returns the names of the registered accountants, sorted.
func ProfileKinds() []string {
	out := make([]string, 0, len(profileKinds))
	for k := range profileKinds {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Profile rebuilds the profile the spec describes, or says which field of
// the spec is wrong (an unknown kind, a missing or unexpected parameter, a
// wrong number of arguments, numbers the accountant refuses).
func (s ProfileSpec) Profile() (func(eps float64) float64, error) {
	return s.profile(0)
}

func (s ProfileSpec) profile(depth int) (func(float64) float64, error) {
	if depth > maxProfileDepth {
		return nil, fmt.Errorf("profile: nested deeper than %d", maxProfileDepth)
	}
	k, ok := profileKinds[s.Kind]
	if !ok {
		return nil, fmt.Errorf("profile kind: must be one of %s, got %q", strings.Join(ProfileKinds(), ", "), s.Kind)
	}
	if err := checkNames("params", s.Kind, k.params, len(s.Params), func(n string) bool { _, ok := s.Params[n]; return ok }); err != nil {
		return nil, err
	}
	if err := checkNames("vectors", s.Kind, k.vectors, len(s.Vectors), func(n string) bool { _, ok := s.Vectors[n]; return ok }); err != nil {
		return nil, err
	}
	if k.args >= 0 && len(s.Args) != k.args || k.args < 0 && len(s.Args) == 0 {
		want := fmt.Sprint(k.args)
		if k.args < 0 {
			want = "at least 1"
		}
		return nil, fmt.Errorf("profile %s: args: must hold %s profile(s), got %d", s.Kind, want, len(s.Args))
	}
	args := make([]func(float64) float64, len(s.Args))
	for i, a := range s.Args {
		f, err := a.profile(depth + 1)
		if err != nil {
			return nil, fmt.Errorf("profile %s: args[%d]: %w", s.Kind, i, err)
		}
		args[i] = f
	}
	f, err := k.build(s, args)
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", s.Kind, err)
	}
	return f, nil
}

// checkNames checks that a spec's map holds exactly the names the kind
// asks for.
func checkNames(field, kind string, want []string, n int, has func(string) bool) error {
	for _, w := range want {
		if !has(w) {
			return fmt.Errorf("profile %s: %s: must hold %s, %q is missing", kind, field, strings.Join(want, ", "), w)
		}
	}
	if n != len(want) {
		return fmt.Errorf("profile %s: %s: must hold exactly %s, got %d entries", kind, field, strings.Join(want, ", "), n)
	}
	return nil
}

// num returns parameter name (checked present by Profile).
func (s ProfileSpec) num(name string) float64 { return float64(s.Params[name]) }

// vec returns vector name as float64s.
func (s ProfileSpec) vec(name string) []float64 {
	v := s.Vectors[name]
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// integer returns parameter name as an int in [lo, hi], or an error.
func (s ProfileSpec) integer(name string, lo, hi int) (int, error) {
	x := s.num(name)
	if !(x >= float64(lo) && x <= float64(hi)) || x != math.Trunc(x) {
		return 0, fmt.Errorf("params: %s must be an integer in [%d, %d], got %g", name, lo, hi, x)
	}
	return int(x), nil
}

// newSpec returns a spec of the given kind with scalar parameters given as
// name, value pairs.
func newSpec(kind string, kv ...any) ProfileSpec {
	s := ProfileSpec{Kind: kind}
	for i := 0; i+1 < len(kv); i += 2 {
		if s.Params == nil {
			s.Params = map[string]stats.JSONFloat{}
		}
		switch v := kv[i+1].(type) {
		case float64:
			s.Params[kv[i].(string)] = stats.JSONFloat(v)
		case int:
			s.Params[kv[i].(string)] = stats.JSONFloat(float64(v))
		}
	}
	return s
}

// withVector adds a vector to the spec.
func (s ProfileSpec) withVector(name string, v []float64) ProfileSpec {
	if s.Vectors == nil {
		s.Vectors = map[string][]stats.JSONFloat{}
	}
	out := make([]stats.JSONFloat, len(v))
	for i, x := range v {
		out[i] = stats.JSONFloat(x)
	}
	s.Vectors[name] = out
	return s
}

// ConstSpec is the profile δ(ε) = value.
func ConstSpec(value float64) ProfileSpec { return newSpec("const", "value", value) }

// GDPSpec is the profile of μ-GDP (stats.GDPDelta).
func GDPSpec(mu float64) ProfileSpec { return newSpec("gdp", "mu", mu) }

// PureSpec is the profile of ε₀-DP (PureDPProfile).
func PureSpec(eps0 float64) ProfileSpec { return newSpec("pure", "epsilon", eps0) }

// CommonFormSpec is CommonFormProfile(c).
func CommonFormSpec(c float64) ProfileSpec { return newSpec("common-form", "c", c) }

// PrintedFormSpec is PrintedFormProfile(c).
func PrintedFormSpec(c float64) ProfileSpec { return newSpec("printed-form", "c", c) }

// MinSpec is the pointwise minimum of the profiles.
func MinSpec(args ...ProfileSpec) ProfileSpec { return ProfileSpec{Kind: "min", Args: args} }

// MaxSpec is the pointwise maximum of the profiles.
func MaxSpec(args ...ProfileSpec) ProfileSpec { return ProfileSpec{Kind: "max", Args: args} }

// RDPTableSpec is t.Profile(stats.Improved).
func RDPTableSpec(t stats.RDPTable) ProfileSpec {
	orders := make([]float64, len(t.Orders))
	for i, a := range t.Orders {
		orders[i] = float64(a)
	}
	return ProfileSpec{Kind: "rdp-table"}.withVector("orders", orders).withVector("eps", t.Eps)
}

// TransferSpec is Prop. 3.2 (i) over the posteriors' profile.
func TransferSpec(beta float64, posterior ProfileSpec) ProfileSpec {
	s := newSpec("transfer", "beta", beta)
	s.Args = []ProfileSpec{posterior}
	return s
}

// GaussianPairSpec is the upper profile NewGaussianPairProfile returns for
// the same arguments.
func GaussianPairSpec(dm, cov1, cov2 []float64) ProfileSpec {
	return ProfileSpec{Kind: "gaussian-pair"}.withVector("dm", dm).withVector("cov1", cov1).withVector("cov2", cov2)
}

// Prop37Spec is the profile of Prop. 3.7 for the pair (EstimatorPair.Prop37).
func (e EstimatorPair) Prop37Spec() ProfileSpec { return e.spec("estimator-prop37") }

// Prop310Spec is the profile of Prop. 3.10 for the pair (EstimatorPair.Prop310).
func (e EstimatorPair) Prop310Spec() ProfileSpec { return e.spec("estimator-prop310") }

func (e EstimatorPair) spec(kind string) ProfileSpec {
	return newSpec(kind, "mean_d", e.MeanD, "var_d", e.VarD, "mean_d_prime", e.MeanDPrime, "var_d_prime", e.VarDPrime,
		"pi_d", e.PiD, "pi_d_prime", e.PiDPrime, "laplace", e.Noise.Laplace, "gaussian", e.Noise.Gaussian)
}

// foldProfiles folds the profiles' values at ε with op from init.
func foldProfiles(args []func(float64) float64, init float64, op func(a, b float64) float64) func(float64) float64 {
	return func(eps float64) float64 {
		m := init
		for _, f := range args {
			m = op(m, f(eps))
		}
		return m
	}
}

func buildRDPTable(s ProfileSpec, _ []func(float64) float64) (func(float64) float64, error) {
	orders, eps := s.vec("orders"), s.vec("eps")
	if len(orders) != len(eps) {
		return nil, fmt.Errorf("vectors: orders and eps must have one value each per order, got %d and %d", len(orders), len(eps))
	}
	t := stats.RDPTable{Orders: make([]int, len(orders)), Eps: eps}
	for i, a := range orders {
		if !(a >= 2 && a <= 1e9) || a != math.Trunc(a) {
			return nil, fmt.Errorf("vectors: orders[%d] must be an integer in [2, 1e9], got %g", i, a)
		}
		t.Orders[i] = int(a)
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("vectors: %w", err)
	}
	return t.Profile(stats.Improved), nil
}

func buildRDPLinear(s ProfileSpec, _ []func(float64) float64) (func(float64) float64, error) {
	rho := s.num("rho")
	if !(rho >= 0) || math.IsInf(rho, 1) {
		return nil, fmt.Errorf("params: rho must be finite and ≥ 0, got %g", rho)
	}
	return rdpLinearProfile(rho), nil
}

// rdpLinearProfile is the profile of (α, αρ)-RDP converted by the better of
// Mironov 2017, Prop. 3 and Balle et al. 2020, Thm 21 over real α > 1.
func rdpLinearProfile(rho float64) func(float64) float64 {
	curve := stats.RDPCurve(func(a float64) float64 { return a * rho })
	return func(eps float64) float64 {
		if rho == 0 {
			return 0
		}
		return math.Exp(curve.LogDelta(eps, stats.Improved, nil))
	}
}

func buildRDPMixture(s ProfileSpec, _ []func(float64) float64) (func(float64) float64, error) {
	ws, eps := s.vec("weights"), s.vec("eps")
	if len(ws) != len(eps) || len(ws) == 0 {
		return nil, fmt.Errorf("vectors: weights and eps must be as long as each other and not empty, got %d and %d", len(ws), len(eps))
	}
	return rdpCurveProfile(mixtureCurve(s.num("rest"), ws, eps)), nil
}

// mixtureCurve is the RDP curve of BalleThm5Shuffled: position k (weight
// ws[k]) gives (α, α·eps[k])-RDP, the remaining weight rest nothing.
func mixtureCurve(rest float64, ws, eps []float64) stats.RDPCurve {
	return func(a float64) float64 {
		if !(a > 1) {
			return math.NaN()
		}
		terms := make([]float64, 0, len(ws)+1)
		if rest > 0 {
			terms = append(terms, math.Log(rest))
		}
		for k, w := range ws {
			if w > 0 {
				terms = append(terms, math.Log(w)+(a-1)*a*eps[k])
			}
		}
		return math.Max(0, numeric.LogSumExp(terms)/(a-1))
	}
}

func buildGaussianPair(s ProfileSpec, _ []func(float64) float64) (func(float64) float64, error) {
	dm, c1, c2 := s.vec("dm"), s.vec("cov1"), s.vec("cov2")
	if len(dm) > 64 {
		return nil, fmt.Errorf("vectors: dm: at most 64 dimensions, got %d", len(dm))
	}
	p, err := NewGaussianPairProfile(dm, c1, c2)
	if err != nil {
		return nil, fmt.Errorf("vectors: %w", err)
	}
	return p.Upper, nil
}

func buildSGMPLD(s ProfileSpec, _ []func(float64) float64) (func(float64) float64, error) {
	sampling, err := s.integer("sampling", int(WithoutReplacement), int(Poisson))
	if err != nil {
		return nil, err
	}
	adj, err := s.integer("adjacency", int(AdjacencyReplaceOne), int(AdjacencyAddRemove))
	if err != nil {
		return nil, err
	}
	steps, err := s.integer("steps", 1, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	m := SGM{Sampling: Sampling(sampling), Rate: s.num("rate"), NoiseMultiplier: s.num("noise_multiplier"), Steps: steps}
	a, err := m.PLD(Adjacency(adj), nil)
	if err != nil {
		return nil, err
	}
	p, err := a.Profile(m.Steps)
	if err != nil {
		return nil, err
	}
	return p.Delta, nil
}

// pldSpec is the spec of the PLD accountant's profile of m (default
// options).
func (m SGM) pldSpec(adj Adjacency) ProfileSpec {
	return newSpec("sgm-pld", "sampling", int(m.Sampling), "adjacency", int(adj), "rate", m.Rate,
		"noise_multiplier", m.NoiseMultiplier, "steps", m.Steps)
}

func buildEstimatorPair(prop310 bool) func(ProfileSpec, []func(float64) float64) (func(float64) float64, error) {
	return func(s ProfileSpec, _ []func(float64) float64) (func(float64) float64, error) {
		e := EstimatorPair{MeanD: s.num("mean_d"), VarD: s.num("var_d"), MeanDPrime: s.num("mean_d_prime"),
			VarDPrime: s.num("var_d_prime"), PiD: s.num("pi_d"), PiDPrime: s.num("pi_d_prime"),
			Noise: EstimatorNoise{Laplace: s.num("laplace"), Gaussian: s.num("gaussian")}}
		if !(e.Noise.Laplace > 0 || e.Noise.Gaussian > 0) {
			return nil, fmt.Errorf("params: laplace or gaussian must be > 0")
		}
		if prop310 {
			return func(eps float64) float64 { d, _ := e.Prop310(eps); return d }, nil
		}
		return func(eps float64) float64 { d, _ := e.Prop37(eps); return d }, nil
	}
}

func buildLinRegPosterior(s ProfileSpec, _ []func(float64) float64) (func(float64) float64, error) {
	n, err := s.integer("n", 2, 1<<53)
	if err != nil {
		return nil, err
	}
	v, err := s.integer("variant", int(A1Conservative), int(A1Printed))
	if err != nil {
		return nil, err
	}
	d := LinRegDomain{N: n, Alpha: s.num("alpha"), Beta: s.num("beta"), Gamma1: s.num("gamma1"), XH: s.num("xh"), XL: s.num("xl"), C: s.num("c")}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("params: %w", err)
	}
	if !(d.MaxOrder() > 1) {
		return nil, fmt.Errorf("params: n = %d allows no Rényi order ν > 1 (Lemma A.1)", n)
	}
	return d.posteriorProfile(LemmaA1Variant(v)), nil
}

// setSpec attaches a spec to an applicable guarantee.
func (g *Guarantee) setSpec(s ProfileSpec) { g.Spec = &s }

// ptr returns a pointer to a copy of s.
func ptr(s ProfileSpec) *ProfileSpec { return &s }
