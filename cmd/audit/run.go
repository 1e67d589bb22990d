package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/audit/scenario"
	"github.com/mcmcaudit/mcmcaudit/internal/report"
)

// runFlags are the flags of "audit run".
type runFlags struct {
	json, csv, plot      string
	html                 string
	workers, trials      int
	seed                 string
	claimEps, claimDelta float64
	claimGDP             float64
	printDefault         bool
	quiet                bool
	shard, out           string
	checkpoint           string
	resume               bool
	saveReleases         string
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
	fs.StringVar(&f.html, "html", "", "write a self-contained HTML report (verdict, tables, plot) to FILE (- for stdout)")
	fs.intVar(&f.workers, "workers", 0, 0, 4096, "concurrent runs (0: one per CPU; never changes the result),")
	fs.intVar(&f.trials, "trials", 0, 0, audit.MaxTrials, "override audit.trials (0: keep the config's),")
	fs.StringVar(&f.seed, "seed", "", "override the config's seed (an unsigned integer)")
	fs.floatVar(&f.claimEps, "claim-epsilon", math.NaN(), "[0, ∞)", func(x float64) bool { return x >= 0 }, "claimed ε (with --claim-delta), in")
	fs.floatVar(&f.claimDelta, "claim-delta", math.NaN(), "[0, 1)", inDelta, "claimed δ (with --claim-epsilon), in")
	fs.floatVar(&f.claimGDP, "claim-gdp", math.NaN(), "[0, ∞)", func(x float64) bool { return x >= 0 }, "claimed μ of μ-GDP, in")
	fs.BoolVar(&f.printDefault, "print-default", false, "print the built-in scenario's YAML and exit")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress output on stderr")
	fs.StringVar(&f.shard, "shard", "", "run only shard I/N of the trials (I in [0, N)) and write them to --out for 'audit merge'")
	fs.StringVar(&f.out, "out", "", "trials file written by --shard")
	fs.StringVar(&f.checkpoint, "checkpoint", "", "persist completed trials in DIR as the run goes (resumable)")
	fs.BoolVar(&f.resume, "resume", false, "continue the run saved in --checkpoint DIR")
	fs.StringVar(&f.saveReleases, "save-releases", "", "also write every run's releases to PREFIX-D.csv and PREFIX-DPRIME.csv, with their trial indices (for 'audit analyze')")
	if err := fs.parse(args, e, 1); err != nil {
		return err
	}
	if f.printDefault {
		_, err := e.stdout.Write(scenario.DefaultScenario())
		return err
	}
	cfg, err := loadRunConfig(fs, &f)
	if err != nil {
		return err
	}
	outs := []struct {
		o    output
		flag string
	}{{output(f.json), "json"}, {output(f.csv), "csv"}, {output(f.plot), "plot"}, {output(f.html), "html"}}
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
		return usagef("only one of --json, --csv, --html can write to stdout (-)")
	}
	if f.plot != "" {
		if f.plot == "-" {
			return usagef("--plot: needs a file name ending in .svg or .png")
		}
		if _, err = report.PlotFormat(f.plot); err != nil {
			return usagef("--plot: %v", err)
		}
	}
	plan, err := scenario.BuildWith(cfg, scenario.BuildOptions{Stderr: e.stderr})
	if err != nil {
		return usageError{err.Error()}
	}
	defer plan.Close()

	if f.resume && f.checkpoint == "" {
		return usagef("--resume needs --checkpoint DIR")
	}
	var rec *recorder
	if f.saveReleases != "" {
		if f.shard != "" || f.resume {
			return usagef("--save-releases needs every run in this process (not with --shard or --resume)")
		}
		if err := output(f.saveReleases + "-D.csv").checkWritable("save-releases"); err != nil {
			return err
		}
		if rec, err = recordReleases(plan); err != nil {
			return usageError{err.Error()}
		}
	}
	if f.shard != "" {
		return runShard(fs, &f, plan, e)
	}
	if f.out != "" {
		return usagef("--out is only used with --shard")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	prog := newProgress(e.stderr, cfg.Audit.Trials, f.quiet)
	a := plan.Audit.WithProgress(prog.update)
	var trials *audit.Trials
	if f.checkpoint != "" {
		trials, err = a.SimulateCheckpointed(ctx, f.checkpoint, f.resume)
	} else {
		trials, err = a.Simulate(ctx, 0, cfg.Audit.Trials)
	}
	prog.finish()
	if err != nil {
		var ie *audit.InterruptedError
		var ce *audit.CheckpointError
		switch {
		case errors.As(err, &ie):
			return interrupted(ie, fs, &f)
		case ctx.Err() != nil:
			return interrupted(&audit.InterruptedError{Total: cfg.Audit.Trials}, fs, &f)
		case errors.As(err, &ce):
			return checkpointError(ce)
		}
		return runError(err)
	}
	if rec != nil {
		if err := rec.write(f.saveReleases); err != nil {
			return err
		}
	}
	return writeReport(e, plan, trials, reportOutputs{f.json, f.csv, f.plot, f.html}, stdoutTaken > 0)
}

