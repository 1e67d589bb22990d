package audit

import (
	"bytes"
	"encoding/json"
)

// estimatorKeys are the JSON keys of one estimator's fields in reports.
type estimatorKeys struct {
	rule, selection, selCounts, counts, bound, best string
	// selMu writes the selection estimate as its μ alone (the GDP
	// estimator's layout).
	selMu bool
}

// jsonKeys returns the keys of an estimator's fields: the region bound
// and the GDP estimator keep the keys reports have always had; any other
// estimator n writes n_rule, n_selection, n_counts, n and best_n.
func jsonKeys(name string) estimatorKeys {
	switch name {
	case RegionEstimator{}.Name():
		return estimatorKeys{rule: "rule", selection: "selection", counts: "counts", bound: "region", best: "best"}
	case GDPEstimator{}.Name():
		return estimatorKeys{rule: "gdp_rule", selection: "gdp_selection_mu", selCounts: "gdp_selection_counts",
			counts: "gdp_counts", bound: "gdp", best: "best_gdp", selMu: true}
	case OneRunEstimator{}.Name():
		return estimatorKeys{rule: "one_run_guess", bound: "one_run", best: "best_one_run"}
	case OneRunFDPEstimator{}.Name():
		return estimatorKeys{rule: "one_run_fdp_guess", bound: "one_run_fdp", best: "best_one_run_fdp"}
	}
	return estimatorKeys{rule: name + "_rule", selection: name + "_selection", counts: name + "_counts", bound: name, best: "best_" + name}
}

// object writes a JSON object key by key, in the order given.
type object struct {
	buf bytes.Buffer
	err error
}

func (o *object) add(key string, v any) {
	if o.err != nil {
		return
	}
	if o.buf.Len() == 0 {
		o.buf.WriteByte('{')
	} else {
		o.buf.WriteByte(',')
	}
	k, _ := json.Marshal(key)
	o.buf.Write(k)
	o.buf.WriteByte(':')
	b, err := json.Marshal(v)
	if err != nil {
		o.err = err
		return
	}
	o.buf.Write(b)
}

func (o *object) bytes() ([]byte, error) {
	if o.err != nil {
		return nil, o.err
	}
	if o.buf.Len() == 0 {
		o.buf.WriteByte('{')
	}
	o.buf.WriteByte('}')
	return o.buf.Bytes(), nil
}

// selectionFields writes what an estimator chose on the selection runs.
func (e AttackEstimate) selectionFields(o *object) {
	k := jsonKeys(e.Estimator)
	if e.Guess != nil {
		// A canary design's rule: the guess pair, chosen on no runs.
		o.add(k.rule, e.Guess)
		return
	}
	o.add(k.rule, e.Rule)
	if k.selMu {
		o.add(k.selection, e.Selection.Mu)
	} else {
		o.add(k.selection, e.Selection)
	}
	if k.selCounts != "" {
		o.add(k.selCounts, e.Selection.Counts)
	}
}

// evaluationFields writes what the evaluation runs gave it.
func (e AttackEstimate) evaluationFields(o *object) {
	k := jsonKeys(e.Estimator)
	if e.Guess == nil {
		o.add(k.counts, e.Counts)
	}
	if e.Bound != nil {
		o.add(k.bound, e.Bound)
	}
}

// MarshalJSON writes the attack with one group of keys per estimator (see
// jsonKeys); the first estimator's keys sit around "evaluated", as they
// always have.
func (ar AttackResult) MarshalJSON() ([]byte, error) {
	var o object
	o.add("attack", ar.Attack)
	if ar.Note != "" {
		o.add("note", ar.Note)
	}
	for j, e := range ar.Estimates {
		e.selectionFields(&o)
		if j == 0 {
			o.add("evaluated", ar.Evaluated)
		}
		e.evaluationFields(&o)
	}
	if len(ar.Estimates) == 0 {
		o.add("evaluated", ar.Evaluated)
	}
	return o.bytes()
}

// MarshalJSON writes the point with every estimator's best attack, then
// every estimator's bound (see jsonKeys).
func (pr PointResult) MarshalJSON() ([]byte, error) {
	var o object
	o.add("point", pr.Point)
	o.add("attacks", pr.Attacks)
	for _, e := range pr.Estimates {
		o.add(jsonKeys(e.Estimator).best, e.Best)
	}
	for _, e := range pr.Estimates {
		o.add(jsonKeys(e.Estimator).bound, e.Bound)
	}
	o.add("ceiling", pr.Ceiling)
	if pr.Descriptive != nil {
		o.add("descriptive", pr.Descriptive)
	}
	if pr.Exact != nil {
		o.add("exact_epsilon", pr.Exact)
	}
	if pr.Convergence != nil {
		o.add("convergence_lb", pr.Convergence)
	}
	if pr.TestAccuracy != nil {
		o.add("test_accuracy", pr.TestAccuracy)
	}
	if len(pr.Claims) > 0 {
		o.add("claims", pr.Claims)
	}
	if pr.Utility != nil {
		o.add("utility", pr.Utility)
	}
	return o.bytes()
}
