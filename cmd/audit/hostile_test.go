package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
)

const hostileDir = "../../testdata/hostile"

// hostileCase is one line of a cases.txt file of the corpus.
type hostileCase struct {
	args []string
	exit int
	want string
	line string
}

// readCases parses "arguments | exit code | fragment" lines, with OUT/
// standing for out.
func readCases(t *testing.T, path, out string) []hostileCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []hostileCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.SplitN(line, " | ", 3)
		if len(parts) != 3 {
			t.Fatalf("%s: bad line %q", path, line)
		}
		code, err := strconv.Atoi(parts[1])
		if err != nil {
			t.Fatalf("%s: bad exit code in %q", path, line)
		}
		sub := func(s string) string { return strings.ReplaceAll(s, "OUT/", out+"/") }
		c := hostileCase{exit: code, want: sub(parts[2]), line: line}
		for _, a := range strings.Fields(parts[0]) {
			c.args = append(c.args, sub(a))
		}
		cases = append(cases, c)
	}
	return cases
}

// hostileOut makes the directory the output cases run in: a scenario, a
// directory, a FIFO, a regular file, a link to it, a would-be part and a
// unix socket.
func hostileOut(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	scen, err := os.ReadFile(filepath.Join(hostileDir, "tiny.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "scen.yaml"), scen, 0o644)
	os.Mkdir(filepath.Join(dir, "dir"), 0o755)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	os.WriteFile(filepath.Join(dir, "target.json"), []byte("old\n"), 0o640)
	os.Symlink("target.json", filepath.Join(dir, "link"))
	os.WriteFile(filepath.Join(dir, "part"), []byte("not a trials file\n"), 0o644)
	l, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Skip("no unix sockets here:", err)
	}
	t.Cleanup(func() { l.Close() })
	return dir
}

// snapshot describes every entry under dir — type, mode, size, contents
// or link target — so that a test can assert nothing was created, removed
// or replaced (a replaced file is a new inode: its inode number is part
// of the description).
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		ino := st.Sys().(*syscall.Stat_t).Ino
		fmt.Fprintf(&b, "%s %v %d ino=%d", strings.TrimPrefix(p, dir), st.Mode(), st.Size(), ino)
		switch {
		case st.Mode().IsRegular():
			c, _ := os.ReadFile(p)
			h := sha256.Sum256(c)
			b.WriteString(" " + hex.EncodeToString(h[:8]))
		case st.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			b.WriteString(" -> " + l)
		}
		b.WriteString("\n")
		return nil
	})
	return b.String()
}

// devNullIntact fails the test if /dev/null is no longer a character
// device (run as root, --json /dev/null used to replace it with a regular
// file).
func devNullIntact(t *testing.T) {
	t.Helper()
	if st, err := os.Stat("/dev/null"); err != nil || st.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("/dev/null is no longer a character device: %v %v", st.Mode(), err)
	}
}

// runCLITimeout is runCLI that fails the test instead of hanging (a FIFO
// opened for reading waits for a writer).
func runCLITimeout(t *testing.T, d time.Duration, args ...string) (string, string, int) {
	t.Helper()
	type res struct {
		out, errs string
		code      int
	}
	ch := make(chan res, 1)
	go func() {
		var out, errb bytes.Buffer
		code := run(args, &env{stdout: &out, stderr: &errb})
		ch <- res{out.String(), errb.String(), code}
	}()
	select {
	case r := <-ch:
		return r.out, r.errs, r.code
	case <-time.After(d):
		t.Fatalf("%v: still running after %v", args, d)
		return "", "", 0
	}
}

// checkRefused asserts the contract of a refused command: the exit code,
// one line on stderr with the fragment, nothing on stdout.
func checkRefused(t *testing.T, c hostileCase, stdout, stderr string, code int) {
	t.Helper()
	if code != c.exit {
		t.Errorf("%s\n  exit %d, want %d (stderr %q)", c.line, code, c.exit, stderr)
	}
	if stdout != "" {
		t.Errorf("%s\n  wrote %d bytes to stdout", c.line, len(stdout))
	}
	if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) {
		t.Errorf("%s\n  stderr %q\n  want one line containing %q", c.line, stderr, c.want)
	}
}

