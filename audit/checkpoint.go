package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
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
	// ErrCheckpointWrite: the storage failed while the checkpoint was
	// written (full disk, quota, I/O error, file size limit); it wraps the
	// system error. A path that cannot hold a checkpoint is not this error.
	ErrCheckpointWrite = errors.New("cannot be written")
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
// that a run writes at most 50 files (each file costs the file system an
// inode: on ext4, 200 blocks of a 10⁶-run audit of testdata/fig1-exact.yaml
// cost 6% of its CPU in creating them), small enough that an interruption
// loses at most 2% of the trials.
func CheckpointBlock(trials int) int {
	return max(256, (trials+49)/50)
}

// checkpointBlock is the audit's block: CheckpointBlock, or one run in a
// canary design, whose runs are few and each costly.
func (a *Audit) checkpointBlock() int {
	if a.opts.Canaries != nil {
		return 1
	}
	return CheckpointBlock(a.opts.Trials)
}

// WriteFileAtomic writes via a temporary file in the same directory, fsync
// and rename, so that a crash (even kill -9) leaves either the old state or
// the complete file. The caller checks that path may be replaced.
func WriteFileAtomic(path string, fill func(w io.Writer) error) error {
	return writeFileAtomic(path, fill, true)
}

// writeFileAtomic is WriteFileAtomic, with the fsync only when sync is
// set: without it the rename still makes the file appear whole to every
// process, though a crash of the machine can leave it damaged.
func writeFileAtomic(path string, fill func(w io.Writer) error, sync bool) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := fill(tmp); err != nil {
		tmp.Close()
		return err
	}
	if sync {
		if err := tmp.Sync(); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// storageFailed reports whether err is the storage failing — full,
// over quota, an I/O error, the file size limit — rather than a path
// that cannot be used.
func storageFailed(err error) bool {
	for _, e := range []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EIO, syscall.EFBIG} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// writeFailed is the CheckpointError of a storage failure: the system
// error alone, the path being dir's.
func writeFailed(dir string, err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		err = errno
	}
	return &CheckpointError{Dir: dir, Err: fmt.Errorf("%w: %w", ErrCheckpointWrite, err)}
}

// writeCk writes a file of the checkpoint dir atomically; a failure of the
// storage is an ErrCheckpointWrite.
func writeCk(dir, path string, fill func(w io.Writer) error) error {
	return writeCkSync(dir, path, fill, true)
}

// writeCkSync is writeCk with the fsync only when sync is set.
func writeCkSync(dir, path string, fill func(w io.Writer) error, sync bool) error {
	err := writeFileAtomic(path, fill, sync)
	if err == nil {
		return nil
	}
	if storageFailed(err) {
		return writeFailed(dir, err)
	}
	return ckErr(dir, "%v", err)
}

func blockName(lo, hi int) string { return fmt.Sprintf("trials-%012d-%012d.part", lo, hi) }

// lockDir takes an exclusive advisory lock on dir, so that two runs never
// compute into one checkpoint; the lock ends with the returned file. It is
// a flock(2) lock: the kernel releases it when its process ends, however
// it ends, so the lock file of a run killed with kill -9 is taken over at
// once and only a live run is refused.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockName)
	if st, err := os.Lstat(path); err == nil && !st.Mode().IsRegular() {
		return nil, ckErr(dir, "%s is not a regular file", lockName)
	}
	// O_NOFOLLOW: a link planted since the check above fails (ELOOP)
	// instead of creating or locking a file elsewhere.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		if storageFailed(err) {
			return nil, writeFailed(dir, err)
		}
		return nil, ckErr(dir, "cannot create its lock: %s", unwrapPathError(err))
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, &CheckpointError{Dir: dir, Err: ErrCheckpointBusy}
	}
	return f, nil
}

