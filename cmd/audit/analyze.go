package main

import (
	"context"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/audit/scenario"
	"github.com/mcmcaudit/mcmcaudit/internal/cli"
	"github.com/mcmcaudit/mcmcaudit/internal/clip"
	"github.com/mcmcaudit/mcmcaudit/internal/samples"
)

// analyzeFlags are the flags of "audit analyze".
type analyzeFlags struct {
	outs                 outputFlags
	points               string
	scenario             string
	seed                 string
	delta, confidence    float64
	split                string
	attacks              string
	claimEps, claimDelta float64
	claimGDP             float64
	workers              int
	allowDuplicateRows   bool
	draws, params        string
	stanColumns          bool
}

// runAnalyze is "audit analyze".
func runAnalyze(args []string, e *env) error {
	// SIGINT and SIGTERM end the command with exit 130, in every phase:
	// the handler comes first, before anything is read.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fs := newFlagSet("analyze D.csv DPRIME.csv [flags]\n       audit analyze DIR_D DIR_DPRIME [--draws K,…] [--param NAME,…] [--stan-columns] [flags]",
		"Audits precomputed samples: each row of D.csv (runs on D) and DPRIME.csv (runs on D′) holds the releases\n"+
			"of one independent run, release point after release point (points × dim columns). Files may be .csv,\n"+
			".csv.gz or NumPy .npy (2-D (runs, points·dim) or 3-D (runs, points, dim)). A CSV header names the\n"+
			"columns LABEL[j] (coordinate j of release LABEL); a column named trial gives each run's trial index,\n"+
			"which fixes the split exactly as 'audit run' made it (run --save-releases writes such files). Without\n"+
			"it the rows are split by a permutation drawn from --seed. The bounds are valid only if the rows are\n"+
			"independent runs: rows that repeat another bit for bit (within a file or across the two) more often\n"+
			"than independent rows would at the values' resolution (float32 values repeat by chance) are refused\n"+
			"unless --allow-duplicate-rows. Statistics come from --scenario (its audit and claim sections) or the flags.\n\n"+
			"Stan: given two directories, every *.csv (or *.csv.gz) file in them is one CmdStan chain, and one chain is\n"+
			"one run (each seeded on its own): its draws are not independent, so a chain gives one row, its releases\n"+
			"the draws --draws chooses (default -1, the last; 1 is the first draw after warmup), each the vector of\n"+
			"the columns of --param (default every column but lp__ and the sampler's, NAME__, which --stan-columns\n"+
			"keeps; theta takes theta.1, theta.2, …). A single CmdStan file given as a file of runs is refused.")
	var f analyzeFlags
	f.register(fs)
	if err := fs.parse(args, e, 2); err != nil {
		return err
	}
	if err := checkAnalyzeFlags(e, fs, &f); err != nil {
		return err
	}
	job, err := readAnalyzeInputs(ctx, fs, &f)
	if err != nil {
		return err
	}
	o, cfg, err := analyzeOptions(&f, job.Samples)
	if err != nil {
		return err
	}
	job.Options, job.Config, job.ScenarioPath = o, cfg, f.scenario
	job.Workers, job.AllowDuplicateRows, job.Outs = f.workers, f.allowDuplicateRows, f.outs.OutputFlags
	return job.Run(ctx, e.cli())
}

// readAnalyzeInputs reads the two files of runs, or the two directories
// of CmdStan chains, and lays them out as samples.
func readAnalyzeInputs(ctx context.Context, fs *flagSet, f *analyzeFlags) (*samples.Job, error) {
	paths := [2]string{fs.Arg(0), fs.Arg(1)}
	dirs, err := analyzeDirs(paths)
	if err != nil {
		return nil, err
	}
	if !dirs {
		for _, name := range []string{"draws", "param", "stan-columns"} {
			if cli.Given(fs.FlagSet, name) {
				return nil, usagef("--%s: only with two directories of CmdStan chain files", name)
			}
		}
		files, err := samples.ReadFiles(ctx, paths)
		if err != nil {
			return nil, err
		}
		s, order, err := samples.Build(files, f.points)
		if err != nil {
			return nil, err
		}
		return &samples.Job{Files: files, Samples: s, Order: order}, nil
	}
	if cli.Given(fs.FlagSet, "points") {
		return nil, usagef("--points: not with directories of CmdStan chains, whose release points --draws chooses")
	}
	spec := samples.StanSpec{SamplerColumns: f.stanColumns}
	if cli.Given(fs.FlagSet, "draws") {
		if spec.Draws, err = samples.ParseDraws(f.draws); err != nil {
			return nil, err
		}
	}
	if cli.Given(fs.FlagSet, "param") {
		for _, p := range strings.Split(f.params, ",") {
			spec.Params = append(spec.Params, strings.TrimSpace(p))
		}
	}
	files, layout, err := samples.ReadStanDirs(ctx, paths, spec)
	if err != nil {
		return nil, err
	}
	s, err := samples.BuildStan(files, layout)
	if err != nil {
		return nil, err
	}
	return &samples.Job{Files: files, Samples: s, Stan: layout}, nil
}

