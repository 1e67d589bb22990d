package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
)

// gzipBomb writes a multi-member gzip file whose members each expand to 1
// MiB of b: members·1 MiB decompressed from about members kilobytes.
func gzipBomb(t *testing.T, path string, b byte, members int) int {
	t.Helper()
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(bytes.Repeat([]byte{b}, 1<<20))
	zw.Close()
	z := bytes.Repeat(member.Bytes(), members)
	if err := os.WriteFile(path, z, 0o644); err != nil {
		t.Fatal(err)
	}
	return len(z)
}

// refusedInputAlloc is what refusing a hostile input may allocate.
const refusedInputAlloc = 200 << 20

// Gzip bombs given to analyze: 8 MB expanding to one 8 GiB line of zeros
// (which grew past 4.5 GiB of memory: no line limit applied to compressed
// samples), and 8 GiB of newlines. Each is refused with exit 2 and one
// line naming the file and the limit, within 200 MB of allocations: the
// bounds apply to the decompressed text, as it is decompressed.
func TestAnalyzeGzipBombs(t *testing.T) {
	if testing.Short() {
		t.Skip("decompresses tens of MB: skipped by -short")
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.csv")
	os.WriteFile(good, []byte("1,2\n3,4\n"), 0o644)
	for _, c := range []struct {
		name string
		b    byte
		want string
	}{
		{"one 8 GiB line", '0', ": line 1: longer than 16777216 bytes (the limit on one run of a CSV file; save wider runs as .npy)"},
		{"8 GiB of newlines", '\n', ": more than 200001024 lines"},
	} {
		if c.b == '\n' && !testutil.SlowSuite {
			continue // 200 MB of lines scanned before the refusal: the slow suite's
		}
		bomb := filepath.Join(dir, "bomb.csv.gz")
		size := gzipBomb(t, bomb, c.b, 8192)
		var errs string
		var code int
		alloc := testutil.Allocated(func() { _, errs, code = runCLI(t, "analyze", good, bomb) })
		if code != exitUsage || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, bomb+c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and %q", c.name, code, errs, bomb+c.want)
		}
		if alloc > refusedInputAlloc {
			t.Errorf("%s: allocated %d MB to refuse it", c.name, alloc>>20)
		}
		t.Logf("%s (%.1f MB compressed): %.1f MB allocated to refuse it", c.name, float64(size)/1e6, float64(alloc)/1e6)
	}
}

// Long fields in samples: one quoted across 50 MB of short lines is a run
// beyond the line limit (it was buffered whole, then echoed in a 50 MB
// error line); a 3 MB field under the limit is echoed cut to 80
// characters. Both errors are one line under 1 KB.
func TestAnalyzeLongFields(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 50 MB of samples: skipped by -short")
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.csv")
	os.WriteFile(good, []byte("1,2\n3,4\n"), 0o644)
	chunk := strings.Repeat("x", 79) + "\n"
	for _, c := range []struct {
		name, body, want string
	}{
		{"a 50 MB quoted field", "1,2\n3,\"" + strings.Repeat(chunk, 50_000_000/len(chunk)) + "\"\n", "field.csv: line 2: longer than 16777216 bytes (a quoted field spans lines)"},
		{"a 3 MB field", "1,2\n3," + strings.Repeat("y", 3_000_000) + "\n", `field.csv: line 2, column 2: must be a finite number, got "yyyy`},
	} {
		p := filepath.Join(dir, "field.csv")
		os.WriteFile(p, []byte(c.body), 0o644)
		var errs string
		var code int
		alloc := testutil.Allocated(func() { _, errs, code = runCLI(t, "analyze", good, p) })
		if code != exitUsage || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) || len(errs) > 1000 {
			t.Errorf("%s: exit %d, %d-byte stderr %.300q; want exit 2 and one short line containing %q", c.name, code, len(errs), errs, c.want)
		}
		if alloc > refusedInputAlloc {
			t.Errorf("%s: allocated %d MB to refuse it", c.name, alloc>>20)
		}
		t.Logf("%s: %q, %.1f MB allocated", c.name, errs, float64(alloc)/1e6)
	}
}

