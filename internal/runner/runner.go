package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/audit/scenario"
	"github.com/mcmcaudit/mcmcaudit/internal/cli"
)

// Flags are the flags of "audit run" that its trial phase depends on.
type Flags struct {
	// Checkpoint is --checkpoint DIR ("" for the default one).
	Checkpoint string
	// NoCheckpoint is --no-checkpoint, Resume --resume.
	NoCheckpoint, Resume bool
	// SaveReleases is --save-releases PREFIX: its runs cannot be resumed.
	SaveReleases string
	// Quiet is --quiet.
	Quiet bool
	// MaxWork is --max-work (0: the default).
	MaxWork float64
	// Out is --out FILE, the trials file of --shard.
	Out string
}

// Simulate runs the trials, checkpointed in ck when it names a directory,
// and turns an interruption or a checkpoint failure into the command's
// error (with the command that resumes the run, when one can). It returns
// the checkpoint the run held: ck, or none when the run went on without
// it (the default checkpoint found busy or unusable), so that the run
// never offers to resume, or removes, a checkpoint that is not its own.
// The checkpoint's notes are held until the trials end: a run refused
// during its trials prints only the refusal.
func Simulate(ctx context.Context, a *audit.Audit, ck Checkpoint, f *Flags, trials int, prog *cli.Progress, args []string, notes *Notes) (*audit.Trials, Checkpoint, error) {
	var held atomic.Bool
	t, err := cli.UntilInterrupted(ctx, func() (*audit.Trials, error) {
		if ck.Dir != "" {
			return a.SimulateCheckpointedWith(ctx, ck.Dir, audit.CheckpointOptions{
				Resume: f.Resume, Replace: ck.Auto, BestEffort: ck.Auto, Unsynced: ck.Auto, After: ck.after(),
				Notify: notes.add, OnHold: func() { held.Store(true) }})
		}
		return a.Simulate(ctx, 0, trials)
	})
	prog.Finish()
	asked := ck
	if !held.Load() {
		ck = Checkpoint{}
	}
	var ie *audit.InterruptedError
	var ce *audit.CheckpointError
	switch {
	case err == nil:
		notes.flush(prog)
		return t, ck, nil
	case errors.As(err, &ie) && ie.Dir != "" && ck.Dir != "":
		notes.flush(prog)
		return nil, ck, interrupted(ie.Error(), ck, args)
	case ctx.Err() != nil && ck.Dir != "":
		notes.flush(prog)
		return nil, ck, interrupted("interrupted; the blocks of trials completed so far are saved in "+ck.Dir, ck, args)
	case errors.As(err, &ie) || ctx.Err() != nil:
		notes.flush(prog)
		return nil, ck, cli.InterruptedError{Msg: "interrupted; nothing was saved"}
	}
	// A failure: nothing offers to resume this run, so the default
	// checkpoint it made is of no use (one it was asked to resume stays,
	// for a resume once the cause is mended).
	removeDefaultCheckpoint(ck, !f.Resume, prog)
	if errors.As(err, &ce) {
		return nil, ck, checkpointError(ce, asked)
	}
	return nil, ck, cli.RunError(err)
}

// AfterReport is the end of a run, given cli.WriteReport's error: an
// interruption says where the trials are saved; once the report is
// written, or refused (the trials of a run that was not resumed cannot be
// resumed, as nothing says how), the default checkpoint has served and is
// removed.
func AfterReport(err error, ck Checkpoint, resumed bool, trials int, prog *cli.Progress, args []string) error {
	var in cli.InterruptedError
	var v cli.ViolationError
	if errors.As(err, &in) && ck.Dir != "" {
		return interrupted(in.Msg+fmt.Sprintf("; the %d trials are saved in %s", trials, ck.Dir), ck, args)
	}
	removeDefaultCheckpoint(ck, err == nil || errors.As(err, &v) || !resumed, prog)
	return err
}

