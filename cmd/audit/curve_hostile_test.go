package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcmcaudit/mcmcaudit/internal/curve"
)

// Two outputs on one path: one of them was silently lost. They are refused
// by the check every command makes (one line, exit 2), before any work,
// however the path is spelled, and a file already there is left as it was.
func TestCurveOutputsOnOnePath(t *testing.T) {
	dir := t.TempDir()
	x := filepath.Join(dir, "x.svg")
	kept := filepath.Join(dir, "kept.json")
	if err := os.WriteFile(kept, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"curve", "--n", "1000", "--c", "1", "--epochs", "1:3"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--json", x, "--csv", x}, "--json and --csv name the same file"},
		{[]string{"--csv", x, "--html", x}, "--csv and --html name the same file"},
		{[]string{"--plot", x, "--html", x}, "--plot and --html name the same file"},
		{[]string{"--json", x, "--plot", filepath.Join(dir, ".", "sub", "..", "x.svg")}, "--json and --plot name the same file"},
		{[]string{"--json", kept, "--html", kept}, "--json and --html name the same file"},
		{[]string{"--csv", "-", "--html", "-"}, "only one of --json, --csv, --html can write to stdout (-), got --csv and --html"},
	} {
		if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		args := append(append([]string{}, base...), c.args...)
		out, errs, code := runCLI(t, args...)
		if code != exitUsage || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stdout %.60q, stderr %q; want exit 2 and one line with %q", c.args, code, out, errs, c.want)
		}
	}
	if b, _ := os.ReadFile(kept); string(b) != "mine" {
		t.Errorf("the file already there was changed: %q", b)
	}
	if _, err := os.Stat(x); err == nil {
		t.Errorf("%s was written", x)
	}
	// The n-min mode writes JSON only, and refuses the outputs it has not.
	_, errs, code := runCLI(t, "curve", "--n-min", "--eps-posterior", "1", "--json", x, "--csv", x)
	if code != exitUsage || !strings.Contains(errs, "--csv: not used with --n-min") {
		t.Errorf("--n-min with --json and --csv on one path: exit %d, stderr %q", code, errs)
	}
}

// --n-min is bounded up front like every other work limit: the estimate
// 2 × runs × 300 units against --max-work (default 2.5·10⁹). The boundary:
// 2 × 4,166,666 × 300 = 2,499,999,600 ≤ 2.5·10⁹ < 2 × 4,166,667 × 300 =
// 2,500,000,200 (by hand); internal/curve tests the boundary itself.
func TestCurveNMinWorkLimit(t *testing.T) {
	// 10⁷ runs (the issue's > 60 s): 2 × 10⁷ × 300 = 6·10⁹ units.
	out, errs, code := runCLI(t, "curve", "--n-min", "--eps-posterior", "1", "--runs", "10000000")
	want := "audit curve: --max-work: 2 × 10000000 runs of Algorithm 1 × 300 units is estimated at 6e+09 work units, beyond the limit of 2.5e+09"
	if code != exitUsage || out != "" || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, want) {
		t.Errorf("10⁷ runs: exit %d, stdout %.60q, stderr %q; want one line starting %q", code, out, errs, want)
	}
	_, errs, code = runCLI(t, "curve", "--n-min", "--eps-posterior", "1", "--runs", "10000000", "--max-work", "5e9")
	if code != exitUsage || !strings.Contains(errs, "beyond the limit of 5e+09") {
		t.Errorf("10⁷ runs under --max-work 5e9: exit %d, stderr %q", code, errs)
	}
	_, errs, code = runCLI(t, "curve", "--c", "1", "--max-work", "1e12")
	if code != exitUsage || !strings.Contains(errs, "--max-work: not used without --construct or --n-min") {
		t.Errorf("--max-work with the curves: exit %d, stderr %q", code, errs)
	}
}

// cpuTicks is the CPU time (user + system, in clock ticks) of a process,
// and whether it is still running (not a zombie).
func cpuTicks(pid int) (int, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	// After the command: state, ppid, …; utime and stime are fields 14
	// and 15 of the line, 12 and 13 here.
	if len(f) < 13 || f[0] == "Z" {
		return 0, false
	}
	u, _ := strconv.Atoi(f[11])
	k, _ := strconv.Atoi(f[12])
	return u + k, true
}

