package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/audit/scenario"
	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/internal/clip"
	"github.com/mcmcaudit/mcmcaudit/internal/filekind"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// Limits on precomputed samples: the bytes of a file (and of a .csv.gz
// once decompressed), the values of a file, and the bytes of one run (a
// line) of a CSV file.
const (
	maxSamplesFileBytes = 4 << 30
	maxSamplesValues    = 1 << 31
	maxSamplesLineBytes = 16 << 20
)

// samplesFile is one file of precomputed runs.
type samplesFile struct {
	path   string
	sha256 string
	header []string // column names (CSV with a header), or nil
	shape3 []int    // (runs, points, dim) of a 3-D .npy, or nil
	trial  []int    // the trial column, or nil
	rows   [][]float64
}

// samplesDoc is the JSON written by "audit analyze --json".
type samplesDoc struct {
	Versions audit.Versions `json:"versions"`
	Samples  struct {
		Files  []samplesFileInfo `json:"files"`
		Order  string            `json:"order"`
		Points []string          `json:"points"`
		Dim    int               `json:"dim"`
	} `json:"samples"`
	Scenario *scenario.Config `json:"scenario,omitempty"`
	Report   *audit.Report    `json:"report"`
}

type samplesFileInfo struct {
	Side   string `json:"side"`
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Runs   int    `json:"runs"`
}

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
}

func runAnalyze(args []string, e *env) error {
	// SIGINT and SIGTERM end the command with exit 130, in every phase:
	// the handler comes first, before anything is read.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fs := newFlagSet("analyze D.csv DPRIME.csv [flags]",
		"Audits precomputed samples: each row of D.csv (runs on D) and DPRIME.csv (runs on D′) holds the releases\n"+
			"of one independent run, release point after release point (points × dim columns). Files may be .csv,\n"+
			".csv.gz or NumPy .npy (2-D (runs, points·dim) or 3-D (runs, points, dim)). A CSV header names the\n"+
			"columns LABEL[j] (coordinate j of release LABEL); a column named trial gives each run's trial index,\n"+
			"which fixes the split exactly as 'audit run' made it (run --save-releases writes such files). Without\n"+
			"it the rows are split by a permutation drawn from --seed. The bounds are valid only if the rows are\n"+
			"independent runs: rows that repeat another bit for bit (within a file or across the two) more often\n"+
			"than independent rows would at the values' resolution (float32 values repeat by chance) are refused\n"+
			"unless --allow-duplicate-rows. Statistics come from --scenario (its audit and claim sections) or the flags.")
	var f analyzeFlags
	f.register(fs)
	if err := fs.parse(args, e, 2); err != nil {
		return err
	}
	if err := checkAnalyzeFlags(e, fs, &f); err != nil {
		return err
	}
	outs, stdoutTaken := f.outs, f.outs.stdoutTaken()
	files, err := readSamplesFiles(ctx, fs)
	if err != nil {
		return err
	}
	s, order, err := buildSamples(files, &f)
	if err != nil {
		return err
	}
	o, cfg, err := analyzeOptions(&f, s)
	if err != nil {
		return err
	}
	dup, bound, err := checkDuplicateRows(e, files, f.allowDuplicateRows)
	if err != nil {
		return err
	}
	if order == "" {
		permuteSamples(s, o.Seed)
		order = fmt.Sprintf("the %d rows were put in a random order drawn from seed %d (PCG), then split: the first %g train", len(s.Rows), o.Seed, splitOf(o).Train)
	}
	// The rows were checked above; with --allow-duplicate-rows the
	// audit counts the repeats on each side again, from the trials the
	// rows become, and noteDuplicateRows checks that the counts agree.
	o.Repeats = audit.RepeatsNoted
	t := audit.Target{Name: "samples: " + filepath.Base(files[0].path) + " vs " + filepath.Base(files[1].path),
		Notes: []string{"The bounds are valid only if every row is an independent run of the same mechanism (on D in the first file, on D′ in the second).",
			"Order: " + order + "."}}
	if t.Posterior, err = samplesPosterior(cfg, s.Dim); err != nil {
		return err
	}
	a, err := audit.NewSamples(t, s, o)
	if err == nil {
		a, err = a.WithExecution(audit.Execution{Workers: max(f.workers, 0)})
	}
	if err != nil {
		return usageError{err.Error()}
	}
	trials, err := s.Trials(ctx, a)
	if err != nil {
		if ctx.Err() != nil {
			return interruptedError{"interrupted; nothing was written"}
		}
		return runError(err)
	}
	rep, err := untilInterrupted(ctx, func() (*audit.Report, error) { return a.AnalyzeContext(ctx, trials) })
	if ctx.Err() != nil {
		return interruptedError{"interrupted during the analysis; no report was written"}
	}
	if err != nil {
		return runError(err)
	}
	if err := noteDuplicateRows(rep, dup, bound); err != nil {
		return err
	}
	doc := samplesDoc{Versions: audit.CurrentVersions(), Scenario: cfg, Report: rep}
	for i, fl := range files {
		doc.Samples.Files = append(doc.Samples.Files, samplesFileInfo{Side: dataset.Side(i).String(), Path: fl.path, SHA256: fl.sha256, Runs: len(fl.rows)})
	}
	doc.Samples.Order, doc.Samples.Dim = order, s.Dim
	for _, p := range s.Points {
		doc.Samples.Points = append(doc.Samples.Points, p.Label)
	}
	return writeReportFiles(ctx, e, rep, doc, analyzedAsWritten(f.scenario, doc), outs, stdoutTaken)
}

