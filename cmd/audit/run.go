package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/audit/scenario"
	"github.com/mcmcaudit/mcmcaudit/internal/clip"
	"github.com/mcmcaudit/mcmcaudit/internal/filekind"
	"github.com/mcmcaudit/mcmcaudit/report"
)

// runFlags are the flags of "audit run".
type runFlags struct {
	outs                 outputFlags
	workers, trials      int
	seed                 string
	claimEps, claimDelta float64
	claimGDP             float64
	printDefault         bool
	quiet                bool
	shard, out           string
	checkpoint           string
	noCheckpoint         bool
	resume               bool
	maxWork              float64
	saveReleases         string
	estimators           []string
}

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
	if f.printDefault {
		_, err := e.stdout.Write(scenario.DefaultScenario())
		return err
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
	if err := checkDataInputs(f.outputs(), cfg); err != nil {
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
		return usageError{err.Error()}
	}
	var rec *recorder
	if f.saveReleases != "" {
		if rec, err = recordReleases(plan); err != nil {
			return usageError{err.Error()}
		}
	}
	if f.shard != "" {
		return runShard(ctx, &f, plan, shardI, shardN, e)
	}

	prog := newProgress(e.stderr, cfg.Audit.Trials, f.quiet)
	a, err := withRunExecution(plan.Audit, prog.update, f.maxWork)
	if err != nil {
		return err
	}
	if err := workError(a.CheckWork(0, cfg.Audit.Trials, true)); err != nil {
		return err
	}
	notes := &heldNotes{}
	ck, err := checkpointLocation(&f, plan.Hash, cfg.Audit.Trials, notes)
	if err != nil {
		return err
	}
	trials, ck, err := simulate(ctx, a, ck, &f, cfg.Audit.Trials, prog, args, notes)
	if err != nil {
		return err
	}
	if rec != nil {
		if err := rec.write(e, f.saveReleases); err != nil {
			return err
		}
	}
	if !f.quiet {
		fmt.Fprintf(e.stderr, "audit: %d trials run; analysing %d release points\n", cfg.Audit.Trials, len(plan.Points()))
	}
	err = writeReport(ctx, e, plan, a, trials, f.outs, f.outs.stdoutTaken(), scenarioAsWritten(fs, args))
	return afterReport(err, ck, f.resume, cfg.Audit.Trials, prog, args)
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
	fs.intVar(&f.trials, "trials", 0, 0, audit.MaxTrials, "override audit.trials (0: keep the config's),")
	fs.StringVar(&f.seed, "seed", "", "override the config's seed (an unsigned integer)")
	fs.Var(estimatorsFlag{&f.estimators}, "estimators", "override audit.estimators: NAME,… among "+strings.Join(audit.EstimatorNames(), ", "))
	fs.floatVar(&f.claimEps, "claim-epsilon", math.NaN(), "[0, ∞)", func(x float64) bool { return x >= 0 }, "claimed ε (with --claim-delta), in")
	fs.floatVar(&f.claimDelta, "claim-delta", math.NaN(), "[0, 1)", inDelta, "claimed δ (with --claim-epsilon), in")
	fs.floatVar(&f.claimGDP, "claim-gdp", math.NaN(), "[0, ∞)", func(x float64) bool { return x >= 0 }, "claimed μ of μ-GDP, in")
	fs.BoolVar(&f.printDefault, "print-default", false, "print the built-in scenario's YAML and exit")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress output on stderr")
	fs.StringVar(&f.shard, "shard", "", "run only shard I/N of the trials (I in [0, N)) and write them to --out for 'audit merge'")
	fs.pathVar(&f.out, "out", false, "trials file written by --shard")
	fs.StringVar(&f.checkpoint, "checkpoint", "", "persist completed trials in DIR as the run goes (resumable; default: a directory in the user's cache, removed when the run ends)")
	fs.BoolVar(&f.noCheckpoint, "no-checkpoint", false, "do not persist completed trials (an interrupted run is then lost)")
	fs.BoolVar(&f.resume, "resume", false, "continue the run saved in --checkpoint DIR, or in the default checkpoint of this scenario and flags")
	fs.StringVar(&f.saveReleases, "save-releases", "", "also write every run's releases to PREFIX-D.csv and PREFIX-DPRIME.csv, with their trial indices (for 'audit analyze')")
	fs.floatVar(&f.maxWork, "max-work", 0, "[0, ∞)", func(x float64) bool { return x >= 0 },
		fmt.Sprintf("refuse a run whose estimated work exceeds this many units of a few ns each (0: the default %g), in", audit.DefaultMaxWork))
}

