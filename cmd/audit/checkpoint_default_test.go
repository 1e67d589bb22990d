package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/audit/scenario"
)

// isolateUserCache points the user's cache directory (where a run keeps
// its default checkpoint) at a temporary directory for the whole test
// binary and the children it starts, so that no test writes to the real
// cache; it returns the function that removes it.
func isolateUserCache() func() {
	dir, err := os.MkdirTemp("", "audit-test-cache")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	return func() { os.RemoveAll(dir) }
}

// testCache gives the test its own cache directory and returns where the
// default checkpoints go.
func testCache(t *testing.T) string {
	t.Helper()
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	return filepath.Join(cache, "mcmcaudit", "checkpoints")
}

// checkpointsIn lists the default checkpoints under root.
func checkpointsIn(root string) []string {
	entries, _ := os.ReadDir(root)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// waitBlocks waits until a directory matched by dirGlob holds n blocks.
func waitBlocks(t *testing.T, dirGlob string, n int, ch *child) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if m, _ := filepath.Glob(filepath.Join(dirGlob, "trials-*.part")); len(m) >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no %d blocks in %s (stderr %q)", n, dirGlob, ch.stderr.String())
}

// An audit run given no --checkpoint keeps its completed trials anyway:
// interrupted, it prints a resume command without --checkpoint, and that
// command, pasted into a shell, writes the report an uninterrupted run
// writes, byte for byte; the default checkpoint is removed once the
// report is written.
func TestDefaultCheckpointResume(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	root := testCache(t)
	dir := t.TempDir()
	scen, _ := filepath.Abs(filepath.Join(hostileDir, "checkpoints", "long.yaml"))
	report := filepath.Join(dir, "report.json")
	ch := startChild(t, dir, nil, "run", scen, "--seed", "77", "--trials", "50000", "--json", report, "--quiet", "--workers", "1")
	waitBlocks(t, filepath.Join(root, "*"), 2, ch)
	code, _ := ch.signal(t, syscall.SIGINT)
	stderr := ch.stderr.String()
	msg, hint, ok := strings.Cut(strings.TrimSpace(stderr), "; resume with: ")
	if code != exitInterrupted || !ok || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("SIGINT: exit %d, stderr %q", code, stderr)
	}
	cks := checkpointsIn(root)
	if len(cks) != 1 || !strings.Contains(msg, "of 50000 trials are saved in "+filepath.Join(root, cks[0])) {
		t.Errorf("checkpoints %v, message %q", cks, msg)
	}
	if strings.Contains(hint, "--checkpoint") || !strings.HasSuffix(hint, " --resume") {
		t.Errorf("hint %q", hint)
	}
	if st, err := os.Stat(root); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("checkpoint directory: %v, mode %v", err, st.Mode())
	}
	if _, err := os.Stat(report); err == nil {
		t.Fatal("the interrupted run wrote its report")
	}
	sh := exec.Command("/bin/sh", "-c", hint)
	sh.Env = append(os.Environ(), "AUDIT_MAIN=1")
	sh.Dir = dir
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("the pasted hint failed: %v\n%s", err, out)
	}
	if cks := checkpointsIn(root); len(cks) != 0 {
		t.Errorf("the default checkpoint outlived its report: %v", cks)
	}
	ref := filepath.Join(dir, "ref.json")
	if _, errs, code := runCLI(t, "run", scen, "--seed", "77", "--trials", "50000", "--json", ref, "--quiet", "--no-checkpoint"); code != 0 {
		t.Fatalf("reference run: %s", errs)
	}
	a, _ := os.ReadFile(ref)
	b, _ := os.ReadFile(report)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("the resumed report (%d bytes) differs from the uninterrupted one (%d bytes)", len(b), len(a))
	}
}