// The output corpus (testdata/hostile/outputs/cases.txt): devices, FIFOs,
// directories, links, duplicates, inputs and two documents on stdout are
// refused before any work, and nothing in the directory — nor /dev/null —
// is created, removed or replaced.
func TestHostileOutputs(t *testing.T) {
	devNullIntact(t)
	probe := hostileOut(t)
	cases := readCases(t, filepath.Join(hostileDir, "outputs", "cases.txt"), probe)
	if len(cases) < 20 {
		t.Fatalf("only %d output cases", len(cases))
	}
	for _, c := range cases {
		out := hostileOut(t)
		c = readCases(t, filepath.Join(hostileDir, "outputs", "cases.txt"), out)[indexOf(cases, c)]
		before := snapshot(t, out)
		stdout, stderr, code := runCLITimeout(t, 30*time.Second, c.args...)
		checkRefused(t, c, stdout, stderr, code)
		if after := snapshot(t, out); after != before {
			t.Errorf("%s\n  changed the directory:\nbefore:\n%s\nafter:\n%s", c.line, before, after)
		}
		devNullIntact(t)
	}
}

func indexOf(cases []hostileCase, c hostileCase) int {
	for i := range cases {
		if cases[i].line == c.line {
			return i
		}
	}
	return -1
}

// What outputs may do: create a new file, replace a regular file (keeping
// its mode), and write "-" to stdout; a link is left alone by a refused
// run and written by naming its target.
func TestOutputsReplaceOnlyRegularFiles(t *testing.T) {
	out := hostileOut(t)
	target := filepath.Join(out, "target.json")
	args := []string{"run", filepath.Join(out, "scen.yaml"), "--quiet", "--json", target, "--csv", filepath.Join(out, "new.csv")}
	if _, errs, code := runCLI(t, args...); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	st, err := os.Stat(target)
	b, _ := os.ReadFile(target)
	if err != nil || st.Mode().Perm() != 0o640 || !bytes.Contains(b, []byte(`"report"`)) {
		t.Errorf("replaced file: mode %v, %d bytes, %v", st.Mode(), len(b), err)
	}
	if st, err := os.Stat(filepath.Join(out, "new.csv")); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("new file: %v", err)
	}
	if l, err := os.Readlink(filepath.Join(out, "link")); err != nil || l != "target.json" {
		t.Errorf("the link changed: %q %v", l, err)
	}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

// failingWriter fails every write as a full disk does.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// A full disk on stdout is exit 3 with one line, in-process and in a real
// process whose stdout is /dev/full — for the table, for "-" and for help.
func TestStdoutFullDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	eps := []string{"epsilon", "--fp", "1", "--negatives", "100", "--fn", "2", "--positives", "100"}
	for _, args := range [][]string{eps, append(eps, "--json", "-"), {"run", filepath.Join(hostileDir, "tiny.yaml"), "--quiet", "--csv", "-"}, {"bounds", filepath.Join(hostileDir, "tiny.yaml")}} {
		var errb bytes.Buffer
		code := run(args, &env{stdout: failingWriter{}, stderr: &errb})
		if code != exitInternal || strings.Count(errb.String(), "\n") != 1 || !strings.Contains(errb.String(), "cannot write standard output: no space left on device") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
		}
	}
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full:", err)
	}
	defer full.Close()
	for _, args := range [][]string{eps, append(eps, "--json", "-"), {"run", filepath.Join(hostileDir, "tiny.yaml"), "--quiet"}} {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "AUDIT_MAIN=1")
		cmd.Stdout = full
		var errb bytes.Buffer
		cmd.Stderr = &errb
		cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != exitInternal || !strings.Contains(errb.String(), "no space left on device") {
			t.Errorf("%v > /dev/full: exit %d, stderr %q", args, code, errb.String())
		}
	}
}

