package mechanisms

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/internal/field"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// barkerPathPair returns a replace-one pair of n records whose record 0 is
// the gradient canary (sign −1 in D, +1 in D′), the others built by rec.
func barkerPathPair(n int, rec func(i int) dataset.Record) dataset.Pair {
	var p dataset.Pair
	for side, sign := range []float64{-1, 1} {
		d := &dataset.Dataset{Name: []string{"D", "D′"}[side]}
		for i := 0; i < n; i++ {
			r := dataset.Record{X: []float64{0}}
			if rec != nil {
				r = rec(i)
			}
			if i == 0 {
				r = dataset.Record{X: append(make([]float64, len(r.X)-1), sign)}
			}
			d.Records = append(d.Records, r)
		}
		if side == 0 {
			p.D = d
		} else {
			p.DPrime = d
		}
	}
	return p
}

// normLogPDF is ln N(x; 0, v), written out here apart from the sampler's code.
func normLogPDF(x, v float64) float64 { return -0.5*math.Log(2*math.Pi*v) - x*x/(2*v) }

// barkerRecomputed is Λ recomputed from a saved path (the released
// statistics y with the states and proposals), by the densities of
// docs/derivations/path-barker.md written out directly.
type barkerRecomputed struct {
	s     *DPBarker
	m     Model
	d     *dataset.Dataset // the ordinary records (either side's)
	signs [2]float64
	n     float64
	L     float64
}

func (r *barkerRecomputed) add(y float64, theta, prop []float64) {
	g := CanaryOf(r.m)
	c := r.s.c()
	n0 := r.n
	if r.s.N0 > 0 {
		n0 = r.s.N0
	}
	lpd := r.m.LogPrior(prop) - r.m.LogPrior(theta)
	k := g.Coord()
	var lp [2]float64
	for h, sign := range r.signs {
		x := math.Max(-r.s.Clip, math.Min(r.s.Clip, sign*g.Slope()*(prop[k]-theta[k])))
		if r.s.Batch == 0 {
			var ord float64
			for _, rec := range r.d.Records {
				if g.Sign(rec) == 0 {
					ord += math.Max(-r.s.Clip, math.Min(r.s.Clip, r.m.LogLik(prop, rec)-r.m.LogLik(theta, rec)))
				}
			}
			lp[h] = normLogPDF(y-(n0/r.n*(ord+x)+lpd), c)
			continue
		}
		b := float64(r.s.Batch)
		q := b / r.n
		s2 := n0 * n0 / b * x * x * (b - 1) / (b * b)
		mu := n0 / b * x
		lp[h] = math.Log((1-q)*math.Exp(normLogPDF(y-lpd, c)) + q*math.Exp(normLogPDF(y-lpd-mu, c-s2)))
	}
	r.L += lp[0] - lp[1]
}

// runBarkerPath runs s on side of pair under the path threat model and
// returns the released Λ, Λ recomputed from the saved path, and the number
// of statistics released.
func runBarkerPath(t *testing.T, s *DPBarker, m Model, pair dataset.Pair, side int, seed uint64) (released, recomputed float64, steps int) {
	t.Helper()
	spec, err := PathSpecOf(m, pair)
	if err != nil {
		t.Fatal(err)
	}
	d := []*dataset.Dataset{pair.D, pair.DPrime}[side]
	if err := s.checkPath(spec, m, d); err != nil {
		t.Fatal(err)
	}
	lr := NewPathLR(spec)
	path, err := s.newBarkerPath(lr, m)
	if err != nil {
		t.Fatal(err)
	}
	rec := &barkerRecomputed{s: s, m: m, d: d, signs: spec.Sign, n: float64(d.Len())}
	path.observe = func(y float64, theta, prop []float64) {
		rec.add(y, theta, prop)
		steps++
	}
	theta := make([]float64, m.Dim())
	var out []float64
	emit := func(_ int, v []float64) error { out = append(out[:0], v...); return nil }
	if _, err := s.run(m, d, theta, rand.New(rand.NewPCG(seed, 7)), []int{s.Iters}, emit, path); err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0] != lr.Value() {
		t.Fatalf("released %v, want [Λ] = [%v]", out, lr.Value())
	}
	return lr.Value(), rec.L, steps
}

