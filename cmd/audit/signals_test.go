package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// child is a running audit command (this test binary as audit).
type child struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	lines  chan string // stderr, line by line
}

func startChild(t *testing.T, dir string, env []string, args ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "AUDIT_MAIN=1"), env...)
	cmd.Dir = dir
	pr, pw := io.Pipe()
	c := &child{cmd: cmd, stderr: &bytes.Buffer{}, lines: make(chan string, 1000)}
	cmd.Stderr = io.MultiWriter(c.stderr, pw)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			select {
			case c.lines <- sc.Text():
			default:
			}
		}
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		pw.Close()
	})
	return c
}

// waitLine waits for a stderr line containing s.
func (c *child) waitLine(t *testing.T, s string, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case l := <-c.lines:
			if strings.Contains(l, s) {
				return
			}
		case <-deadline:
			t.Fatalf("no line containing %q after %v (stderr %q)", s, d, c.stderr.String())
		}
	}
}

// signal sends sig and returns the exit code and how long the exit took.
func (c *child) signal(t *testing.T, sig syscall.Signal) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	c.cmd.Process.Signal(sig)
	c.cmd.Wait()
	return c.cmd.ProcessState.ExitCode(), time.Since(start)
}

// A signal during the analysis ends the run with exit 130 and writes no
// report (it was swallowed: exit 0, report written); during the building
// of the scenario (a DeepFool ensemble being trained) too. The time from
// signal to exit is logged, not bounded (a busy machine stretches it).
func TestSignalsInEveryPhase(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	scen, _ := filepath.Abs(filepath.Join(hostileDir, "signals"))
	for _, c := range []struct {
		name, scenario string
		sig            syscall.Signal
		waitFor        string // a stderr line, or "" to wait a fixed time
		want           string
	}{
		{"SIGINT during the analysis", "slow-analysis.yaml", syscall.SIGINT, "analysing 200 release points", "interrupted during the analysis; no report was written"},
		{"SIGTERM during the analysis", "slow-analysis.yaml", syscall.SIGTERM, "analysing 200 release points", "interrupted during the analysis; no report was written"},
		{"SIGTERM while building the scenario", "slow-build.yaml", syscall.SIGTERM, "", "interrupted while preparing the scenario; nothing was run"},
	} {
		out := t.TempDir()
		ch := startChild(t, out, nil, "run", filepath.Join(scen, c.scenario), "--json", "r.json", "--csv", "r.csv", "--html", "r.html")
		if c.waitFor != "" {
			ch.waitLine(t, c.waitFor, 60*time.Second)
			time.Sleep(200 * time.Millisecond)
		} else {
			time.Sleep(time.Second)
		}
		code, took := ch.signal(t, c.sig)
		if code != exitInterrupted || !strings.Contains(ch.stderr.String(), c.want) {
			t.Errorf("%s: exit %d, stderr %q", c.name, code, ch.stderr.String())
		}
		if entries, _ := os.ReadDir(out); len(entries) != 0 {
			t.Errorf("%s: wrote %v", c.name, entries)
		}
		t.Logf("%s: exit %d, %v after the signal", c.name, code, took.Round(time.Millisecond))
	}
}

// The resume hint printed after Ctrl-C is a command that works when
// pasted into a shell: the scenario, its overrides and its outputs (with
// names that need quoting) are kept, and the report it writes is the one
// an uninterrupted run writes.
func TestResumeHintPasted(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	dir := t.TempDir()
	scen, _ := filepath.Abs(filepath.Join(hostileDir, "checkpoints", "long.yaml"))
	ck := filepath.Join(dir, "check point")
	report := filepath.Join(dir, "it's a report.json")
	args := []string{"run", scen, "--seed", "77", "--trials", "50000", "--json", report, "--quiet", "--checkpoint", ck, "--workers", "1"}
	ch := startChild(t, dir, nil, args...)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if m, _ := filepath.Glob(filepath.Join(ck, "trials-*.part")); len(m) >= 2 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	code, _ := ch.signal(t, syscall.SIGINT)
	stderr := ch.stderr.String()
	_, hint, ok := strings.Cut(strings.TrimSpace(stderr), "resume with: ")
	if code != exitInterrupted || !ok {
		t.Fatalf("SIGINT: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(report); err == nil {
		t.Fatal("the interrupted run wrote its report")
	}
	t.Logf("hint: %s", hint)
	sh := exec.Command("/bin/sh", "-c", hint)
	sh.Env = append(os.Environ(), "AUDIT_MAIN=1")
	sh.Dir = dir
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("the pasted hint failed: %v\n%s", err, out)
	}
	ref := filepath.Join(dir, "ref.json")
	if _, errs, code := runCLI(t, "run", scen, "--seed", "77", "--trials", "50000", "--json", ref, "--quiet"); code != 0 {
		t.Fatalf("reference run: %s", errs)
	}
	a, _ := os.ReadFile(ref)
	b, _ := os.ReadFile(report)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("the resumed report (%d bytes) differs from the uninterrupted one (%d bytes)", len(b), len(a))
	}
	var doc struct {
		Config struct{ Seed uint64 } `json:"config"`
	}
	if json.Unmarshal(b, &doc) != nil || doc.Config.Seed != 77 {
		t.Errorf("the resumed report lost the --seed override: %+v", doc)
	}
}

