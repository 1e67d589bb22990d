// Command audit audits the privacy of MCMC samplers and turns attack error
// counts into ε lower bounds with stated confidence.
//
// Usage:
//
//	audit <command> [flags]
//
// Commands:
//
//	analyze   audit precomputed samples: runs on D and on D′ from files
//	bounds    every theoretical upper bound for a scenario's sampler
//	curve     exact ε lower bounds of cyclic SGLD on the Heller–Fetaya counterexample
//	epsilon   ε and μ lower bounds from error counts, or from canary guesses (--one-run)
//	merge     join the trials files of "audit run --shard" and report
//	run       audit a sampler configuration (YAML; a built-in scenario without one)
//	version   print the module version and VCS revision of this binary
//
// Run "audit <command> -h" for the flags of a command. Exit codes: 0 success
// (or a claimed bound not refuted), 1 a claimed bound refuted, 2 bad input or
// usage, 3 internal failure, 130 interrupted ('audit run' is resumable
// with --resume from its checkpoint, kept by default).
package main