// An output that is the file stdout is redirected to is refused: the
// rename would detach the shell's redirection.
func TestOutputIsRedirectedStdout(t *testing.T) {
	dir := t.TempDir()
	same := filepath.Join(dir, "same.json")
	f, err := os.Create(same)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(os.Args[0], "epsilon", "--fp", "1", "--negatives", "100", "--fn", "2", "--positives", "100", "--json", same)
	cmd.Env = append(os.Environ(), "AUDIT_MAIN=1")
	cmd.Stdout = f
	var errb bytes.Buffer
	cmd.Stderr = &errb
	cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != exitUsage || !strings.Contains(errb.String(), "is where standard output already goes") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

// init lets a test run this binary as the audit command and learn its
// peak resident memory (AUDIT_HWM_FILE=path): the child writes its own
// VmHWM there before it exits. The rusage of a child started by the test
// process would not do: the kernel records the forking process's peak as
// the child's when it execs, so it would report the test process's memory.
func init() {
	path := os.Getenv("AUDIT_HWM_FILE")
	if path == "" {
		return
	}
	sizeMemory = setMemoryLimit // as main does
	code := run(os.Args[1:], &env{stdout: os.Stdout, stderr: os.Stderr})
	status, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			os.WriteFile(path, []byte(strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:"))), 0o644)
		}
	}
	os.Exit(code)
}

// childResult is a child process's exit code, output and resources.
type childResult struct {
	code        int
	stdout      string
	stderr      string
	wall, cpu   time.Duration
	maxRSSBytes int64
}

// runChild runs this test binary as the audit command and measures it.
func runChild(t *testing.T, dir string, args ...string) childResult {
	t.Helper()
	hwm := filepath.Join(t.TempDir(), "hwm")
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "AUDIT_HWM_FILE="+hwm)
	cmd.Dir = dir
	var outb, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &outb, &errb
	start := time.Now()
	err := cmd.Run()
	r := childResult{wall: time.Since(start), stdout: outb.String(), stderr: errb.String()}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%v: %v", args, err)
	}
	ps := cmd.ProcessState
	r.code = ps.ExitCode()
	r.cpu = ps.UserTime() + ps.SystemTime()
	b, err := os.ReadFile(hwm)
	kb, err2 := strconv.ParseInt(strings.TrimSuffix(string(b), " kB"), 10, 64)
	if err != nil || err2 != nil {
		t.Fatalf("%v: the child reported no peak memory (%q): %v %v", args, b, err, err2)
	}
	r.maxRSSBytes = kb * 1024
	return r
}

// makeData writes the data file a sizes case asks for ("# data: NAME KIND
// ARGS…"): kinds long-line N, gzip-bomb BYTE MEMBERS (members of 1 MiB),
// wide COLUMNS, rows ROWS COLUMNS, fifo, sparse N.
func makeData(t *testing.T, dir string, spec []string) {
	t.Helper()
	path := filepath.Join(dir, spec[0])
	num := func(i int) int {
		n, err := strconv.Atoi(spec[i])
		if err != nil {
			t.Fatalf("data spec %v: %v", spec, err)
		}
		return n
	}
	switch spec[1] {
	case "long-line":
		os.WriteFile(path, bytes.Repeat([]byte("1"), num(2)), 0o644)
	case "gzip-bomb":
		b := byte('0')
		if spec[2] == "newline" {
			b = '\n'
		}
		var member bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
		zw.Write(bytes.Repeat([]byte{b}, 1<<20))
		zw.Close()
		os.WriteFile(path, bytes.Repeat(member.Bytes(), num(3)), 0o644)
	case "wide":
		row := strings.Repeat("0,", num(2)-1) + "0\n"
		os.WriteFile(path, []byte(row+row), 0o644)
	case "rows":
		row := strings.Repeat("0,", num(3)-1) + "0\n"
		os.WriteFile(path, []byte(strings.Repeat(row, num(2))), 0o644)
	case "fifo":
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Skip("no FIFOs:", err)
		}
	case "sparse":
		f, _ := os.Create(path)
		f.Truncate(int64(num(2)))
		f.Close()
	default:
		t.Fatalf("unknown data kind %q", spec[1])
	}
}

