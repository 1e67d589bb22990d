package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/audit/scenario"
	"github.com/mcmcaudit/mcmcaudit/internal/cli"
	"github.com/mcmcaudit/mcmcaudit/internal/clip"
	"github.com/mcmcaudit/mcmcaudit/internal/filekind"
	"github.com/mcmcaudit/mcmcaudit/internal/runner"
	"github.com/mcmcaudit/mcmcaudit/internal/samples"
)

// runFlags are the flags of "audit run".
type runFlags struct {
	outs                 outputFlags
	workers, trials      int
	seed                 string
	claimEps, claimDelta float64
	claimGDP             float64
	printDefault         bool
	printSchema          bool
	shard                string
	estimators           []string
	// sets are --set's FIELD=VALUE, in the order given.
	sets []scenario.Setting
	runner.Flags
}

// printScenarioDocs writes --print-default's built-in scenario or
// --print-schema's JSON Schema of scenario files.
func printScenarioDocs(e *env, f *runFlags) error {
	b := scenario.DefaultScenario()
	if f.printSchema {
		var err error
		if b, err = scenario.JSONSchema(); err != nil {
			return err
		}
	}
	_, err := e.stdout.Write(b)
	return err
}

// runRun is "audit run".
func runRun(args []string, e *env) error {
	fs := newFlagSet("run [config.yaml] [flags]",
		"Audits a sampler configuration: runs it on two adjacent datasets, trains attacks on half of the runs,\n"+
			"counts their errors on the other half and reports ε lower bounds with their confidence; with a claim,\n"+
			"tests it and exits 1 when it is refuted. Without a config file it runs the built-in scenario\n"+
			"(see --print-default). Outputs are checked before the run: each must be a new file in an existing\n"+
			"directory or a regular file (devices, FIFOs, directories and symbolic links are refused), and at most\n"+
			"one may be - (stdout). A run whose estimated work exceeds --max-work is refused before it starts.")
	var f runFlags
	f.register(fs)
	if err := fs.parse(args, e, 1); err != nil {
		return err
	}
	if f.printDefault || f.printSchema {
		return printScenarioDocs(e, &f)
	}
	// From here on SIGINT and SIGTERM end the command with exit 130, in
	// every phase: loading, building, running, analysing.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// Every output is checked before anything is loaded or run.
	shardI, shardN, err := checkRunFlags(e, fs, &f)
	if err != nil {
		return err
	}
	cfg, err := loadRunConfig(fs, &f)
	if err != nil {
		return err
	}
	if err := cli.CheckDataInputs(f.outputs(), cfg); err != nil {
		return err
	}
	plan, err := untilInterrupted(ctx, func() (*scenario.Plan, error) {
		return scenario.BuildWith(cfg, scenario.BuildOptions{Context: ctx, Stderr: e.stderr})
	})
	if plan != nil {
		defer plan.Close()
	}
	if ctx.Err() != nil {
		return interruptedError{"interrupted while preparing the scenario; nothing was run"}
	}
	if err != nil {
		return usageError{cli.FromSetting(err, f.sets)}
	}
	var rec *samples.Recorder
	if f.SaveReleases != "" {
		if rec, err = samples.RecordReleases(plan); err != nil {
			return usageError{err.Error()}
		}
	}
	if f.shard != "" {
		lo, hi := audit.ShardRange(cfg.Audit.Trials, shardI, shardN)
		sizeMemory(plan.Audit.StoreBytes(hi - lo))
		return runner.Shard(ctx, &f.Flags, plan, shardI, shardN, e.cli())
	}

	prog := cli.NewProgress(e.stderr, cfg.Audit.Trials, f.Quiet)
	a, err := withRunExecution(plan.Audit, prog.Update, f.MaxWork)
	if err != nil {
		return err
	}
	if err := workError(a.CheckWork(0, cfg.Audit.Trials, true)); err != nil {
		return err
	}
	sizeMemory(a.MemoryBytes(cfg.Audit.Trials))
	notes := &runner.Notes{}
	ck, err := runner.Locate(&f.Flags, plan.Hash, cfg.Audit.Trials, notes)
	if err != nil {
		return err
	}
	trials, ck, err := runner.Simulate(ctx, a, ck, &f.Flags, cfg.Audit.Trials, prog, args, notes)
	if err != nil {
		return err
	}
	if rec != nil {
		if err := rec.Write(e.cli(), f.SaveReleases); err != nil {
			return err
		}
	}
	if !f.Quiet {
		fmt.Fprintf(e.stderr, "audit: %d trials run; analysing %d release points\n", cfg.Audit.Trials, len(plan.Points()))
	}
	err = writeReport(ctx, e, plan, a, trials, f.outs, f.outs.stdoutTaken(), scenarioAsWritten(fs, args))
	return runner.AfterReport(err, ck, f.Resume, cfg.Audit.Trials, prog, args)
}