// samplesPosterior is the law the samples' utility figures compare them
// with: the exact posterior of the --scenario's model on its data, where
// it has one (scenario.SamplesPosterior); nil without --scenario.
func samplesPosterior(cfg *scenario.Config, dim int) (*audit.Posterior, error) {
	if cfg == nil {
		return nil, nil
	}
	post, err := scenario.SamplesPosterior(cfg, dim)
	if err != nil {
		return nil, usagef("--scenario: %v", err)
	}
	return post, nil
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
	fs.BoolVar(&f.allowDuplicateRows, "allow-duplicate-rows", false, "accept rows that repeat another row exactly more often than independent rows would at the values' resolution (a mechanism with a discrete output), with a warning and a note in the report")
}

// checkAnalyzeFlags checks the arguments, the flags that --scenario
// replaces, and every output, before anything is read.
func checkAnalyzeFlags(e *env, fs *flagSet, f *analyzeFlags) error {
	if fs.NArg() != 2 {
		return usagef("give two files: the runs on D and the runs on D′")
	}
	if f.points == "" && flagGiven(fs, "points") {
		return usagef("--points: needs a count or comma-separated labels, got \"\"")
	}
	if f.scenario == "" && flagGiven(fs, "scenario") {
		return usagef("--scenario: needs a scenario file, got \"\"")
	}
	if f.scenario != "" {
		// The scenario's audit section sets these: which would win is
		// not for the user to guess.
		for _, name := range []string{"delta", "confidence", "split", "attacks"} {
			if flagGiven(fs, name) {
				return usagef("--%s: not with --scenario, whose audit section sets it (edit the scenario, or drop --scenario)", name)
			}
		}
	}
	return checkAnalyzeOutputs(e, fs, f)
}

// readSamplesFiles reads the runs on D and on D′.
func readSamplesFiles(ctx context.Context, fs *flagSet) ([2]*samplesFile, error) {
	var files [2]*samplesFile
	for i := range files {
		var err error
		if files[i], err = readSamplesFile(ctx, fs.Arg(i)); err != nil {
			if ctx.Err() != nil {
				return files, interruptedError{"interrupted while loading the samples; nothing was written"}
			}
			return files, usageError{err.Error()}
		}
	}
	return files, nil
}

