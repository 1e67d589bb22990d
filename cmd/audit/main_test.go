package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// runCLI runs the command line in-process and returns stdout, stderr and the
// exit code.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &env{stdout: &out, stderr: &errb})
	return out.String(), errb.String(), code
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("missing golden file (run go test -update): %v", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from golden file:\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}

// 0/500 and 0/500 at δ = 1e-5, 95% prints
// ε_lb = 4.9056 (docs/derivations/references.md §2: 4.905584135932773, the
// paper's "about 4.89").
func TestEpsilonAcceptance(t *testing.T) {
	out, errs, code := runCLI(t, "epsilon", "--fp", "0", "--negatives", "500", "--fn", "0",
		"--positives", "500", "--delta", "1e-5", "--confidence", "0.95")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if !strings.HasPrefix(out, "ε_lb = 4.9056 ") {
		t.Errorf("first line = %q", strings.SplitN(out, "\n", 2)[0])
	}
	golden(t, "epsilon-0-500.stdout", out)
}

func TestEpsilonJSON(t *testing.T) {
	out, errs, code := runCLI(t, "epsilon", "--fp", "3", "--negatives", "500", "--fn", "7",
		"--positives", "500", "--json", "-")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var r struct {
		Region struct {
			Epsilon float64 `json:"epsilon"`
		} `json:"region"`
		GDP struct {
			Mu      float64 `json:"mu"`
			Epsilon float64 `json:"epsilon"`
		} `json:"gdp"`
		Ceiling float64 `json:"ceiling"`
		Point   struct {
			Epsilon any `json:"epsilon"`
		} `json:"point"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, out)
	}
	// The reference values of docs/derivations/references.md §2–§3 for these counts.
	checks := []struct {
		name      string
		got, want float64
	}{
		{"region.epsilon", r.Region.Epsilon, 4.02029188},
		{"gdp.mu", r.GDP.Mu, 4.011191777},
		{"gdp.epsilon", r.GDP.Epsilon, 24.47361963},
		{"ceiling", r.Ceiling, 4.905584136},
	}
	for _, c := range checks {
		if d := c.got/c.want - 1; d > 1e-8 || d < -1e-8 {
			t.Errorf("%s = %.12g, want %.12g", c.name, c.got, c.want)
		}
	}
}

func TestEpsilonJSONFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "eps.json")
	out, _, code := runCLI(t, "epsilon", "--fp", "0", "--negatives", "10", "--fn", "0",
		"--positives", "10", "--json", path)
	if code != 0 || !strings.Contains(out, "ε_lb =") {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Zero errors: the point estimate is unbounded and must say so.
	if !strings.Contains(string(b), `"epsilon": "+Inf"`) {
		t.Errorf("JSON lacks the +Inf point estimate:\n%s", b)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

// Bad input: one line on stderr naming the flag and its range, exit 2,
// nothing on stdout.
func TestEpsilonBadInput(t *testing.T) {
	base := []string{"--fp", "1", "--negatives", "10", "--fn", "1", "--positives", "10"}
	with := func(extra ...string) []string { return append(append([]string{"epsilon"}, base...), extra...) }
	cases := []struct {
		args []string
		want string
	}{
		{with("--delta", "1"), `--delta: invalid value "1": must be a number in [0, 1)`},
		{with("--delta", "-0.1"), `--delta: invalid value "-0.1": must be a number in [0, 1)`},
		{with("--delta", "NaN"), `--delta: invalid value "NaN"`},
		{with("--confidence", "1"), `--confidence: invalid value "1": must be a number in (0, 1)`},
		{with("--confidence", "0"), `--confidence: invalid value "0"`},
		{with("--fp", "-1"), `--fp: invalid value "-1": must be an integer in [0, 100000000]`},
		{with("--fp", "11"), `--fp: must be in [0, negatives=10], got 11`},
		{with("--fn", "12"), `--fn: must be in [0, positives=10], got 12`},
		{with("--negatives", "0"), `--negatives: invalid value "0": must be an integer in [1, 100000000]`},
		{with("--fp", "1.5"), `--fp: invalid value "1.5"`},
		{with("--bogus", "3"), `flag provided but not defined: --bogus`},
		{with("extra"), `unexpected argument "extra"`},
		{[]string{"epsilon", "--fp", "0"}, `--negatives is required`},
		{with("--json", "/no/such/dir/x.json"), `--json: directory "/no/such/dir" does not exist`},
		{[]string{"nosuchcommand"}, `unknown command "nosuchcommand"`},
	}
	for _, c := range cases {
		out, errs, code := runCLI(t, c.args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want 2", c.args, code)
		}
		if out != "" {
			t.Errorf("%v: wrote to stdout: %q", c.args, out)
		}
		if strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: stderr = %q, want one line containing %q", c.args, errs, c.want)
		}
	}
}

func TestHelp(t *testing.T) {
	out, _, code := runCLI(t, "-h")
	if code != 0 || !strings.Contains(out, "epsilon") {
		t.Errorf("audit -h: exit %d, %q", code, out)
	}
	out, _, code = runCLI(t, "epsilon", "-h")
	if code != 0 || !strings.Contains(out, "--confidence") {
		t.Errorf("audit epsilon -h: exit %d, %q", code, out)
	}
	_, errs, code := runCLI(t)
	if code != exitUsage || !strings.Contains(errs, "Commands:") {
		t.Errorf("audit with no command: exit %d, %q", code, errs)
	}
}