// Every mode of "audit curve" honours SIGINT and SIGTERM: exit 130, one
// line, no output written. Before, the signals killed the process outright
// (or, started with SIGINT ignored, as a background job of a script is,
// --n-min ran on and exited 0). Each child is signalled once it has spent
// 0.3 s of CPU, so inside its computation; each computation would run for
// seconds more (2,001 epochs, 4·10⁶ runs of Algorithm 1), so a signal
// ignored shows as exit 0 and written files.
func TestCurveInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	epochs := []string{"--epochs", "0:1999000:1000"}
	for _, c := range []struct {
		name      string
		args      []string
		sig       syscall.Signal
		ignoreInt bool
	}{
		{"curves, SIGINT", append([]string{"--c", "1", "--n", "1000000"}, epochs...), syscall.SIGINT, false},
		{"solve-c, SIGTERM", append([]string{"--solve-c", "--eps-target", "3", "--at-epoch", "5", "--n", "1000000"}, epochs...), syscall.SIGTERM, false},
		{"construct, SIGTERM", []string{"--construct", "--eps-posterior", "0.5", "--eps-target", "38", "--epochs", "1:2000"}, syscall.SIGTERM, false},
		{"n-min, SIGTERM", []string{"--n-min", "--eps-posterior", "1", "--runs", "2000000"}, syscall.SIGTERM, false},
		{"n-min, SIGINT ignored at start", []string{"--n-min", "--eps-posterior", "1", "--runs", "2000000"}, syscall.SIGINT, true},
	} {
		dir := t.TempDir()
		args := append(append([]string{"curve"}, c.args...), "--json", filepath.Join(dir, "r.json"))
		var cmd *exec.Cmd
		if c.ignoreInt {
			// The shell sets SIGINT to ignored and execs the test binary,
			// which inherits the disposition.
			cmd = exec.Command("/bin/sh", append([]string{"-c", `trap "" INT; exec "$0" "$@"`, os.Args[0]}, args...)...)
		} else {
			cmd = exec.Command(os.Args[0], args...)
		}
		cmd.Env = append(os.Environ(), "AUDIT_MAIN=1")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for {
			ticks, alive := cpuTicks(cmd.Process.Pid)
			if !alive {
				t.Fatalf("%s: ended before it was signalled: stderr %q", c.name, stderr.String())
			}
			if ticks >= 30 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		cmd.Process.Signal(c.sig)
		cmd.Wait()
		code := cmd.ProcessState.ExitCode()
		if code != exitInterrupted || stderr.String() != "audit curve: interrupted; nothing was written\n" || stdout.Len() != 0 {
			t.Errorf("%s: exit %d (%v), stderr %q, %d bytes on stdout; want exit 130 and one line", c.name, code, cmd.ProcessState, stderr.String(), stdout.Len())
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%s: wrote %v", c.name, entries)
		}
	}
}

// T = epochs × n of the SGLD theorems is counted in an int: at n = 2^53,
// 1023 epochs are 1023·2^53 ≈ 9.214·10^18 < 2^63 − 1 ≈ 9.223·10^18 and
// 1024 epochs are 2^63, which wrapped around to a negative T (the theorems
// then printed nonsense). Beyond the int range every theorem says it was
// not evaluated, and gives no ε.
func TestCurveIterationsOverflow(t *testing.T) {
	bounds := func(epoch string) []curve.SGLDBound {
		out, errs, code := runCLI(t, "curve", "--n", "9007199254740992", "--c", "1", "--eta-scale", "1", "--epochs", epoch+":"+epoch, "--json", "-")
		if code != exitOK || errs != "" {
			t.Fatalf("epoch %s: exit %d, stderr %q", epoch, code, errs)
		}
		var r curve.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		if len(r.SGLDBounds) == 0 {
			t.Fatalf("epoch %s: no SGLD theorem listed", epoch)
		}
		return r.SGLDBounds
	}
	for _, b := range bounds("1024") {
		if b.Applies || b.Epsilon != nil || !strings.Contains(b.Reason, "not evaluated: 1024 epochs of n = 9007199254740992 records are 9.22337e+18 iterations, more than an int counts") {
			t.Errorf("1024 epochs: %+v", b)
		}
	}
	// 1023 epochs fit: the theorems are evaluated at T = 1023·2^53 =
	// 9214364837600034816 (Python integers), which Balle et al.'s Thm 5
	// states in its reason (more than one pass).
	seen := false
	for _, b := range bounds("1023") {
		if strings.Contains(b.Reason, "not evaluated") {
			t.Errorf("1023 epochs: %+v", b)
		}
		seen = seen || strings.Contains(b.Reason, "the release follows 9214364837600034816 iterations")
	}
	if !seen {
		t.Error("1023 epochs: no theorem states T = 9214364837600034816")
	}
}