// checkDuplicateRows counts the rows that repeat another and refuses them
// when they are more than independent runs would repeat at the values'
// resolution (audit.ExpectedDuplicateRows), unless allowed (then with a
// warning); repeats within that bound are stated in the report only.
func checkDuplicateRows(e *env, files [2]*samplesFile, allowed bool) (audit.Duplicates, audit.RepeatBound, error) {
	dup := audit.CountDuplicateRows(files[0].rows, files[1].rows)
	if !dup.Any() {
		return dup, audit.RepeatBound{}, nil
	}
	b := audit.ExpectedDuplicateRows(files[0].rows, files[1].rows)
	if b.Exceeded(dup) {
		msg := duplicateRowsMessage(dup, b)
		if !allowed {
			return dup, b, usagef("%s: pass --allow-duplicate-rows if the mechanism's output is discrete, or coarser than its values show", msg)
		}
		fmt.Fprintf(e.stderr, "audit analyze: warning: %s; the bounds assume independent runs (accepted: --allow-duplicate-rows)\n", msg)
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

// splitOf returns the split the options resolve to.
func splitOf(o audit.Options) audit.Split {
	if o.Split == (audit.Split{}) {
		return audit.DefaultSplit
	}
	return o.Split
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

// buildSamples checks that both files have the same layout, resolves the
// release points and orders the runs by their trial column when there is
// one (then order describes it; otherwise it is empty).
func buildSamples(files [2]*samplesFile, f *analyzeFlags) (*audit.Samples, string, error) {
	a, b := files[0], files[1]
	if len(a.rows) == 0 || len(b.rows) == 0 {
		return nil, "", usagef("both files need at least one run (have %d and %d)", len(a.rows), len(b.rows))
	}
	if len(a.rows[0]) != len(b.rows[0]) {
		return nil, "", usagef("%s has %d values per run, %s has %d", a.path, len(a.rows[0]), b.path, len(b.rows[0]))
	}
	if strings.Join(a.header, ",") != strings.Join(b.header, ",") {
		return nil, "", usagef("%s and %s have different column names", a.path, b.path)
	}
	if (a.trial == nil) != (b.trial == nil) {
		return nil, "", usagef("a trial column must be in both files or in neither")
	}
	width := len(a.rows[0])
	labels, dim, err := releaseLayout(f.points, a.header, a.shape3, width)
	if err != nil {
		return nil, "", err
	}
	s := &audit.Samples{Name: fmt.Sprintf("precomputed samples (%d runs on D from %s, %d on D′ from %s)", len(a.rows), a.path, len(b.rows), b.path), Dim: dim}
	var known bool
	s.Points, known = mechanisms.PointsFromLabels(labels, nil)
	s.IterationsUnknown = !known
	n := len(a.rows) + len(b.rows)
	if a.trial == nil {
		s.Rows = append(append(s.Rows, a.rows...), b.rows...)
		for i := range s.Rows {
			s.Sides = append(s.Sides, dataset.Side(min(1, i/len(a.rows))))
		}
		return s, "", checkSamples(s)
	}
	s.Rows, s.Sides = make([][]float64, n), make([]dataset.Side, n)
	for side, fl := range files {
		for i, tr := range fl.trial {
			if tr < 0 || tr >= n {
				return nil, "", usagef("%s: trial %d is outside [0, %d) (the two files hold %d runs)", fl.path, tr, n, n)
			}
			if s.Rows[tr] != nil {
				return nil, "", usagef("%s: trial %d appears twice", fl.path, tr)
			}
			s.Rows[tr], s.Sides[tr] = fl.rows[i], dataset.Side(side)
		}
	}
	return s, "rows ordered by their trial column, so the split is the one of the run that produced them", checkSamples(s)
}

func checkSamples(s *audit.Samples) error {
	if err := s.Check(); err != nil {
		return usageError{err.Error()}
	}
	return nil
}

// permuteSamples puts the runs in an order drawn from seed.
func permuteSamples(s *audit.Samples, seed uint64) {
	perm := rand.New(rand.NewPCG(seed, 0x6d63_6d63_6175_6469)).Perm(len(s.Rows))
	rows, sides := make([][]float64, len(perm)), make([]dataset.Side, len(perm))
	for i, j := range perm {
		rows[i], sides[i] = s.Rows[j], s.Sides[j]
	}
	s.Rows, s.Sides = rows, sides
}

// releaseLayout resolves the release labels and their dimension.
func releaseLayout(points string, header []string, shape3 []int, width int) ([]string, int, error) {
	var labels []string
	switch {
	case points != "":
		if k, err := strconv.Atoi(points); err == nil {
			if k < 1 || k > width || width%k != 0 {
				return nil, 0, usagef("--points: %d release points must divide the %d values per run", k, width)
			}
			for i := 1; i <= k; i++ {
				labels = append(labels, fmt.Sprintf("release %d", i))
			}
		} else {
			seen := map[string]bool{}
			for i, l := range strings.Split(points, ",") {
				l = strings.TrimSpace(l)
				if l == "" {
					return nil, 0, usagef("--points: label %d is empty (give a count, or comma-separated non-empty labels)", i+1)
				}
				if seen[l] {
					return nil, 0, usagef("--points: label %s appears twice (every release needs its own label)", clip.Quote(l))
				}
				seen[l] = true
				labels = append(labels, l)
			}
			if width%len(labels) != 0 {
				return nil, 0, usagef("--points: %d labels do not divide the %d values per run", len(labels), width)
			}
		}
	case header != nil:
		dim := 0
		for i := 0; i < len(header); {
			label := columnLabel(header[i])
			j := i
			for j < len(header) && columnLabel(header[j]) == label {
				j++
			}
			if dim == 0 {
				dim = j - i
			} else if j-i != dim {
				return nil, 0, usagef("column %s: release %s has %d columns, the first release %d (every release needs the same dimension)", clip.Quote(header[i]), clip.Quote(label), j-i, dim)
			}
			labels = append(labels, label)
			i = j
		}
	case shape3 != nil:
		for i := 1; i <= shape3[1]; i++ {
			labels = append(labels, fmt.Sprintf("release %d", i))
		}
	default:
		labels = []string{"release"}
	}
	return labels, width / len(labels), nil
}

// columnLabel is a column name without its coordinate suffix "[j]".
func columnLabel(name string) string {
	if i := strings.LastIndex(name, "["); i > 0 && strings.HasSuffix(name, "]") {
		if _, err := strconv.Atoi(name[i+1 : len(name)-1]); err == nil {
			return strings.TrimSpace(name[:i])
		}
	}
	return strings.TrimSpace(name)
}

// readSamplesFile reads a .npy, .csv or .csv.gz file of runs; ctx
// interrupts it.
func readSamplesFile(ctx context.Context, path string) (*samplesFile, error) {
	// Opened without blocking: a FIFO is refused, not waited on.
	f, size, err := filekind.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > maxSamplesFileBytes {
		return nil, fmt.Errorf("%s: %d bytes, more than the limit of %d", path, size, int64(maxSamplesFileBytes))
	}
	h := sha256.New()
	r := bufio.NewReaderSize(io.TeeReader(ctxReader{ctx, f}, h), 64<<10)
	out := &samplesFile{path: path}
	if strings.HasSuffix(strings.ToLower(path), ".npy") {
		err = readNPY(ctx, r, size, out)
	} else {
		err = readSamplesCSV(ctx, r, f, out)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	out.sha256 = hex.EncodeToString(h.Sum(nil))
	return out, nil
}

// ctxReader fails with ctx's error once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// samplesTextLimits bound a CSV of samples once decompressed: the file
// limit on its bytes, maxSamplesLineBytes on a line, and twice the most
// runs an audit takes on its lines (blank lines are skipped but counted).
var samplesTextLimits = dataset.TextLimits{Bytes: maxSamplesFileBytes, Line: maxSamplesLineBytes, Lines: 2*audit.MaxTrials + 1024,
	LineHint: " (the limit on one run of a CSV file; save wider runs as .npy)"}

// readSamplesCSV reads rows of numbers, with an optional header row (any
// row with a non-numeric field) and an optional trial column. It reads
// twice: a first pass over r (which the caller hashes) counts the rows and
// checks the text and value limits without keeping anything, so that an
// input beyond them — a gzip bomb among them — is refused in bounded
// memory; a second pass over file, from its start, parses the numbers into
// one block of exactly the size the first counted.
func readSamplesCSV(ctx context.Context, r io.Reader, file io.ReadSeeker, out *samplesFile) error {
	rows, width, err := scanSamplesCSV(r, out, nil)
	if err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, r); err != nil { // the rest of the file (a gzip trailer), for its hash
		return err
	}
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		return err
	}
	out.header, out.trial = nil, nil
	flat := make([]float64, 0, rows*width)
	n, _, err := scanSamplesCSV(bufio.NewReaderSize(ctxReader{ctx, file}, 64<<10), out, &flat)
	if err == nil && n != rows {
		err = fmt.Errorf("the file changed while it was read (%d rows, then %d)", rows, n)
	}
	return err
}

// scanSamplesCSV walks a CSV of samples (gzip recognised by its magic
// bytes) under the limits and returns its number of runs and values per
// run. With flat nil it parses only the header; otherwise it parses every
// value, appends the runs to *flat (whose capacity must hold them) and
// sets out.rows to its slices.
func scanSamplesCSV(r io.Reader, out *samplesFile, flat *[]float64) (rows, width int, err error) {
	in, closeFn, err := dataset.Decompressed(r)
	if err != nil {
		return 0, 0, err
	}
	defer closeFn()
	cr := csv.NewReader(dataset.Bounded(in, samplesTextLimits))
	cr.ReuseRecord = true
	trialCol := -1
	total := 0
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var le *dataset.LimitError
			if errors.As(err, &le) {
				return 0, 0, le
			}
			return 0, 0, err
		}
		if line == 1 && !numeric(rec) {
			trialCol = out.readHeader(rec)
			continue
		}
		w := len(rec)
		if trialCol >= 0 {
			w--
		}
		if err := out.checkRun(line, w, rows, width); err != nil {
			return 0, 0, err
		}
		if total += w; total > maxSamplesValues {
			return 0, 0, fmt.Errorf("line %d: more than %d values", line, int64(maxSamplesValues))
		}
		width = w
		rows++
		if flat == nil {
			continue
		}
		if err := out.appendRun(line, rec, trialCol, w, flat); err != nil {
			return 0, 0, err
		}
	}
	return rows, width, nil
}

