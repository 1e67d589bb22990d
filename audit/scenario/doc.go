// Package scenario reads audit scenarios written in YAML — model, data,
// neighbour, sampler, release points, statistics and claims — validates
// them with errors that name the field and its allowed range, and builds
// the engine's audit.Target and audit.Options from them (loading CSV data,
// crafting DeepFool canaries, attaching the exact ε of the counterexample).
// It is a thin layer: everything it does can be done through package audit
// directly. A scenario's trials files carry the scenario and the audit's
// design (Plan.Spec, ParsePartSpec), theorem claims included as data, so
// that a merge needs nothing else.
//
// Decoding is strict and located: the YAML text is parsed into nodes (with
// limits on bytes and nodes), then walked field by field, so that every
// error says the line and the field's path in YAML terms (see Error):
// unknown fields with the nearest name, types in user terms, integers that
// are exactly integers. Checks after decoding (Validate, Build, and the
// samplers' and models' own checks) return a *field.Error carrying the
// field's path; the scenario places it in the YAML text from the path
// alone, never from the message. The reference of every field (Reference, Lookup,
// Explain) is a table checked against the Go types by the tests;
// docs/scenario.md is generated from it (go generate), and ExampleScenario
// writes a scenario for any sampler and model from it alone.
package scenario
