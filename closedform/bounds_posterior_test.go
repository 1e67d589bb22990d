package closedform

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestPureDPProfileAndRDP(t *testing.T) {
	// ε₀ = 1.2. Profile references (mpmath): (e^{1.2} − e^ε)/(1 + e^{1.2}) =
	// 0.53704956699803528586 (ε = 0), 0.38688667041393074057 (ε = 0.5),
	// 0.13930990874577396232 (ε = 1). RDP of randomized response
	// ln(p^α q^{1−α} + q^α p^{1−α})/(α − 1), p = e^{1.2}/(1 + e^{1.2}):
	// 0.84710736963183697859 (α = 1.5), 0.96367462567017687126 (2),
	// 1.1707463925319230769 (10), 1.1973405811379996850 (100); its α → 1
	// limit, the KL divergence 1.2·(p − q) = 0.64445948039764234303.
	prof := PureDPProfile(1.2)
	for _, c := range []struct{ e, want float64 }{
		{0, 0.53704956699803528586}, {0.5, 0.38688667041393074057}, {1, 0.13930990874577396232}, {1.2, 0}, {3, 0},
	} {
		if got := prof(c.e); !withinRel(got, c.want, 1e-14) {
			t.Errorf("δ(%g) = %.17g, want %.17g", c.e, got, c.want)
		}
	}
	rdp := PureDPRDP(1.2)
	for _, c := range []struct{ a, want, tol float64 }{
		{1.5, 0.84710736963183697859, 1e-14}, {2, 0.96367462567017687126, 1e-14},
		{10, 1.1707463925319230769, 1e-14}, {100, 1.1973405811379996850, 1e-14},
		{1 + 1e-9, 0.64445948039764234303, 1e-8},
	} {
		if got := rdp(c.a); !withinRel(got, c.want, c.tol) {
			t.Errorf("RDP(%g) = %.17g, want %.17g", c.a, got, c.want)
		}
	}
	// Second method: the hockey-stick divergence of randomized response
	// computed from the two 2-point laws, in both directions; and the
	// profile sits below the cruder 1 − e^{ε−ε₀}.
	p := math.Exp(1.2) / (1 + math.Exp(1.2))
	rr0, rr1 := []float64{p, 1 - p}, []float64{1 - p, p}
	for eps := 0.0; eps < 2; eps += 0.05 {
		exact := math.Max(hockeyFinite(rr0, rr1, eps), hockeyFinite(rr1, rr0, eps))
		if math.Abs(prof(eps)-exact) > 1e-15 {
			t.Errorf("ε = %g: profile %g, randomized response %g", eps, prof(eps), exact)
		}
		if eps < 1.2 && !(prof(eps) < -math.Expm1(eps-1.2)) {
			t.Errorf("ε = %g: profile %g not below 1 − e^{ε−ε₀}", eps, prof(eps))
		}
	}
	if PureDPRDP(0)(3) != 0 || PureDPProfile(0)(0) != 0 {
		t.Error("ε₀ = 0 is not perfect privacy")
	}
	if got := PureDPRDP(800)(2); !(got <= 800 && got > 799) {
		t.Errorf("RDP(ε₀ = 800) = %g", got)
	}
}

func TestPosterior4B(t *testing.T) {
	g, err := Posterior4B(0.3)
	if err != nil || !g.Applies {
		t.Fatal(err)
	}
	if !strings.Contains(g.Note, "replace-one") || g.Profile(1.2) != 0 || g.Profile(1.19) <= 0 {
		t.Errorf("4B guarantee: note %q, δ(4B) = %g", g.Note, g.Profile(1.2))
	}
	// ε(δ) inverts the profile; e.g. δ = 0.1: ε = 1.2 + ln(1 − 0.1(1 + e^{−1.2}))
	// = 1.0606006575076541412 (the profile's formula solved by hand,
	// evaluated with mpmath).
	if got := epsOrFatal(t, g, 0.1); !withinRel(got, 1.0606006575076541412, 1e-14) {
		t.Errorf("ε(0.1) = %.17g", got)
	}
	checkProfileEpsilonAgree(t, g)
	ar, _ := PosteriorAddRemove2B(0.3)
	if ar.Profile(0.6) != 0 || ar.Profile(0.59) <= 0 || !strings.Contains(ar.Note, "add/remove") {
		t.Errorf("2B guarantee: δ(2B) = %g, note %q", ar.Profile(0.6), ar.Note)
	}
	for _, b := range []float64{-1, math.NaN(), math.Inf(1)} {
		if _, err := Posterior4B(b); err == nil || !strings.HasPrefix(err.Error(), "B:") {
			t.Errorf("B = %g: %v", b, err)
		}
	}
}

// TestPosterior4BBruteForce computes exact posteriors of a Bernoulli model
// on a grid of θ ∈ [θmin, 1 − θmin] (so |log p(x|θ)| ≤ B = −ln θmin) under
// random priors and datasets, and checks the exact privacy loss of one
// posterior draw against the 4B (replace-one) and 2B (add/remove-one)
// guarantees: the maximal log density ratio against ε₀, and the exact
// hockey-stick divergence, in both directions, against the profile.
func TestPosterior4BBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	const grid = 40
	for trial := 0; trial < 200; trial++ {
		thetaMin := 0.01 + 0.3*r.Float64()
		b := -math.Log(thetaMin)
		thetas := make([]float64, grid)
		for i := range thetas {
			thetas[i] = thetaMin + (1-2*thetaMin)*float64(i)/(grid-1)
		}
		prior := randSimplex(r, grid)
		n := 1 + r.IntN(20)
		data := make([]int, n)
		for i := range data {
			data[i] = r.IntN(2)
		}
		post := func(xs []int) []float64 {
			lw := make([]float64, grid)
			m := math.Inf(-1)
			for j, th := range thetas {
				lw[j] = math.Log(prior[j])
				for _, x := range xs {
					if x == 1 {
						lw[j] += math.Log(th)
					} else {
						lw[j] += math.Log1p(-th)
					}
				}
				m = math.Max(m, lw[j])
			}
			s := 0.0
			for j := range lw {
				lw[j] = math.Exp(lw[j] - m)
				s += lw[j]
			}
			for j := range lw {
				lw[j] /= s
			}
			return lw
		}
		p := post(data)
		repl := append([]int(nil), data...)
		repl[0] = 1 - repl[0]
		added := append(append([]int(nil), data...), r.IntN(2))
		g4, _ := Posterior4B(b)
		g2, _ := PosteriorAddRemove2B(b)
		for _, c := range []struct {
			q []float64
			g Guarantee
		}{{post(repl), g4}, {post(added), g2}} {
			maxLR := 0.0
			for j := range p {
				maxLR = math.Max(maxLR, math.Abs(math.Log(p[j]/c.q[j])))
			}
			eps0 := 4 * b
			if c.g.Source == g2.Source {
				eps0 = 2 * b
			}
			if maxLR > eps0*(1+1e-12) {
				t.Fatalf("trial %d: log ratio %g exceeds %g", trial, maxLR, eps0)
			}
			for eps := 0.0; eps <= eps0; eps += eps0 / 20 {
				exact := math.Max(hockeyFinite(p, c.q, eps), hockeyFinite(c.q, p, eps))
				if exact > c.g.Profile(eps)+1e-13 {
					t.Fatalf("trial %d ε = %g: exact δ %g above %s profile %g", trial, eps, exact, c.g.Source, c.g.Profile(eps))
				}
			}
		}
	}
}
