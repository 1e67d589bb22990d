//go:build slow

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A run resumed after Ctrl-C peaks within 1.2× the resident memory of an
// uninterrupted run (it peaked at twice as much): 10⁶-trial audits —
// fig1-exact (14 release points) and cyclic SGLD on the counterexample
// (20) — interrupted once their checkpoint holds a quarter of its blocks,
// then resumed; the reports are identical. Peaks are each child's own
// VmHWM.
func TestMillionTrialResumePeakMemory(t *testing.T) {
	for _, c := range []struct {
		scen  string
		extra []string
	}{
		{"../../testdata/fig1-exact.yaml", nil},
		{"../../testdata/hostile/checkpoints/long.yaml", []string{"--trials", "1000000"}},
	} {
		resumePeak(t, c.scen, c.extra)
	}
}

func resumePeak(t *testing.T, scenario string, extra []string) {
	scen, _ := filepath.Abs(scenario)
	dir := t.TempDir()
	args := func(a ...string) []string { return append(append([]string{"run", scen}, extra...), a...) }
	whole := runChild(t, dir, args("--quiet", "--json", "whole.json")...)
	if whole.code != 0 {
		t.Fatalf("uninterrupted run: exit %d %s", whole.code, whole.stderr)
	}
	ck := filepath.Join(dir, "ck")
	ch := startChild(t, dir, nil, args("--quiet", "--workers", "1", "--checkpoint", ck, "--json", "never.json")...)
	deadline := time.Now().Add(120 * time.Second)
	for time.Now().Before(deadline) {
		if m, _ := filepath.Glob(filepath.Join(ck, "trials-*.part")); len(m) >= 50 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	code, _ := ch.signal(t, syscall.SIGINT)
	blocks, _ := filepath.Glob(filepath.Join(ck, "trials-*.part"))
	if code != exitInterrupted {
		t.Fatalf("interrupted run: exit %d %s", code, ch.stderr.String())
	}
	resumed := runChild(t, dir, args("--quiet", "--checkpoint", ck, "--resume", "--json", "resumed.json")...)
	if resumed.code != 0 {
		t.Fatalf("resumed run: exit %d %s", resumed.code, resumed.stderr)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "whole.json"))
	b, _ := os.ReadFile(filepath.Join(dir, "resumed.json"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatal("the resumed report differs from the uninterrupted one")
	}
	ratio := float64(resumed.maxRSSBytes) / float64(whole.maxRSSBytes)
	t.Logf("%s, 10⁶ trials: uninterrupted peak %d MB (%v), resumed from %d of 200 blocks peak %d MB (%v): ratio %.2f", filepath.Base(scen),
		whole.maxRSSBytes>>20, whole.wall.Round(time.Millisecond), len(blocks), resumed.maxRSSBytes>>20, resumed.wall.Round(time.Millisecond), ratio)
	if ratio > 1.2 {
		t.Errorf("resumed peak %d MB is %.2f× the uninterrupted %d MB (limit 1.2×)", resumed.maxRSSBytes>>20, ratio, whole.maxRSSBytes>>20)
	}
}
