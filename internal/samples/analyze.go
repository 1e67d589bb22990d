package samples

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/audit/scenario"
	"github.com/mcmcaudit/mcmcaudit/internal/cli"
	"github.com/mcmcaudit/mcmcaudit/internal/filekind"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// checkDuplicateRows counts the rows that repeat another and refuses them
// when they are more than independent runs would repeat at the values'
// resolution (audit.ExpectedDuplicateRows), unless allowed (then with a
// warning); repeats within that bound are stated in the report only.
func checkDuplicateRows(e *cli.Env, files [2]*File, allowed bool) (audit.Duplicates, audit.RepeatBound, error) {
	dup := audit.CountDuplicateRows(files[0].Rows, files[1].Rows)
	if !dup.Any() {
		return dup, audit.RepeatBound{}, nil
	}
	b := audit.ExpectedDuplicateRows(files[0].Rows, files[1].Rows)
	if b.Exceeded(dup) {
		msg := duplicateRowsMessage(dup, b)
		if !allowed {
			return dup, b, cli.Usagef("%s: pass --allow-duplicate-rows if the mechanism's output is discrete, or coarser than its values show", msg)
		}
		fmt.Fprintf(e.Stderr, "audit analyze: warning: %s; the bounds assume independent runs (accepted: --allow-duplicate-rows)\n", msg)
	}
	return dup, b, nil
}

// duplicateRowsMessage gives the counts of repeated rows and what
// independent rows would repeat.
func duplicateRowsMessage(d audit.Duplicates, b audit.RepeatBound) string {
	rows := func(n int) string {
		if n == 1 {
			return "1 row"
		}
		return fmt.Sprintf("%d rows", n)
	}
	verb := "repeat"
	if d.Across == 1 {
		verb = "repeats"
	}
	return fmt.Sprintf("samples: %s of D and %d of D′ repeat an earlier row of their file, and %s of D′ %s a row of D (across the files): %d in all, where %s",
		rows(d.WithinD), d.WithinDPrime, rows(d.Across), verb, d.Total(), b)
}

// noteDuplicateRows puts the files' counts of repeated rows in the report,
// with b, what independent rows would repeat: the audit counted the
// repeats within each side from the replayed runs (and noted them), which
// must agree with the files' counts; the note is replaced by one that also
// gives the repeats across the files.
func noteDuplicateRows(rep *audit.Report, d audit.Duplicates, b audit.RepeatBound) error {
	within := audit.Duplicates{WithinD: d.WithinD, WithinDPrime: d.WithinDPrime}
	got := audit.Duplicates{}
	if rep.Duplicates != nil {
		got = *rep.Duplicates
	}
	if got != within {
		return fmt.Errorf("internal error: the audit counted %+v repeated runs, the files %+v", got, within)
	}
	if !d.Any() {
		return nil
	}
	var notes []string
	for _, n := range rep.Notes {
		if rep.RepeatBound == nil || n != audit.RepeatNote(within, *rep.RepeatBound) {
			notes = append(notes, n)
		}
	}
	rep.Notes = append(notes, audit.RepeatNote(d, b))
	rep.Duplicates, rep.RepeatBound = &d, &b
	return nil
}

// analyzedAsWritten is what the HTML page shows of an analysis: the
// scenario file as the user wrote it (when --scenario gave one), then the
// samples analysed, as YAML.
func analyzedAsWritten(path string, doc Doc) []byte {
	var b strings.Builder
	if path != "" {
		if text, err := filekind.ReadRegular(path, scenario.MaxConfigBytes); err == nil {
			fmt.Fprintf(&b, "# --scenario %s\n%s", path, text)
			if len(text) > 0 && text[len(text)-1] != '\n' {
				b.WriteByte('\n')
			}
		}
	}
	b.WriteString("# the samples analysed\nsamples:\n  files:\n")
	for _, fl := range doc.Samples.Files {
		fmt.Fprintf(&b, "    - {side: %s, path: %s, sha256: %s, runs: %d}\n", fl.Side, strconv.Quote(fl.Path), fl.SHA256, fl.Runs)
	}
	if l := doc.Samples.Stan; l != nil {
		cols := make([]string, len(l.Columns))
		for i, c := range l.Columns {
			cols[i] = strconv.Quote(c)
		}
		fmt.Fprintf(&b, "  stan: {draws: %v, draws_per_chain: %d, columns: [%s]}\n", strings.Join(strings.Fields(fmt.Sprint(l.Draws)), ", "), l.Of, strings.Join(cols, ", "))
	}
	pts := make([]string, len(doc.Samples.Points))
	for i, p := range doc.Samples.Points {
		pts[i] = strconv.Quote(p)
	}
	fmt.Fprintf(&b, "  order: %s\n  dim: %d\n  points: [%s]\n", strconv.Quote(doc.Samples.Order), doc.Samples.Dim, strings.Join(pts, ", "))
	return []byte(b.String())
}