// removeDefaultCheckpoint removes the default checkpoint the run held,
// when ck is one and remove is set; a failure to remove it is a note,
// not an error: the run's result stands.
func removeDefaultCheckpoint(ck Checkpoint, remove bool, prog *cli.Progress) {
	if !ck.Auto || !remove {
		return
	}
	if _, err := audit.RemoveCheckpoint(ck.Dir); err != nil {
		prog.Note(fmt.Sprintf("cannot remove the checkpoint %s: %s", ck.Dir, cli.PathErr(err)))
	}
}

// Notes keeps a run's notes about its checkpoint until the trials
// end: a run refused during its trials then prints its one line of
// refusal alone, and one that completes or is interrupted prints them
// first.
type Notes struct {
	mu    sync.Mutex
	lines []string
}

// add keeps msg.
func (n *Notes) add(msg string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lines = append(n.lines, msg)
}

// flush prints the notes kept so far, each on its line.
func (n *Notes) flush(p *cli.Progress) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, l := range n.lines {
		p.Note(l)
	}
	n.lines = nil
}

// defaultCheckpointAge is how long a default checkpoint in which nothing
// has changed is kept: older ones are removed when a run starts.
const defaultCheckpointAge = 30 * 24 * time.Hour

// Checkpoint is where a run keeps its checkpoint: Dir ("" for none), Auto when
// it is the default one in the user's cache rather than --checkpoint.
type Checkpoint struct {
	Dir  string
	Auto bool
}

// AutoCheckpointAfter is how long the trials of a run with the default
// checkpoint run before it saves their blocks (audit.CheckpointOptions.
// After): an interrupted run loses at most that much work, and a run whose
// trials take less writes nothing but its manifest. --checkpoint DIR saves
// every block. Tests set it to 0 to see the default checkpoint's blocks at
// once.
var AutoCheckpointAfter = time.Second

// after is the checkpoint's audit.CheckpointOptions.After.
func (ck Checkpoint) after() time.Duration {
	if ck.Auto {
		return AutoCheckpointAfter
	}
	return 0
}

// Locate picks the run's checkpoint: --checkpoint DIR; none
// with --no-checkpoint or --save-releases (whose runs cannot be resumed);
// else the default one, named by the audit ID and trial count under
// os.UserCacheDir()/mcmcaudit/checkpoints, after removing the default
// checkpoints older than defaultCheckpointAge. Every directory of that
// path is created private or checked (audit.PrivateDir): without a cache
// directory that passes, the run goes on without a checkpoint after one
// note (held with the others until the trials end); --resume is refused.
func Locate(f *Flags, hash string, trials int, notes *Notes) (Checkpoint, error) {
	if f.Checkpoint != "" {
		return Checkpoint{Dir: f.Checkpoint}, nil
	}
	if f.NoCheckpoint || f.SaveReleases != "" {
		return Checkpoint{}, nil
	}
	dir, err := defaultCheckpointDir(audit.CheckpointKey(hash, trials), !f.Resume)
	switch {
	case err == nil:
		audit.PruneCheckpoints(filepath.Dir(dir), defaultCheckpointAge, time.Now())
		return Checkpoint{Dir: dir, Auto: true}, nil
	case f.Resume && errors.Is(err, fs.ErrNotExist):
		return Checkpoint{}, cli.Usagef("--resume: no interrupted run of this scenario with these flags is saved (looked in %s); run it without --resume", dir)
	case f.Resume:
		return Checkpoint{}, cli.Usagef("--resume: %v; give --checkpoint DIR", err)
	}
	notes.add(fmt.Sprintf("warning: %v; this run is not checkpointed", err))
	return Checkpoint{}, nil
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
		return want, fmt.Errorf("cannot create the checkpoint directory %s: %s", filepath.Dir(want), cli.PathErr(err))
	}
	return want, nil
}

// interrupted reports an interrupted run; with a checkpoint it prints the
// command that resumes it: the command line as given — scenario,
// overrides, outputs — with --resume (and --checkpoint DIR unless it is
// the default one), quoted for a POSIX shell, so that it can be pasted as
// it is.
func interrupted(msg string, ck Checkpoint, args []string) error {
	if ck.Dir != "" {
		dir := ck.Dir
		if ck.Auto {
			dir = ""
		}
		msg += "; resume with: " + ResumeCommand(os.Args[0], args, dir)
	}
	return cli.InterruptedError{Msg: msg}
}