// simulate runs the trials, checkpointed in ck when it names a directory,
// and turns an interruption or a checkpoint failure into the command's
// error (with the command that resumes the run, when one can). It returns
// the checkpoint the run held: ck, or none when the run went on without
// it (the default checkpoint found busy or unusable), so that the run
// never offers to resume, or removes, a checkpoint that is not its own.
// The checkpoint's notes are held until the trials end: a run refused
// during its trials prints only the refusal.
func simulate(ctx context.Context, a *audit.Audit, ck ckLoc, f *runFlags, trials int, prog *progress, args []string, notes *heldNotes) (*audit.Trials, ckLoc, error) {
	var held atomic.Bool
	t, err := untilInterrupted(ctx, func() (*audit.Trials, error) {
		if ck.dir != "" {
			return a.SimulateCheckpointedWith(ctx, ck.dir, audit.CheckpointOptions{
				Resume: f.resume, Replace: ck.auto, BestEffort: ck.auto, Unsynced: ck.auto,
				Notify: notes.add, OnHold: func() { held.Store(true) }})
		}
		return a.Simulate(ctx, 0, trials)
	})
	prog.finish()
	asked := ck
	if !held.Load() {
		ck = ckLoc{}
	}
	var ie *audit.InterruptedError
	var ce *audit.CheckpointError
	switch {
	case err == nil:
		notes.flush(prog)
		return t, ck, nil
	case errors.As(err, &ie) && ie.Dir != "" && ck.dir != "":
		notes.flush(prog)
		return nil, ck, interrupted(ie.Error(), ck, args)
	case ctx.Err() != nil && ck.dir != "":
		notes.flush(prog)
		return nil, ck, interrupted("interrupted; the blocks of trials completed so far are saved in "+ck.dir, ck, args)
	case errors.As(err, &ie) || ctx.Err() != nil:
		notes.flush(prog)
		return nil, ck, interruptedError{"interrupted; nothing was saved"}
	}
	// A failure: nothing offers to resume this run, so the default
	// checkpoint it made is of no use (one it was asked to resume stays,
	// for a resume once the cause is mended).
	removeDefaultCheckpoint(ck, !f.resume, prog)
	if errors.As(err, &ce) {
		return nil, ck, checkpointError(ce, asked)
	}
	return nil, ck, runError(err)
}

// afterReport is the end of a run, given writeReport's error: an
// interruption says where the trials are saved; once the report is
// written, or refused (the trials of a run that was not resumed cannot be
// resumed, as nothing says how), the default checkpoint has served and is
// removed.
func afterReport(err error, ck ckLoc, resumed bool, trials int, prog *progress, args []string) error {
	var in interruptedError
	var v violationError
	if errors.As(err, &in) && ck.dir != "" {
		return interrupted(in.msg+fmt.Sprintf("; the %d trials are saved in %s", trials, ck.dir), ck, args)
	}
	removeDefaultCheckpoint(ck, err == nil || errors.As(err, &v) || !resumed, prog)
	return err
}

// removeDefaultCheckpoint removes the default checkpoint the run held,
// when ck is one and remove is set; a failure to remove it is a note,
// not an error: the run's result stands.
func removeDefaultCheckpoint(ck ckLoc, remove bool, prog *progress) {
	if !ck.auto || !remove {
		return
	}
	if _, err := audit.RemoveCheckpoint(ck.dir); err != nil {
		prog.note(fmt.Sprintf("cannot remove the checkpoint %s: %s", ck.dir, pathErr(err)))
	}
}

// heldNotes keeps a run's notes about its checkpoint until the trials
// end: a run refused during its trials then prints its one line of
// refusal alone, and one that completes or is interrupted prints them
// first.
type heldNotes struct {
	mu    sync.Mutex
	lines []string
}

