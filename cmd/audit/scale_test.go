package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcmcaudit/mcmcaudit/internal/runner"
)

// TestMain lets a test re-run this binary as the audit command itself
// (AUDIT_MAIN=1), to signal a real child process.
func TestMain(m *testing.M) {
	// The tests watch the default checkpoint's blocks as a run writes them,
	// interrupting runs of a second or less: here it saves every block from
	// the first, as --checkpoint DIR does (in this process and in the
	// children it runs as the command). Its default is tested in
	// internal/runner and audit.
	runner.AutoCheckpointAfter = 0
	if os.Getenv("AUDIT_MAIN") == "1" {
		main()
		return
	}
	if mode := os.Getenv("AUDIT_TEST_PROGRAM"); mode != "" {
		testProgram(mode)
		return
	}
	restore := isolateUserCache()
	code := m.Run()
	restore()
	os.Exit(code)
}

// Four shards merged give the report of one process, byte for byte; merge
// refuses a missing shard, a duplicated shard and a shard of another config.
func TestShardsMergeIdentical(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	dir := t.TempDir()
	cfg := "../../testdata/sgld-interim.yaml"
	single := filepath.Join(dir, "single.json")
	if _, errs, code := runCLI(t, "run", cfg, "--json", single, "--quiet"); code != 0 {
		t.Fatalf("single run: exit %d %s", code, errs)
	}
	var parts []string
	for i := 0; i < 4; i++ {
		p := filepath.Join(dir, fmt.Sprintf("part%d", i))
		out, errs, code := runCLI(t, "run", cfg, "--shard", fmt.Sprintf("%d/4", i), "--out", p, "--quiet", "--workers", fmt.Sprint(1+i%2))
		if code != 0 || !strings.Contains(out, fmt.Sprintf("shard %d/4", i)) {
			t.Fatalf("shard %d: exit %d %s", i, code, errs)
		}
		parts = append(parts, p)
	}
	merged := filepath.Join(dir, "merged.json")
	// Any order of the parts.
	args := append([]string{"merge", "--json", merged}, parts[2], parts[0], parts[3], parts[1])
	if _, errs, code := runCLI(t, args...); code != 0 {
		t.Fatalf("merge: exit %d %s", code, errs)
	}
	a, _ := os.ReadFile(single)
	b, _ := os.ReadFile(merged)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatal("merged report differs from the single-process report")
	}
	// Refusals.
	other := filepath.Join(dir, "other")
	if _, errs, code := runCLI(t, "run", cfg, "--seed", "99", "--shard", "1/4", "--out", other, "--quiet"); code != 0 {
		t.Fatalf("other shard: %s", errs)
	}
	refuse := []struct {
		parts []string
		want  string
	}{
		{[]string{parts[0], parts[1], parts[3]}, "trials [2000, 3000) are missing"},
		{[]string{parts[0], parts[1], parts[1], parts[2], parts[3]}, "duplicates trials [1000, 2000)"},
		{[]string{parts[0], other, parts[2], parts[3]}, "comes from another configuration"},
	}
	for _, r := range refuse {
		_, errs, code := runCLI(t, append([]string{"merge"}, r.parts...)...)
		if code != exitUsage || !strings.Contains(errs, r.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("merge %v: exit %d, stderr %q; want %q", r.parts, code, errs, r.want)
		}
	}
	// A truncated part is refused.
	trunc := filepath.Join(dir, "trunc")
	os.WriteFile(trunc, a[:len(a)/2], 0o644)
	raw, _ := os.ReadFile(parts[0])
	os.WriteFile(trunc, raw[:len(raw)-10], 0o644)
	if _, errs, code := runCLI(t, "merge", trunc, parts[1], parts[2], parts[3]); code != exitUsage || !strings.Contains(errs, "corrupt trials file (the header declares") {
		t.Errorf("truncated part: exit %d %q", code, errs)
	}
	// A flipped bit in the features is caught by the checksum.
	flipped := append([]byte(nil), raw...)
	flipped[len(flipped)-100] ^= 1
	os.WriteFile(trunc, flipped, 0o644)
	if _, errs, code := runCLI(t, "merge", trunc, parts[1], parts[2], parts[3]); code != exitUsage || !strings.Contains(errs, "checksum") {
		t.Errorf("corrupted part: exit %d %q", code, errs)
	}
}

// A run killed mid-way (SIGINT, then SIGKILL) resumes from its checkpoint
// and ends with the report of an uninterrupted run.
func TestCheckpointKillResume(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	dir := t.TempDir()
	// Long enough to interrupt: 60,000 trials of 200 SGLD steps.
	cfg := filepath.Join(dir, "long.yaml")
	base, _ := os.ReadFile("../../testdata/sgld-interim.yaml")
	os.WriteFile(cfg, bytes.Replace(base, []byte("trials: 4000"), []byte("trials: 60000"), 1), 0o644)
	ref := filepath.Join(dir, "ref.json")
	if _, errs, code := runCLI(t, "run", cfg, "--json", ref, "--quiet"); code != 0 {
		t.Fatalf("reference run: %s", errs)
	}
	ck := filepath.Join(dir, "ck")
	child := func(sig syscall.Signal, blocks int, extra ...string) (string, int) {
		cmd := exec.Command(os.Args[0], append([]string{"run", cfg, "--checkpoint", ck, "--quiet", "--workers", "1"}, extra...)...)
		cmd.Env = append(os.Environ(), "AUDIT_MAIN=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait until this run has saved blocks of its own, then signal.
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			m, _ := filepath.Glob(filepath.Join(ck, "trials-*.part"))
			if len(m) >= blocks {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cmd.Process.Signal(sig)
		err := cmd.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return stderr.String(), code
	}
	stderr, code := child(syscall.SIGINT, 2)
	if code != exitInterrupted || !strings.Contains(stderr, "--checkpoint "+ck+" --resume") {
		t.Fatalf("SIGINT: exit %d, stderr %q", code, stderr)
	}
	saved1, _ := filepath.Glob(filepath.Join(ck, "trials-*.part"))
	// kill -9 during the resumed run.
	_, code = child(syscall.SIGKILL, len(saved1)+2, "--resume")
	if code == 0 {
		t.Log("resumed run finished before SIGKILL")
	}
	saved2, _ := filepath.Glob(filepath.Join(ck, "trials-*.part"))
	t.Logf("blocks saved after SIGINT: %d, after SIGKILL: %d", len(saved1), len(saved2))
	if len(saved1) == 0 || len(saved2) <= len(saved1) || len(saved2) >= 200 {
		t.Fatalf("blocks saved: %d after SIGINT, %d after SIGKILL (of 200)", len(saved1), len(saved2))
	}
	out := filepath.Join(dir, "resumed.json")
	if _, errs, code := runCLI(t, "run", cfg, "--checkpoint", ck, "--resume", "--json", out, "--quiet"); code != 0 {
		t.Fatalf("final resume: exit %d %s", code, errs)
	}
	a, _ := os.ReadFile(ref)
	b, _ := os.ReadFile(out)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatal("resumed report differs from the uninterrupted one")
	}
	// Without --resume the directory is refused; with another config too.
	if _, errs, code := runCLI(t, "run", cfg, "--checkpoint", ck); code != exitUsage || !strings.Contains(errs, "add --resume") {
		t.Errorf("reused checkpoint: exit %d %q", code, errs)
	}
	if _, errs, code := runCLI(t, "run", cfg, "--seed", "5", "--checkpoint", ck, "--resume"); code != exitUsage || !strings.Contains(errs, "another configuration") {
		t.Errorf("other config: exit %d %q", code, errs)
	}
}
