// Package cli is the plumbing every subcommand of the audit command
// shares: the streams a command writes to (Env), the errors that choose
// its exit code (UsageError, ViolationError, InterruptedError,
// WriteError), a flag set whose every parse problem is one line naming the
// flag and its allowed range (FlagSet), outputs checked before any work
// and written whole or not at all (Output, OutputFlags, CheckOutputs),
// progress on stderr (Progress), interruption by SIGINT/SIGTERM
// (UntilInterrupted), and the writing of an audit's report in every
// format (WriteReport).
//
// It holds no analysis of its own: it calls audit, report and
// audit/scenario, and is called by cmd/audit and the packages of its
// subcommands.
package cli