// add keeps msg.
func (n *heldNotes) add(msg string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lines = append(n.lines, msg)
}

// flush prints the notes kept so far, each on its line.
func (n *heldNotes) flush(p *progress) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, l := range n.lines {
		p.note(l)
	}
	n.lines = nil
}

// defaultCheckpointAge is how long a default checkpoint in which nothing
// has changed is kept: older ones are removed when a run starts.
const defaultCheckpointAge = 30 * 24 * time.Hour

// ckLoc is where a run keeps its checkpoint: dir ("" for none), auto when
// it is the default one in the user's cache rather than --checkpoint.
type ckLoc struct {
	dir  string
	auto bool
}

// checkpointLocation picks the run's checkpoint: --checkpoint DIR; none
// with --no-checkpoint or --save-releases (whose runs cannot be resumed);
// else the default one, named by the audit ID and trial count under
// os.UserCacheDir()/mcmcaudit/checkpoints, after removing the default
// checkpoints older than defaultCheckpointAge. Every directory of that
// path is created private or checked (audit.PrivateDir): without a cache
// directory that passes, the run goes on without a checkpoint after one
// note (held with the others until the trials end); --resume is refused.
func checkpointLocation(f *runFlags, hash string, trials int, notes *heldNotes) (ckLoc, error) {
	if f.checkpoint != "" {
		return ckLoc{dir: f.checkpoint}, nil
	}
	if f.noCheckpoint || f.saveReleases != "" {
		return ckLoc{}, nil
	}
	dir, err := defaultCheckpointDir(audit.CheckpointKey(hash, trials), !f.resume)
	switch {
	case err == nil:
		audit.PruneCheckpoints(filepath.Dir(dir), defaultCheckpointAge, time.Now())
		return ckLoc{dir: dir, auto: true}, nil
	case f.resume && errors.Is(err, fs.ErrNotExist):
		return ckLoc{}, usagef("--resume: no interrupted run of this scenario with these flags is saved (looked in %s); run it without --resume", dir)
	case f.resume:
		return ckLoc{}, usagef("--resume: %v; give --checkpoint DIR", err)
	}
	notes.add(fmt.Sprintf("warning: %v; this run is not checkpointed", err))
	return ckLoc{}, nil
}

// defaultCheckpointDir returns the default checkpoint directory named
// key, under the user's cache: cache/mcmcaudit/checkpoints/key, each of
// the three created private (0700) if missing and create is set, and
// checked by audit.PrivateDir whether created or found — so that no
// link or directory planted by someone else can make a run write its
// trials elsewhere. Without create, a missing element is an error that
// matches fs.ErrNotExist, returned with the path looked for.
func defaultCheckpointDir(key string, create bool) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the default checkpoint (%v)", err)
	}
	want := filepath.Join(cache, "mcmcaudit", "checkpoints", key)
	if _, err := audit.PrivateDir(cache, create, "mcmcaudit", "checkpoints", key); err != nil {
		var unsafe *audit.UnsafeDirError
		switch {
		case errors.As(err, &unsafe):
			return want, fmt.Errorf("refusing the checkpoint directory %s: %s", unsafe.Path, unsafe.Reason)
		case !create && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)):
			return want, fs.ErrNotExist
		}
		return want, fmt.Errorf("cannot create the checkpoint directory %s: %s", filepath.Dir(want), pathErr(err))
	}
	return want, nil
}

// note prints one line on stderr, clearing the progress bar first; it is
// printed with --quiet too.
func (p *progress) note(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Clear()
	}
	fmt.Fprintf(p.w, "audit: %s\n", msg)
}