// CheckpointOptions say what SimulateCheckpointedWith does with the
// checkpoint directory.
type CheckpointOptions struct {
	// Resume continues the checkpoint the directory holds. One whose run
	// stopped before its first block (a lock file, no manifest or an empty
	// one, no block) is started from the first trial.
	Resume bool
	// Replace discards a checkpoint the directory already holds, when not
	// resuming, instead of refusing the directory.
	Replace bool
	// BestEffort makes the checkpoint optional: when it cannot be set up
	// (without Resume) the run goes on without one, and when a block cannot
	// be written the run goes on saving no more. Each failure is reported
	// through Notify.
	BestEffort bool
	// Notify, when set, receives one-line notes: a discarded checkpoint,
	// a checkpoint that held no trials yet, a best-effort failure.
	Notify func(msg string)
	// OnHold, when set, is called once the run holds the checkpoint (it
	// has locked the directory and opened its manifest), before its first
	// trial. A run that goes on without the checkpoint (BestEffort) never
	// calls it. Only a run that held a checkpoint may remove it: another
	// run's checkpoint, found busy, may hold the saved work of a run that
	// is interrupted meanwhile.
	OnHold func()
	// Unsynced writes the blocks of trials without waiting for the disk
	// (no fsync; the manifest still is synced). They survive the process
	// being interrupted or killed, which leaves them in the kernel's
	// cache, but not a crash of the machine; in exchange, resuming treats
	// a block that is damaged (as an unsynced block can be after a crash)
	// as not saved: it is run again, with a note. For a checkpoint that
	// only serves to resume a run on the same machine (the CLI's default
	// one): fsync cost a 10⁶-run audit of testdata/fig1-exact.yaml 8% of
	// its CPU (200 blocks).
	Unsynced bool
	// After, when positive, leaves unsaved the blocks of trials completed
	// before the trials have run that long (wall time, from the first
	// trial this run simulates); each block completed later is saved. An
	// interruption then loses at most After of work (and the block in
	// progress, as always), and a run shorter than After writes no block:
	// for testdata/fig1-exact.yaml, whose trials take a quarter of a
	// second, writing its 56 MB of blocks to be removed a moment later
	// cost 13% of its CPU.
	After time.Duration
}

func (o CheckpointOptions) note(format string, args ...any) {
	if o.Notify != nil {
		o.Notify(fmt.Sprintf(format, args...))
	}
}

// openCheckpoint creates, checks or replaces the manifest of the locked
// dir; hadLock says whether the lock file was there before this run.
func (a *Audit) openCheckpoint(dir string, o CheckpointOptions, hadLock bool) (checkpointManifest, error) {
	n := a.opts.Trials
	mpath := filepath.Join(dir, manifestName)
	man := checkpointManifest{ConfigHash: a.opts.ID, Trials: n, Block: a.checkpointBlock()}
	write := func() error {
		return writeCk(dir, mpath, func(w io.Writer) error { return json.NewEncoder(w).Encode(man) })
	}
	absent, err := checkpointAbsent(dir, mpath, o.Resume)
	if err != nil {
		return man, err
	}
	switch {
	case !absent && o.Resume:
		return man, checkManifest(dir, mpath, man)
	case !absent && !o.Replace:
		return man, &CheckpointError{Dir: dir, Err: ErrCheckpointExists}
	case !absent:
		if err := discardBlocks(dir, o); err != nil {
			return man, err
		}
	case o.Resume:
		if err := resumeWithoutManifest(dir, o, hadLock); err != nil {
			return man, err
		}
	}
	return man, write()
}

// checkpointAbsent reports whether dir holds no checkpoint: no manifest at
// mpath (an empty one counts as none: a manifest is written atomically)
// and, unless resuming, no blocks either. A manifest that is not a regular
// file is an error.
func checkpointAbsent(dir, mpath string, resume bool) (bool, error) {
	st, err := os.Lstat(mpath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, ckErr(dir, "%v", err)
	}
	if err == nil && !st.Mode().IsRegular() {
		return false, ckErr(dir, "%s is not a regular file", manifestName)
	}
	absent := err != nil || st.Size() == 0
	if absent && !resume {
		// Blocks without a manifest (a run killed between the two, or
		// files put there by hand) are a checkpoint too: a new run must
		// neither mix them with its own nor write beside something that
		// is not a regular file.
		blocks, err := blocksIn(dir)
		if err != nil {
			return false, err
		}
		absent = len(blocks) == 0
	}
	return absent, nil
}

