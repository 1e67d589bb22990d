package main

import (
	"context"
	"io"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/audit/scenario"
	"github.com/mcmcaudit/mcmcaudit/internal/cli"
)

// The command's plumbing lives in internal/cli; these are its names in
// this package.

// env carries the streams a command writes to; tests substitute buffers.
type env struct {
	stdout, stderr io.Writer
}

// cli returns the streams as internal/cli takes them.
func (e *env) cli() *cli.Env { return &cli.Env{Stdout: e.stdout, Stderr: e.stderr} }

type (
	violationError = cli.ViolationError
	output         = cli.Output
)

// namedInput is a file a command reads (a scenario, a trials file), which
// no output may replace.
type namedInput struct{ path, what string }

// namedOutput is an output with the flag that names it.
type namedOutput struct {
	o    output
	flag string
}

// usageError marks bad input: it is printed as one line and exits 2 (as
// a cli.UsageError, which it unwraps to).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// Unwrap returns the error as internal/cli has it.
func (e usageError) Unwrap() error { return cli.UsageError{Msg: e.msg} }

func usagef(format string, args ...any) error { return cli.Usagef(format, args...) }

// interruptedError is a command stopped by SIGINT/SIGTERM: exit code 130
// (as a cli.InterruptedError, which it unwraps to).
type interruptedError struct{ msg string }

func (e interruptedError) Error() string { return e.msg }

// Unwrap returns the error as internal/cli has it.
func (e interruptedError) Unwrap() error { return cli.InterruptedError{Msg: e.msg} }

var errHelp = cli.ErrHelp

// flagSet is cli.FlagSet with the calls of this package.
type flagSet struct{ *cli.FlagSet }

func newFlagSet(name, synopsis string) *flagSet { return &flagSet{cli.NewFlagSet(name, synopsis)} }

func (f *flagSet) parse(args []string, e *env, maxArgs int) error {
	return f.Parse(args, e.cli(), maxArgs)
}

func (f *flagSet) intVar(p *int, name string, def, min, max int, usage string) {
	f.IntVar(p, name, def, min, max, usage)
}

func (f *flagSet) floatVar(p *float64, name string, def float64, rng string, check func(float64) bool, usage string) {
	f.FloatVar(p, name, def, rng, check, usage)
}

func (f *flagSet) pathVar(p *string, name string, stdout bool, usage string) {
	f.PathVar(p, name, stdout, usage)
}

// Common ranges.
var (
	inUnitOpen = cli.InUnitOpen
	inDelta    = cli.InDelta
	positive   = cli.Positive
)

// outputFlags are a command's --json, --csv, --plot and --html.
type outputFlags struct{ cli.OutputFlags }

// outputHelp is the help text of a command's output flags; a flag whose
// text is empty is not registered (the command has no such output).
type outputHelp struct{ json, csv, plot, html string }

func (o *outputFlags) register(fs *flagSet, h outputHelp) {
	o.Register(fs.FlagSet, cli.OutputHelp{JSON: h.json, CSV: h.csv, Plot: h.plot, HTML: h.html})
}

func (o outputFlags) checkReportPlot() error { return o.CheckReportPlot() }

func (o outputFlags) stdoutTaken() bool { return o.StdoutTaken() }

func (o outputFlags) check(e *env, inputs []namedInput, extra ...namedOutput) error {
	in := make([]cli.NamedInput, len(inputs))
	for i, x := range inputs {
		in[i] = cli.NamedInput{Path: x.path, What: x.what}
	}
	out := make([]cli.NamedOutput, len(extra))
	for i, x := range extra {
		out[i] = cli.NamedOutput{O: x.o, Flag: x.flag}
	}
	return o.Check(e.cli(), in, out...)
}

func untilInterrupted[T any](ctx context.Context, f func() (T, error)) (T, error) {
	return cli.UntilInterrupted(ctx, f)
}

func withRunExecution(a *audit.Audit, p audit.Progress, maxWork float64) (*audit.Audit, error) {
	return cli.WithRunExecution(a, p, maxWork)
}

func workError(err error) error { return cli.WorkError(err) }

func writeReport(ctx context.Context, e *env, plan *scenario.Plan, a *audit.Audit, trials *audit.Trials, o outputFlags, quietTable bool, scen []byte) error {
	return cli.WriteReport(ctx, e.cli(), plan, a, trials, o.OutputFlags, quietTable, scen)
}

// loadScenario reads the scenario named on the command line, or the
// built-in one, with the settings of --set applied.
func loadScenario(fs *flagSet, sets ...scenario.Setting) (*scenario.Config, error) {
	path := ""
	if fs.NArg() == 1 {
		path = fs.Arg(0)
	}
	return cli.LoadScenario(path, sets...)
}
