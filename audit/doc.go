// Package audit is the engine of an empirical privacy audit. It runs a
// mechanism many times on two adjacent datasets D and D′, trains attacks on
// one part of the runs (A1), counts their errors on the rest (A2), turns the
// counts into ε lower bounds that hold with a stated confidence (package
// stats), and tests claimed upper bounds against them.
//
// Run audits any mechanism in one call: a built-in sampler
// (mechanisms.Chain), the exact counterexample sampler, a user's own Go type
// implementing mechanisms.Mechanism, or a program speaking the line
// protocol. Target says what is audited, Options how (every zero value is
// a documented default or an error). For long or distributed audits, New
// prepares an Audit whose Simulate runs a range of trials (a shard),
// SimulateCheckpointed persists blocks of trials as it goes, and Analyze
// turns complete trials — merged from parts with Merger — into a Report.
// The report is the same for any worker count, shard layout or
// resumption: trial i draws its randomness from (seed, side, i) only.
//
// Scenarios written in YAML are parsed by package audit/scenario, which
// builds a Target and Options; reports are printed by the command audit.
package audit