// checkManifest checks the manifest at mpath of the checkpoint being
// resumed against man, this run's: the same audit (ID), trials and block
// size.
func checkManifest(dir, mpath string, man checkpointManifest) error {
	existing, err := readNoFollow(mpath)
	if err != nil {
		return ckErr(dir, "cannot read %s: %s", manifestName, unwrapPathError(err))
	}
	var old checkpointManifest
	if json.Unmarshal(existing, &old) != nil {
		return ckErr(dir, "%s is corrupt", manifestName)
	}
	if old.ConfigHash != man.ConfigHash || old.Trials != man.Trials {
		return &CheckpointError{Dir: dir, Err: fmt.Errorf("%w (hash %.12s…, this one is %.12s…)", ErrCheckpointMismatch, old.ConfigHash, man.ConfigHash)}
	}
	if old.Block != man.Block {
		return ckErr(dir, "%s is corrupt (block size %d, expected %d)", manifestName, old.Block, man.Block)
	}
	return nil
}

// resumeWithoutManifest checks a resumed checkpoint that has no manifest:
// it may start over (with a note) only when it holds no blocks and the
// lock file was there, i.e. an earlier run was killed before it completed
// its first block.
func resumeWithoutManifest(dir string, o CheckpointOptions, hadLock bool) error {
	blocks, err := blocksIn(dir)
	if err != nil {
		return err
	}
	if len(blocks) > 0 {
		return ckErr(dir, "%s is missing, but %d blocks of trials are there", manifestName, len(blocks))
	}
	if !hadLock {
		return &CheckpointError{Dir: dir, Err: ErrNoCheckpoint}
	}
	o.note("the run saved in %s had completed no block of trials; it starts from the first trial", dir)
	return nil
}

// discardBlocks removes the blocks of the checkpoint in dir that a new
// run replaces, with a note. Blocks go before the manifest: a crash midway
// leaves the old manifest with fewer of its own blocks, which still
// resumes.
func discardBlocks(dir string, o CheckpointOptions) error {
	blocks, err := blocksIn(dir)
	if err != nil {
		return err
	}
	discarded := 0
	for _, name := range blocks {
		var lo, hi int
		fmt.Sscanf(name, "trials-%012d-%012d.part", &lo, &hi)
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			return ckErr(dir, "cannot remove %s: %s", name, unwrapPathError(err))
		}
		discarded += hi - lo
	}
	o.note("the %d trials saved in %s by an earlier run were discarded (--resume continues such a run)", discarded, dir)
	return nil
}

// SimulateCheckpointed runs all trials, persisting every completed block of
// trials in dir (created if missing). With resume, blocks already in dir
// (from a run of the same audit, checked by ID) are loaded instead of rerun;
// the result is identical to an uninterrupted run. Without resume, dir must
// not hold a checkpoint yet. The directory is locked while the run lasts.
// On cancellation it returns an *InterruptedError. Memory: the result plus
// one block.
func (a *Audit) SimulateCheckpointed(ctx context.Context, dir string, resume bool) (*Trials, error) {
	return a.SimulateCheckpointedWith(ctx, dir, CheckpointOptions{Resume: resume})
}

// SimulateCheckpointedWith is SimulateCheckpointed with options: replacing
// a checkpoint, and a best-effort checkpoint that never stops the run.
func (a *Audit) SimulateCheckpointedWith(ctx context.Context, dir string, o CheckpointOptions) (*Trials, error) {
	n := a.opts.Trials
	if err := a.CheckWork(0, n, false); err != nil {
		return nil, err
	}
	lock, man, err := a.setupCheckpoint(dir, o)
	if err != nil {
		if withoutCheckpoint(err, o) {
			return a.Simulate(ctx, 0, n)
		}
		return nil, err
	}
	defer lock.Close()
	if o.OnHold != nil {
		o.OnHold()
	}
	onDisk, saved, err := savedBlocks(dir, man.Block, n, o.Resume)
	if err != nil {
		return nil, err
	}
	done, writing := saved, true
	progress := a.exec.Progress
	if progress != nil && saved > 0 {
		progress(saved)
	}
	var m Merger
	var block *Trials
	start := time.Now()
	for lo := 0; lo < n; lo += man.Block {
		if err := ctx.Err(); err != nil {
			return nil, &InterruptedError{Saved: saved, Total: n, Dir: dir}
		}
		hi := min(lo+man.Block, n)
		if name, ok := onDisk[lo]; ok {
			loaded, err := a.loadSavedBlock(dir, name, lo, hi, &m, o)
			if err != nil {
				return nil, err
			}
			if loaded {
				continue
			}
			saved, done = saved-(hi-lo), done-(hi-lo)
		}
		t, err := a.simulate(ctx, lo, hi, progressFrom(progress, done), block)
		if err != nil {
			if ctx.Err() != nil {
				return nil, &InterruptedError{Saved: saved, Total: n, Dir: dir}
			}
			return nil, err
		}
		if o.After <= 0 || time.Since(start) >= o.After {
			if saved, writing, err = saveWhileWriting(dir, t, hi-lo, o, saved, writing); err != nil {
				return nil, err
			}
		}
		if err := m.Add(t, blockName(lo, hi)); err != nil {
			return nil, err
		}
		block = t // copied into m: its store serves the next block
		done += hi - lo
	}
	return m.Trials()
}