// analyzeDirs reports whether both inputs are directories (CmdStan
// chains); one of each is refused.
func analyzeDirs(paths [2]string) (bool, error) {
	var isDir [2]bool
	for i, p := range paths {
		st, err := os.Stat(p)
		isDir[i] = err == nil && st.IsDir()
	}
	if isDir[0] != isDir[1] {
		dir, file := paths[0], paths[1]
		if isDir[1] {
			dir, file = file, dir
		}
		return false, usagef("give two files of runs, or two directories of CmdStan chains: %s is a directory, %s is not", dir, file)
	}
	return isDir[0], nil
}

// register adds the flags of "audit analyze".
func (f *analyzeFlags) register(fs *flagSet) {
	f.outs.register(fs, outputHelp{
		json: "write the report as JSON to FILE (- for stdout)",
		csv:  "write one row per release point as CSV to FILE (- for stdout)",
		plot: "draw ε_lb per release point to FILE (.svg or .png)",
		html: "write a self-contained HTML report to FILE (- for stdout)",
	})
	fs.StringVar(&f.points, "points", "", "release points: a count, or comma-separated labels (default: from the CSV header or the .npy shape, else one)")
	fs.StringVar(&f.scenario, "scenario", "", "take seed, statistics, attacks and claims from this scenario's audit and claim sections")
	fs.StringVar(&f.seed, "seed", "", "seed of the permutation that splits rows without a trial column (an unsigned integer; default 0 or the scenario's)")
	fs.floatVar(&f.delta, "delta", 1e-5, "[0, 1)", inDelta, "δ of the lower bounds (without --scenario), in")
	fs.floatVar(&f.confidence, "confidence", 0.95, "(0, 1)", inUnitOpen, "confidence of every bound (without --scenario), in")
	fs.StringVar(&f.split, "split", "0.5:0.5", "TRAIN:EVAL or TRAIN:SELECT:EVAL fractions of the runs (without --scenario)")
	fs.StringVar(&f.attacks, "attacks", "threshold", "comma-separated attacks: threshold, linear, logistic, qda (without --scenario)")
	fs.floatVar(&f.claimEps, "claim-epsilon", math.NaN(), "[0, ∞)", func(x float64) bool { return x >= 0 }, "claimed ε (with --claim-delta), in")
	fs.floatVar(&f.claimDelta, "claim-delta", math.NaN(), "[0, 1)", inDelta, "claimed δ (with --claim-epsilon), in")
	fs.floatVar(&f.claimGDP, "claim-gdp", math.NaN(), "[0, ∞)", func(x float64) bool { return x >= 0 }, "claimed μ of μ-GDP, in")
	fs.intVar(&f.workers, "workers", 0, 0, audit.MaxWorkers, "concurrent analyses (0: one per CPU; never changes the result),")
	fs.StringVar(&f.draws, "draws", "-1", "with two directories of CmdStan chains: the draws that are the release points, comma-separated (1 the first after warmup, -1 the last)")
	fs.StringVar(&f.params, "param", "", "with CmdStan chains: comma-separated parameter names whose columns form the release vector (default: every column but lp__ and NAME__)")
	fs.BoolVar(&f.stanColumns, "stan-columns", false, "with CmdStan chains and no --param: keep lp__ and the sampler's columns (NAME__) in the release vector")
	fs.BoolVar(&f.allowDuplicateRows, "allow-duplicate-rows", false, "accept rows that repeat another row exactly more often than independent rows would at the values' resolution (a mechanism with a discrete output), with a warning and a note in the report")
}

