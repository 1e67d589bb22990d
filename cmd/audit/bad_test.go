package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
)

// checkBad runs one bad command line and asserts the contract for bad
// input: exit 2, one line on stderr containing want, nothing on stdout, no
// file left in out, and (implicitly, being in-process) no panic.
func checkBad(t *testing.T, name string, args []string, want, out string) {
	t.Helper()
	stdout, stderr, code := runCLI(t, args...)
	if code != exitUsage {
		t.Errorf("%s: exit %d, want 2 (stderr %q)", name, code, stderr)
	}
	if stdout != "" {
		t.Errorf("%s: wrote %d bytes to stdout", name, len(stdout))
	}
	if strings.Count(stderr, "\n") != 1 || !testutil.ContainsInOrder(stderr, want) {
		t.Errorf("%s: stderr %q, want one line containing %q", name, stderr, want)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("%s: left files behind: %v", name, entries)
	}
}

// The hostile-input corpus of testdata/bad: every config carries its
// expected error in a "# want:" first line.
func TestBadConfigCorpus(t *testing.T) {
	files, err := filepath.Glob("../../testdata/bad/*.yaml")
	if err != nil || len(files) < 30 {
		t.Fatalf("corpus has %d configs (need ≥ 30): %v", len(files), err)
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		first, _, _ := strings.Cut(string(b), "\n")
		want, ok := strings.CutPrefix(first, "# want: ")
		if !ok {
			t.Fatalf("%s: no '# want:' line", f)
		}
		out := t.TempDir()
		checkBad(t, filepath.Base(f), []string{"run", f, "--quiet",
			"--json", filepath.Join(out, "r.json"), "--csv", filepath.Join(out, "r.csv"), "--plot", filepath.Join(out, "r.svg")}, want, out)
	}
}

// Bad command lines: testdata/bad/flags.txt (OUT, DIR and PART stand for a
// temporary directory and a file in it).
func TestBadFlagCorpus(t *testing.T) {
	f, err := os.Open("../../testdata/bad/flags.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		argLine, want, ok := strings.Cut(line, " | ")
		if !ok {
			t.Fatalf("bad line %q", line)
		}
		out := t.TempDir()
		dir := t.TempDir()
		var args []string
		for _, a := range strings.Fields(argLine) {
			a = strings.ReplaceAll(a, "OUT/", out+"/")
			a = strings.ReplaceAll(a, "PART", filepath.Join(out, "part"))
			if a == "DIR" {
				a = dir
			}
			args = append(args, a)
		}
		if args[0] == "run" {
			args = append(args, "--quiet", "--trials", "40")
			if strings.Contains(argLine, "--trials") {
				args = args[:len(args)-2]
			}
		}
		checkBad(t, argLine, args, want, out)
		n++
	}
	if n < 10 {
		t.Fatalf("only %d flag cases", n)
	}
}
