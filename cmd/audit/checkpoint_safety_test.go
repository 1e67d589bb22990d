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

// defaultCheckpointOf is where a run of the scenario file scen with
// trials trials keeps its default checkpoint under root.
func defaultCheckpointOf(t *testing.T, root, scen string, trials int) string {
	t.Helper()
	cfg, err := scenario.LoadConfig(scen)
	if err != nil {
		t.Fatal(err)
	}
	if trials > 0 {
		cfg.Audit.Trials = trials
	}
	plan, err := scenario.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	plan.Close()
	return filepath.Join(root, audit.CheckpointKey(plan.Hash, cfg.Audit.Trials))
}

// Someone who can write into the user's cache plants a link (or a
// directory everyone can write) where the default checkpoint goes. The
// run must not write a byte through it: it goes on without a checkpoint
// after one line naming the path and the reason, and writes its report;
// --resume is refused with one line (exit 2). On 3f163e1 the runs wrote
// their lock, manifest and blocks through the links, replacing the
// victim's manifest.json and a file with a block's name, without a word.
func TestDefaultCheckpointRefusesPlantedPaths(t *testing.T) {
	tiny, _ := filepath.Abs(filepath.Join(hostileDir, "tiny.yaml"))
	block := "trials-000000000000-000000000256.part"
	for _, c := range []struct {
		name string
		// plant prepares the cache (whose checkpoints directory is root
		// and whose default checkpoint for tiny.yaml is own) and the
		// victim's directory; it returns the path the message must name.
		plant  func(t *testing.T, cache, root, own, victim string) string
		reason string
	}{
		{"the checkpoint's own directory a link", func(t *testing.T, cache, root, own, victim string) string {
			must(t, os.MkdirAll(root, 0o700))
			must(t, os.Symlink(victim, own))
			return own
		}, "is a symbolic link"},
		{"checkpoints a link", func(t *testing.T, cache, root, own, victim string) string {
			must(t, os.MkdirAll(filepath.Dir(root), 0o700))
			must(t, os.Symlink(victim, root))
			return root
		}, "is a symbolic link"},
		{"mcmcaudit a link", func(t *testing.T, cache, root, own, victim string) string {
			must(t, os.Symlink(victim, filepath.Join(cache, "mcmcaudit")))
			// Inside the victim, the layout the tool expects.
			must(t, os.MkdirAll(filepath.Join(victim, "checkpoints", filepath.Base(own)), 0o700))
			return filepath.Join(cache, "mcmcaudit")
		}, "is a symbolic link"},
		{"checkpoints writable by everyone", func(t *testing.T, cache, root, own, victim string) string {
			must(t, os.MkdirAll(root, 0o700))
			must(t, os.Chmod(root, 0o777))
			return root
		}, "is writable by other users (mode 0777)"},
		{"a block planted as a link", func(t *testing.T, cache, root, own, victim string) string {
			must(t, os.MkdirAll(own, 0o700))
			must(t, os.Symlink(filepath.Join(victim, block), filepath.Join(own, block)))
			return own
		}, block + " is not a regular file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cache := t.TempDir()
			t.Setenv("XDG_CACHE_HOME", cache)
			root := filepath.Join(cache, "mcmcaudit", "checkpoints")
			own := defaultCheckpointOf(t, root, tiny, 0)
			victim := t.TempDir()
			must(t, os.WriteFile(filepath.Join(victim, "manifest.json"), []byte(`{"victim": true}`), 0o600))
			must(t, os.WriteFile(filepath.Join(victim, block), []byte("the victim's own file"), 0o600))
			named := c.plant(t, cache, root, own, victim)
			before := snapshot(t, victim)

			out, errs, code := runCLI(t, "run", tiny, "--quiet")
			if code != 0 || !strings.Contains(out, "hostile-tiny") || strings.Count(errs, "\n") != 1 ||
				!strings.Contains(errs, named) || !strings.Contains(errs, c.reason) ||
				!strings.HasSuffix(errs, "; this run is not checkpointed\n") {
				t.Errorf("run: exit %d, stderr %q (want one line naming %s and %q)", code, errs, named, c.reason)
			}
			_, errs, code = runCLI(t, "run", tiny, "--quiet", "--resume")
			if code != exitUsage || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, named) {
				t.Errorf("--resume: exit %d, stderr %q", code, errs)
			}
			if after := snapshot(t, victim); after != before {
				t.Errorf("the run wrote into the victim's directory:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// --checkpoint DIR is the user's own directory, but nothing inside it is
// followed: a lock, manifest or block that is a link is refused (exit 2)
// and its target is left as it was.
func TestExplicitCheckpointRefusesLinksInside(t *testing.T) {
	tiny, _ := filepath.Abs(filepath.Join(hostileDir, "tiny.yaml"))
	testCache(t)
	for _, name := range []string{"lock", "manifest.json", "trials-000000000000-000000000256.part"} {
		dir := filepath.Join(t.TempDir(), "ck")
		victim := filepath.Join(t.TempDir(), "victim")
		must(t, os.WriteFile(victim, []byte("the victim's own file"), 0o600))
		must(t, os.Mkdir(dir, 0o755))
		must(t, os.Symlink(victim, filepath.Join(dir, name)))
		for _, resume := range []bool{false, true} {
			args := []string{"run", tiny, "--quiet", "--checkpoint", dir}
			if resume {
				args = append(args, "--resume")
			}
			_, errs, code := runCLI(t, args...)
			if code != exitUsage || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, name+" is not a regular file") {
				t.Errorf("%s a link, resume %v: exit %d, stderr %q", name, resume, code, errs)
			}
			if b, _ := os.ReadFile(victim); string(b) != "the victim's own file" {
				t.Errorf("%s a link, resume %v: the victim's file now holds %q", name, resume, b)
			}
		}
	}
}

// A run that finds the default checkpoint busy (another run of the same
// scenario holds it) goes on without it, and must leave it alone when it
// ends: on 3f163e1 it removed it, so that the other run, interrupted
// meanwhile, lost its saved trials and its printed --resume command
// failed. Here run A holds the checkpoint; run B starts beside it and
// finds the lock taken; A is interrupted; B completes; A's resume command
// then writes B's report, byte for byte. The order of these events is
// forced by stopping the processes (SIGSTOP) on what they print, not by
// waiting.
func TestBusyDefaultCheckpointSurvivesTheOtherRun(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	root := testCache(t)
	scen, _ := filepath.Abs(filepath.Join(hostileDir, "checkpoints", "long.yaml"))
	dir := t.TempDir()
	args := []string{"run", scen, "--trials", "50000", "--quiet", "--workers", "1"}
	a := startChild(t, dir, nil, append(args, "--json", "a.json")...)
	waitBlocks(t, filepath.Join(root, "*"), 2, a)
	must(t, a.cmd.Process.Signal(syscall.SIGSTOP)) // A holds its lock, stopped

	b := startChild(t, dir, nil, append(args, "--json", "b.json")...)
	// B says so once it has found the lock taken (after loading and
	// building, which under -race can take more CPU than a fixed budget
	// allowed: B then tried the lock after A had released it); its 50,000
	// trials take about a second (several under -race), so it is stopped
	// long before it ends.
	b.waitLine(t, "is in use by another run", 2*time.Minute)
	must(t, b.cmd.Process.Signal(syscall.SIGSTOP))

	a.cmd.Process.Signal(syscall.SIGCONT)
	code, _ := a.signal(t, syscall.SIGINT)
	_, hint, ok := strings.Cut(strings.TrimSpace(a.stderr.String()), "; resume with: ")
	if code != exitInterrupted || !ok {
		t.Fatalf("A interrupted: exit %d, stderr %q", code, a.stderr.String())
	}
	b.cmd.Process.Signal(syscall.SIGCONT)
	b.cmd.Wait()
	if code := b.cmd.ProcessState.ExitCode(); code != 0 || strings.Count(b.stderr.String(), "\n") != 1 ||
		!strings.Contains(b.stderr.String(), "is in use by another run; this run is not checkpointed") {
		t.Fatalf("B beside A: exit %d, stderr %q", code, b.stderr.String())
	}
	if cks := checkpointsIn(root); len(cks) != 1 {
		t.Fatalf("A's checkpoint did not outlive B: checkpoints %v", cks)
	}
	sh := exec.Command("/bin/sh", "-c", hint)
	sh.Env = append(os.Environ(), "AUDIT_MAIN=1")
	sh.Dir = dir
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("A's resume command failed: %v\n%s", err, out)
	}
	ra, _ := os.ReadFile(filepath.Join(dir, "a.json"))
	rb, _ := os.ReadFile(filepath.Join(dir, "b.json"))
	if len(ra) == 0 || !bytes.Equal(ra, rb) {
		t.Errorf("A resumed wrote %d bytes, B %d: the reports differ", len(ra), len(rb))
	}
}

// A run that fails during its trials (exit 2: the chain diverges) prints
// one line — the notes about its checkpoint, here the earlier run's
// discarded trials, are not printed beside a refusal — and removes the
// default checkpoint it made, since it printed no way to resume it (on
// 3f163e1 it stayed in the cache for 30 days).
func TestFailedRunLeavesNoDefaultCheckpoint(t *testing.T) {
	root := testCache(t)
	dir := t.TempDir()
	tiny, _ := os.ReadFile(filepath.Join(hostileDir, "tiny.yaml"))
	// An SGLD chain whose step makes it diverge, on tiny's data.
	diverging := strings.Replace(string(tiny), "sampler: {gaussian_query: {sigma: 1}}",
		"sampler: {sgld: {step: {eta: 50}, batch: 3, scheme: cyclic, epochs: 200}}\ninit: {theta: [0]}\nrelease: {mode: final}", 1)
	scen := filepath.Join(dir, "diverging.yaml")
	must(t, os.WriteFile(scen, []byte(diverging), 0o644))
	own := defaultCheckpointOf(t, root, scen, 0)

	// What a killed run leaves: a lock, a manifest, a block of trials.
	_, errs, code := runCLI(t, "run", scen, "--quiet")
	if code != exitUsage || strings.Count(errs, "\n") != 1 {
		t.Fatalf("the diverging scenario: exit %d, stderr %q", code, errs)
	}
	refusal := errs
	if cks := checkpointsIn(root); len(cks) != 0 {
		t.Errorf("a run refused during its trials left its checkpoint: %v", cks)
	}
	must(t, os.MkdirAll(own, 0o700))
	must(t, os.WriteFile(filepath.Join(own, "lock"), nil, 0o600))
	must(t, os.WriteFile(filepath.Join(own, "manifest.json"), []byte("{}\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(own, "trials-000000000000-000000000256.part"), []byte("x"), 0o600))
	_, errs, code = runCLI(t, "run", scen, "--quiet")
	if code != exitUsage || errs != refusal {
		t.Errorf("after a killed run: exit %d, stderr %q, want %q alone", code, errs, refusal)
	}
	if cks := checkpointsIn(root); len(cks) != 0 {
		t.Errorf("the refused run left the checkpoint it replaced: %v", cks)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// An empty --checkpoint (or --scenario of audit analyze) is a mistake,
// not a request for the default: on 3f163e1 '--checkpoint ""' ran with the
// default checkpoint and 'analyze --scenario ""' ignored the scenario, both
// exit 0.
func TestEmptyDirectoryFlagsRefused(t *testing.T) {
	testCache(t)
	tiny, _ := filepath.Abs(filepath.Join(hostileDir, "tiny.yaml"))
	dir := t.TempDir()
	d, dp := filepath.Join(dir, "d.csv"), filepath.Join(dir, "dp.csv")
	must(t, os.WriteFile(d, []byte("0.1\n0.2\n0.3\n"), 0o644))
	must(t, os.WriteFile(dp, []byte("1.1\n1.2\n1.3\n"), 0o644))
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"run", tiny, "--quiet", "--checkpoint", ""}, "--checkpoint"},
		{[]string{"run", tiny, "--quiet", "--checkpoint="}, "--checkpoint"},
		{[]string{"analyze", d, dp, "--scenario", ""}, "--scenario"},
		{[]string{"analyze", d, dp, "--scenario="}, "--scenario"},
	} {
		out, errs, code := runCLI(t, c.args...)
		if code != exitUsage || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.flag+": needs a") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", c.args, code, out, errs)
		}
	}
}