// withoutCheckpoint reports whether a run whose checkpoint could not be set
// up (err) goes on without one, with a note: a best-effort checkpoint that
// is not resumed gives way on a *CheckpointError.
func withoutCheckpoint(err error, o CheckpointOptions) bool {
	var ce *CheckpointError
	if o.BestEffort && !o.Resume && errors.As(err, &ce) {
		o.note("%v; this run is not checkpointed", err)
		return true
	}
	return false
}

// loadSavedBlock merges the saved block name (trials [lo, hi)) into m and
// reports whether it did. A block that an unsynced run left corrupt is
// not loaded, with a note (its trials are run again); any other failure
// is an error.
func (a *Audit) loadSavedBlock(dir, name string, lo, hi int, m *Merger, o CheckpointOptions) (bool, error) {
	err := a.loadBlock(dir, name, lo, hi, m)
	if err == nil {
		return true, nil
	}
	if !o.Unsynced || !errors.Is(err, ErrCorruptPart) {
		return false, err
	}
	o.note("%v; its trials are run again", err)
	return false, nil
}

// progressFrom returns the Progress of a block that starts after base
// trials are done: it reports base + d to progress (nil when progress is).
func progressFrom(progress Progress, base int) Progress {
	if progress == nil {
		return nil
	}
	return func(d int) { progress(base + d) }
}

// saveWhileWriting saves block t, of size trials, in dir while the run
// still writes its checkpoint (writing), and returns the trials saved so
// far and whether it still writes: a best-effort checkpoint that could not
// save a block writes no more.
func saveWhileWriting(dir string, t *Trials, size int, o CheckpointOptions, saved int, writing bool) (int, bool, error) {
	if !writing {
		return saved, false, nil
	}
	ok, err := saveBlock(dir, t, o)
	if err != nil {
		return saved, false, err
	}
	if ok {
		saved += size
	}
	return saved, ok, nil
}

// savedBlocks lists the blocks of a checkpoint being resumed (none
// otherwise), by first trial, after checking their names against the block
// size, and counts the trials they hold.
func savedBlocks(dir string, block, n int, resume bool) (map[int]string, int, error) {
	if !resume {
		return map[int]string{}, 0, nil
	}
	onDisk, err := blocksIn(dir)
	if err != nil {
		return nil, 0, err
	}
	saved := 0
	for lo, name := range onDisk {
		hi := min(lo+block, n)
		if lo%block != 0 || name != blockName(lo, hi) {
			return nil, 0, ckErr(dir, "block %s does not match the block size %d", name, block)
		}
		saved += hi - lo
	}
	return onDisk, saved, nil
}

// loadBlock reads the saved block of trials [lo, hi) into m.
func (a *Audit) loadBlock(dir, name string, lo, hi int, m *Merger) error {
	t, _, err := readPartFileFlags(filepath.Join(dir, name), syscall.O_NOFOLLOW)
	if err != nil {
		return ckErr(dir, "%w", err)
	}
	if t.ConfigHash != a.opts.ID || t.Lo != lo || t.Hi != hi {
		return ckErr(dir, "%s belongs to another configuration or range", name)
	}
	if err := m.Add(t, name); err != nil {
		return ckErr(dir, "%v", err)
	}
	return nil
}

