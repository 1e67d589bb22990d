package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/audit/scenario"
	"github.com/mcmcaudit/mcmcaudit/internal/report"
)

func runMerge(args []string, e *env) error {
	fs := newFlagSet("merge PART... [--json FILE] [--csv FILE] [--plot FILE]",
		"Joins the trials files written by 'audit run --shard I/N --out PART', checks that they come from one\n"+
			"configuration and cover every trial exactly once, then runs the attacks and estimators: the report is\n"+
			"the one a single 'audit run' would have printed.")
	var jsonOut, csvOut, plotOut, htmlOut string
	var maxWork float64
	fs.StringVar(&jsonOut, "json", "", "write the report as JSON to FILE (- for stdout)")
	fs.StringVar(&csvOut, "csv", "", "write one row per release point as CSV to FILE (- for stdout)")
	fs.StringVar(&plotOut, "plot", "", "draw ε_lb per release point to FILE (.svg or .png)")
	fs.StringVar(&htmlOut, "html", "", "write a self-contained HTML report to FILE (- for stdout)")
	fs.floatVar(&maxWork, "max-work", 0, "[0, ∞)", func(x float64) bool { return x >= 0 },
		"refuse an analysis whose estimated work exceeds this many units of a few ns each (0: the default), in")
	if err := fs.parse(args, e, 1<<20); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("give the trials files to merge")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if plotOut != "" {
		if plotOut == "-" {
			return usagef("--plot: needs a file name ending in .svg or .png")
		}
		if _, err := report.PlotFormat(plotOut); err != nil {
			return usagef("--plot: %v", err)
		}
	}
	paths := make([]string, fs.NArg())
	var inputs []namedInput
	for i := range paths {
		paths[i] = fs.Arg(i)
		inputs = append(inputs, namedInput{paths[i], "trials file"})
	}
	outs := []namedOutput{{output(jsonOut), "json"}, {output(csvOut), "csv"}, {output(plotOut), "plot"}, {output(htmlOut), "html"}}
	if err := checkOutputs(e, outs, inputs); err != nil {
		return err
	}
	type merged struct {
		plan   *scenario.Plan
		trials *audit.Trials
	}
	m, err := untilInterrupted(ctx, func() (merged, error) {
		plan, t, err := mergeParts(ctx, paths)
		return merged{plan, t}, err
	})
	if ctx.Err() != nil {
		return interruptedError{"interrupted while reading the trials files; no report was written"}
	}
	if err != nil {
		return err
	}
	a, err := withRunExecution(m.plan.Audit, nil, maxWork)
	if err != nil {
		return err
	}
	if err := workError(a.CheckWork(0, 0, true)); err != nil {
		return err
	}
	stdout := output(jsonOut).toStdout() || output(csvOut).toStdout() || output(htmlOut).toStdout()
	return writeReport(ctx, e, m.plan, a, m.trials, reportOutputs{jsonOut, csvOut, plotOut, htmlOut}, stdout)
}

// mergeParts checks the parts' headers first — one configuration, one
// shape, every trial covered exactly once — so that the merged trials are
// allocated only for parts that fill them; then it reads the parts one at
// a time into the result and rebuilds the scenario from the first part's
// spec (its data come with it, so the merge works from any directory).
func mergeParts(ctx context.Context, paths []string) (*scenario.Plan, *audit.Trials, error) {
	infos := make([]audit.PartInfo, len(paths))
	for i, path := range paths {
		info, err := audit.ReadPartHeader(path)
		if err != nil {
			return nil, nil, usageError{err.Error()}
		}
		infos[i] = info
	}
	if err := audit.CheckPartInfos(infos, paths); err != nil {
		return nil, nil, usagef("merge: %v", err)
	}
	var m audit.Merger
	var plan *scenario.Plan
	for _, path := range paths {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		t, spec, err := audit.ReadPartFile(path)
		if err != nil {
			return nil, nil, usageError{err.Error()}
		}
		if plan == nil {
			cfg, err := scenario.ParseSpec(spec)
			if err != nil {
				return nil, nil, usagef("%s: %v", path, err)
			}
			if plan, err = scenario.Build(cfg); err != nil {
				return nil, nil, usagef("%s: the scenario it carries cannot be rebuilt here: %v", path, err)
			}
			defer plan.Close()
			if plan.Hash != t.ConfigHash {
				return nil, nil, usagef("%s: the scenario it carries has hash %.12s…, its trials %.12s… (a trials file of an older version?)", path, plan.Hash, t.ConfigHash)
			}
		}
		if err := m.Add(t, path); err != nil {
			return nil, nil, usagef("merge: %v", err)
		}
	}
	merged, err := m.Trials()
	if err != nil {
		return nil, nil, usagef("merge: %v", err)
	}
	return plan, merged, nil
}