// readHeader takes the column names of a header line, leaving out the
// "trial" column, whose index it returns (−1 without one).
func (out *samplesFile) readHeader(rec []string) (trialCol int) {
	trialCol = -1
	for j, name := range rec {
		if strings.TrimSpace(name) == "trial" {
			trialCol = j
			continue
		}
		out.header = append(out.header, strings.TrimSpace(name))
	}
	return trialCol
}

// checkRun checks the w values of the run on a line against the runs
// before it (rows of width values) and the header.
func (out *samplesFile) checkRun(line, w, rows, width int) error {
	if rows > 0 && w != width {
		return fmt.Errorf("line %d: %d values, the first run has %d", line, w, width)
	}
	if out.header != nil && w != len(out.header) {
		return fmt.Errorf("line %d: %d values for %d named columns", line, w, len(out.header))
	}
	if rows == audit.MaxTrials {
		return fmt.Errorf("line %d: more than %d runs", line, audit.MaxTrials)
	}
	return nil
}

// appendRun parses the run of a line: its w values go to *flat (whose
// capacity must hold them) and out.rows, its trial column to out.trial.
func (out *samplesFile) appendRun(line int, rec []string, trialCol, w int, flat *[]float64) error {
	start := len(*flat)
	if start+w > cap(*flat) {
		return fmt.Errorf("line %d: the file changed while it was read (more runs than at first)", line)
	}
	for j, field := range rec {
		v, err := strconv.ParseFloat(strings.TrimSpace(field), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("line %d, column %d: must be a finite number, got %s", line, j+1, clip.Quote(field))
		}
		if j == trialCol {
			if v != math.Trunc(v) || v < 0 || v > math.MaxInt32 {
				return fmt.Errorf("line %d, column %d: the trial must be an integer ≥ 0, got %s", line, j+1, clip.Quote(field))
			}
			out.trial = append(out.trial, int(v))
			continue
		}
		*flat = append(*flat, v)
	}
	out.rows = append(out.rows, (*flat)[start:start+w:start+w])
	return nil
}