// writeReport analyses complete trials of a scenario and writes the
// report; it returns a violationError when a claim is refuted.
func writeReport(e *env, plan *scenario.Plan, trials *audit.Trials, o reportOutputs, quietTable bool) error {
	rep, err := plan.Audit.Analyze(trials)
	if err != nil {
		return runError(err)
	}
	doc := scenario.Document{Versions: audit.CurrentVersions(), Config: plan.Config, Report: rep}
	scen, _ := json.MarshalIndent(plan.Config, "", "  ")
	return writeReportFiles(e, rep, doc, scen, o, quietTable)
}

// interruptedError is a run stopped by SIGINT/SIGTERM: exit code 130.
type interruptedError struct{ msg string }

func (e interruptedError) Error() string { return e.msg }

func interrupted(ie *audit.InterruptedError, fs *flagSet, f *runFlags) error {
	msg := ie.Error()
	if ie.Dir != "" {
		cmd := "audit run"
		if fs.NArg() == 1 {
			cmd += " " + fs.Arg(0)
		}
		msg += fmt.Sprintf("; resume with: %s --checkpoint %s --resume", cmd, ie.Dir)
	}
	return interruptedError{msg}
}

// runShard runs one shard and writes its trials file.
func runShard(fs *flagSet, f *runFlags, plan *scenario.Plan, e *env) error {
	var i, n int
	if _, err := fmt.Sscanf(f.shard, "%d/%d", &i, &n); err != nil || n < 1 || i < 0 || i >= n || fmt.Sprintf("%d/%d", i, n) != f.shard {
		return usagef("--shard: must be I/N with 0 ≤ I < N, got %q", f.shard)
	}
	if n > plan.Config.Audit.Trials {
		return usagef("--shard: N must be ≤ audit.trials = %d, got %d", plan.Config.Audit.Trials, n)
	}
	if f.out == "" || f.out == "-" {
		return usagef("--shard needs --out FILE for the trials file (a file: it is binary)")
	}
	if f.json != "" || f.csv != "" || f.plot != "" || f.html != "" || f.checkpoint != "" {
		return usagef("--shard writes only a trials file; reports come from 'audit merge'")
	}
	if err := output(f.out).checkWritable("out"); err != nil {
		return err
	}
	lo, hi := audit.ShardRange(plan.Config.Audit.Trials, i, n)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	prog := newProgress(e.stderr, hi-lo, f.quiet)
	t, err := plan.Audit.WithProgress(prog.update).Simulate(ctx, lo, hi)
	prog.finish()
	if err != nil {
		if ctx.Err() != nil {
			return interruptedError{"interrupted; the shard's trials file was not written"}
		}
		return runError(err)
	}
	spec, err := plan.Spec()
	if err != nil {
		return err
	}
	if err := output(f.out).write(e, func(w io.Writer) error { return audit.WritePart(w, t, spec) }); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "shard %d/%d: trials [%d, %d) of %d written to %s (config %.12s)\n", i, n, lo, hi, plan.Config.Audit.Trials, f.out, plan.Hash)
	return nil
}

// checkpointError names the flags a checkpoint failure is about.
func checkpointError(ce *audit.CheckpointError) error {
	switch {
	case errors.Is(ce, audit.ErrCheckpointExists):
		return usagef("--checkpoint: %s already holds a checkpoint; add --resume to continue it, or choose an empty directory", ce.Dir)
	case errors.Is(ce, audit.ErrNoCheckpoint):
		return usagef("--resume: %s holds no checkpoint", ce.Dir)
	case errors.Is(ce, audit.ErrCheckpointMismatch):
		return usagef("--resume: the checkpoint in %s %v", ce.Dir, ce.Err)
	case errors.Is(ce, audit.ErrCheckpointBusy):
		return usagef("--checkpoint: %s is in use by another audit run (wait for it, or choose another directory)", ce.Dir)
	}
	return usagef("--checkpoint: %v", ce)
}

// runError classifies a failure during a run: a diverging chain or a
// scenario that cannot be analysed is the user's input; anything else is
// internal.
func runError(err error) error {
	return usageError{err.Error()}
}

// loadScenario reads the scenario named on the command line, or the
// built-in one.
func loadScenario(fs *flagSet) (*scenario.Config, error) {
	var cfg *scenario.Config
	var err error
	if fs.NArg() == 1 {
		cfg, err = scenario.LoadConfig(fs.Arg(0))
	} else {
		cfg, err = scenario.DefaultConfig()
	}
	if err != nil {
		return nil, usageError{err.Error()}
	}
	return cfg, nil
}

func loadRunConfig(fs *flagSet, f *runFlags) (*scenario.Config, error) {
	cfg, err := loadScenario(fs)
	if err != nil {
		return nil, err
	}
	if f.trials > 0 {
		cfg.Audit.Trials = f.trials
	}
	if f.workers > 0 {
		cfg.Audit.Workers = f.workers
	}
	if f.seed != "" {
		s, err := strconv.ParseUint(f.seed, 10, 64)
		if err != nil {
			return nil, usagef("--seed: invalid value %q: must be an unsigned integer", f.seed)
		}
		cfg.Seed = s
	}
	hasEps, hasDelta, hasGDP := !math.IsNaN(f.claimEps), !math.IsNaN(f.claimDelta), !math.IsNaN(f.claimGDP)
	if hasEps != hasDelta {
		return nil, usagef("--claim-epsilon and --claim-delta go together")
	}
	if hasEps || hasGDP {
		cl := &scenario.ClaimConfig{}
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