// checkRunFlags checks the combinations of flags and every output before
// anything is loaded: a long run must not end in "cannot write". It
// returns the shard, when one is asked for.
func checkRunFlags(e *env, fs *flagSet, f *runFlags) (shardI, shardN int, err error) {
	if f.checkpoint == "" && flagGiven(fs, "checkpoint") {
		return 0, 0, usagef("--checkpoint: needs a DIR, got \"\" (without --checkpoint the run keeps its default checkpoint)")
	}
	if f.saveReleases == "" && flagGiven(fs, "save-releases") {
		return 0, 0, usagef("--save-releases: needs a PREFIX for PREFIX-D.csv and PREFIX-DPRIME.csv, got \"\"")
	}
	if err := checkReleasesPrefix(f.saveReleases); err != nil {
		return 0, 0, err
	}
	if err := f.outs.checkReportPlot(); err != nil {
		return 0, 0, err
	}
	if f.noCheckpoint && (f.resume || f.checkpoint != "") {
		return 0, 0, usagef("--no-checkpoint: not with --checkpoint or --resume")
	}
	var inputs []namedInput
	if fs.NArg() == 1 {
		inputs = append(inputs, namedInput{fs.Arg(0), "scenario file"})
	}
	if f.shard != "" {
		if shardI, shardN, err = parseShard(f.shard); err != nil {
			return 0, 0, err
		}
		if f.out == "" || f.out == "-" {
			return 0, 0, usagef("--shard needs --out FILE for the trials file (a file: it is binary)")
		}
		if f.outs.asked() || f.checkpoint != "" || f.resume || f.saveReleases != "" {
			return 0, 0, usagef("--shard writes only a trials file; reports come from 'audit merge'")
		}
		return shardI, shardN, f.outs.check(e, inputs, namedOutput{output(f.out), "out"})
	}
	if f.out != "" {
		return 0, 0, usagef("--out is only used with --shard")
	}
	if f.checkpoint != "" {
		if st, err := os.Stat(f.checkpoint); err == nil && !st.IsDir() {
			return 0, 0, usagef("--checkpoint: %s exists and is not a directory", f.checkpoint)
		}
	}
	var extra []namedOutput
	if f.saveReleases != "" {
		if f.resume {
			return 0, 0, usagef("--save-releases needs every run in this process (not with --resume)")
		}
		extra = append(extra, namedOutput{output(f.saveReleases + "-D.csv"), "save-releases"}, namedOutput{output(f.saveReleases + "-DPRIME.csv"), "save-releases"})
	}
	return 0, 0, f.outs.check(e, inputs, extra...)
}

