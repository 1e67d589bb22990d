package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"
)

// Exit codes (DESIGN.md).
const (
	exitOK        = 0
	exitViolation = 1
	exitUsage     = 2
	exitInternal  = 3
	// exitInterrupted follows the shell's 128+SIGINT convention: the run
	// was stopped, not wrong; with --checkpoint its work is saved.
	exitInterrupted = 130
)

// command is one subcommand of audit.
type command struct {
	name    string
	summary string
	run     func(args []string, env *env) error
}

// env carries the streams a command writes to; tests substitute buffers.
type env struct {
	stdout, stderr io.Writer
}

// usageError marks bad input: it is printed as one line and exits 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// violationError marks a refuted claim: exit 1 after the report is written.
type violationError struct{ msg string }

func (e violationError) Error() string { return e.msg }

func commands() []command {
	cmds := []command{
		{"epsilon", "ε lower bound, GDP μ lower bound and ceiling from attack error counts", runEpsilon},
		{"run", "audit a sampler configuration (YAML; the built-in scenario without one)", runRun},
		{"bounds", "every theoretical upper bound for a scenario's sampler, with its assumptions checked", runBounds},
		{"merge", "join the trials files of 'audit run --shard' and report", runMerge},
		{"curve", "exact ε lower bounds of cyclic SGLD on the Heller–Fetaya counterexample", runCurve},
	}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].name < cmds[j].name })
	return cmds
}

func topUsage(w io.Writer) {
	fmt.Fprintln(w, "audit: empirical privacy auditing of MCMC samplers")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: audit <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, `Run "audit <command> -h" for a command's flags.`)
	fmt.Fprintln(w, "Exit codes: 0 ok / claim not refuted, 1 claim refuted, 2 bad input, 3 internal failure.")
}

// run executes the command line and returns the exit code.
func run(args []string, e *env) int {
	if len(args) == 0 {
		topUsage(e.stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		topUsage(e.stdout)
		return exitOK
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		// Every write to stdout is checked: a command whose output could
		// not be written does not exit 0 (or 1) as if it had been.
		out := &checkedWriter{w: e.stdout}
		err := c.run(args[1:], &env{stdout: out, stderr: e.stderr})
		var v violationError
		if out.err != nil && (err == nil || errors.As(err, &v) || errors.Is(err, out.err)) {
			err = writeError{fmt.Sprintf("cannot write standard output: %v", out.err)}
		}
		return exitCode(err, c.name, e)
	}
	fmt.Fprintf(e.stderr, "audit: unknown command %q (commands: %s)\n", args[0], commandNames())
	return exitUsage
}

func commandNames() string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return strings.Join(names, ", ")
}

// exitCode maps a command's error to an exit code, printing it on one line.
func exitCode(err error, name string, e *env) int {
	var u usageError
	var v violationError
	var in interruptedError
	var we writeError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errHelp):
		return exitOK
	case errors.As(err, &u):
		fmt.Fprintf(e.stderr, "audit %s: %s\n", name, oneLine(u.msg))
		return exitUsage
	case errors.As(err, &in):
		fmt.Fprintf(e.stderr, "audit %s: %s\n", name, oneLine(in.msg))
		return exitInterrupted
	case errors.As(err, &we):
		fmt.Fprintf(e.stderr, "audit %s: %s\n", name, oneLine(we.msg))
		return exitInternal
	case errors.As(err, &v):
		fmt.Fprintf(e.stderr, "audit %s: VIOLATION: %s\n", name, oneLine(v.msg))
		return exitViolation
	}
	fmt.Fprintf(e.stderr, "audit %s: internal error: %s\n", name, oneLine(err.Error()))
	return exitInternal
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func main() {
	// An audit's heap is dominated by its long-lived feature store; letting
	// the heap grow 25% (not 100%) before a collection keeps the peak near
	// that store's size at no measurable cost. GOGC overrides it.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(25)
	}
	os.Exit(run(os.Args[1:], &env{stdout: os.Stdout, stderr: os.Stderr}))
}
