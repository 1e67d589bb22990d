package main

import (
	"math"

	"github.com/mcmcaudit/mcmcaudit/audit/scenario"
	"github.com/mcmcaudit/mcmcaudit/internal/bounds"
	"github.com/mcmcaudit/mcmcaudit/internal/cli"
	"github.com/mcmcaudit/mcmcaudit/internal/sweep"
)

// runBounds is "audit bounds" (and "audit bounds --sweep").
func runBounds(args []string, e *env) error {
	fs := newFlagSet("bounds [scenario.yaml] [--delta D] [--iterations K] [--json FILE] [--sweep PARAM=FROM:TO[:N] [--series PARAM=V1,V2,…] [--set PARAM=V] [--log] [--accuracy RUNS] [--plot FILE] [--csv FILE]]",
		"Lists every theoretical upper bound of the papers for a scenario's sampler on its adjacent datasets:\n"+
			"the theorem, the assumptions checked with their numbers, and ε at δ — or why the theorem does not\n"+
			"apply. Without a scenario it uses the built-in one. With --sweep, every theorem's ε at δ along a\n"+
			"parameter (e.g. Heikkilä et al. Fig. 1: iterations or q; with --accuracy, Räisä et al.'s trade-off).")
	var delta float64
	var iters int
	fs.floatVar(&delta, "delta", math.NaN(), "(0, 1)", inUnitOpen, "δ at which to report ε (default: the scenario's audit.delta); in")
	fs.intVar(&iters, "iterations", 0, 0, 1<<40, "iterations of the released state (0: the whole run),")
	var sf sweep.Flags
	registerSweep(fs, &sf)
	var outs outputFlags
	outs.register(fs, sweepOutputHelp)
	if err := fs.parse(args, e, 1); err != nil {
		return err
	}
	if sf.Sweep == "" && (sf.Series != "" || len(sf.Sets) > 0 || sf.Log || sf.Accuracy > 0 || outs.Plot != "" || outs.CSV != "") {
		return usagef("--series, --set, --log, --accuracy, --plot and --csv need --sweep")
	}
	cfg, plan, err := boundsScenario(e, fs, outs)
	if err != nil {
		return err
	}
	defer plan.Close()
	if math.IsNaN(delta) {
		delta = cfg.Audit.Delta
		if delta <= 0 {
			return usagef("--delta: the scenario's audit.delta is 0; give --delta in (0, 1)")
		}
	}
	if sf.Sweep != "" {
		if iters != 0 {
			return usagef("--iterations: with --sweep, sweep or --set iterations instead")
		}
		return sweep.Run(e.cli(), cfg, plan, sf, delta, outs.OutputFlags)
	}
	return bounds.Write(e.cli(), cfg, plan, iters, delta, output(outs.JSON))
}

// boundsScenario checks the outputs, then loads and builds the scenario
// (the one named on the command line, or the built-in one).
func boundsScenario(e *env, fs *flagSet, outs outputFlags) (*scenario.Config, *scenario.Plan, error) {
	var inputs []namedInput
	if fs.NArg() == 1 {
		inputs = append(inputs, namedInput{fs.Arg(0), "scenario file"})
	}
	if err := outs.check(e, inputs); err != nil {
		return nil, nil, err
	}
	cfg, err := loadScenario(fs)
	if err != nil {
		return nil, nil, err
	}
	if err := cli.CheckDataInputs(outs.Named(), cfg); err != nil {
		return nil, nil, err
	}
	plan, err := scenario.BuildWith(cfg, scenario.BuildOptions{Stderr: e.stderr})
	if err != nil {
		return nil, nil, usageError{err.Error()}
	}
	return cfg, plan, nil
}

// registerSweep adds the sweep's flags to the flag set.
func registerSweep(fs *flagSet, f *sweep.Flags) {
	fs.StringVar(&f.Sweep, "sweep", "", "PARAM=FROM:TO[:N]: ε at δ of every theorem for N values of PARAM (default 10, at most 200); PARAM is iterations, n (the dataset size the theorems see), q (batch = q·n), or a numeric field of the sampler (tau_l, tau, batch, n0, step.eta, …); NAME1,NAME2=… sets several")
	fs.StringVar(&f.Series, "series", "", "PARAM=V1,V2,…: one curve per value of a second parameter (at most 10)")
	fs.Func("set", "PARAM=V: fix a parameter for the whole sweep (repeatable), e.g. --set n=1000000 --set batch=1000", func(s string) error {
		f.Sets = append(f.Sets, s)
		return nil
	})
	fs.BoolVar(&f.Log, "log", false, "space the sweep's values geometrically and draw its axis in log scale")
	fs.intVar(&f.Accuracy, "accuracy", 0, 0, sweep.MaxAccuracyRuns, "with --sweep: run the sampler this many times on D at every value and measure its releases against the exact posterior (gauss and linreg models),")
}

// sweepOutputHelp is the help of "audit bounds"'s outputs: --plot and
// --csv are the sweep's.
var sweepOutputHelp = outputHelp{
	json: "write the guarantees as JSON to FILE (- for stdout)",
	plot: "with --sweep: draw ε at δ against the parameter (and the accuracy against ε) to FILE.svg or FILE.png",
	csv:  "with --sweep: write the rows as CSV to FILE (- for stdout)",
}
