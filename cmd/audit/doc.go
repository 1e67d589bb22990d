// Command audit audits the privacy of MCMC samplers and turns attack error
// counts into ε lower bounds with stated confidence.
//
// Usage:
//
//	audit <command> [flags]
//
// Commands:
//
//	epsilon   ε lower bound, GDP μ lower bound and ceiling from error counts
//
// Run "audit <command> -h" for the flags of a command. Exit codes: 0 success
// (or a claimed bound not refuted), 1 a claimed bound refuted, 2 bad input or
// usage, 3 internal failure.
package main
