package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// checkpointManifest identifies the audit a checkpoint directory belongs to.
type checkpointManifest struct {
	ConfigHash string `json:"config_hash"`
	Trials     int    `json:"trials"`
	Block      int    `json:"block"`
}

const (
	manifestName = "manifest.json"
	lockName     = "lock"
)

// Checkpoint errors, wrapped with the directory and details.
var (
	// ErrCheckpointExists: the directory already holds a checkpoint and
	// resumption was not asked for.
	ErrCheckpointExists = errors.New("already holds a checkpoint")
	// ErrNoCheckpoint: resumption was asked for but there is none.
	ErrNoCheckpoint = errors.New("holds no checkpoint")
	// ErrCheckpointMismatch: the checkpoint belongs to another audit.
	ErrCheckpointMismatch = errors.New("belongs to another configuration")
	// ErrCheckpointBusy: another process is using the directory.
	ErrCheckpointBusy = errors.New("is in use by another run")
)

// CheckpointError is a failure of the checkpoint directory Dir.
type CheckpointError struct {
	Dir string
	Err error
}

func (e *CheckpointError) Error() string { return "checkpoint " + e.Dir + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *CheckpointError) Unwrap() error { return e.Err }

func ckErr(dir string, format string, args ...any) error {
	return &CheckpointError{Dir: dir, Err: fmt.Errorf(format, args...)}
}

// InterruptedError reports a run stopped by cancellation; Saved trials are
// safe in the checkpoint directory (0 without one).
type InterruptedError struct {
	Saved, Total int
	Dir          string
}

func (e *InterruptedError) Error() string {
	if e.Dir == "" {
		return "interrupted; nothing was saved"
	}
	return fmt.Sprintf("interrupted; %d of %d trials are saved in %s", e.Saved, e.Total, e.Dir)
}

// CheckpointBlock is the number of trials persisted together: large enough
// that a directory holds at most a few hundred files, small enough that an
// interruption loses little work.
func CheckpointBlock(trials int) int {
	return max(256, (trials+199)/200)
}