// numeric reports whether every field parses as a number.
func numeric(rec []string) bool {
	for _, f := range rec {
		if _, err := strconv.ParseFloat(strings.TrimSpace(f), 64); err != nil {
			return false
		}
	}
	return true
}

// recorder wraps a mechanism and keeps every trial's releases, for
// "audit run --save-releases".
type recorder struct {
	mechanisms.Mechanism
	points []mechanisms.ReleasePoint
	rows   [][]float64
	sides  []dataset.Side
}

// Run implements mechanisms.Mechanism.
func (r *recorder) Run(ctx context.Context, t mechanisms.Trial, d *dataset.Dataset, emit mechanisms.Emit) (mechanisms.Info, error) {
	dim := r.Dim()
	row := make([]float64, len(r.points)*dim)
	info, err := r.Mechanism.Run(ctx, t, d, func(k int, theta []float64) error {
		if k >= 0 && k < len(r.points) {
			copy(row[k*dim:], theta)
		}
		return emit(k, theta)
	})
	if err == nil {
		r.rows[t.Index], r.sides[t.Index] = row, t.Side
	}
	return info, err
}

// Name implements mechanisms.Namer.
func (r *recorder) Name() string { return mechanisms.NameOf(r.Mechanism) }

// Check implements mechanisms.Checker.
func (r *recorder) Check(d *dataset.Dataset) error {
	if c, ok := r.Mechanism.(mechanisms.Checker); ok {
		return c.Check(d)
	}
	return nil
}

