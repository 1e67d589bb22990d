package cli

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/audit/scenario"
	"github.com/mcmcaudit/mcmcaudit/internal/filekind"
	"github.com/mcmcaudit/mcmcaudit/report"
)

// WriteReport analyses complete trials and writes the table, JSON, CSV,
// plot and HTML; it returns a ViolationError when a claim is refuted. An
// interruption during the analysis, or before the outputs are written,
// writes nothing.
//
// scen is the scenario to show in the HTML page as the user wrote it (nil:
// the plan's configuration, as JSON).
func WriteReport(ctx context.Context, e *Env, plan *scenario.Plan, a *audit.Audit, trials *audit.Trials, o OutputFlags, quietTable bool, scen []byte) error {
	rep, err := UntilInterrupted(ctx, func() (*audit.Report, error) { return a.AnalyzeContext(ctx, trials) })
	if ctx.Err() != nil {
		return InterruptedError{Msg: "interrupted during the analysis; no report was written"}
	}
	if err != nil {
		if werr := WorkError(err); werr != err {
			return werr
		}
		return RunError(err)
	}
	doc := scenario.Document{Versions: audit.CurrentVersions(), Config: plan.Config, Report: rep}
	if scen == nil {
		scen, _ = json.MarshalIndent(plan.Config, "", "  ")
	}
	return WriteReportFiles(ctx, e, rep, doc, scen, o, quietTable)
}

// WriteReportFiles writes the table (unless a document goes to stdout),
// the JSON document, the CSV rows, the plot and the HTML page, each output
// already checked; it returns a ViolationError when a claim is refuted.
// An interruption stops before the next output.
func WriteReportFiles(ctx context.Context, e *Env, rep *audit.Report, doc any, scen []byte, o OutputFlags, quietTable bool) error {
	if !quietTable {
		if err := report.WriteTable(e.Stdout, rep); err != nil {
			return err
		}
	}
	if err := WriteDocuments(ctx, e, InterruptedError{Msg: "interrupted while writing the report; outputs not yet written were not written"},
		Document{o.JSON, func(w io.Writer) error { return audit.WriteJSON(w, doc) }},
		Document{o.CSV, func(w io.Writer) error { return report.WriteCSV(w, rep) }},
		Document{o.Plot, func(w io.Writer) error {
			format, err := report.PlotFormat(o.Plot)
			if err != nil {
				return err
			}
			return report.WritePlot(w, format, rep)
		}},
		Document{o.HTML, func(w io.Writer) error { return report.WriteHTML(w, rep, audit.CurrentVersions(), scen) }},
	); err != nil {
		return err
	}
	if rep.Violated() {
		return ViolationError{Msg: rep.Violations[0]}
	}
	return nil
}

// WithRunExecution returns a reporting progress to p under the work limit
// maxWork (--max-work; 0: the default).
func WithRunExecution(a *audit.Audit, p audit.Progress, maxWork float64) (*audit.Audit, error) {
	x := a.Execution()
	x.Progress, x.MaxWork = p, maxWork
	a, err := a.WithExecution(x)
	if err != nil {
		return nil, UsageError{Msg: "--max-work: " + err.Error()}
	}
	return a, nil
}

// WorkError names the flag that raises the work limit.
func WorkError(err error) error {
	var fe *audit.FieldError
	if errors.As(err, &fe) && fe.Path.Go() == "MaxWork" {
		return Usagef("--max-work: %s", strings.Replace(fe.Msg, "raise the limit", "raise --max-work", 1))
	}
	return err
}

// RunError classifies a failure during a run: a diverging chain or a
// scenario that cannot be analysed is the user's input; so is a work
// estimate beyond the limit.
func RunError(err error) error {
	if werr := WorkError(err); werr != err {
		return werr
	}
	return UsageError{Msg: err.Error()}
}

// LoadScenario reads the scenario file at path, or the built-in one when
// path is "". The file must be a regular file: a FIFO or a device is
// refused before it is opened (opening a FIFO would wait for a writer).
// The settings (audit run --set) are applied to the scenario before it is
// validated (scenario.ParseConfig).
func LoadScenario(path string, sets ...scenario.Setting) (*scenario.Config, error) {
	var cfg *scenario.Config
	var err error
	if path != "" {
		if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
			return nil, Usagef("config: cannot read %s: it is %s, not a regular file", path, filekind.Of(st.Mode()))
		}
		cfg, err = scenario.LoadConfig(path, sets...)
	} else {
		cfg, err = scenario.DefaultConfig(sets...)
	}
	if err != nil {
		return nil, UsageError{Msg: FromSetting(err, sets)}
	}
	return cfg, nil
}

// FromSetting writes an error of loading or building a scenario, saying
// which --set it is about when it names no line of the file and a field
// on the path of a setting (the last such): the field set, one under it
// or one above it.
func FromSetting(err error, sets []scenario.Setting) string {
	var se *scenario.Error
	if !errors.As(err, &se) || se.Line != 0 || se.Path == "" {
		return err.Error()
	}
	for i := len(sets) - 1; i >= 0; i-- {
		p, e := sets[i].Path, se.Path
		if p == e || strings.HasPrefix(p, e+".") || strings.HasPrefix(e, p+".") || strings.HasPrefix(e, p+"[") {
			return err.Error() + " (from --set " + sets[i].String() + ")"
		}
	}
	return err.Error()
}
