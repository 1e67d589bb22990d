package main

import (
	"github.com/mcmcaudit/mcmcaudit/audit"
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
		if _, err := audit.PlotFormat(plotOut); err != nil {
			return usageError{err.Error()}
		}
	}
	parts := make([]*audit.Trials, fs.NArg())
	names := make([]string, fs.NArg())
	var cfg *audit.Config
	for i := 0; i < fs.NArg(); i++ {
		t, c, err := audit.ReadPartFile(fs.Arg(i))
		if err != nil {
			return usageError{err.Error()}
		}
		parts[i], names[i] = t, fs.Arg(i)
		if cfg == nil {
			cfg = c
		}
	}
	merged, err := audit.MergeTrials(parts, names)
	if err != nil {
		return usageError{"merge: " + err.Error()}
	}
	plan, err := audit.Build(cfg)
	if err != nil {
		return usageError{err.Error()}
	}
	return writeReport(e, plan, merged, reportOutputs{jsonOut, csvOut, plotOut, htmlOut}, stdoutTaken > 0)
}