// register adds the flags of "audit run".
func (f *runFlags) register(fs *flagSet) {
	f.outs.register(fs, outputHelp{
		json: "write the report as JSON to FILE (- for stdout)",
		csv:  "write one row per release point as CSV to FILE (- for stdout)",
		plot: "draw ε_lb per release point to FILE (.svg or .png)",
		html: "write a self-contained HTML report (verdict, tables, plot) to FILE (- for stdout)",
	})
	fs.intVar(&f.workers, "workers", 0, 0, 4096, "concurrent runs (0: one per CPU; never changes the result),")
	fs.Func("set", "FIELD=VALUE: set a scenario field before the scenario is validated, as if the file said so (repeatable, applied in order), e.g. --set sampler.sgld.step.eta=0.05 --set audit.attacks=[threshold,logistic]", func(s string) error {
		st, err := scenario.ParseSetting(s)
		if err != nil {
			return err
		}
		f.sets = append(f.sets, st)
		return nil
	})
	fs.intVar(&f.trials, "trials", 0, 0, audit.MaxTrials, "override audit.trials (0: keep the config's),")
	fs.StringVar(&f.seed, "seed", "", "override the config's seed (an unsigned integer)")
	fs.Var(cli.EstimatorsFlag{Names: &f.estimators}, "estimators", "override audit.estimators: NAME,… among "+strings.Join(audit.EstimatorNames(), ", "))
	fs.floatVar(&f.claimEps, "claim-epsilon", math.NaN(), "[0, ∞)", func(x float64) bool { return x >= 0 }, "claimed ε (with --claim-delta), in")
	fs.floatVar(&f.claimDelta, "claim-delta", math.NaN(), "[0, 1)", inDelta, "claimed δ (with --claim-epsilon), in")
	fs.floatVar(&f.claimGDP, "claim-gdp", math.NaN(), "[0, ∞)", func(x float64) bool { return x >= 0 }, "claimed μ of μ-GDP, in")
	fs.BoolVar(&f.printDefault, "print-default", false, "print the built-in scenario's YAML and exit")
	fs.BoolVar(&f.printSchema, "print-schema", false, "print the JSON Schema of scenario files (for editors) and exit")
	fs.BoolVar(&f.Quiet, "quiet", false, "no progress output on stderr")
	fs.StringVar(&f.shard, "shard", "", "run only shard I/N of the trials (I in [0, N)) and write them to --out for 'audit merge'")
	fs.pathVar(&f.Out, "out", false, "trials file written by --shard")
	fs.StringVar(&f.Checkpoint, "checkpoint", "", "persist completed trials in DIR as the run goes (resumable; default: a directory in the user's cache, saving from the trials' first second on, removed when the run ends)")
	fs.BoolVar(&f.NoCheckpoint, "no-checkpoint", false, "do not persist completed trials (an interrupted run is then lost)")
	fs.BoolVar(&f.Resume, "resume", false, "continue the run saved in --checkpoint DIR, or in the default checkpoint of this scenario and flags")
	fs.StringVar(&f.SaveReleases, "save-releases", "", "also write every run's releases to PREFIX-D.csv and PREFIX-DPRIME.csv, with their trial indices (for 'audit analyze')")
	fs.floatVar(&f.MaxWork, "max-work", 0, "[0, ∞)", func(x float64) bool { return x >= 0 },
		fmt.Sprintf("refuse a run whose estimated work exceeds this many units of a few ns each (0: the default %g), in", audit.DefaultMaxWork))
}

// checkRunFlags checks the combinations of flags and every output before
// anything is loaded: a long run must not end in "cannot write". It
// returns the shard, when one is asked for.
func checkRunFlags(e *env, fs *flagSet, f *runFlags) (shardI, shardN int, err error) {
	if err := checkRunValues(fs, f); err != nil {
		return 0, 0, err
	}
	var inputs []namedInput
	if fs.NArg() == 1 {
		inputs = append(inputs, namedInput{fs.Arg(0), "scenario file"})
	}
	if f.shard != "" {
		return checkShardFlags(e, f, inputs)
	}
	if err := checkCheckpointFlags(f); err != nil {
		return 0, 0, err
	}
	var extra []namedOutput
	if f.SaveReleases != "" {
		extra = append(extra, namedOutput{output(f.SaveReleases + "-D.csv"), "save-releases"}, namedOutput{output(f.SaveReleases + "-DPRIME.csv"), "save-releases"})
	}
	return 0, 0, f.outs.check(e, inputs, extra...)
}

// checkRunValues refuses the values no run takes: an empty --checkpoint
// or --save-releases, a --save-releases that names a directory, a --plot
// that names no format, --no-checkpoint with a checkpoint.
func checkRunValues(fs *flagSet, f *runFlags) error {
	if f.Checkpoint == "" && cli.Given(fs.FlagSet, "checkpoint") {
		return usagef("--checkpoint: needs a DIR, got \"\" (without --checkpoint the run keeps its default checkpoint)")
	}
	if f.SaveReleases == "" && cli.Given(fs.FlagSet, "save-releases") {
		return usagef("--save-releases: needs a PREFIX for PREFIX-D.csv and PREFIX-DPRIME.csv, got \"\"")
	}
	if err := checkReleasesPrefix(f.SaveReleases); err != nil {
		return err
	}
	if err := f.outs.checkReportPlot(); err != nil {
		return err
	}
	if f.NoCheckpoint && (f.Resume || f.Checkpoint != "") {
		return usagef("--no-checkpoint: not with --checkpoint or --resume")
	}
	return nil
}

