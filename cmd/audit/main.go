package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/internal/cli"
	"github.com/mcmcaudit/mcmcaudit/internal/clip"
	"github.com/mcmcaudit/mcmcaudit/internal/suggest"
)

// Exit codes, as "audit -h" lists them.
const (
	exitOK        = 0
	exitViolation = 1
	exitUsage     = 2
	exitInternal  = 3
	// exitInterrupted follows the shell's 128+SIGINT convention: the run
	// was stopped, not wrong; 'audit run' keeps its completed trials in its
	// checkpoint (the default one unless --no-checkpoint) for --resume.
	exitInterrupted = 130
)

// command is one subcommand of audit.
type command struct {
	name    string
	summary string
	run     func(args []string, env *env) error
}

func commands() []command {
	cmds := []command{
		{"epsilon", "ε lower bound, GDP μ lower bound and ceiling from attack error counts, or from canary guesses (--one-run)", runEpsilon},
		{"analyze", "audit precomputed samples: runs on D and on D′ from .csv, .csv.gz or .npy files", runAnalyze},
		{"run", "audit a sampler configuration (YAML; the built-in scenario without one)", runRun},
		{"bounds", "every theoretical upper bound for a scenario's sampler, with its assumptions checked", runBounds},
		{"merge", "join the trials files of 'audit run --shard' and report", runMerge},
		{"curve", "exact ε lower bounds of cyclic SGLD on the Heller–Fetaya counterexample", runCurve},
		{"version", "print the module version and VCS revision of this binary (also: audit --version)", runVersion},
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
	fmt.Fprintln(w, `Run "audit <command> -h" for a command's flags, "audit run --explain FIELD" for a scenario`)
	fmt.Fprintln(w, `field (docs/scenario.md has them all), "audit --version" for the version.`)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Exit codes:")
	fmt.Fprintln(w, "  0    success, or a claim not refuted")
	fmt.Fprintln(w, "  1    a claimed bound is refuted (VIOLATION)")
	fmt.Fprintln(w, "  2    bad input or usage (one line on stderr naming the field or flag and its allowed range)")
	fmt.Fprintln(w, "  3    internal failure")
	fmt.Fprintln(w, "  130  interrupted (SIGINT/SIGTERM); 'audit run' keeps its completed trials in a checkpoint (by")
	fmt.Fprintln(w, "       default in the user's cache, or in --checkpoint DIR; none with --no-checkpoint) and prints")
	fmt.Fprintln(w, "       the command that resumes it")
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
	case "-version", "--version":
		return exitCode(runVersion(args[1:], e), "version", e)
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		// Every write to stdout is checked: a command whose output could
		// not be written does not exit 0 (or 1) as if it had been.
		out := cli.NewCheckedWriter(e.stdout)
		err := c.run(args[1:], &env{stdout: out, stderr: e.stderr})
		var v violationError
		if out.Err() != nil && (err == nil || errors.As(err, &v) || errors.Is(err, out.Err())) {
			err = cli.WriteError{Msg: fmt.Sprintf("cannot write standard output: %v", out.Err())}
		}
		return exitCode(err, c.name, e)
	}
	hint := ""
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	if near, ok := suggest.Nearest(strings.TrimLeft(args[0], "-"), names); ok {
		hint = fmt.Sprintf("did you mean %q? ", near)
	}
	fmt.Fprintf(e.stderr, "audit: unknown command %s (%scommands: %s)\n", clip.Quote(args[0]), hint, commandNames())
	return exitUsage
}

// runVersion prints the version of the binary: "audit version" and
// "audit --version".
func runVersion(args []string, e *env) error {
	fs := newFlagSet("version", "Prints the module version, the VCS revision the binary was built from, and the Go version.")
	if err := fs.parse(args, e, 0); err != nil {
		return err
	}
	bi, ok := debug.ReadBuildInfo()
	_, err := io.WriteString(e.stdout, versionText(bi, ok))
	return err
}

// versionText describes a build: the module path and version ("(devel)"
// for a build from a work tree without a version), the VCS revision with
// its time and whether the tree had uncommitted changes ("revision
// unknown" when the build recorded none, e.g. go build -buildvcs=false or
// a source tree without .git), and the Go version and platform.
func versionText(bi *debug.BuildInfo, ok bool) string {
	module, version := "github.com/mcmcaudit/mcmcaudit", "(devel)"
	goVersion := runtime.Version()
	var rev, when string
	modified := false
	if ok && bi != nil {
		if bi.Main.Path != "" {
			module = bi.Main.Path
		}
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		if bi.GoVersion != "" {
			goVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "audit %s %s\n", module, version)
	if rev == "" {
		b.WriteString("revision unknown (the build recorded no version control information)\n")
	} else {
		fmt.Fprintf(&b, "revision %s", rev)
		var notes []string
		if when != "" {
			notes = append(notes, "committed "+when)
		}
		if modified {
			notes = append(notes, "with uncommitted changes")
		}
		if len(notes) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(notes, ", "))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%s %s/%s\n", goVersion, runtime.GOOS, runtime.GOARCH)
	return b.String()
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
	var u cli.UsageError
	var v cli.ViolationError
	var in cli.InterruptedError
	var we cli.WriteError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errHelp):
		return exitOK
	case errors.As(err, &u):
		fmt.Fprintf(e.stderr, "audit %s: %s\n", name, oneLine(u.Msg))
		return exitUsage
	case errors.As(err, &in):
		fmt.Fprintf(e.stderr, "audit %s: %s\n", name, oneLine(in.Msg))
		return exitInterrupted
	case errors.As(err, &we):
		fmt.Fprintf(e.stderr, "audit %s: %s\n", name, oneLine(we.Msg))
		return exitInternal
	case errors.As(err, &v):
		fmt.Fprintf(e.stderr, "audit %s: VIOLATION: %s\n", name, oneLine(v.Msg))
		return exitViolation
	}
	fmt.Fprintf(e.stderr, "audit %s: internal error: %s\n", name, oneLine(err.Error()))
	return exitInternal
}

// oneLine joins a message onto one line and cuts it to clip.MaxLine
// bytes: whatever input a message echoes, the line stays short.
func oneLine(s string) string {
	if len(s) > 4*clip.MaxLine {
		s = clip.Line(s, 4*clip.MaxLine) // before splitting megabytes into fields
	}
	return clip.Line(strings.Join(strings.Fields(s), " "), clip.MaxLine)
}

func main() {
	// Go's default garbage-collection target, and a memory limit sized to
	// each audit's store once it is known (memlimit.go).
	sizeMemory = setMemoryLimit
	os.Exit(run(os.Args[1:], &env{stdout: os.Stdout, stderr: os.Stderr}))
}
