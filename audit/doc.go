// Package audit is the engine of an empirical privacy audit. It runs a
// mechanism many times on two adjacent datasets D and D′, trains attacks on
// one part of the runs (A1), counts their errors on the rest (A2), turns the
// counts into ε lower bounds that hold with a stated confidence (package
// stats), and tests claimed upper bounds against them.
//
// The engine is design + trials → report. The design (Options: release
// points' features, attacks, split, estimators, claims, δ, confidence,
// seed, trials, assignment, selection modes, repeats policy; gathered with
// what the report says about the target into a Design) is apart from the
// execution (Execution: workers, progress, work limit; checkpointing per
// call), which never changes a result. Analysis reads the design and the
// trials and nothing else: every source only produces trials — a
// simulation of a built-in sampler (mechanisms.Chain), the exact
// counterexample sampler, a user's Go mechanisms.Mechanism or a program
// speaking the line protocol (Simulate), precomputed samples (NewSamples,
// Samples.Trials), shard parts (ReadPart, Merger) and checkpoints
// (SimulateCheckpointed). FromDesign prepares the analysis of a design
// alone, as a merge does from the design its parts carry.
//
// Estimators are values behind one interface (Estimator): each chooses its
// own rule on the selection runs and turns the evaluation counts into a
// bound carrying its confidence, assumptions and label. The region bound
// (RegionEstimator, Heller & Fetaya eq. 12) and the GDP μ bound
// (GDPEstimator) are registered; reports give one entry per estimator.
//
// Run audits a mechanism in one call. For long or distributed audits, New
// prepares an Audit whose Simulate runs a range of trials (a shard),
// SimulateCheckpointed persists blocks of trials as it goes, and Analyze
// turns complete trials into a Report. The report is the same for any
// worker count, shard layout or resumption: trial i draws its randomness
// from (seed, side, i) only.
//
// Scenarios written in YAML are parsed by package audit/scenario, which
// builds a Target and Options; reports are printed by the command audit.
package audit
