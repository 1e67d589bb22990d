//go:build slow

package main

import (
	"strings"
	"testing"
)

// The memory target of a large audit: 10⁶ runs with
// per-epoch releases (the built-in scenario: 20 epochs, one feature) stays
// within 200 MB of resident memory: the child's own peak (VmHWM), not its
// rusage, which on Linux carries the peak of the test process that started
// it (the kernel records the forking process's peak at exec).
func TestMillionRunAuditMemory(t *testing.T) {
	r := runChild(t, t.TempDir(), "run", "--trials", "1000000", "--quiet")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "500000 evaluation runs") {
		t.Fatalf("unexpected report:\n%s", r.stdout)
	}
	mb := float64(r.maxRSSBytes) / 1e6
	t.Logf("10⁶-run audit, 20 per-epoch releases: peak RSS %.0f MB, CPU %.1fs, wall %.1fs", mb, r.cpu.Seconds(), r.wall.Seconds())
	if mb > 200 {
		t.Errorf("peak RSS %.0f MB > 200 MB", mb)
	}
}