// Guarantees implements mechanisms.Guarantor.
func (r *recorder) Guarantees(p dataset.Pair, at mechanisms.ReleasePoint) []closedform.Guarantee {
	return mechanisms.Guarantees(r.Mechanism, p, at)
}

// recordReleases rebuilds the plan's audit around a recorder.
func recordReleases(plan *scenario.Plan) (*recorder, error) {
	a := plan.Audit
	t := a.Target()
	n := a.Options().Trials
	rec := &recorder{Mechanism: t.Mechanism, points: a.Points(), rows: make([][]float64, n), sides: make([]dataset.Side, n)}
	t.Mechanism = rec
	b, err := audit.New(t, a.Options())
	if err == nil {
		b, err = b.WithExecution(a.Execution())
	}
	if err != nil {
		return nil, err
	}
	plan.Audit = b
	return rec, nil
}

// write saves the runs on D and on D′ as PREFIX-D.csv and
// PREFIX-DPRIME.csv, with a trial column and columns LABEL[j].
func (r *recorder) write(e *env, prefix string) error {
	dim := r.Dim()
	var header bytes.Buffer
	header.WriteString("trial")
	for _, p := range r.points {
		for j := 0; j < dim; j++ {
			header.WriteString("," + csvQuote(fmt.Sprintf("%s[%d]", p.Label, j)))
		}
	}
	header.WriteByte('\n')
	for side, suffix := range []string{"-D.csv", "-DPRIME.csv"} {
		path := prefix + suffix
		err := output(path).write(e, func(w io.Writer) error {
			bw := bufio.NewWriter(w)
			bw.Write(header.Bytes())
			for i, row := range r.rows {
				if row == nil || int(r.sides[i]) != side {
					continue
				}
				bw.WriteString(strconv.Itoa(i))
				for _, v := range row {
					bw.WriteByte(',')
					bw.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
				}
				bw.WriteByte('\n')
			}
			return bw.Flush()
		})
		if err != nil {
			return fmt.Errorf("--save-releases: cannot write %s: %v", path, err)
		}
	}
	return nil
}

// csvQuote quotes a field that needs it.
func csvQuote(s string) string {
	if strings.ContainsAny(s, ",\"\n") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

// analyzedAsWritten is what the HTML page shows of an analysis: the
// scenario file as the user wrote it (when --scenario gave one), then the
// samples analysed, as YAML.
func analyzedAsWritten(path string, doc samplesDoc) []byte {
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
	pts := make([]string, len(doc.Samples.Points))
	for i, p := range doc.Samples.Points {
		pts[i] = strconv.Quote(p)
	}
	fmt.Fprintf(&b, "  order: %s\n  dim: %d\n  points: [%s]\n", strconv.Quote(doc.Samples.Order), doc.Samples.Dim, strings.Join(pts, ", "))
	return []byte(b.String())
}