// outputs lists every file output of "audit run" with its flag.
func (f *runFlags) outputs() []namedOutput {
	outs := append(f.outs.named(), namedOutput{output(f.out), "out"})
	if f.saveReleases != "" {
		outs = append(outs, namedOutput{output(f.saveReleases + "-D.csv"), "save-releases"}, namedOutput{output(f.saveReleases + "-DPRIME.csv"), "save-releases"})
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

// workError names the flag that raises the work limit.
func workError(err error) error {
	var fe *audit.FieldError
	if errors.As(err, &fe) && fe.Path.Go() == "MaxWork" {
		return usagef("--max-work: %s", strings.Replace(fe.Msg, "raise the limit", "raise --max-work", 1))
	}
	return err
}

// interruptGrace is how long an interrupted command waits for the phase
// under way to notice the cancellation before it exits anyway.
const interruptGrace = 2 * time.Second

// untilInterrupted runs f; when ctx is cancelled first (SIGINT, SIGTERM)
// it waits up to interruptGrace for f to return — f checks ctx itself where
// it can — and then returns without it: the command is about to exit.
func untilInterrupted[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
	}
	select {
	case r := <-done:
		return r.v, r.err
	case <-time.After(interruptGrace):
		var zero T
		return zero, ctx.Err()
	}
}

// writeReport analyses complete trials and writes the table, JSON, CSV,
// plot and HTML; it returns a violationError when a claim is refuted. An
// interruption during the analysis, or before the outputs are written,
// writes nothing.
//
// scen is the scenario to show in the HTML page as the user wrote it (nil:
// the plan's configuration, as JSON).
func writeReport(ctx context.Context, e *env, plan *scenario.Plan, a *audit.Audit, trials *audit.Trials, o outputFlags, quietTable bool, scen []byte) error {
	rep, err := untilInterrupted(ctx, func() (*audit.Report, error) { return a.AnalyzeContext(ctx, trials) })
	if ctx.Err() != nil {
		return interruptedError{"interrupted during the analysis; no report was written"}
	}
	if err != nil {
		if werr := workError(err); werr != err {
			return werr
		}
		return runError(err)
	}
	doc := scenario.Document{Versions: audit.CurrentVersions(), Config: plan.Config, Report: rep}
	if scen == nil {
		scen, _ = json.MarshalIndent(plan.Config, "", "  ")
	}
	return writeReportFiles(ctx, e, rep, doc, scen, o, quietTable)
}

// writeReportFiles writes the table (unless a document goes to stdout),
// the JSON document, the CSV rows, the plot and the HTML page, each output
// already checked; it returns a violationError when a claim is refuted.
// An interruption stops before the next output.
func writeReportFiles(ctx context.Context, e *env, rep *audit.Report, doc any, scen []byte, o outputFlags, quietTable bool) error {
	if !quietTable {
		if err := report.WriteTable(e.stdout, rep); err != nil {
			return err
		}
	}
	if err := writeDocuments(ctx, e, interruptedError{"interrupted while writing the report; outputs not yet written were not written"},
		document{o.json, func(w io.Writer) error { return audit.WriteJSON(w, doc) }},
		document{o.csv, func(w io.Writer) error { return report.WriteCSV(w, rep) }},
		document{o.plot, func(w io.Writer) error {
			format, err := report.PlotFormat(o.plot)
			if err != nil {
				return err
			}
			return report.WritePlot(w, format, rep)
		}},
		document{o.html, func(w io.Writer) error { return report.WriteHTML(w, rep, audit.CurrentVersions(), scen) }},
	); err != nil {
		return err
	}
	if rep.Violated() {
		return violationError{rep.Violations[0]}
	}
	return nil
}

// interruptedError is a run stopped by SIGINT/SIGTERM: exit code 130.
type interruptedError struct{ msg string }

func (e interruptedError) Error() string { return e.msg }

// interrupted reports an interrupted run; with a checkpoint it prints the
// command that resumes it: the command line as given — scenario,
// overrides, outputs — with --resume (and --checkpoint DIR unless it is
// the default one), quoted for a POSIX shell, so that it can be pasted as
// it is.
func interrupted(msg string, ck ckLoc, args []string) error {
	if ck.dir != "" {
		dir := ck.dir
		if ck.auto {
			dir = ""
		}
		msg += "; resume with: " + resumeCommand(os.Args[0], args, dir)
	}
	return interruptedError{msg}
}

var reFlagName = regexp.MustCompile(`^--?([A-Za-z][-A-Za-z0-9]*)(=.*)?$`)

// resumeCommand rebuilds "prog run ARGS" without its --checkpoint and
// --resume flags, and adds "--checkpoint DIR --resume", or "--resume" when
// dir is "" (before a "--", after which every argument is positional).
func resumeCommand(prog string, args []string, dir string) string {
	words := []string{shellQuote(prog), "run"}
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = shellQuoteAll(args[i:])
			break
		}
		m := reFlagName.FindStringSubmatch(a)
		switch {
		case m != nil && m[1] == "resume":
			continue
		case m != nil && m[1] == "checkpoint":
			if m[2] == "" {
				i++ // its value is the next argument
			}
			continue
		}
		words = append(words, shellQuote(a))
	}
	if dir != "" {
		words = append(words, "--checkpoint", shellQuote(dir))
	}
	words = append(words, "--resume")
	return strings.Join(append(words, rest...), " ")
}

var reShellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellQuote quotes s for a POSIX shell: as it is when it has no special
// character, else in single quotes (a single quote inside is closed,
// escaped with a backslash and reopened).
func shellQuote(s string) string {
	if reShellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func shellQuoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = shellQuote(s)
	}
	return out
}

// withRunExecution returns a reporting progress to p under the work limit
// maxWork (--max-work; 0: the default).
func withRunExecution(a *audit.Audit, p audit.Progress, maxWork float64) (*audit.Audit, error) {
	x := a.Execution()
	x.Progress, x.MaxWork = p, maxWork
	a, err := a.WithExecution(x)
	if err != nil {
		return nil, usageError{"--max-work: " + err.Error()}
	}
	return a, nil
}

