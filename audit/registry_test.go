package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/stats"
)

// renamedRegion is a user's estimator: the region bound under another
// name, so that its bounds are known.
type renamedRegion struct{ RegionEstimator }

func (renamedRegion) Name() string { return "renamed-region" }

// The user's estimator is registered once for the package's tests, as a
// user's init function would.
var errRegister = RegisterEstimator(renamedRegion{})

// Registration refuses what would make names ambiguous, and a registered
// estimator is found by name without joining the defaults.
func TestRegisterEstimator(t *testing.T) {
	if errRegister != nil {
		t.Fatal(errRegister)
	}
	for _, e := range RegisteredEstimators() {
		if err := RegisterEstimator(e); err == nil || !strings.Contains(err.Error(), "already registered") {
			t.Errorf("%s registered twice: %v", e.Name(), err)
		}
	}
	for _, bad := range []Estimator{nil, named(""), named("a,b"), named("a b")} {
		if err := RegisterEstimator(bad); err == nil {
			t.Errorf("%#v registered", bad)
		}
	}
	if e, err := EstimatorByName("renamed-region"); err != nil || e != (renamedRegion{}) {
		t.Errorf("by name: %v, %v", e, err)
	}
	for _, e := range Estimators() {
		if e.Name() == "renamed-region" {
			t.Error("a registered estimator joined the defaults")
		}
	}
	_, err := EstimatorByName("nope")
	for _, n := range EstimatorNames() {
		if err == nil || !strings.Contains(err.Error(), n) {
			t.Errorf("unknown name: error %v does not list %s", err, n)
		}
	}
	if _, err := EstimatorsByName([]string{"gdp", "gdp"}); err == nil {
		t.Error("a name listed twice was accepted")
	}
	if estimatorNames(Estimators()) != nil {
		t.Error("the default estimators change the audit ID")
	}
}

// named is the region bound under any name.
func named(n string) Estimator { return namedRegion{n: n} }

type namedRegion struct {
	RegionEstimator
	n string
}

func (e namedRegion) Name() string { return e.n }

// Every registered estimator, alone or beside the others: the audit runs,
// the headline is the region bound when listed and otherwise the first
// estimator's bound at the headline point, and the design round-trips
// through JSON to an analysis that gives the same report.
func TestEveryRegisteredEstimatorRunsSerialisesAndMerges(t *testing.T) {
	// Each design takes the estimators of its kind: the count estimators
	// run on the multi-run Gaussian audit, the guess estimators on a
	// canary audit of per-canary Gaussians.
	type design struct {
		es  []Estimator
		new func(es []Estimator) Options
		tg  Target
	}
	var count, guess []Estimator
	for _, e := range RegisteredEstimators() {
		if _, ok := e.(GuessEstimator); ok {
			guess = append(guess, e)
		} else {
			count = append(count, e)
		}
	}
	if len(count) == 0 || len(guess) == 0 {
		t.Fatalf("%d count and %d guess estimators registered", len(count), len(guess))
	}
	runs := func(es []Estimator) Options {
		o := gaussOptions(3, 400, "threshold")
		o.Estimators = es
		return o
	}
	canaries := func(es []Estimator) Options {
		return Options{Seed: 3, Canaries: &CanaryDesign{Count: 400, Runs: 2}, Delta: 1e-5, Estimators: es}
	}
	var lists []design
	for _, kind := range []design{{count, runs, gaussTarget(t, 2)}, {guess, canaries, canaryTarget(400, 4, 2)}} {
		for _, e := range kind.es {
			lists = append(lists, design{[]Estimator{e}, kind.new, kind.tg})
		}
		lists = append(lists, kind)
	}
	for _, dg := range lists {
		es := dg.es
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		name := strings.Join(names, ",")
		o := dg.new(es)
		a, err := New(dg.tg, o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		n := o.Trials
		if o.Canaries != nil {
			n = o.Canaries.Runs
		}
		tr, err := a.Simulate(context.Background(), 0, n)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		r, err := a.Analyze(tr)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p := primaryEstimator(es)
		if es[p].Name() != names[0] && es[p].Name() != (RegionEstimator{}).Name() && es[p].Name() != (OneRunEstimator{}).Name() {
			t.Errorf("%s: headline on %s", name, es[p].Name())
		}
		if got := r.Points[r.Headline].Estimates[p]; got.Estimator != es[p].Name() || r.Epsilon != got.Bound {
			t.Errorf("%s: headline %+v, the %s bound at the headline point %+v", name, r.Epsilon, es[p].Name(), got)
		}
		if es[p].Value(r.Epsilon) <= 0 {
			t.Errorf("%s: a shift of 2σ (4σ per canary) found nothing: %+v", name, r.Epsilon)
		}
		spec, err := json.Marshal(a.Design())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var d Design
		if err := json.Unmarshal(spec, &d); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		back, err := FromDesign(d)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		r2, err := back.Analyze(tr)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, _ := json.Marshal(r)
		got, _ := json.Marshal(r2)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the report from the design read back differs\n%s\n%s", name, got, want)
		}
	}
}

// Without the region bound the headline is the first estimator's, and
// says so.
func TestHeadlineWithoutRegion(t *testing.T) {
	o := gaussOptions(3, 400, "threshold")
	o.Estimators = []Estimator{GDPEstimator{}}
	r := runGauss(t, 2, o)
	if r.Epsilon.Estimator != stats.EstimatorGDP || r.Epsilon.Mu <= 0 {
		t.Errorf("headline %+v, want the GDP bound", r.Epsilon)
	}
}
