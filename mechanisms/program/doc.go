// Package program runs a sampler that is a separate program, in any
// language, speaking the line protocol mcmcaudit/1 (docs/protocol.md): the
// program prints a handshake naming its release dimension and release
// points, then answers one JSON line per trial request on its stdin.
//
// A Pool keeps up to Config.MaxProcs long-lived processes so that a
// program's start-up cost (imports, model building) is paid once per
// process, and serves Run calls from many goroutines at once. Every fault of
// the program — a crash, a hang, a stray or malformed line, a wrong trial
// id, dimension or release count, a non-finite value, a bad handshake — is
// reported as one line by an *Error naming the trial, side, seed and command
// (and, where useful, the offending line and the last lines of the
// program's stderr); a deliberate {"trial": i, "error": "..."} answer is a
// *TrialError. Crashes and hangs are retried in another process (the dead
// one is replaced) up to Config.Retries times. Every process runs in its own process group, which
// is killed on a timeout, a protocol fault, cancellation or Close, and every
// process is reaped: a Pool leaves no zombie or orphan behind.
//
// RunFresh runs a trial in a brand-new process, and Compare checks two
// results bit for bit, so that a caller can verify that the program is a
// deterministic function of (seed, side), as an audit whose results must
// not depend on the worker count requires.
//
// The package speaks the protocol and manages processes only: writing the
// datasets the program reads (MCMCAUDIT_D, MCMCAUDIT_DPRIME, …) is the
// caller's job, through Config.Env.
package program
