//go:build slow

package main

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// The memory target of a large audit: 10⁶ runs with
// per-epoch releases (the built-in scenario: 20 epochs, one feature) stays
// within 200 MB of resident memory. Measured as the child process's
// maximum RSS.
func TestMillionRunAuditMemory(t *testing.T) {
	cmd := exec.Command(os.Args[0], "run", "--trials", "1000000", "--quiet")
	cmd.Env = append(os.Environ(), "AUDIT_MAIN=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "500000 evaluation runs") {
		t.Fatalf("unexpected report:\n%s", out)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	mb := float64(ru.Maxrss) / 1024
	t.Logf("10⁶-run audit, 20 per-epoch releases: peak RSS %.0f MB, user %.1fs", mb, float64(ru.Utime.Sec)+float64(ru.Utime.Usec)/1e6)
	if mb > 200 {
		t.Errorf("peak RSS %.0f MB > 200 MB", mb)
	}
}