// SIGTERM and SIGINT while analyze is still loading its samples end it
// with exit 130 and one line saying so, at once (the files were read to
// the end first, or the process was killed outright when the signal came
// before the handler). The signal is sent once the child has opened the
// samples, whose loading takes far longer than the signal's delivery.
func TestAnalyzeSignalWhileLoading(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	dir := t.TempDir()
	big := filepath.Join(dir, "big.csv.gz")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	var row bytes.Buffer
	for i := 0; i < 20_000; i++ {
		row.Reset()
		for j := 0; j < 10; j++ {
			fmt.Fprintf(&row, "%d.%06d,", i, j)
		}
		row.Truncate(row.Len() - 1)
		row.WriteByte('\n')
		for k := 0; k < 20; k++ { // 400,000 rows, 40 MB of text
			zw.Write(row.Bytes())
		}
	}
	zw.Close()
	f.Close()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		out := t.TempDir()
		ch := startChild(t, out, nil, "analyze", big, big, "--json", "r.json")
		if !waitOpen(ch.cmd.Process.Pid, big, 60*time.Second) {
			t.Fatalf("%v: the child never opened %s (stderr %q)", sig, big, ch.stderr.String())
		}
		code, took := ch.signal(t, sig)
		errs := ch.stderr.String()
		if code != exitInterrupted || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "audit analyze: interrupted while loading the samples; nothing was written") {
			t.Errorf("%v: exit %d, stderr %q", sig, code, errs)
		}
		if entries, _ := os.ReadDir(out); len(entries) != 0 {
			t.Errorf("%v: wrote %v", sig, entries)
		}
		t.Logf("%v: exit %d, %v after the signal", sig, code, took.Round(time.Millisecond))
	}
}

// waitOpen waits until process pid holds path open.
func waitOpen(pid int, path string, d time.Duration) bool {
	fdDir := fmt.Sprintf("/proc/%d/fd", pid)
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		fds, _ := os.ReadDir(fdDir)
		for _, fd := range fds {
			if l, _ := os.Readlink(filepath.Join(fdDir, fd.Name())); l == path {
				return true
			}
		}
	}
	return false
}

// Flag values that were accepted and meant nothing (two releases
// labelled "", a δ that the scenario silently overrode, releases "saved"
// nowhere) are refused with exit 2 and one line naming the flag.
func TestAnalyzeAcceptedNonsense(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.csv")
	var b strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "%d,%d\n", i, 2*i)
	}
	os.WriteFile(good, []byte(b.String()), 0o644)
	// D′'s runs differ from D's: the same file twice would be refused as
	// repeated runs, before the flags that matter here are looked at.
	other := filepath.Join(dir, "other.csv")
	b.Reset()
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "%d.5,%d\n", i, 2*i+1)
	}
	os.WriteFile(other, []byte(b.String()), 0o644)
	scen := "../../testdata/gaussian-mechanism.yaml"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"analyze", good, good, "--points", ","}, "--points: label 1 is empty"},
		{[]string{"analyze", good, good, "--points", "a, "}, "--points: label 2 is empty"},
		{[]string{"analyze", good, good, "--points", "a,a"}, `--points: label "a" appears twice`},
		{[]string{"analyze", good, good, "--points", ""}, `--points: needs a count or comma-separated labels, got ""`},
		{[]string{"analyze", good, good, "--scenario", scen, "--delta", "0.1"}, "--delta: not with --scenario"},
		{[]string{"analyze", good, good, "--scenario", scen, "--confidence", "0.9"}, "--confidence: not with --scenario"},
		{[]string{"analyze", good, good, "--scenario", scen, "--split", "0.5:0.5"}, "--split: not with --scenario"},
		{[]string{"analyze", good, good, "--scenario", scen, "--attacks", "linear"}, "--attacks: not with --scenario"},
		{[]string{"run", "--save-releases", "", "--quiet"}, `--save-releases: needs a PREFIX for PREFIX-D.csv and PREFIX-DPRIME.csv, got ""`},
	} {
		out, errs, code := runCLI(t, c.args...)
		if code != exitUsage || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, out, errs, c.want)
		}
	}
	// The same files with labels, or a scenario alone, are fine.
	for _, args := range [][]string{{"--points", "a,b"}, {"--points", "2"}, {"--scenario", scen}} {
		if _, errs, code := runCLI(t, append([]string{"analyze", good, other}, args...)...); code != exitOK {
			t.Errorf("analyze %v: exit %d, stderr %q", args, code, errs)
		}
	}
}