// directives reads the "# want:", "# data:" and "# args:" lines of a case.
func directives(t *testing.T, path string) (want string, data, args []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "# want: "):
			want = strings.TrimPrefix(l, "# want: ")
		case strings.HasPrefix(l, "# data: "):
			data = strings.Fields(strings.TrimPrefix(l, "# data: "))
		case strings.HasPrefix(l, "# args: "):
			args = strings.Fields(strings.TrimPrefix(l, "# args: "))
		}
	}
	if want == "" {
		t.Fatalf("%s: no '# want:' line", path)
	}
	return want, data, args
}

// Resource limit of an oversized input: exit 2 with one line within
// 200 MB of resident memory. Its CPU time is logged, not bounded: a time
// limit in a unit test measures the machine's load as much as the code
// (the CPU cost of refusing is a benchmark's business).
const oversizedRSS = 200 << 20

// The sizes corpus: oversized data, wide releases for the attacks, work
// beyond the limit. Each case runs as a real process (its memory and CPU
// measured) and must exit 2 with one line naming the field or flag and
// the limit, within 200 MB, writing nothing. The default suite runs the
// first case (a child process each, seconds of CPU in all); the slow
// suite runs them all.
func TestHostileSizes(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	files, _ := filepath.Glob(filepath.Join(hostileDir, "sizes", "*.yaml"))
	if len(files) < 12 {
		t.Fatalf("only %d size cases", len(files))
	}
	if !testutil.SlowSuite {
		files = files[:1]
	}
	for _, f := range files {
		want, data, extra := directives(t, f)
		dir := t.TempDir()
		b, _ := os.ReadFile(f)
		os.WriteFile(filepath.Join(dir, "scen.yaml"), b, 0o644)
		if data != nil {
			makeData(t, dir, data)
		}
		before := snapshot(t, dir)
		args := append([]string{"run", "scen.yaml", "--quiet", "--json", "r.json", "--html", "r.html"}, extra...)
		r := runChild(t, dir, args...)
		name := filepath.Base(f)
		if r.code != exitUsage || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: exit %d, stderr %q\n  want exit 2 and one line containing %q", name, r.code, r.stderr, want)
		}
		if !raceEnabled && r.maxRSSBytes > oversizedRSS {
			t.Errorf("%s: %d MB resident; the limit is %d MB", name, r.maxRSSBytes>>20, oversizedRSS>>20)
		}
		if after := snapshot(t, dir); after != before {
			t.Errorf("%s: the directory changed:\n%s", name, after)
		}
		t.Logf("%-32s exit %d in %v wall, %v CPU, %d MB RSS", name, r.code, r.wall.Round(time.Millisecond), r.cpu.Round(time.Millisecond), r.maxRSSBytes>>20)
	}
}

// The overflow corpus: configs whose integer products wrapped are refused
// by run and by bounds alike (bounds stated theorems "for 4 iterations"),
// and integer flags at the edge of int64 are refused by name.
func TestHostileOverflow(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	files, _ := filepath.Glob(filepath.Join(hostileDir, "overflow", "*.yaml"))
	if len(files) < 5 {
		t.Fatalf("only %d overflow configs", len(files))
	}
	for _, f := range files {
		want, _, _ := directives(t, f)
		for _, cmd := range []string{"run", "bounds"} {
			out := t.TempDir()
			c := hostileCase{exit: exitUsage, want: want, line: cmd + " " + filepath.Base(f)}
			stdout, stderr, code := runCLITimeout(t, 30*time.Second, cmd, f, "--json", filepath.Join(out, "r.json"))
			checkRefused(t, c, stdout, stderr, code)
			if entries, _ := os.ReadDir(out); len(entries) != 0 {
				t.Errorf("%s: left %v", c.line, entries)
			}
		}
	}
	out := hostileOut(t)
	for _, c := range readCases(t, filepath.Join(hostileDir, "overflow", "flags.txt"), out) {
		before := snapshot(t, out)
		stdout, stderr, code := runCLITimeout(t, 30*time.Second, c.args...)
		checkRefused(t, c, stdout, stderr, code)
		if snapshot(t, out) != before {
			t.Errorf("%s: the directory changed", c.line)
		}
	}
}