var reFlagName = regexp.MustCompile(`^--?([A-Za-z][-A-Za-z0-9]*)(=.*)?$`)

// ResumeCommand rebuilds "prog run ARGS" without its --checkpoint and
// --resume flags, and adds "--checkpoint DIR --resume", or "--resume" when
// dir is "" (before a "--", after which every argument is positional).
func ResumeCommand(prog string, args []string, dir string) string {
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

// Shard runs one shard (I/N = i/n) and writes its trials file.
func Shard(ctx context.Context, f *Flags, plan *scenario.Plan, i, n int, e *cli.Env) error {
	if n > plan.Config.Audit.Trials {
		return cli.Usagef("--shard: N must be ≤ audit.trials = %d, got %d", plan.Config.Audit.Trials, n)
	}
	lo, hi := audit.ShardRange(plan.Config.Audit.Trials, i, n)
	prog := cli.NewProgress(e.Stderr, hi-lo, f.Quiet)
	a, err := cli.WithRunExecution(plan.Audit, prog.Update, f.MaxWork)
	if err != nil {
		return err
	}
	if err := cli.WorkError(a.CheckWork(lo, hi, false)); err != nil {
		return err
	}
	t, err := cli.UntilInterrupted(ctx, func() (*audit.Trials, error) { return a.Simulate(ctx, lo, hi) })
	prog.Finish()
	if ctx.Err() != nil {
		return cli.InterruptedError{Msg: "interrupted; the shard's trials file was not written"}
	}
	if err != nil {
		return cli.RunError(err)
	}
	spec, err := plan.Spec()
	if err != nil {
		return err
	}
	if err := cli.Output(f.Out).Write(e, func(w io.Writer) error { return audit.WritePart(w, t, spec) }); err != nil {
		return err
	}
	fmt.Fprintf(e.Stdout, "shard %d/%d: trials [%d, %d) of %d written to %s (config %.12s)\n", i, n, lo, hi, plan.Config.Audit.Trials, f.Out, plan.Hash)
	return nil
}

// checkpointError names the flags a checkpoint failure is about. A
// failure of the storage while the checkpoint is written (a full disk) is
// exit 3; a path that cannot hold one is bad input.
func checkpointError(ce *audit.CheckpointError, ck Checkpoint) error {
	switch {
	case errors.Is(ce, audit.ErrCheckpointWrite):
		cause := strings.TrimPrefix(ce.Err.Error(), audit.ErrCheckpointWrite.Error()+": ")
		return cli.WriteError{Msg: fmt.Sprintf("cannot write the checkpoint in %s: %s", ce.Dir, cause)}
	case ck.Auto && errors.Is(ce, audit.ErrNoCheckpoint):
		return cli.Usagef("--resume: no interrupted run of this scenario with these flags is saved (looked in %s); run it without --resume", ce.Dir)
	case ck.Auto && errors.Is(ce, audit.ErrCheckpointBusy):
		return cli.Usagef("--resume: the saved run %s is in use by another audit run", ce.Dir)
	case errors.Is(ce, audit.ErrCheckpointExists):
		return cli.Usagef("--checkpoint: %s already holds a checkpoint; add --resume to continue it, or choose an empty directory", ce.Dir)
	case errors.Is(ce, audit.ErrNoCheckpoint):
		return cli.Usagef("--resume: %s holds no checkpoint", ce.Dir)
	case errors.Is(ce, audit.ErrCheckpointMismatch):
		return cli.Usagef("--resume: the checkpoint in %s %v", ce.Dir, ce.Err)
	case errors.Is(ce, audit.ErrCheckpointBusy):
		return cli.Usagef("--checkpoint: %s is in use by another audit run (wait for it, or choose another directory)", ce.Dir)
	}
	return cli.Usagef("--checkpoint: %v", ce)
}