// Echoed input is cut in every message: a program sampler with a 300 KB
// argument or path (the error line was 300–600 KB), a 300 KB flag value,
// unknown flag or command, a 300 KB scenario value. Each error is one
// line under 1 KB.
func TestLongInputsInMessages(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("A", 300_000)
	base, err := os.ReadFile("../../examples/python/gaussian.yaml")
	if err != nil {
		t.Fatal(err)
	}
	scen := func(name, from, to string) string {
		p := filepath.Join(dir, name)
		if !strings.Contains(string(base), from) {
			t.Fatalf("the example no longer holds %q", from)
		}
		os.WriteFile(p, []byte(strings.Replace(string(base), from, to, 1)), 0o644)
		return p
	}
	cmd := `command: [/usr/bin/python3, gaussian.py, --mu, "1"]`
	samples := filepath.Join(dir, "s.csv")
	os.WriteFile(samples, []byte("1,2\n3,4\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", scen("arg.yaml", cmd, `command: [/nonexistent/prog, "`+big+`"]`), "--quiet"}, `command: /nonexistent/prog "AAAA`},
		{[]string{"run", scen("path.yaml", cmd, `command: ["/nonexistent/`+big+`"]`), "--quiet"}, "cannot start process 1"},
		{[]string{"run", scen("timeout.yaml", "timeout: 60s", "timeout: "+big), "--quiet"}, "sampler.program.timeout: must be a duration"},
		{[]string{"run", scen("field.yaml", "adjacency: replace-one", "adjacency: "+big), "--quiet"}, "neighbour.adjacency: must be one of"},
		{[]string{"run", "--trials", big}, "--trials: invalid value"},
		{[]string{"run", "--" + big}, "flag provided but not defined"},
		{[]string{"analyze", samples, samples, "--points", big + "," + big}, "--points: label"},
		{[]string{"analyze", samples, samples, "--seed", big}, "--seed: invalid value"},
		{[]string{"epsilon", big}, "unexpected argument"},
		{[]string{big}, "unknown command"},
	} {
		out, errs, code := runCLI(t, c.args...)
		if code != exitUsage || out != "" || strings.Count(errs, "\n") != 1 || len(errs) > 1000 || !strings.Contains(errs, c.want) {
			t.Errorf("%.80q: exit %d, a %d-byte stderr %.300q; want exit 2 and one short line containing %q", c.args, code, len(errs), errs, c.want)
		}
	}
}

// The last safety net: whatever an error holds, the line printed is at
// most clip.MaxLine bytes after its prefix, and still one line.
func TestErrorLineCut(t *testing.T) {
	for _, err := range []error{usageError{strings.Repeat("x\ny ", 5_000_000)}, fmt.Errorf("%s", strings.Repeat("é", 1_000_000))} {
		var b bytes.Buffer
		exitCode(err, "run", &env{stdout: &b, stderr: &b})
		line := strings.TrimPrefix(b.String(), "audit run: ")
		if len(line) > 4200 || strings.Count(line, "\n") != 1 || !strings.Contains(line, "more bytes)") {
			t.Errorf("a %d-byte error line: %.100q…", len(line), line)
		}
	}
}
