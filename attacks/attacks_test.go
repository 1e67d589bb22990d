package attacks

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/stats"
	"github.com/sajari/regression"
)

// countsAt counts errors of the rule "positive when o·(s − t) ≥ 0", which
// with every score as t also covers the splits "at t" — written apart from
// Count, which uses a strict inequality, as an independent reference.
func countsAt(scores []float64, labels []bool, t float64, o int) stats.Counts {
	var c stats.Counts
	for i, s := range scores {
		p := float64(o)*(s-t) >= 0
		if labels[i] {
			c.Positives++
			if !p {
				c.FN++
			}
		} else {
			c.Negatives++
			if p {
				c.FP++
			}
		}
	}
	return c
}

// bruteRule evaluates stats.RegionBound at every threshold (each score and
// ±Inf) in both orientations: the exhaustive search ChooseRule prunes.
func bruteRule(scores []float64, labels []bool, delta, conf float64) float64 {
	best := 0.0
	ts := append([]float64{math.Inf(-1), math.Inf(1)}, scores...)
	for _, t := range ts {
		for _, o := range []int{1, -1} {
			c := countsAt(scores, labels, t, o)
			e, err := stats.RegionBound(c, delta, conf)
			if err != nil {
				panic(err)
			}
			best = math.Max(best, e.Epsilon)
		}
	}
	return best
}

func TestChooseRuleMatchesExhaustiveSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 60; trial++ {
		n := 2 + rng.IntN(150)
		shift := rng.Float64() * 4
		scores := make([]float64, n)
		labels := make([]bool, n)
		for i := range scores {
			labels[i] = i%2 == 0 || rng.Float64() < 0.3
			scores[i] = math.Round(rng.NormFloat64()*4) / 2 // ties on purpose
			if labels[i] {
				scores[i] += shift
			}
		}
		labels[0], labels[1] = true, false
		sel, err := ChooseRule(scores, labels, 1e-5, 0.9)
		if err != nil {
			t.Fatal(err)
		}
		want := bruteRule(scores, labels, 1e-5, 0.9)
		if math.Abs(sel.Epsilon-want) > 1e-12 {
			t.Fatalf("trial %d: ChooseRule ε = %.15g, exhaustive %.15g", trial, sel.Epsilon, want)
		}
		// The selected rule really has the reported counts.
		if c := Count(sel.Rule, scores, labels); c != sel.Counts {
			t.Fatalf("trial %d: rule counts %+v, reported %+v", trial, c, sel.Counts)
		}
		if want > 0 {
			e, _ := stats.RegionBound(sel.Counts, 1e-5, 0.9)
			if e.Epsilon != sel.Epsilon {
				t.Fatalf("trial %d: reported ε %g, counts give %g", trial, sel.Epsilon, e.Epsilon)
			}
		}
	}
}

// ChooseRuleGDP against the exhaustive search of the μ lower bound.
func TestChooseRuleGDPMatchesExhaustiveSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for trial := 0; trial < 40; trial++ {
		n := 4 + rng.IntN(120)
		scores := make([]float64, n)
		labels := make([]bool, n)
		for i := range scores {
			labels[i] = i%2 == 0
			scores[i] = math.Round(rng.NormFloat64()*3) / 2
			if labels[i] {
				scores[i] += 2 * rng.Float64()
			}
		}
		sel, err := ChooseRuleGDP(scores, labels, 0.9)
		if err != nil {
			t.Fatal(err)
		}
		best := 0.0
		ts := append([]float64{math.Inf(-1), math.Inf(1)}, scores...)
		for _, th := range ts {
			for _, o := range []int{1, -1} {
				c := countsAt(scores, labels, th, o)
				mu, _, _, err := stats.GDPMuLowerBound(c, 0.9)
				if err != nil {
					t.Fatal(err)
				}
				best = math.Max(best, mu)
			}
		}
		if math.Abs(sel.Epsilon-best) > 1e-12 {
			t.Fatalf("trial %d: ChooseRuleGDP μ = %.15g, exhaustive %.15g", trial, sel.Epsilon, best)
		}
	}
}

func TestChooseRuleErrors(t *testing.T) {
	if _, err := ChooseRule([]float64{1, 2}, []bool{true, true}, 1e-5, 0.95); err == nil {
		t.Error("one-sided training set accepted")
	}
	if _, err := ChooseRule([]float64{1, math.NaN()}, []bool{true, false}, 1e-5, 0.95); err == nil {
		t.Error("NaN score accepted")
	}
	if _, err := ChooseRule([]float64{1, 2}, []bool{true, false}, 2, 0.95); err == nil {
		t.Error("δ = 2 accepted")
	}
}