// The checkpoint cases: a manifest that claims blocks of size 0 (a resume
// looped forever), a FIFO named like a block (a resume hung), and a second
// run on a directory in use (both computed everything) are refused at
// once with one line.
func TestHostileCheckpoints(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	tiny, _ := filepath.Abs(filepath.Join(hostileDir, "tiny.yaml"))
	complete := func(t *testing.T) string {
		ck := filepath.Join(t.TempDir(), "ck")
		if _, errs, code := runCLI(t, "run", tiny, "--quiet", "--checkpoint", ck); code != 0 {
			t.Fatalf("checkpointed run: %s", errs)
		}
		return ck
	}
	t.Run("manifest with block 0 and no blocks", func(t *testing.T) {
		ck := complete(t)
		blocks, _ := filepath.Glob(filepath.Join(ck, "trials-*.part"))
		for _, b := range blocks {
			os.Remove(b)
		}
		m, _ := os.ReadFile(filepath.Join(ck, "manifest.json"))
		var man map[string]any
		json.Unmarshal(m, &man)
		man["block"] = 0
		m, _ = json.Marshal(man)
		os.WriteFile(filepath.Join(ck, "manifest.json"), m, 0o644)
		_, errs, code := runCLITimeout(t, 10*time.Second, "run", tiny, "--quiet", "--checkpoint", ck, "--resume")
		if code != exitUsage || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "manifest.json is corrupt (block size 0, expected 256)") {
			t.Errorf("exit %d, stderr %q", code, errs)
		}
	})
	t.Run("FIFO named like a block", func(t *testing.T) {
		ck := complete(t)
		blocks, _ := filepath.Glob(filepath.Join(ck, "trials-*.part"))
		if len(blocks) == 0 {
			t.Fatal("no block")
		}
		os.Remove(blocks[0])
		if err := syscall.Mkfifo(blocks[0], 0o644); err != nil {
			t.Skip(err)
		}
		_, errs, code := runCLITimeout(t, 10*time.Second, "run", tiny, "--quiet", "--checkpoint", ck, "--resume")
		if code != exitUsage || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, filepath.Base(blocks[0])+" is not a regular file") {
			t.Errorf("exit %d, stderr %q", code, errs)
		}
	})
	t.Run("two runs on one directory", func(t *testing.T) {
		dir := t.TempDir()
		ck := filepath.Join(dir, "ck")
		scen, _ := filepath.Abs(filepath.Join(hostileDir, "checkpoints", "long.yaml"))
		ch := startChild(t, dir, nil, "run", scen, "--quiet", "--workers", "1", "--checkpoint", ck)
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(filepath.Join(ck, "manifest.json")); err == nil {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		start := time.Now()
		out := filepath.Join(dir, "second.json")
		_, errs, code := runCLITimeout(t, 10*time.Second, "run", scen, "--quiet", "--checkpoint", ck, "--resume", "--json", out)
		took := time.Since(start)
		running := ch.cmd.ProcessState == nil
		ch.signal(t, syscall.SIGKILL)
		if !running {
			t.Skip("the first run ended before the second started")
		}
		if code != exitUsage || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "--checkpoint: "+ck+" is in use by another audit run") {
			t.Errorf("exit %d, stderr %q", code, errs)
		}
		t.Logf("the second run gave up after %v", took.Round(time.Millisecond))
		if _, err := os.Stat(out); err == nil {
			t.Error("the second run wrote a report")
		}
	})
}