// Job is one "audit analyze": the two files of runs, the samples built
// from them (Build), the statistics, and the outputs, already checked.
type Job struct {
	Files   [2]*File
	Samples *audit.Samples
	// Order says how the rows were ordered (Build); "" when they are to
	// be put in an order drawn from Options.Seed.
	Order   string
	Options audit.Options
	// Config is the --scenario the statistics came from (nil without
	// one), read from ScenarioPath.
	Config       *scenario.Config
	ScenarioPath string
	// Workers is --workers (0: one per CPU).
	Workers int
	// AllowDuplicateRows is --allow-duplicate-rows.
	AllowDuplicateRows bool
	// Stan is the layout of CmdStan chains (ReadStanDirs), nil for
	// files of runs.
	Stan *StanLayout
	Outs cli.OutputFlags
}

// Run audits the samples and writes the report (a ViolationError when a
// claim is refuted). Rows that repeat more than independent runs would
// are refused first, unless allowed (then with a warning on stderr).
func (j *Job) Run(ctx context.Context, e *cli.Env) error {
	dup, bound, err := checkDuplicateRows(e, j.Files, j.AllowDuplicateRows)
	if err != nil {
		return err
	}
	a, err := j.audit()
	if err != nil {
		return err
	}
	s := j.Samples
	trials, err := s.Trials(ctx, a)
	if err != nil {
		if ctx.Err() != nil {
			return cli.InterruptedError{Msg: "interrupted; nothing was written"}
		}
		return cli.RunError(err)
	}
	rep, err := cli.UntilInterrupted(ctx, func() (*audit.Report, error) { return a.AnalyzeContext(ctx, trials) })
	if ctx.Err() != nil {
		return cli.InterruptedError{Msg: "interrupted during the analysis; no report was written"}
	}
	if err != nil {
		return cli.RunError(err)
	}
	if err := noteDuplicateRows(rep, dup, bound); err != nil {
		return err
	}
	doc := j.doc(rep)
	return cli.WriteReportFiles(ctx, e, rep, doc, analyzedAsWritten(j.ScenarioPath, doc), j.Outs, j.Outs.StdoutTaken())
}

// audit orders the rows (by the trial column, or in an order drawn from
// the seed) and builds the audit of the samples.
func (j *Job) audit() (*audit.Audit, error) {
	s, o := j.Samples, j.Options
	if j.Order == "" {
		permuteSamples(s, o.Seed)
		j.Order = fmt.Sprintf("the %d rows were put in a random order drawn from seed %d (PCG), then split: the first %g train", len(s.Rows), o.Seed, splitOf(o).Train)
	}
	// The rows were checked above; with --allow-duplicate-rows the
	// audit counts the repeats on each side again, from the trials the
	// rows become, and noteDuplicateRows checks that the counts agree.
	o.Repeats = audit.RepeatsNoted
	t := audit.Target{Name: "samples: " + filepath.Base(j.Files[0].Path) + " vs " + filepath.Base(j.Files[1].Path),
		Notes: []string{"The bounds are valid only if every row is an independent run of the same mechanism (on D in the first file, on D′ in the second).",
			"Order: " + j.Order + "."}}
	if j.Stan != nil {
		t.Notes[0] = "The bounds are valid only if every chain is an independent run of the same mechanism, seeded on its own (on D in the first directory, on D′ in the second)."
		t.Notes = append(t.Notes, j.Stan.Note())
	}
	var err error
	if t.Posterior, err = posterior(j.Config, s.Dim); err != nil {
		return nil, err
	}
	a, err := audit.NewSamples(t, s, o)
	if err == nil {
		a, err = a.WithExecution(audit.Execution{Workers: max(j.Workers, 0)})
	}
	if err != nil {
		return nil, cli.UsageError{Msg: err.Error()}
	}
	return a, nil
}

// doc is the JSON document of the analysis.
func (j *Job) doc(rep *audit.Report) Doc {
	doc := Doc{Versions: audit.CurrentVersions(), Scenario: j.Config, Report: rep}
	for i, fl := range j.Files {
		doc.Samples.Files = append(doc.Samples.Files, FileInfo{Side: dataset.Side(i).String(), Path: fl.Path, SHA256: fl.SHA256, Runs: len(fl.Rows), Chains: fl.Chains})
	}
	doc.Samples.Order, doc.Samples.Dim, doc.Samples.Stan = j.Order, j.Samples.Dim, j.Stan
	for _, p := range j.Samples.Points {
		doc.Samples.Points = append(doc.Samples.Points, p.Label)
	}
	return doc
}

// splitOf returns the split the options resolve to.
func splitOf(o audit.Options) audit.Split {
	if o.Split == (audit.Split{}) {
		return audit.DefaultSplit
	}
	return o.Split
}
