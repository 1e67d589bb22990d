package audit

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// partBytes encodes t, to compare trials byte for byte.
func partBytes(t *testing.T, tr *Trials) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WritePart(&b, tr, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func ckAudit(t *testing.T) *Audit {
	t.Helper()
	o := gaussOptions(11, 600, "threshold")
	o.ID = "test-config"
	a, err := New(gaussTarget(t, 1), o)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// A failure of the storage while a checkpoint file is written — a full
// disk, an I/O error — is an ErrCheckpointWrite carrying the system error;
// a refused path is not. /dev/full gives a real ENOSPC from the kernel.
func TestCheckpointWriteFailureIsStorage(t *testing.T) {
	dir := t.TempDir()
	fail := func(errno syscall.Errno) func(io.Writer) error {
		return func(io.Writer) error { return &os.PathError{Op: "write", Path: "x", Err: errno} }
	}
	cases := []struct {
		name    string
		fill    func(io.Writer) error
		errno   syscall.Errno
		storage bool
	}{
		{"ENOSPC", fail(syscall.ENOSPC), syscall.ENOSPC, true},
		{"EIO", fail(syscall.EIO), syscall.EIO, true},
		{"EDQUOT", fail(syscall.EDQUOT), syscall.EDQUOT, true},
		{"EACCES", fail(syscall.EACCES), syscall.EACCES, false},
	}
	if full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0); err == nil {
		defer full.Close()
		cases = append(cases, struct {
			name    string
			fill    func(io.Writer) error
			errno   syscall.Errno
			storage bool
		}{"/dev/full", func(w io.Writer) error {
			_, err := io.MultiWriter(w, full).Write([]byte("a block of trials"))
			return err
		}, syscall.ENOSPC, true})
	}
	for _, c := range cases {
		err := writeCk(dir, filepath.Join(dir, "f"), c.fill)
		var ce *CheckpointError
		if !errors.As(err, &ce) || ce.Dir != dir || (c.storage && !errors.Is(err, c.errno)) || errors.Is(err, ErrCheckpointWrite) != c.storage || !strings.Contains(err.Error(), c.errno.Error()) {
			t.Errorf("%s: %v (storage failure: %v, want %v)", c.name, err, errors.Is(err, ErrCheckpointWrite), c.storage)
		}
		if c.storage && err.Error() != "checkpoint "+dir+": cannot be written: "+c.errno.Error() {
			t.Errorf("%s: message %q", c.name, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a failed write left %v", entries)
	}
}

// A run killed between taking its lock and writing its manifest leaves a
// lock file alone (or an empty manifest): --resume starts it from the
// first trial and gives what an uninterrupted run gives. A directory that
// no run has locked is still "no checkpoint", and resuming one creates
// nothing; a lock held by a live process is refused.
func TestResumeCheckpointWithoutTrials(t *testing.T) {
	a := ckAudit(t)
	want, err := a.Simulate(context.Background(), 0, a.opts.Trials)
	if err != nil {
		t.Fatal(err)
	}
	for _, emptyManifest := range []bool{false, true} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, lockName), nil, 0o644)
		if emptyManifest {
			os.WriteFile(filepath.Join(dir, manifestName), nil, 0o644)
		}
		var notes []string
		got, err := a.SimulateCheckpointedWith(context.Background(), dir, CheckpointOptions{Resume: true, Notify: func(s string) { notes = append(notes, s) }})
		if err != nil {
			t.Fatalf("empty manifest %v: %v", emptyManifest, err)
		}
		if !bytes.Equal(partBytes(t, got), partBytes(t, want)) {
			t.Errorf("empty manifest %v: the resumed trials differ from an uninterrupted run", emptyManifest)
		}
		if len(notes) != 1 || !strings.Contains(notes[0], "had completed no block of trials; it starts from the first trial") {
			t.Errorf("notes %q", notes)
		}
		if blocks, _ := blocksIn(dir); len(blocks) != 3 { // 600 trials in blocks of 256
			t.Errorf("%d blocks saved, want 3", len(blocks))
		}
	}

	missing := filepath.Join(t.TempDir(), "never")
	if _, err := a.SimulateCheckpointed(context.Background(), missing, true); !errors.Is(err, ErrNoCheckpoint) {
		t.Errorf("missing directory: %v", err)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("resuming a missing directory created it")
	}
	unlocked := t.TempDir()
	if _, err := a.SimulateCheckpointed(context.Background(), unlocked, true); !errors.Is(err, ErrNoCheckpoint) {
		t.Errorf("empty directory: %v", err)
	}
	if entries, _ := os.ReadDir(unlocked); len(entries) != 0 {
		t.Errorf("resuming an empty directory wrote %v", entries)
	}

	orphan := t.TempDir()
	os.WriteFile(filepath.Join(orphan, lockName), nil, 0o644)
	os.WriteFile(filepath.Join(orphan, blockName(0, 256)), []byte("x"), 0o644)
	if _, err := a.SimulateCheckpointed(context.Background(), orphan, true); err == nil || !strings.Contains(err.Error(), "manifest.json is missing, but 1 blocks of trials are there") {
		t.Errorf("blocks without a manifest: %v", err)
	}

	// flock conflicts between two open files of one process too.
	busy := t.TempDir()
	held, err := lockDir(busy)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.SimulateCheckpointed(context.Background(), busy, true); !errors.Is(err, ErrCheckpointBusy) {
		t.Errorf("held lock: %v", err)
	}
	held.Close()
	if _, err := a.SimulateCheckpointed(context.Background(), busy, true); err != nil {
		t.Errorf("released lock: %v", err)
	}
}