// craftPart builds a trials file from a header, zero-filled sections of
// the given lengths and a checksum (of the whole file when good, of
// nothing otherwise): the crafted parts of the corpus.
func craftPart(header string, refLen, sides, xLen int, good bool) []byte {
	var b bytes.Buffer
	b.WriteString("mcmcaudit-trials v3\n")
	n := uint32(len(header))
	b.Write([]byte{byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)})
	b.WriteString(header)
	b.Write(make([]byte, 8*refLen+sides+4*xLen))
	sum := sha256.Sum256(b.Bytes())
	if !good {
		sum = sha256.Sum256(nil)
	}
	b.Write(sum[:])
	return b.Bytes()
}

// hostileParts are the crafted trials files of testdata/hostile/parts,
// rewritten by "go test -run TestHostileParts -update".
var hostileParts = map[string][]byte{
	// 10⁸ trials of 10 points × 100 features declared, none held: merge
	// allocated 400 GB from an 8 KB file.
	"huge-n-empty.part": craftPart(`{"config_hash":"h","n":100000000,"lo":0,"hi":0,"points":10,"features":100,"spec_len":0}`, 1000, 0, 0, true),
	// 10⁵ points × 2^20 features: 8·10¹¹ bytes of reference declared.
	"shape-overflow.part": craftPart(`{"config_hash":"h","n":10,"lo":0,"hi":0,"points":100000,"features":1048576,"spec_len":0}`, 0, 0, 0, true),
	"header-length.part":  append([]byte("mcmcaudit-trials v3\n"), 0xff, 0xff, 0xff, 0xff),
	"negative-spec.part":  craftPart(`{"config_hash":"h","n":10,"lo":0,"hi":1,"points":1,"features":1,"spec_len":-8}`, 1, 1, 1, true),
	"bad-checksum.part":   craftPart(`{"config_hash":"h","n":1,"lo":0,"hi":1,"points":1,"features":1,"spec_len":0}`, 1, 1, 1, false),
	"hi-beyond-n.part":    craftPart(`{"config_hash":"h","n":10,"lo":5,"hi":11,"points":1,"features":1,"spec_len":0}`, 1, 6, 6, true),
	"config-a.part":       craftPart(`{"config_hash":"a","n":10,"lo":0,"hi":5,"points":1,"features":1,"spec_len":0}`, 1, 5, 5, true),
	"config-b.part":       craftPart(`{"config_hash":"b","n":10,"lo":5,"hi":10,"points":1,"features":1,"spec_len":0}`, 1, 5, 5, true),
	"overlap-a.part":      craftPart(`{"config_hash":"a","n":10,"lo":3,"hi":8,"points":1,"features":1,"spec_len":0}`, 1, 5, 5, true),
	"not-a-part.part":     []byte("name: a scenario, not a trials file\n"),
}

// The parts corpus: crafted trials files are refused by merge before
// anything they declare is allocated — exit 2, one line, within 200 MB —
// and a FIFO among the parts does not hang it.
func TestHostileParts(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	dir := filepath.Join(hostileDir, "parts")
	for name, b := range hostileParts {
		p := filepath.Join(dir, name)
		if *update {
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, b) {
			t.Fatalf("%s differs from what the test crafts (go test -run TestHostileParts -update): %v", p, err)
		}
	}
	out := hostileOut(t)
	abs, _ := filepath.Abs(dir)
	cases := readCases(t, filepath.Join(dir, "cases.txt"), out)
	if len(cases) < 10 {
		t.Fatalf("only %d part cases", len(cases))
	}
	for _, c := range cases {
		for i, a := range c.args {
			c.args[i] = strings.ReplaceAll(a, "PARTS/", abs+"/")
		}
		c.want = strings.ReplaceAll(c.want, "PARTS/", abs+"/")
		before := snapshot(t, out)
		r := runChild(t, out, c.args...)
		checkRefused(t, c, "", r.stderr, r.code)
		if !raceEnabled && r.maxRSSBytes > oversizedRSS {
			t.Errorf("%s: %d MB resident", c.line, r.maxRSSBytes>>20)
		}
		if snapshot(t, out) != before {
			t.Errorf("%s: the directory changed", c.line)
		}
		t.Logf("%-60s %v CPU, %d MB", strings.Join(c.args[1:], " "), r.cpu.Round(time.Millisecond), r.maxRSSBytes>>20)
	}
}