// TestBarkerPathRecomputed checks that the Λ accumulated in the loop equals
// Λ recomputed from the saved path by the densities written out
// independently, for the subsampled test on inert records and the
// full-data test on inert records and on linear regression.
func TestBarkerPathRecomputed(t *testing.T) {
	inert, _ := NewGradientCanary(Inert{}, 0)
	lin, _ := NewGradientCanary(NewLinReg1D(1, 1), 0)
	linRec := func(i int) dataset.Record {
		return dataset.Record{X: []float64{float64(i%5) - 2, 0}, Y: float64(i%3) - 1}
	}
	cases := []struct {
		name string
		s    *DPBarker
		m    Model
		rec  func(int) dataset.Record
	}{
		{"subsampled inert", &DPBarker{Step: 0.3, Iters: 40, Batch: 5, N0: 2, Clip: math.Sqrt(5) / 2}, inert, nil},
		{"full inert", &DPBarker{Step: 0.3, Iters: 40, Clip: 0.5}, inert, nil},
		{"full linreg", &DPBarker{Step: 0.3, Iters: 40, Clip: 0.5, N0: 4}, lin, linRec},
	}
	for _, c := range cases {
		pair := barkerPathPair(20, c.rec)
		for side := 0; side < 2; side++ {
			for seed := uint64(1); seed <= 3; seed++ {
				got, want, steps := runBarkerPath(t, c.s, c.m, pair, side, seed)
				if steps != c.s.Iters {
					t.Errorf("%s: %d statistics released, want %d", c.name, steps, c.s.Iters)
				}
				if math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) || got == 0 {
					t.Errorf("%s side %d seed %d: Λ = %.17g in the loop, %.17g recomputed", c.name, side, seed, got, want)
				}
			}
		}
	}
}

// TestBarkerPathHandCase checks one term against the value computed by
// hand in docs/derivations/path-barker.md: b = 5, n = 20, N0 = 2,
// clip √5/2, C = 2, a move up of the canary's coordinate, y = 0.5.
func TestBarkerPathHandCase(t *testing.T) {
	inert, _ := NewGradientCanary(Inert{}, 0)
	s := &DPBarker{Step: 0.3, Iters: 1, Batch: 5, N0: 2}
	spec := &PathSpec{Sign: [2]float64{-1, 1}, N: [2]int{20, 20}}
	p, err := s.newBarkerPath(NewPathLR(spec), inert)
	if err != nil {
		t.Fatal(err)
	}
	// By hand: x = ∓√5/2, μ = ∓1/√5, s² = 0.16, q = 1/4;
	// ln p_D(0.5) − ln p_D′(0.5) = ln 0.96742 − ln 1.02724.
	const want = -0.059998247736079424
	if got := p.term(0.5, 0.1, 0, 0); math.Abs(got-want) > 1e-14 {
		t.Errorf("term = %.17g, want %.17g", got, want)
	}
	// A move down swaps the roles of D and D′.
	if got := p.term(-0.5, -0.1, 0, 0); math.Abs(got-want) > 1e-14 {
		t.Errorf("mirrored term = %.17g, want %.17g", got, want)
	}
}