// checkShardFlags checks a --shard run: I/N, a trials file to write, and
// none of the outputs of a whole run.
func checkShardFlags(e *env, f *runFlags, inputs []namedInput) (shardI, shardN int, err error) {
	if shardI, shardN, err = parseShard(f.shard); err != nil {
		return 0, 0, err
	}
	if f.Out == "" || f.Out == "-" {
		return 0, 0, usagef("--shard needs --out FILE for the trials file (a file: it is binary)")
	}
	if f.outs.Asked() || f.Checkpoint != "" || f.Resume || f.SaveReleases != "" {
		return 0, 0, usagef("--shard writes only a trials file; reports come from 'audit merge'")
	}
	return shardI, shardN, f.outs.check(e, inputs, namedOutput{output(f.Out), "out"})
}

// checkCheckpointFlags checks the flags of a whole run that only --shard
// or a fresh run take: --out, a --checkpoint that is a file, and
// --save-releases with --resume.
func checkCheckpointFlags(f *runFlags) error {
	if f.Out != "" {
		return usagef("--out is only used with --shard")
	}
	if f.Checkpoint != "" {
		if st, err := os.Stat(f.Checkpoint); err == nil && !st.IsDir() {
			return usagef("--checkpoint: %s exists and is not a directory", f.Checkpoint)
		}
	}
	if f.SaveReleases != "" && f.Resume {
		return usagef("--save-releases needs every run in this process (not with --resume)")
	}
	return nil
}

// outputs lists every file output of "audit run" with its flag.
func (f *runFlags) outputs() []cli.NamedOutput {
	outs := append(f.outs.Named(), cli.NamedOutput{O: output(f.Out), Flag: "out"})
	if f.SaveReleases != "" {
		outs = append(outs, cli.NamedOutput{O: output(f.SaveReleases + "-D.csv"), Flag: "save-releases"},
			cli.NamedOutput{O: output(f.SaveReleases + "-DPRIME.csv"), Flag: "save-releases"})
	}
	return outs
}

// checkReleasesPrefix refuses a --save-releases PREFIX that is a
// directory or ends in a path separator: "out/" would write the hidden
// files out/-D.csv and out/-DPRIME.csv. PREFIX is the start of a file name.
func checkReleasesPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if strings.HasSuffix(prefix, "/") || strings.HasSuffix(prefix, string(filepath.Separator)) {
		return usagef("--save-releases: PREFIX %s ends in a path separator; it starts the names PREFIX-D.csv and PREFIX-DPRIME.csv (e.g. %s)",
			clip.Quote(prefix), clip.Quote(filepath.Join(prefix, "releases")))
	}
	if st, err := os.Stat(prefix); err == nil && st.IsDir() {
		return usagef("--save-releases: PREFIX %s is a directory; it starts the names PREFIX-D.csv and PREFIX-DPRIME.csv (e.g. %s)",
			clip.Quote(prefix), clip.Quote(filepath.Join(prefix, "releases")))
	}
	return nil
}

// parseShard parses I/N with 0 ≤ I < N.
func parseShard(s string) (i, n int, err error) {
	if _, err := fmt.Sscanf(s, "%d/%d", &i, &n); err != nil || n < 1 || i < 0 || i >= n || fmt.Sprintf("%d/%d", i, n) != s {
		return 0, 0, usagef("--shard: must be I/N with 0 ≤ I < N, got %s", clip.Quote(s))
	}
	return i, n, nil
}

// scenarioAsWritten is the scenario file as the user wrote it (YAML, with
// its comments), or the built-in scenario without one, followed by the
// command line as a YAML comment, since flags can override the file.
func scenarioAsWritten(fs *flagSet, args []string) []byte {
	var text []byte
	if fs.NArg() == 1 {
		b, err := filekind.ReadRegular(fs.Arg(0), scenario.MaxConfigBytes)
		if err != nil {
			return nil
		}
		text = b
	} else {
		text = scenario.DefaultScenario()
	}
	if len(text) > 0 && text[len(text)-1] != '\n' {
		text = append(text, '\n')
	}
	return append(text, "# audited with: audit run "+strings.Join(args, " ")+"\n"...)
}

// loadRunConfig loads the scenario with --set's settings and applies the
// flags that override it (trials, workers, seed, claims).
func loadRunConfig(fs *flagSet, f *runFlags) (*scenario.Config, error) {
	cfg, err := loadScenario(fs, f.sets...)
	if err != nil {
		return nil, err
	}
	if f.trials > 0 {
		cfg.Audit.Trials = f.trials
	}
	if f.workers > 0 {
		cfg.Audit.Workers = f.workers
	}
	if f.estimators != nil {
		cfg.Audit.Estimators = f.estimators
	}
	if f.seed != "" {
		s, err := strconv.ParseUint(f.seed, 10, 64)
		if err != nil {
			return nil, usagef("--seed: invalid value %s: must be an unsigned integer", clip.Quote(f.seed))
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