// runShard runs one shard and writes its trials file.
func runShard(ctx context.Context, f *runFlags, plan *scenario.Plan, i, n int, e *env) error {
	if n > plan.Config.Audit.Trials {
		return usagef("--shard: N must be ≤ audit.trials = %d, got %d", plan.Config.Audit.Trials, n)
	}
	lo, hi := audit.ShardRange(plan.Config.Audit.Trials, i, n)
	prog := newProgress(e.stderr, hi-lo, f.quiet)
	a, err := withRunExecution(plan.Audit, prog.update, f.maxWork)
	if err != nil {
		return err
	}
	if err := workError(a.CheckWork(lo, hi, false)); err != nil {
		return err
	}
	t, err := untilInterrupted(ctx, func() (*audit.Trials, error) { return a.Simulate(ctx, lo, hi) })
	prog.finish()
	if ctx.Err() != nil {
		return interruptedError{"interrupted; the shard's trials file was not written"}
	}
	if err != nil {
		return runError(err)
	}
	spec, err := plan.Spec()
	if err != nil {
		return err
	}
	if err := output(f.out).write(e, func(w io.Writer) error { return audit.WritePart(w, t, spec) }); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "shard %d/%d: trials [%d, %d) of %d written to %s (config %.12s)\n", i, n, lo, hi, plan.Config.Audit.Trials, f.out, plan.Hash)
	return nil
}

// checkpointError names the flags a checkpoint failure is about. A
// failure of the storage while the checkpoint is written (a full disk) is
// exit 3; a path that cannot hold one is bad input.
func checkpointError(ce *audit.CheckpointError, ck ckLoc) error {
	switch {
	case errors.Is(ce, audit.ErrCheckpointWrite):
		cause := strings.TrimPrefix(ce.Err.Error(), audit.ErrCheckpointWrite.Error()+": ")
		return writeError{fmt.Sprintf("cannot write the checkpoint in %s: %s", ce.Dir, cause)}
	case ck.auto && errors.Is(ce, audit.ErrNoCheckpoint):
		return usagef("--resume: no interrupted run of this scenario with these flags is saved (looked in %s); run it without --resume", ce.Dir)
	case ck.auto && errors.Is(ce, audit.ErrCheckpointBusy):
		return usagef("--resume: the saved run %s is in use by another audit run", ce.Dir)
	case errors.Is(ce, audit.ErrCheckpointExists):
		return usagef("--checkpoint: %s already holds a checkpoint; add --resume to continue it, or choose an empty directory", ce.Dir)
	case errors.Is(ce, audit.ErrNoCheckpoint):
		return usagef("--resume: %s holds no checkpoint", ce.Dir)
	case errors.Is(ce, audit.ErrCheckpointMismatch):
		return usagef("--resume: the checkpoint in %s %v", ce.Dir, ce.Err)
	case errors.Is(ce, audit.ErrCheckpointBusy):
		return usagef("--checkpoint: %s is in use by another audit run (wait for it, or choose another directory)", ce.Dir)
	}
	return usagef("--checkpoint: %v", ce)
}

// runError classifies a failure during a run: a diverging chain or a
// scenario that cannot be analysed is the user's input; so is a work
// estimate beyond the limit.
func runError(err error) error {
	if werr := workError(err); werr != err {
		return werr
	}
	return usageError{err.Error()}
}

// loadScenario reads the scenario named on the command line, or the
// built-in one. The file must be a regular file: a FIFO or a device is
// refused before it is opened (opening a FIFO would wait for a writer).
func loadScenario(fs *flagSet) (*scenario.Config, error) {
	var cfg *scenario.Config
	var err error
	if fs.NArg() == 1 {
		path := fs.Arg(0)
		if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
			return nil, usagef("config: cannot read %s: it is %s, not a regular file", path, filekind.Of(st.Mode()))
		}
		cfg, err = scenario.LoadConfig(path)
	} else {
		cfg, err = scenario.DefaultConfig()
	}
	if err != nil {
		return nil, usageError{err.Error()}
	}
	return cfg, nil
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

func loadRunConfig(fs *flagSet, f *runFlags) (*scenario.Config, error) {
	cfg, err := loadScenario(fs)
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
