package main

import (
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
	fs.StringVar(&jsonOut, "json", "", "write the report as JSON to FILE (- for stdout)")
	fs.StringVar(&csvOut, "csv", "", "write one row per release point as CSV to FILE (- for stdout)")
	fs.StringVar(&plotOut, "plot", "", "draw ε_lb per release point to FILE (.svg or .png)")
	fs.StringVar(&htmlOut, "html", "", "write a self-contained HTML report to FILE (- for stdout)")
	if err := fs.parse(args, e, 1<<20); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("give the trials files to merge")
	}
	stdoutTaken := 0
	for _, o := range []struct {
		o    output
		flag string
	}{{output(jsonOut), "json"}, {output(csvOut), "csv"}, {output(plotOut), "plot"}, {output(htmlOut), "html"}} {
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
	if plotOut != "" {
		if _, err := report.PlotFormat(plotOut); err != nil {
			return usagef("--plot: %v", err)
		}
	}
	paths := make([]string, fs.NArg())
	for i := range paths {
		paths[i] = fs.Arg(i)
	}
	plan, merged, err := mergeParts(paths)
	if err != nil {
		return err
	}
	return writeReport(e, plan, merged, reportOutputs{jsonOut, csvOut, plotOut, htmlOut}, stdoutTaken > 0)
}

// mergeParts reads the parts one at a time into the merged trials and
// rebuilds the scenario from the first part's spec (its data come with it,
// so the merge works from any directory).
func mergeParts(paths []string) (*scenario.Plan, *audit.Trials, error) {
	var m audit.Merger
	var plan *scenario.Plan
	for _, path := range paths {
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