// twoGaussians returns n runs, D′ shifted by mu along feature 0 only; the
// other features are noise.
func twoGaussians(n, f int, mu float64, seed uint64) *Data {
	rng := rand.New(rand.NewPCG(seed, 1))
	d := &Data{N: n, F: f, X: make([]float64, n*f), Label: make([]bool, n)}
	for i := 0; i < n; i++ {
		d.Label[i] = i%2 == 1
		for j := 0; j < f; j++ {
			d.X[i*f+j] = 10 + 3*rng.NormFloat64()
		}
		if d.Label[i] {
			d.X[i*f] += 3 * mu
		}
	}
	return d
}

// Every classifier finds the signal: trained on one sample, with its rule
// chosen on that sample, its region bound on a fresh sample comes close to
// that of the oracle score (feature 0, the likelihood-ratio direction).
func TestClassifiersFindSignal(t *testing.T) {
	train := twoGaussians(4000, 3, 3, 1)
	test := twoGaussians(4000, 3, 3, 2)
	evalScore := func(score Scorer) float64 {
		s1 := make([]float64, train.N)
		for i := range s1 {
			s1[i] = score(train.Row(i))
		}
		sel, err := ChooseRule(s1, train.Label, 1e-5, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		s2 := make([]float64, test.N)
		for i := range s2 {
			s2[i] = score(test.Row(i))
		}
		e, _ := stats.RegionBound(Count(sel.Rule, s2, test.Label), 1e-5, 0.95)
		return e.Epsilon
	}
	oracle := evalScore(func(x []float64) float64 { return x[0] })
	if oracle < 2 {
		t.Fatalf("oracle region bound %g: the test data carry too little signal", oracle)
	}
	for _, name := range []string{NameThreshold, NameLinear, NameLogistic, NameQDA} {
		c, _ := ByName(name)
		score, err := c.Fit(train, 1e-5, 0.95)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := evalScore(score); got < 0.8*oracle {
			t.Errorf("%s: region bound on fresh runs %.3f, oracle %.3f", name, got, oracle)
		}
	}
}

// The linear attack's least squares agrees with an independent solver,
// sajari/regression (QR of the full design), on a well-conditioned design,
// and with a hand computation on a one-feature case.
func TestLinearMatchesSajari(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	d := twoGaussians(2000, 3, 1, 9)
	z := newStandardizer(d).transform(d)
	got, err := leastSquares(z)
	if err != nil {
		t.Fatal(err)
	}
	var r regression.Regression
	for i := 0; i < z.N; i++ {
		r.Train(regression.DataPoint(pm1(z.Label[i]), append([]float64(nil), z.Row(i)...)))
	}
	if err := r.Run(); err != nil {
		t.Fatal(err)
	}
	want := r.GetCoeffs()
	for j := range want {
		if math.Abs(got[j]-want[j]) > 1e-10*(1+math.Abs(want[j])) {
			t.Errorf("coefficient %d: %.15g, sajari/regression %.15g", j, got[j], want[j])
		}
	}
	// One feature: the slope is cov(x, y)/var(x) by hand.
	one := &Data{N: 4, F: 1, X: []float64{0, 1, 2, 3}, Label: []bool{false, false, true, true}}
	c, _ := leastSquares(one)
	// y = −1, −1, 1, 1; x̄ = 1.5; Sxy = 4, Sxx = 5 → slope 0.8, intercept −1.2.
	if math.Abs(c[1]-0.8) > 1e-12 || math.Abs(c[0]+1.2) > 1e-12 {
		t.Errorf("hand case: coefficients %v, want [-1.2 0.8]", c)
	}
}

// Degenerate training sets do not fail: a constant column gets weight 0,
// collinear columns share their weight (minimum-norm solution), and the fitted values
// agree with the regression on the informative column alone.
func TestLinearDegenerate(t *testing.T) {
	d := &Data{N: 6, F: 3, Label: []bool{false, false, false, true, true, true}}
	for _, x := range []float64{0, 1, 2, 4, 6, 8} {
		d.X = append(d.X, x, 5, 2*x) // constant column; column 2 = 2·column 0
	}
	score, err := LinearLS{}.Fit(d, 1e-5, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	one := &Data{N: 6, F: 1, X: []float64{0, 1, 2, 4, 6, 8}, Label: d.Label}
	ref, _ := LinearLS{}.Fit(one, 1e-5, 0.95)
	for _, x := range []float64{-1, 3, 7} {
		if a, b := score([]float64{x, 5, 2 * x}), ref([]float64{x}); math.Abs(a-b) > 1e-6 {
			t.Errorf("degenerate fit at %g: %g, one-column fit %g", x, a, b)
		}
	}
	flat := &Data{N: 4, F: 1, X: []float64{3, 3, 3, 3}, Label: []bool{false, true, false, true}}
	if s, err := (LinearLS{}).Fit(flat, 1e-5, 0.95); err != nil || s([]float64{3}) != s([]float64{9}) {
		t.Errorf("constant features: err %v", err)
	}
}

// QDA in one dimension is the log ratio of two fitted normals, by hand.
func TestQDAOneDimension(t *testing.T) {
	d := &Data{N: 6, F: 1, X: []float64{0, 1, 2, 4, 6, 8}, Label: []bool{false, false, false, true, true, true}}
	score, err := QDA{}.Fit(d, 1e-5, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	// Standardized with the pooled mean 3.5 and sd sqrt(8.25).
	sd := math.Sqrt((12.25 + 6.25 + 2.25 + 0.25 + 6.25 + 20.25) / 6)
	z := func(x float64) float64 { return (x - 3.5) / sd }
	m0, m1 := z(1), z(6)
	v0 := (math.Pow(z(0)-m0, 2) + math.Pow(z(1)-m0, 2) + math.Pow(z(2)-m0, 2)) / 2
	v1 := (math.Pow(z(4)-m1, 2) + math.Pow(z(6)-m1, 2) + math.Pow(z(8)-m1, 2)) / 2
	v0 += 1e-6
	v1 += 1e-6
	for _, x := range []float64{-1, 3, 5} {
		want := -0.5*(math.Pow(z(x)-m1, 2)/v1+math.Log(v1)) + 0.5*(math.Pow(z(x)-m0, 2)/v0+math.Log(v0))
		if got := score([]float64{x}); math.Abs(got-want) > 1e-9 {
			t.Errorf("QDA(%g) = %.12g, want %.12g", x, got, want)
		}
	}
}

// Logistic regression: the fitted predictor satisfies the first-order
// condition of the penalised likelihood (gradient ≈ 0), checked directly.
func TestLogisticStationarity(t *testing.T) {
	d := twoGaussians(500, 2, 0.7, 4)
	score, err := Logistic{}.Fit(d, 1e-5, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	std := newStandardizer(d)
	// Recover w from the scorer: w0 = score at the mean, w_j by unit steps.
	buf := make([]float64, 2)
	w := make([]float64, 3)
	w[0] = score(std.mean)
	for j := 0; j < 2; j++ {
		x := append([]float64(nil), std.mean...)
		x[j] += 1 / std.scale[j]
		w[j+1] = score(x) - w[0]
	}
	grad := make([]float64, 3)
	for i := 0; i < d.N; i++ {
		std.apply(d.Row(i), buf)
		y := pm1(d.Label[i])
		eta := w[0] + w[1]*buf[0] + w[2]*buf[1]
		c := -y / (1 + math.Exp(y*eta)) / float64(d.N)
		grad[0] += c
		grad[1] += c * buf[0]
		grad[2] += c * buf[1]
	}
	grad[1] += 2e-4 * w[1]
	grad[2] += 2e-4 * w[2]
	for j, g := range grad {
		if math.Abs(g) > 1e-5 {
			t.Errorf("gradient[%d] = %g at the fitted weights %v", j, g, w)
		}
	}
}

// A rule whose threshold is infinite (every score on one side: the runs
// all released the same state) survives a JSON report and comes back.
func TestRuleJSONInfiniteThreshold(t *testing.T) {
	for _, r := range []Rule{{Threshold: math.Inf(-1), Orientation: 1}, {Threshold: math.Inf(1), Orientation: -1}, {Threshold: 0.25, Orientation: 1}} {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("%+v: %v", r, err)
		}
		var back Rule
		if err := json.Unmarshal(b, &back); err != nil || back != r {
			t.Errorf("%s → %+v (%v)", b, back, err)
		}
	}
}