// saveBlock writes a block of trials to the checkpoint; it reports whether
// the block was saved. A best-effort checkpoint that cannot write notes it
// and stops checkpointing (false, nil); any other failure is an error.
func saveBlock(dir string, t *Trials, o CheckpointOptions) (bool, error) {
	err := writeCkSync(dir, filepath.Join(dir, blockName(t.Lo, t.Hi)), func(w io.Writer) error { return WritePart(w, t, nil) }, !o.Unsynced)
	switch {
	case err == nil:
		return true, nil
	case o.BestEffort:
		o.note("%v; the rest of this run is not checkpointed", err)
		return false, nil
	}
	return false, err
}

// setupCheckpoint creates (unless resuming) and locks dir, and opens its
// manifest. Resuming a directory that does not exist, or that no run has
// locked and that has no manifest, creates nothing.
func (a *Audit) setupCheckpoint(dir string, o CheckpointOptions) (*os.File, checkpointManifest, error) {
	var man checkpointManifest
	_, lerr := os.Lstat(filepath.Join(dir, lockName))
	hadLock := lerr == nil
	if o.Resume && !hadLock {
		if _, err := os.Lstat(filepath.Join(dir, manifestName)); errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, man, &CheckpointError{Dir: dir, Err: ErrNoCheckpoint}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		if storageFailed(err) {
			return nil, man, writeFailed(dir, err)
		}
		return nil, man, ckErr(dir, "cannot create it: %s", unwrapPathError(err))
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, man, err
	}
	if man, err = a.openCheckpoint(dir, o, hadLock); err != nil {
		lock.Close()
		return nil, man, err
	}
	return lock, man, nil
}

// CheckpointKey names the default checkpoint of an audit: a digest of
// what a checkpoint's manifest checks — the audit ID (the scenario's hash,
// which covers its seed, trial count and data) and the number of trials
// with its block size.
func CheckpointKey(id string, trials int) string {
	h := sha256.Sum256([]byte("mcmcaudit checkpoint\x00" + id + "\x00" + strconv.Itoa(trials) + "\x00" + strconv.Itoa(CheckpointBlock(trials))))
	return hex.EncodeToString(h[:16])
}

// isCheckpointKey reports whether name has the form of a CheckpointKey.
func isCheckpointKey(name string) bool {
	if len(name) != 32 {
		return false
	}
	_, err := hex.DecodeString(name)
	return err == nil && strings.ToLower(name) == name
}

// RemoveCheckpoint removes the checkpoint directory dir unless a run holds
// it; it reports whether it was removed. The directory is renamed away
// under its lock before it is emptied, so that a run starting meanwhile
// gets a new directory rather than one being emptied.
func RemoveCheckpoint(dir string) (bool, error) {
	st, err := os.Lstat(dir)
	if err != nil || !st.IsDir() {
		return false, err
	}
	if f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|syscall.O_NOFOLLOW, 0); err == nil {
		defer f.Close()
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			return false, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	gone := filepath.Join(filepath.Dir(dir), fmt.Sprintf(".removing-%s-%d", filepath.Base(dir), os.Getpid()))
	if err := os.Rename(dir, gone); err != nil {
		return false, err
	}
	return true, os.RemoveAll(gone)
}

// PruneCheckpoints removes the default checkpoints under root (the
// directories named by CheckpointKey) in which nothing has changed for
// maxAge, unless a run holds them; it returns how many it removed. Other
// names under root are left alone.
func PruneCheckpoints(root string, maxAge time.Duration, now time.Time) (int, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, e := range entries {
		if !e.IsDir() || !isCheckpointKey(e.Name()) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if newest, err := newestChange(dir); err != nil || now.Sub(newest) < maxAge {
			continue
		}
		if ok, err := RemoveCheckpoint(dir); err == nil && ok {
			removed++
		}
	}
	return removed, nil
}

// newestChange is the latest modification time of dir and its entries.
func newestChange(dir string) (time.Time, error) {
	st, err := os.Lstat(dir)
	if err != nil {
		return time.Time{}, err
	}
	newest := st.ModTime()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return time.Time{}, err
	}
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.ModTime().After(newest) {
			newest = info.ModTime()
		}
	}
	return newest, nil
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

// readNoFollow reads a small file of a checkpoint without following a
// symbolic link: a link in its place is an error (ELOOP), not a way to
// read some other file.
func readNoFollow(path string) ([]byte, error) {
	f, _, err := openRegularFlags(path, syscall.O_NOFOLLOW)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 1<<20))
}
