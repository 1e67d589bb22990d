// Package scenario reads audit scenarios written in YAML — model, data,
// neighbour, sampler, release points, statistics and claims — validates
// them with errors that name the field and its allowed range, and builds
// the engine's audit.Target and audit.Options from them (loading CSV data,
// crafting DeepFool canaries, attaching the exact ε of the counterexample).
// It is a thin layer: everything it does can be done through package audit
// directly. A scenario's trials files carry the scenario and its data
// (Plan.Spec, ParseSpec), so that a merge needs nothing else.
package scenario
