package main

import (
	"io"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/internal/report"
)

// reportOutputs are the files a report is written to ("" = none).
type reportOutputs struct{ json, csv, plot, html string }

// checkReportOutputs validates a report's output flags before any work:
// existing directories, at most one document on stdout, a plot file name.
// It reports whether a document replaces the table on stdout.
func checkReportOutputs(o reportOutputs) (reportOutputs, bool, error) {
	stdoutTaken := 0
	for _, x := range []struct {
		o    output
		flag string
	}{{output(o.json), "json"}, {output(o.csv), "csv"}, {output(o.plot), "plot"}, {output(o.html), "html"}} {
		if err := x.o.checkWritable(x.flag); err != nil {
			return o, false, err
		}
		if x.o.toStdout() {
			stdoutTaken++
		}
	}
	if stdoutTaken > 1 {
		return o, false, usagef("only one of --json, --csv, --html can write to stdout (-)")
	}
	if o.plot != "" {
		if o.plot == "-" {
			return o, false, usagef("--plot: needs a file name ending in .svg or .png")
		}
		if _, err := report.PlotFormat(o.plot); err != nil {
			return o, false, usagef("--plot: %v", err)
		}
	}
	return o, stdoutTaken > 0, nil
}

// writeReportFiles writes the table (unless a document goes to stdout),
// the JSON document, the CSV rows, the plot and the HTML page; it returns a
// violationError when a claim is refuted.
func writeReportFiles(e *env, rep *audit.Report, doc any, scenarioText []byte, o reportOutputs, quietTable bool) error {
	if !quietTable {
		if err := report.WriteTable(e.stdout, rep); err != nil {
			return err
		}
	}
	if err := output(o.json).write(e, func(w io.Writer) error { return audit.WriteJSON(w, doc) }); err != nil {
		return err
	}
	if err := output(o.csv).write(e, func(w io.Writer) error { return report.WriteCSV(w, rep) }); err != nil {
		return err
	}
	if o.plot != "" {
		format, err := report.PlotFormat(o.plot)
		if err != nil {
			return usagef("--plot: %v", err)
		}
		if err := output(o.plot).write(e, func(w io.Writer) error { return report.WritePlot(w, format, rep) }); err != nil {
			return err
		}
	}
	if err := output(o.html).write(e, func(w io.Writer) error {
		return report.WriteHTML(w, rep, audit.CurrentVersions(), scenarioText)
	}); err != nil {
		return err
	}
	if rep.Violated() {
		return violationError{rep.Violations[0]}
	}
	return nil
}
