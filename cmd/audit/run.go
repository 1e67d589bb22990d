package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcmcaudit/mcmcaudit/audit"
)

// runFlags are the flags of "audit run".
type runFlags struct {
	json, csv, plot      string
	workers, trials      int
	seed                 string
	claimEps, claimDelta float64
	claimGDP             float64
	printDefault         bool
	quiet                bool
}

func runRun(args []string, e *env) error {
	fs := newFlagSet("run [config.yaml] [flags]",
		"Audits a sampler configuration: runs it on two adjacent datasets, trains attacks on half of the runs,\n"+
			"counts their errors on the other half and reports ε lower bounds with their confidence; with a claim,\n"+
			"tests it and exits 1 when it is refuted. Without a config file it runs the built-in scenario\n"+
			"(see --print-default).")
	var f runFlags
	fs.StringVar(&f.json, "json", "", "write the report as JSON to FILE (- for stdout)")
	fs.StringVar(&f.csv, "csv", "", "write one row per release point as CSV to FILE (- for stdout)")
	fs.StringVar(&f.plot, "plot", "", "draw ε_lb per release point to FILE (.svg or .png)")
	fs.intVar(&f.workers, "workers", 0, 0, 4096, "concurrent runs (0: one per CPU; never changes the result),")
	fs.intVar(&f.trials, "trials", 0, 0, audit.MaxTrials, "override audit.trials (0: keep the config's),")
	fs.StringVar(&f.seed, "seed", "", "override the config's seed (an unsigned integer)")
	fs.floatVar(&f.claimEps, "claim-epsilon", math.NaN(), "[0, ∞)", func(x float64) bool { return x >= 0 }, "claimed ε (with --claim-delta), in")
	fs.floatVar(&f.claimDelta, "claim-delta", math.NaN(), "[0, 1)", inDelta, "claimed δ (with --claim-epsilon), in")
	fs.floatVar(&f.claimGDP, "claim-gdp", math.NaN(), "[0, ∞)", func(x float64) bool { return x >= 0 }, "claimed μ of μ-GDP, in")
	fs.BoolVar(&f.printDefault, "print-default", false, "print the built-in scenario's YAML and exit")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress output on stderr")
	if err := fs.parse(args, e, 1); err != nil {
		return err
	}
	if f.printDefault {
		_, err := e.stdout.Write(audit.DefaultScenario())
		return err
	}
	cfg, err := loadRunConfig(fs, &f)
	if err != nil {
		return err
	}
	outs := []struct {
		o    output
		flag string
	}{{output(f.json), "json"}, {output(f.csv), "csv"}, {output(f.plot), "plot"}}
	stdoutTaken := 0
	for _, o := range outs {
		if err := o.o.checkWritable(o.flag); err != nil {
			return err
		}
		if o.o.toStdout() {
			stdoutTaken++
		}
	}
	if stdoutTaken > 1 {
		return usagef("only one of --json, --csv, --plot can write to stdout (-)")
	}
	format := ""
	if f.plot != "" {
		if f.plot == "-" {
			return usagef("--plot: needs a file name ending in .svg or .png")
		}
		if format, err = audit.PlotFormat(f.plot); err != nil {
			return usageError{err.Error()}
		}
	}
	plan, err := audit.Build(cfg)
	if err != nil {
		return usageError{err.Error()}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	prog := newProgress(e.stderr, cfg.Audit.Trials, f.quiet)
	trials, err := audit.Simulate(ctx, plan, 0, cfg.Audit.Trials, cfg.Audit.Workers, prog.update)
	prog.finish()
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return usagef("interrupted: no report written")
		}
		return runError(err)
	}
	rep, err := audit.Analyze(plan, trials)
	if err != nil {
		return runError(err)
	}
	if stdoutTaken == 0 {
		if err := audit.WriteTable(e.stdout, plan, rep); err != nil {
			return err
		}
	}
	doc := audit.Document{Versions: audit.CurrentVersions(), Config: cfg, Report: rep}
	if err := output(f.json).write(e, func(w io.Writer) error { return audit.WriteJSON(w, doc) }); err != nil {
		return err
	}
	if err := output(f.csv).write(e, func(w io.Writer) error { return audit.WriteCSV(w, plan, rep) }); err != nil {
		return err
	}
	if err := output(f.plot).write(e, func(w io.Writer) error { return audit.WritePlot(w, format, plan, rep) }); err != nil {
		return err
	}
	if rep.Violated() {
		return violationError{rep.Violations[0]}
	}
	return nil
}

// runError classifies a failure during a run: a diverging chain or a
// scenario that cannot be analysed is the user's input; anything else is
// internal.
func runError(err error) error {
	return usageError{err.Error()}
}

func loadRunConfig(fs *flagSet, f *runFlags) (*audit.Config, error) {
	var cfg *audit.Config
	var err error
	if fs.NArg() == 1 {
		cfg, err = audit.LoadConfig(fs.Arg(0))
	} else {
		cfg, err = audit.DefaultConfig()
	}
	if err != nil {
		return nil, usageError{err.Error()}
	}
	if f.trials > 0 {
		cfg.Audit.Trials = f.trials
	}
	if f.workers > 0 {
		cfg.Audit.Workers = f.workers
	}
	if f.seed != "" {
		var s uint64
		if _, err := fmt.Sscan(f.seed, &s); err != nil {
			return nil, usagef("--seed: invalid value %q: must be an unsigned integer", f.seed)
		}
		cfg.Seed = s
	}
	hasEps, hasDelta, hasGDP := !math.IsNaN(f.claimEps), !math.IsNaN(f.claimDelta), !math.IsNaN(f.claimGDP)
	if hasEps != hasDelta {
		return nil, usagef("--claim-epsilon and --claim-delta go together")
	}
	if hasEps || hasGDP {
		cl := &audit.ClaimConfig{}
		if hasEps {
			cl.Epsilon, cl.Delta = &f.claimEps, &f.claimDelta
		}
		if hasGDP {
			cl.GDP = &f.claimGDP
		}
		cfg.Claim = cl
	}
	if err := cfg.Validate(); err != nil {
		return nil, usageError{err.Error()}
	}
	return cfg, nil
}