// WriteFileAtomic writes via a temporary file in the same directory, fsync
// and rename, so that a crash (even kill -9) leaves either the old state or
// the complete file. The caller checks that path may be replaced.
func WriteFileAtomic(path string, fill func(w io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := fill(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func blockName(lo, hi int) string { return fmt.Sprintf("trials-%012d-%012d.part", lo, hi) }

// lockDir takes an exclusive advisory lock on dir, so that two runs never
// compute into one checkpoint; the lock ends with the returned file.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockName)
	if st, err := os.Lstat(path); err == nil && !st.Mode().IsRegular() {
		return nil, ckErr(dir, "%s is not a regular file", lockName)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, ckErr(dir, "cannot create its lock: %s", unwrapPathError(err))
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, &CheckpointError{Dir: dir, Err: ErrCheckpointBusy}
	}
	return f, nil
}

// openCheckpoint creates or checks the manifest of dir.
func (a *Audit) openCheckpoint(dir string, resume bool) (checkpointManifest, error) {
	n := a.opts.Trials
	mpath := filepath.Join(dir, manifestName)
	man := checkpointManifest{ConfigHash: a.opts.ID, Trials: n, Block: CheckpointBlock(n)}
	st, err := os.Lstat(mpath)
	switch {
	case err == nil && !st.Mode().IsRegular():
		return man, ckErr(dir, "%s is not a regular file", manifestName)
	case err == nil && !resume:
		return man, &CheckpointError{Dir: dir, Err: ErrCheckpointExists}
	case err == nil:
		existing, err := os.ReadFile(mpath)
		if err != nil {
			return man, ckErr(dir, "cannot read %s: %s", manifestName, unwrapPathError(err))
		}
		var old checkpointManifest
		if json.Unmarshal(existing, &old) != nil {
			return man, ckErr(dir, "%s is corrupt", manifestName)
		}
		if old.ConfigHash != a.opts.ID || old.Trials != n {
			return man, &CheckpointError{Dir: dir, Err: fmt.Errorf("%w (hash %.12s…, this one is %.12s…)", ErrCheckpointMismatch, old.ConfigHash, a.opts.ID)}
		}
		if old.Block != man.Block {
			return man, ckErr(dir, "%s is corrupt (block size %d, expected %d)", manifestName, old.Block, man.Block)
		}
		return man, nil
	case errors.Is(err, os.ErrNotExist) && resume:
		return man, &CheckpointError{Dir: dir, Err: ErrNoCheckpoint}
	case errors.Is(err, os.ErrNotExist):
		if err := WriteFileAtomic(mpath, func(w io.Writer) error { return json.NewEncoder(w).Encode(man) }); err != nil {
			return man, ckErr(dir, "%v", err)
		}
		return man, nil
	}
	return man, ckErr(dir, "%v", err)
}

// SimulateCheckpointed runs all trials, persisting every completed block of
// trials in dir (created if missing). With resume, blocks already in dir
// (from a run of the same audit, checked by ID) are loaded instead of rerun;
// the result is identical to an uninterrupted run. Without resume, dir must
// not hold a checkpoint yet. The directory is locked while the run lasts.
// On cancellation it returns an *InterruptedError. Memory: the result plus
// one block.
func (a *Audit) SimulateCheckpointed(ctx context.Context, dir string, resume bool) (*Trials, error) {
	n := a.opts.Trials
	if err := a.CheckWork(0, n, false); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, ckErr(dir, "cannot create it: %s", unwrapPathError(err))
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	man, err := a.openCheckpoint(dir, resume)
	if err != nil {
		return nil, err
	}
	onDisk := map[int]string{}
	if resume {
		if onDisk, err = blocksIn(dir); err != nil {
			return nil, err
		}
	}
	saved := 0
	for lo, name := range onDisk {
		hi := min(lo+man.Block, n)
		if lo%man.Block != 0 || name != blockName(lo, hi) {
			return nil, ckErr(dir, "block %s does not match the block size %d", name, man.Block)
		}
		saved += hi - lo
	}
	progress := a.opts.Progress
	if progress != nil && saved > 0 {
		progress(saved)
	}
	var m Merger
	for lo := 0; lo < n; lo += man.Block {
		if err := ctx.Err(); err != nil {
			return nil, &InterruptedError{Saved: saved, Total: n, Dir: dir}
		}
		hi := min(lo+man.Block, n)
		if name, ok := onDisk[lo]; ok {
			t, _, err := ReadPartFile(filepath.Join(dir, name))
			if err != nil {
				return nil, ckErr(dir, "%v", err)
			}
			if t.ConfigHash != a.opts.ID || t.Lo != lo || t.Hi != hi {
				return nil, ckErr(dir, "%s belongs to another configuration or range", name)
			}
			if err := m.Add(t, name); err != nil {
				return nil, ckErr(dir, "%v", err)
			}
			continue
		}
		base := saved
		var prog Progress
		if progress != nil {
			prog = func(d int) { progress(base + d) }
		}
		t, err := a.simulate(ctx, lo, hi, prog)
		if err != nil {
			if ctx.Err() != nil {
				return nil, &InterruptedError{Saved: saved, Total: n, Dir: dir}
			}
			return nil, err
		}
		if err := WriteFileAtomic(filepath.Join(dir, blockName(lo, hi)), func(w io.Writer) error { return WritePart(w, t, nil) }); err != nil {
			return nil, ckErr(dir, "%v", err)
		}
		if err := m.Add(t, blockName(lo, hi)); err != nil {
			return nil, err
		}
		saved += hi - lo
	}
	return m.Trials()
}

// blocksIn lists the block files of a checkpoint directory by their first
// trial; every one must be a regular file.
func blocksIn(dir string) (map[int]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, ckErr(dir, "cannot list it: %s", unwrapPathError(err))
	}
	out := map[int]string{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "trials-") || !strings.HasSuffix(name, ".part") {
			continue
		}
		if !e.Type().IsRegular() {
			return nil, ckErr(dir, "%s is not a regular file", name)
		}
		var lo, hi int
		if _, err := fmt.Sscanf(name, "trials-%012d-%012d.part", &lo, &hi); err != nil || blockName(lo, hi) != name {
			return nil, ckErr(dir, "%s is not a block name", name)
		}
		if _, dup := out[lo]; dup {
			return nil, ckErr(dir, "two blocks start at trial %d", lo)
		}
		out[lo] = name
	}
	return out, nil
}
