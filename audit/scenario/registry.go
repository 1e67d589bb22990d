package scenario

import (
	"strings"

	"github.com/mcmcaudit/mcmcaudit/audit"
)

// The scenario's registries: what a scenario may name, each element
// registered once with its documentation, its checks and how it is built.
// The reference (docs/scenario.md, the JSON schema, "audit run
// --explain") is written from them, and the tests iterate over them.
//
//   - samplers: a field of SamplerConfig and its entry in samplerRegistry
//     (samplers.go);
//   - models: a field of ModelConfig and its entry in modelRegistry
//     (models.go);
//   - features: an entry in featureRegistry (features.go);
//   - canary kinds: an entry in canaryKinds (canaries.go);
//   - estimators: audit.RegisterEstimator (the engine's registry; the
//     scenario names them in audit.estimators).

// estimatorDefault is the reference's default of audit.estimators.
func estimatorDefault() string {
	var names []string
	for _, e := range audit.Estimators() {
		names = append(names, e.Name())
	}
	var guess []string
	for _, e := range audit.CanaryEstimators() {
		guess = append(guess, e.Name())
	}
	return "[" + strings.Join(names, ", ") + "]; in the canary design [" + strings.Join(guess, ", ") + "]"
}

// estimatorRange is the reference's range of audit.estimators.
func estimatorRange() string {
	return strings.Join(audit.EstimatorNames(), ", ")
}

// estimatorMeaning is the reference's meaning of audit.estimators.
func estimatorMeaning() string {
	var docs []string
	for _, e := range audit.RegisteredEstimators() {
		d, ok := e.(audit.Documented)
		if !ok {
			docs = append(docs, e.Name())
			continue
		}
		docs = append(docs, d.Doc())
	}
	return "The estimators that turn what the design observed into bounds, reported in the order listed (each at most once): in the multi-run design the attacks' errors, each estimator choosing its own rule on the selection runs; in the canary design the guesses about the canaries. " +
		strings.Join(docs, "; ") + ". The headline, the ceiling and the choice of the release point rest on region (in the canary design one-run) when it is listed, else on the first estimator listed; each design takes only its own estimators."
}