// kill -9 right after the start leaves the lock file alone (the run had
// written nothing else): --resume, without --checkpoint and with it,
// starts that run afresh and writes the uninterrupted run's report. While
// the run lives its lock refuses a second one; once it is dead the lock
// is taken over.
func TestResumeAfterKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	scen, _ := filepath.Abs(filepath.Join(hostileDir, "checkpoints", "long.yaml"))
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref.json")
	common := []string{"run", scen, "--trials", "50000", "--quiet", "--workers", "1"}
	if _, errs, code := runCLI(t, append(common, "--json", ref, "--no-checkpoint")...); code != 0 {
		t.Fatalf("reference run: %s", errs)
	}
	want, _ := os.ReadFile(ref)
	for _, explicit := range []bool{false, true} {
		root := testCache(t)
		ckGlob := filepath.Join(root, "*")
		args := append([]string(nil), common...)
		if explicit {
			ckGlob = filepath.Join(dir, "ck")
			args = append(args, "--checkpoint", ckGlob)
			os.RemoveAll(ckGlob)
		}
		ch := startChild(t, dir, nil, args...)
		var lock string
		deadline := time.Now().Add(60 * time.Second)
		for lock == "" && time.Now().Before(deadline) {
			if m, _ := filepath.Glob(filepath.Join(ckGlob, "lock")); len(m) == 1 {
				lock = m[0]
			}
			time.Sleep(time.Millisecond)
		}
		if lock == "" {
			t.Fatalf("explicit %v: no lock file (stderr %q)", explicit, ch.stderr.String())
		}
		ck := filepath.Dir(lock)
		_, errs, code := runCLITimeout(t, 10*time.Second, append(args, "--resume")...)
		running := ch.cmd.ProcessState == nil
		ch.signal(t, syscall.SIGKILL)
		if running && (code != exitUsage || !strings.Contains(errs, "is in use by another audit run")) {
			t.Errorf("explicit %v: a resume beside the live run: exit %d, stderr %q", explicit, code, errs)
		}
		// What the run wrote after its lock goes: the state of a kill -9
		// between the lock and the manifest.
		entries, _ := os.ReadDir(ck)
		for _, e := range entries {
			if e.Name() != "lock" {
				os.Remove(filepath.Join(ck, e.Name()))
			}
		}
		out := filepath.Join(dir, "resumed.json")
		os.Remove(out)
		_, errs, code = runCLI(t, append(args, "--resume", "--json", out)...)
		got, _ := os.ReadFile(out)
		if code != 0 || !strings.Contains(errs, "had completed no block of trials; it starts from the first trial") {
			t.Fatalf("explicit %v: resume after kill -9: exit %d, stderr %q", explicit, code, errs)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("explicit %v: the resumed report (%d bytes) differs from the uninterrupted one (%d bytes)", explicit, len(got), len(want))
		}
	}
}

// A checkpoint the disk cannot take is exit 3 (a full disk is an
// internal failure, not bad input), with one line and no report; a
// default checkpoint that cannot be written only costs a warning. A path
// that cannot hold a checkpoint stays exit 2.
func TestCheckpointDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	tiny, _ := filepath.Abs(filepath.Join(hostileDir, "tiny.yaml"))
	dir := t.TempDir()
	testCache(t)

	// The file size limit (RLIMIT_FSIZE, 512 bytes here) fails the first
	// block of trials (about 1.5 kB) with EFBIG, as a full disk would with
	// ENOSPC; the manifest (about 100 bytes) fits.
	limited := func(args ...string) (int, string, string) {
		sh := exec.Command("/bin/sh", append([]string{"-c", `ulimit -f 1 && exec "$0" "$@"`, os.Args[0]}, args...)...)
		sh.Env = append(os.Environ(), "AUDIT_MAIN=1")
		sh.Dir = dir
		var out, errb bytes.Buffer
		sh.Stdout, sh.Stderr = &out, &errb
		sh.Run()
		return sh.ProcessState.ExitCode(), out.String(), errb.String()
	}
	ck := filepath.Join(dir, "ck")
	code, out, errs := limited("run", tiny, "--checkpoint", ck, "--json", "r.json", "--quiet")
	if code != exitInternal || out != "" || errs != "audit run: cannot write the checkpoint in "+ck+": file too large\n" {
		t.Errorf("explicit checkpoint over the size limit: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "r.json")); err == nil {
		t.Error("a report was written")
	}
	code, out, errs = limited("run", tiny, "--quiet")
	if code != 0 || !strings.Contains(out, "hostile-tiny") || strings.Count(errs, "\n") != 1 ||
		!strings.Contains(errs, "cannot be written: file too large; the rest of this run is not checkpointed") {
		t.Errorf("default checkpoint over the size limit: exit %d, stderr %q", code, errs)
	}

	// A real full disk: a tmpfs of 16 pages, filled up but for two (where
	// the system allows mounting one).
	mnt := filepath.Join(dir, "mnt")
	os.Mkdir(mnt, 0o755)
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=64k"); err != nil {
		t.Logf("no tmpfs (%v): the full-disk case is emulated with the file size limit only", err)
	} else {
		defer syscall.Unmount(mnt, 0)
		filler, _ := os.Create(filepath.Join(mnt, "filler"))
		for {
			if _, err := filler.Write(make([]byte, 4096)); err != nil {
				break
			}
		}
		st, _ := filler.Stat()
		filler.Truncate(st.Size() - 8192)
		filler.Close()
		ck := filepath.Join(mnt, "ck")
		_, errs, code := runCLI(t, "run", tiny, "--checkpoint", ck, "--quiet")
		if code != exitInternal || errs != "audit run: cannot write the checkpoint in "+ck+": no space left on device\n" {
			t.Errorf("full tmpfs: exit %d, stderr %q", code, errs)
		}
	}

	// Bad paths: exit 2.
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(file, link)
	lockDir := filepath.Join(dir, "lockdir")
	os.MkdirAll(filepath.Join(lockDir, "lock"), 0o755)
	manDir := filepath.Join(dir, "mandir")
	os.MkdirAll(filepath.Join(manDir, "manifest.json"), 0o755)
	for _, c := range []struct{ path, want string }{
		{file, "exists and is not a directory"},
		{link, "exists and is not a directory"},
		{"/dev/null", "exists and is not a directory"},
		{filepath.Join(file, "ck"), "cannot create it: not a directory"},
		{lockDir, "lock is not a regular file"},
		{manDir, "manifest.json is not a regular file"},
	} {
		_, errs, code := runCLI(t, "run", tiny, "--checkpoint", c.path, "--quiet")
		if code != exitUsage || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("--checkpoint %s: exit %d, stderr %q", c.path, code, errs)
		}
	}
}