// TestBarkerPathLikelihoodIdentity checks Λ's law against the exact
// mixture: under D, E[e^{−Λ}] = 1 (E_D[p_D′/p_D] = 1) and E[Λ] = T·KL(P‖Q)
// with KL computed by quadrature; under D′, E[e^{Λ}] = 1. (A statistic
// whose inclusion probability is 30% off fails it; the s² part of the
// variance, 0.16 of 2, is below its resolution at these runs, and is
// checked by TestBarkerPathRecomputed and TestBarkerPathHandCase.)
func TestBarkerPathLikelihoodIdentity(t *testing.T) {
	inert, _ := NewGradientCanary(Inert{}, 0)
	s := &DPBarker{Step: 0.3, Iters: 10, Batch: 5, N0: 2}
	pair := barkerPathPair(20, nil)
	spec, _ := PathSpecOf(inert, pair)
	const runs = 20000
	// KL((1−q)N(0,C) + qN(−a,v1) ‖ (1−q)N(0,C) + qN(a,v1)) by the midpoint rule.
	b, n0, q, c := 5.0, 2.0, 0.25, 2.0
	x := math.Sqrt(b) / n0
	a, v1 := n0/b*x, c-n0*n0/b*x*x*(b-1)/(b*b)
	var kl float64
	const w = 1e-3
	for y := -20 + w/2; y < 20; y += w {
		p := (1-q)*math.Exp(normLogPDF(y, c)) + q*math.Exp(normLogPDF(y+a, v1))
		qq := (1-q)*math.Exp(normLogPDF(y, c)) + q*math.Exp(normLogPDF(y-a, v1))
		kl += w * p * math.Log(p/qq)
	}
	for side, sgn := range []float64{-1, 1} {
		var sumE, sumE2, sumL, sumL2 float64
		for r := 0; r < runs; r++ {
			lr := NewPathLR(spec)
			path, _ := s.newBarkerPath(lr, inert)
			theta := []float64{0}
			if _, err := s.run(inert, []*dataset.Dataset{pair.D, pair.DPrime}[side], theta, rand.New(rand.NewPCG(uint64(r), uint64(side))), nil, func(int, []float64) error { return nil }, path); err != nil {
				t.Fatal(err)
			}
			e := math.Exp(sgn * lr.Value())
			sumE += e
			sumE2 += e * e
			sumL += lr.Value()
			sumL2 += lr.Value() * lr.Value()
		}
		mE, mL := sumE/runs, sumL/runs
		seE := math.Sqrt((sumE2/runs - mE*mE) / runs)
		seL := math.Sqrt((sumL2/runs - mL*mL) / runs)
		if math.Abs(mE-1) > 4*seE {
			t.Errorf("side %d: mean of e^{∓Λ} = %.5f ± %.5f, want 1", side, mE, seE)
		}
		if want := -sgn * float64(s.Iters) * kl; math.Abs(mL-want) > 4*seL {
			t.Errorf("side %d: mean Λ = %.5f ± %.5f, want T·KL = %.5f", side, mL, seL, want)
		}
		t.Logf("side %d: E e^{∓Λ} = %.5f ± %.5f; E Λ = %.5f ± %.5f (T·KL %.5f)", side, mE, seE, mL, seL, -sgn*float64(s.Iters)*kl)
	}
}

// TestBarkerCheckPath checks the settings the path statistic refuses.
func TestBarkerCheckPath(t *testing.T) {
	inert, _ := NewGradientCanary(Inert{}, 0)
	lin, _ := NewGradientCanary(NewLinReg1D(1, 1), 0)
	spec := &PathSpec{Sign: [2]float64{-1, 1}, N: [2]int{20, 20}}
	cases := []struct {
		s     *DPBarker
		m     Model
		field string
	}{
		{&DPBarker{Step: 0.1, Iters: 5, Exact: true}, inert, "exact"},
		{&DPBarker{Step: 0.1, Iters: 5, Batch: 5, NoClip: true}, inert, "no_clip"},
		{&DPBarker{Step: 0.1, Iters: 5}, inert, "clip"},
		{&DPBarker{Step: 0.1, Iters: 5, Batch: 5}, lin, "model"},
		{&DPBarker{Step: 0.1, Iters: 5, Batch: 5, N0: 2, Clip: 10}, inert, "variance_limit"},
	}
	for _, c := range cases {
		err := c.s.checkPath(spec, c.m, nil)
		var fe *field.Error
		if !errors.As(err, &fe) || fe.Path.YAML() != c.field || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want a one-line error naming %s", c.s.Name(), err, c.field)
		}
	}
	for _, s := range []*DPBarker{{Step: 0.1, Iters: 5, Batch: 5, N0: 2}, {Step: 0.1, Iters: 5, Clip: 1}} {
		if err := s.checkPath(spec, inert, nil); err != nil {
			t.Errorf("%s: %v", s.Name(), err)
		}
	}
	if err := (&DPBarker{Step: 0.1, Iters: 5, Clip: 1}).checkPath(spec, lin, nil); err != nil {
		t.Errorf("full data, linreg: %v", err)
	}
}
