package scenario

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// canaryYAML is a small canary design on SGLD for logistic regression,
// with the audit section's canaries given by canaries.
func canaryYAML(canaries string) string {
	return `
name: canaries
seed: 4
model: {logistic: {dim: 2, alpha: 1}}
data:
  synthetic_logistic: {n: 30, theta_star: [1, -1], x_scale: 1, seed: 2}
sampler:
  sgld: {step: {eta: 0.01}, batch: 5, scheme: without-replacement, epochs: 2}
init: {theta: [0, 0]}
release: {mode: epochs}
audit:
  design: canaries
  canaries: ` + canaries + `
  delta: 1.0e-5
  confidence: 0.95
`
}

// oneRunGuess returns the guess pair behind the one-run bound at pr.
func oneRunGuess(t *testing.T, pr audit.PointResult) audit.Guess {
	t.Helper()
	e, ok := pr.Estimate(audit.OneRunEstimator{}.Name())
	if !ok || e.Best >= len(pr.Attacks) {
		t.Fatalf("no one-run bound at %s", pr.Point.Label)
	}
	ae, ok := pr.Attacks[e.Best].Estimate(audit.OneRunEstimator{}.Name())
	if !ok || ae.Guess == nil {
		t.Fatalf("no guess behind the one-run bound at %s", pr.Point.Label)
	}
	return *ae.Guess
}

func runCanaryScenario(t *testing.T, yml string) (*Plan, *audit.Report) {
	t.Helper()
	p, _, r := runTiny(t, yml)
	return p, r
}