// --no-checkpoint opts out: nothing is written to the cache, and an
// interruption says that nothing was saved, with no resume command.
func TestNoCheckpointOptOut(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	root := testCache(t)
	scen, _ := filepath.Abs(filepath.Join(hostileDir, "checkpoints", "long.yaml"))
	for _, args := range [][]string{{"--no-checkpoint", "--resume"}, {"--no-checkpoint", "--checkpoint", "x"}} {
		_, errs, code := runCLI(t, append([]string{"run", scen}, args...)...)
		if code != exitUsage || errs != "audit run: --no-checkpoint: not with --checkpoint or --resume\n" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
	// The run is well into its trials after a while. Interrupted while
	// preparing the scenario, or already analysing or done (how far it
	// gets depends on the machine's load), the test signals the next
	// child later or sooner.
	wait := time.Second
	for try := 0; ; try++ {
		ch := startChild(t, t.TempDir(), nil, "run", scen, "--quiet", "--workers", "1", "--no-checkpoint")
		time.Sleep(wait)
		code, _ := ch.signal(t, syscall.SIGINT)
		stderr := ch.stderr.String()
		if try < 10 && strings.Contains(stderr, "while preparing") {
			wait *= 2
			continue
		}
		if try < 10 && (code == exitOK || strings.Contains(stderr, "during the analysis")) {
			wait /= 2
			continue
		}
		if code != exitInterrupted || stderr != "audit run: interrupted; nothing was saved\n" {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
		break
	}
	if _, err := os.Stat(root); err == nil {
		t.Errorf("--no-checkpoint created %s", root)
	}
}

// The default checkpoints: older than 30 days they are removed when a run
// starts; a run without --resume replaces an earlier one of the same
// audit (saying so), one with --resume continues it (without --checkpoint);
// --resume with nothing saved is refused.
func TestDefaultCheckpointPruneReplaceResume(t *testing.T) {
	root := testCache(t)
	tiny, _ := filepath.Abs(filepath.Join(hostileDir, "tiny.yaml"))
	cfg, err := scenario.LoadConfig(tiny)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := scenario.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	plan.Close()
	own := filepath.Join(root, audit.CheckpointKey(plan.Hash, cfg.Audit.Trials))

	_, errs, code := runCLI(t, "run", tiny, "--quiet", "--resume")
	if code != exitUsage || errs != "audit run: --resume: no interrupted run of this scenario with these flags is saved (looked in "+own+"); run it without --resume\n" {
		t.Errorf("--resume with nothing saved: exit %d, stderr %q", code, errs)
	}
	want, errs, code := runCLI(t, "run", tiny, "--quiet")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if cks := checkpointsIn(root); len(cks) != 0 {
		t.Errorf("the default checkpoint outlived the run: %v", cks)
	}

	// A complete checkpoint where the default one goes, as an interrupted
	// run after its last block would leave it, and two old ones.
	if _, errs, code := runCLI(t, "run", tiny, "--quiet", "--checkpoint", own); code != 0 {
		t.Fatal(errs)
	}
	old := time.Now().Add(-31 * 24 * time.Hour)
	var stale []string
	for _, name := range []string{audit.CheckpointKey("another audit", 400), audit.CheckpointKey("a third", 400)} {
		d := filepath.Join(root, name)
		os.Mkdir(d, 0o700)
		os.WriteFile(filepath.Join(d, "manifest.json"), []byte("{}"), 0o600)
		os.Chtimes(filepath.Join(d, "manifest.json"), old, old)
		os.Chtimes(d, old, old)
		stale = append(stale, d)
	}
	os.Chtimes(stale[1], time.Now(), time.Now()) // touched today: kept

	out, errs, code := runCLI(t, "run", tiny, "--quiet", "--resume")
	if code != 0 || out != want || errs != "" {
		t.Errorf("--resume from the default checkpoint: exit %d, stderr %q, same table %v", code, errs, out == want)
	}
	if _, err := os.Stat(stale[0]); err == nil {
		t.Error("a checkpoint 31 days old was not pruned")
	}
	if cks := checkpointsIn(root); len(cks) != 1 || cks[0] != filepath.Base(stale[1]) {
		t.Errorf("checkpoints left: %v", cks)
	}

	if _, errs, code := runCLI(t, "run", tiny, "--quiet", "--checkpoint", own); code != 0 {
		t.Fatal(errs)
	}
	out, errs, code = runCLI(t, "run", tiny, "--quiet")
	if code != 0 || out != want || errs != "audit: the 400 trials saved in "+own+" by an earlier run were discarded (--resume continues such a run)\n" {
		t.Errorf("a run over an earlier checkpoint: exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(own); err == nil {
		t.Error("the replaced checkpoint outlived the run")
	}
}

// Without a usable cache directory (no HOME, or a cache path under a
// file) a run goes on without a checkpoint after one warning; --resume
// is refused.
func TestDefaultCheckpointNoCache(t *testing.T) {
	tiny, _ := filepath.Abs(filepath.Join(hostileDir, "tiny.yaml"))
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	for _, c := range []struct{ home, xdg, warning, resume string }{
		{"", "", "no cache directory for the default checkpoint", "; give --checkpoint DIR"},
		{t.TempDir(), filepath.Join(file, "cache"), "cannot create the checkpoint directory " + filepath.Join(file, "cache", "mcmcaudit", "checkpoints") + ": not a directory",
			"no interrupted run of this scenario with these flags is saved"},
	} {
		t.Setenv("HOME", c.home)
		t.Setenv("XDG_CACHE_HOME", c.xdg)
		out, errs, code := runCLI(t, "run", tiny, "--quiet")
		if code != 0 || !strings.Contains(out, "hostile-tiny") || strings.Count(errs, "\n") != 1 ||
			!strings.Contains(errs, "audit: warning: "+c.warning) || !strings.HasSuffix(errs, "; this run is not checkpointed\n") {
			t.Errorf("HOME=%q XDG_CACHE_HOME=%q: exit %d, stderr %q", c.home, c.xdg, code, errs)
		}
		_, errs, code = runCLI(t, "run", tiny, "--quiet", "--resume")
		if code != exitUsage || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.resume) {
			t.Errorf("HOME=%q XDG_CACHE_HOME=%q --resume: exit %d, stderr %q", c.home, c.xdg, code, errs)
		}
	}
}

// TestHelpSaysTheCheckpointIsTheDefault: "audit -h" must not say that an
// interrupted run is saved only with --checkpoint — 'audit run' keeps a
// checkpoint by default, and only --no-checkpoint loses the work.
func TestHelpSaysTheCheckpointIsTheDefault(t *testing.T) {
	out, _, code := runCLI(t, "-h")
	if code != 0 {
		t.Fatalf("audit -h: exit %d", code)
	}
	_, codes, ok := strings.Cut(out, "Exit codes:")
	if !ok {
		t.Fatalf("audit -h has no exit codes:\n%s", out)
	}
	flat := strings.Join(strings.Fields(codes), " ")
	if strings.Contains(flat, "with --checkpoint the work is saved") {
		t.Errorf("audit -h says the work is saved only with --checkpoint:\n%s", codes)
	}
	for _, want := range []string{"by default", "--no-checkpoint", "resume"} {
		if !strings.Contains(flat, want) {
			t.Errorf("audit -h, exit code 130: no %q:\n%s", want, codes)
		}
	}
}