// Replace discards a checkpoint (saying how many trials it held) instead
// of refusing it; BestEffort runs without a checkpoint where none can be
// made. Both give the uninterrupted run's trials.
func TestCheckpointReplaceAndBestEffort(t *testing.T) {
	a := ckAudit(t)
	want, err := a.Simulate(context.Background(), 0, a.opts.Trials)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := a.SimulateCheckpointed(context.Background(), dir, false); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SimulateCheckpointed(context.Background(), dir, false); !errors.Is(err, ErrCheckpointExists) {
		t.Errorf("without Replace: %v", err)
	}
	var notes []string
	note := func(s string) { notes = append(notes, s) }
	got, err := a.SimulateCheckpointedWith(context.Background(), dir, CheckpointOptions{Replace: true, Notify: note})
	if err != nil || !bytes.Equal(partBytes(t, got), partBytes(t, want)) {
		t.Errorf("Replace: %v", err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "the 600 trials saved in "+dir+" by an earlier run were discarded") {
		t.Errorf("Replace notes %q", notes)
	}

	notes = nil
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	bad := filepath.Join(file, "ck")
	got, err = a.SimulateCheckpointedWith(context.Background(), bad, CheckpointOptions{BestEffort: true, Notify: note})
	if err != nil || !bytes.Equal(partBytes(t, got), partBytes(t, want)) {
		t.Errorf("BestEffort: %v", err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "cannot create it: not a directory; this run is not checkpointed") {
		t.Errorf("BestEffort notes %q", notes)
	}
	if _, err := a.SimulateCheckpointed(context.Background(), bad, false); err == nil {
		t.Error("without BestEffort the bad path was accepted")
	}
}

// Default checkpoints (named by CheckpointKey) unchanged for maxAge are
// removed unless a run holds them; other names, and recent ones, stay.
func TestPruneCheckpoints(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	old := now.Add(-31 * 24 * time.Hour)
	mk := func(name string, mtime time.Time) string {
		dir := filepath.Join(root, name)
		os.Mkdir(dir, 0o700)
		for _, f := range []string{lockName, manifestName, blockName(0, 256)} {
			p := filepath.Join(dir, f)
			os.WriteFile(p, []byte("x"), 0o600)
			os.Chtimes(p, mtime, mtime)
		}
		os.Chtimes(dir, mtime, mtime)
		return dir
	}
	stale := mk(CheckpointKey("a", 400), old)
	recent := mk(CheckpointKey("b", 400), now.Add(-29*24*time.Hour))
	other := mk("my-notes", old)
	held := mk(CheckpointKey("c", 400), old)
	touched := mk(CheckpointKey("d", 400), old)
	os.Chtimes(filepath.Join(touched, blockName(0, 256)), now, now) // a block written today
	lock, err := os.OpenFile(filepath.Join(held, lockName), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	n, err := PruneCheckpoints(root, 30*24*time.Hour, now)
	if err != nil || n != 1 {
		t.Errorf("removed %d (%v), want 1", n, err)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("the stale checkpoint is still there")
	}
	for _, d := range []string{recent, other, held, touched} {
		if _, err := os.Stat(filepath.Join(d, manifestName)); err != nil {
			t.Errorf("%s was removed", filepath.Base(d))
		}
	}
	if entries, _ := os.ReadDir(root); len(entries) != 4 {
		t.Errorf("left %d entries, want 4", len(entries))
	}
}

// An unsynced checkpoint (the CLI's default one) resumes past a block that
// a crash of the machine could have left damaged — here truncated, and
// emptied — by running its trials again, with a note, and gives the
// uninterrupted run's trials; a synced checkpoint refuses the same block,
// as it always has. The blocks of both are the same bytes.
func TestUnsyncedCheckpointRerunsADamagedBlock(t *testing.T) {
	a := ckAudit(t)
	want, err := a.Simulate(context.Background(), 0, a.opts.Trials)
	if err != nil {
		t.Fatal(err)
	}
	synced, unsynced := t.TempDir(), t.TempDir()
	if _, err := a.SimulateCheckpointedWith(context.Background(), synced, CheckpointOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SimulateCheckpointedWith(context.Background(), unsynced, CheckpointOptions{Unsynced: true}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{blockName(0, 256), blockName(256, 512), blockName(512, 600)} {
		x, _ := os.ReadFile(filepath.Join(synced, name))
		y, _ := os.ReadFile(filepath.Join(unsynced, name))
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Fatalf("%s: the unsynced block differs from the synced one", name)
		}
	}
	for _, damage := range []func(path string){
		func(path string) { b, _ := os.ReadFile(path); os.WriteFile(path, b[:len(b)/2], 0o644) },
		func(path string) { os.WriteFile(path, nil, 0o644) },
	} {
		for _, dir := range []string{synced, unsynced} {
			path := filepath.Join(dir, blockName(256, 512))
			good, _ := os.ReadFile(path)
			damage(path)
			var notes []string
			got, err := a.SimulateCheckpointedWith(context.Background(), dir, CheckpointOptions{Resume: true, Unsynced: dir == unsynced,
				Notify: func(s string) { notes = append(notes, s) }})
			if dir == synced {
				if !errors.Is(err, ErrCorruptPart) {
					t.Errorf("synced: a damaged block gives %v", err)
				}
				os.WriteFile(path, good, 0o644)
				continue
			}
			if err != nil {
				t.Fatalf("unsynced: %v", err)
			}
			if !bytes.Equal(partBytes(t, got), partBytes(t, want)) {
				t.Error("unsynced: the resumed trials differ from an uninterrupted run")
			}
			if len(notes) != 1 || !strings.Contains(notes[0], "corrupt trials file") || !strings.Contains(notes[0], "its trials are run again") {
				t.Errorf("unsynced: notes %q", notes)
			}
			if again, _ := os.ReadFile(path); !bytes.Equal(again, good) {
				t.Error("unsynced: the block run again was not saved again")
			}
		}
	}
}

// A checkpoint told to wait (After) saves no block of a run that ends
// sooner, and an interruption before then has saved nothing, so that the
// resumed run starts from the first trial; either way the trials are those
// of an uninterrupted run. Without After, every block is saved.
func TestCheckpointAfter(t *testing.T) {
	a := ckAudit(t)
	want, err := a.Simulate(context.Background(), 0, a.opts.Trials)
	if err != nil {
		t.Fatal(err)
	}
	blocks := func(dir string) int {
		m, _ := filepath.Glob(filepath.Join(dir, "trials-*.part"))
		return len(m)
	}
	for _, after := range []time.Duration{0, time.Hour} {
		dir := t.TempDir()
		got, err := a.SimulateCheckpointedWith(context.Background(), dir, CheckpointOptions{After: after})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(partBytes(t, got), partBytes(t, want)) {
			t.Errorf("after %v: the trials differ from an uninterrupted run", after)
		}
		if n, wantN := blocks(dir), map[time.Duration]int{0: 3, time.Hour: 0}[after]; n != wantN {
			t.Errorf("after %v: %d blocks saved, want %d", after, n, wantN)
		}
	}
	// Interrupted after its second block (of three), a run that waits an
	// hour has saved nothing; resumed, it runs every trial.
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := a.WithProgress(func(done int) {
		if done >= 512 {
			cancel()
		}
	})
	_, err = b.SimulateCheckpointedWith(ctx, dir, CheckpointOptions{After: time.Hour})
	var ie *InterruptedError
	if !errors.As(err, &ie) || ie.Saved != 0 || blocks(dir) != 0 {
		t.Fatalf("interrupted: %v (saved %+v), %d blocks", err, ie, blocks(dir))
	}
	got, err := a.SimulateCheckpointedWith(context.Background(), dir, CheckpointOptions{Resume: true, After: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(partBytes(t, got), partBytes(t, want)) {
		t.Error("resumed: the trials differ from an uninterrupted run")
	}
}