// Mislabelled canaries are records of D with another label; the scores
// are their log-likelihoods; the runs split them; the report is the
// canary design's.
func TestCanaryScenarioMislabel(t *testing.T) {
	p, r := runCanaryScenario(t, canaryYAML(`{count: 60, kind: mislabel, guesses_plus: 5, guesses_minus: 7, runs: 3}`))
	tg := p.Audit.Target()
	if len(tg.Canaries) != 60 {
		t.Fatalf("%d canaries", len(tg.Canaries))
	}
	inD := map[[2]float64]float64{}
	for _, rec := range p.Pair.D.Records {
		inD[[2]float64{rec.X[0], rec.X[1]}] = rec.Y
	}
	for i, c := range tg.Canaries {
		y, ok := inD[[2]float64{c.X[0], c.X[1]}]
		if !ok || y == c.Y || (c.Y != 0 && c.Y != 1) {
			t.Errorf("canary %d %+v: not a record of D with its label changed (D's label %v, found %v)", i, c, y, ok)
		}
	}
	o := r.Canaries
	if o == nil || o.Runs != 3 || o.Canaries != 60 || len(r.Points) != 2 || oneRunGuess(t, r.Points[0]) != (audit.Guess{Plus: 5, Minus: 7}) {
		t.Fatalf("canary design %+v, %d points", o, len(r.Points))
	}
	if o.Kind != "mislabel" || r.Adjacency != audit.CanaryAdjacency || !strings.Contains(o.GuessRule, "fixed in advance") {
		t.Errorf("kind %q adjacency %q rule %q", o.Kind, r.Adjacency, o.GuessRule)
	}
	// Each score is the canary's log-likelihood: recompute one from a
	// release of the run it belongs to.
	a := p.Audit
	tr, _ := a.Simulate(context.Background(), 0, 3)
	row := make([]float64, tr.F)
	tr.Row(1, 1, row)
	lo, _ := a.Options().Canaries.RunCanaries(1)
	ch := p.Mechanism.(*mechanisms.Chain)
	d := &dataset.Dataset{Records: append([]dataset.Record(nil), p.Pair.D.Records...)}
	for j, in := range audit.CanaryIncluded(4, 60) {
		if in && a.Options().Canaries.RunOf(j) == 1 {
			d.Records = append(d.Records, tg.Canaries[j])
		}
	}
	var want float64
	if _, err := ch.Run(context.Background(), mechanisms.NewTrial(4, dataset.SideD, 1), d, func(k int, th []float64) error {
		if k == 1 {
			want = p.Model.LogLik(th, tg.Canaries[lo])
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Scores are stored as float32.
	if v := row[lo]; math.Abs(v-want) > 1e-6*math.Abs(want) || want >= 0 {
		t.Errorf("score of canary %d: %v, its log-likelihood recomputed %v", lo, v, want)
	}
}

// Random canaries take the data's feature ranges; a grid says Bonferroni.
func TestCanaryScenarioRandomGrid(t *testing.T) {
	p, r := runCanaryScenario(t, canaryYAML(`{count: 40, kind: random, guess_grid: [4, 10]}`))
	lo, hi := [2]float64{math.Inf(1), math.Inf(1)}, [2]float64{math.Inf(-1), math.Inf(-1)}
	for _, rec := range p.Pair.D.Records {
		for j := range 2 {
			lo[j], hi[j] = math.Min(lo[j], rec.X[j]), math.Max(hi[j], rec.X[j])
		}
	}
	for i, c := range p.Audit.Target().Canaries {
		for j := range 2 {
			if c.X[j] < lo[j] || c.X[j] > hi[j] || (c.Y != 0 && c.Y != 1) {
				t.Errorf("canary %d %+v outside the data's ranges %v..%v", i, c, lo, hi)
			}
		}
	}
	if !strings.Contains(r.Canaries.GuessRule, "Bonferroni") || r.TestConfidence != 1-0.05/2 {
		t.Errorf("rule %q, test confidence %v", r.Canaries.GuessRule, r.TestConfidence)
	}
	for k, pr := range r.Points {
		if e := pr.EpsilonBound(); e.Confidence != r.TestConfidence || e.Guesses == nil {
			t.Errorf("point %d: bound %+v, want one from guesses at confidence %v", k, e, r.TestConfidence)
		}
	}
}

// Field errors of the canary design.
func TestCanaryScenarioErrors(t *testing.T) {
	linreg := strings.Replace(strings.Replace(canaryYAML(`{count: 10, kind: mislabel}`), "logistic: {dim: 2, alpha: 1}", "linreg: {dim: 2, alpha: 1, beta: 1}", 1),
		"synthetic_logistic", "synthetic_linreg", 1)
	for _, c := range []struct{ yml, want string }{
		{canaryYAML(`{count: 1, kind: mislabel}`), "audit.canaries.count"},
		{canaryYAML(`{count: 10, kind: poison}`), "audit.canaries.kind"},
		{canaryYAML(`{count: 10, kind: mislabel, guesses: 11}`), "audit.canaries.guesses"},
		{canaryYAML(`{count: 10, kind: mislabel, guesses: 4, guess_grid: [2]}`), "audit.canaries.guesses"},
		{canaryYAML(`{count: 10, kind: deepfool}`), "audit.canaries.deepfool"},
		{canaryYAML(`{count: 10, kind: random, features: 3}`), "audit.canaries.features"},
		{canaryYAML(`{count: 10, kind: mislabel, runs: 11}`), "audit.canaries.runs"},
		{strings.Replace(canaryYAML(`{count: 10, kind: mislabel}`), "design: canaries", "design: one-run", 1), "audit.design"},
		{strings.Replace(canaryYAML(`{count: 10, kind: mislabel}`), "design: canaries", "design: runs\n  trials: 200\n  split: {train: 0.5, eval: 0.5}", 1), "audit.canaries"},
		// Without trials, the multi-run design's missing count is named first.
		{strings.Replace(canaryYAML(`{count: 10, kind: mislabel}`), "design: canaries", "design: runs", 1), "audit.trials: required"},
		{canaryYAML(`{count: 10, kind: mislabel}`) + "neighbour: {adjacency: remove-one, index: 0}\n", "neighbour"},
		{canaryYAML(`{count: 10, kind: mislabel}`) + "claim: {theorems: true}\n", "claim.theorems"},
		{linreg, "audit.canaries.kind"},
	} {
		cfg, err := ParseConfig([]byte(c.yml))
		if err == nil {
			var p *Plan
			p, err = Build(cfg)
			if p != nil {
				p.Close()
			}
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one naming %s", err, c.want)
		}
	}
}

// The shipped scenario runs as documented and finds leakage at the last
// epoch.
func TestCanaryScenarioShipped(t *testing.T) {
	c, err := LoadConfig("../../testdata/sgld-canaries.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(c)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := p.Audit.Simulate(context.Background(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Audit.Analyze(tr)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Points) != 20 || r.Epsilon.Epsilon <= 0 || r.Epsilon.Guesses == nil || r.Verdict != audit.VerdictNotRefuted {
		t.Errorf("points %d, headline %v, verdict %v", len(r.Points), r.Epsilon, r.Verdict)
	}
}

// DeepFool canaries are crafted records of D keeping their label, one per
// record the ensemble agrees on; asking for more is a field error.
func TestCanaryScenarioDeepFool(t *testing.T) {
	yml := func(count int) string {
		return fmt.Sprintf(`
name: df
seed: 3
model: {softmax: {features: 2, classes: 3, alpha: 1}}
data:
  records: [{x: [0, 0], y: 0}, {x: [0.1, 0], y: 0}, {x: [0, 0.1], y: 0}, {x: [3, 0], y: 1}, {x: [3.1, 0], y: 1},
            {x: [3, 0.1], y: 1}, {x: [0, 3], y: 2}, {x: [0.1, 3], y: 2}, {x: [0, 3.1], y: 2}]
sampler: {sgld: {step: {eta: 0.01}, batch: 3, scheme: reshuffle, epochs: 5}}
audit:
  design: canaries
  canaries: {count: %d, kind: deepfool, guesses: 2, deepfool: {models: 3, canary: {margin: 0.1}}}
  confidence: 0.95
`, count)
	}
	p, r := runCanaryScenario(t, yml(3))
	if r.Canaries.Kind != "deepfool" {
		t.Errorf("kind %q", r.Canaries.Kind)
	}
	inD := map[[2]float64]bool{}
	for _, rec := range p.Pair.D.Records {
		inD[[2]float64{rec.X[0], rec.X[1]}] = true
	}
	for i, c := range p.Audit.Target().Canaries {
		if inD[[2]float64{c.X[0], c.X[1]}] {
			t.Errorf("canary %d %+v is a record of D, not a crafted one", i, c)
		}
	}
	c, err := ParseConfig([]byte(yml(6)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Build(c); err == nil || !strings.Contains(err.Error(), "audit.canaries.count") {
		t.Errorf("6 canaries from 3 agreed records: %v", err)
	}
}