// checkAnalyzeFlags checks the arguments, the flags that --scenario
// replaces, and every output, before anything is read.
func checkAnalyzeFlags(e *env, fs *flagSet, f *analyzeFlags) error {
	if fs.NArg() != 2 {
		return usagef("give two files: the runs on D and the runs on D′ (or two directories of CmdStan chains)")
	}
	if f.points == "" && cli.Given(fs.FlagSet, "points") {
		return usagef("--points: needs a count or comma-separated labels, got \"\"")
	}
	if f.scenario == "" && cli.Given(fs.FlagSet, "scenario") {
		return usagef("--scenario: needs a scenario file, got \"\"")
	}
	if f.scenario != "" {
		// The scenario's audit section sets these: which would win is
		// not for the user to guess.
		for _, name := range []string{"delta", "confidence", "split", "attacks"} {
			if cli.Given(fs.FlagSet, name) {
				return usagef("--%s: not with --scenario, whose audit section sets it (edit the scenario, or drop --scenario)", name)
			}
		}
	}
	return checkAnalyzeOutputs(e, fs, f)
}

// checkAnalyzeOutputs checks every output before anything is read: new
// files in existing directories or regular files, none of them an input, at
// most one on stdout, a plot file name.
func checkAnalyzeOutputs(e *env, fs *flagSet, f *analyzeFlags) error {
	if err := f.outs.checkReportPlot(); err != nil {
		return err
	}
	inputs := []namedInput{{fs.Arg(0), "samples file"}, {fs.Arg(1), "samples file"}}
	if f.scenario != "" {
		inputs = append(inputs, namedInput{f.scenario, "scenario file"})
	}
	return f.outs.check(e, inputs)
}

// analyzeOptions builds the statistics from --scenario or the flags.
func analyzeOptions(f *analyzeFlags, s *audit.Samples) (audit.Options, *scenario.Config, error) {
	var o audit.Options
	var cfg *scenario.Config
	if f.scenario != "" {
		c, err := scenario.LoadConfig(f.scenario)
		if err != nil {
			return o, nil, usagef("--scenario: %v", err)
		}
		if o, err = scenario.SamplesOptions(c, s.Dim); err != nil {
			return o, nil, usagef("--scenario: %v", err)
		}
		cfg = c
	} else {
		o = audit.Options{Delta: f.delta, Confidence: f.confidence}
		var err error
		if o.Split, err = parseSplit(f.split); err != nil {
			return o, nil, err
		}
		for _, name := range strings.Split(f.attacks, ",") {
			a, err := attacks.ByName(strings.TrimSpace(name))
			if err != nil {
				return o, nil, usagef("--attacks: %s", strings.TrimPrefix(err.Error(), "attacks: "))
			}
			o.Attacks = append(o.Attacks, a)
		}
	}
	if f.seed != "" {
		seed, err := strconv.ParseUint(f.seed, 10, 64)
		if err != nil {
			return o, nil, usagef("--seed: invalid value %s: must be an unsigned integer", clip.Quote(f.seed))
		}
		o.Seed = seed
	}
	hasEps, hasDelta, hasGDP := !math.IsNaN(f.claimEps), !math.IsNaN(f.claimDelta), !math.IsNaN(f.claimGDP)
	if hasEps != hasDelta {
		return o, nil, usagef("--claim-epsilon and --claim-delta go together")
	}
	if hasEps || hasGDP {
		o.Claims = nil
		if hasEps {
			o.Claims = append(o.Claims, audit.PureClaim(f.claimEps, f.claimDelta))
		}
		if hasGDP {
			o.Claims = append(o.Claims, audit.GDPClaim(f.claimGDP))
		}
	}
	return o, cfg, nil
}

// parseSplit parses TRAIN:EVAL or TRAIN:SELECT:EVAL.
func parseSplit(s string) (audit.Split, error) {
	parts := strings.Split(s, ":")
	var v []float64
	for _, p := range parts {
		x, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(x >= 0 && x <= 1) {
			return audit.Split{}, usagef("--split: must be TRAIN:EVAL or TRAIN:SELECT:EVAL with fractions in [0, 1] summing to 1, got %s", clip.Quote(s))
		}
		v = append(v, x)
	}
	switch len(v) {
	case 2:
		return audit.Split{Train: v[0], Eval: v[1]}, nil
	case 3:
		return audit.Split{Train: v[0], Select: v[1], Eval: v[2]}, nil
	}
	return audit.Split{}, usagef("--split: must be TRAIN:EVAL or TRAIN:SELECT:EVAL, got %s", clip.Quote(s))
}
