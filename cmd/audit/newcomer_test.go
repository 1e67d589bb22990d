package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcmcaudit/mcmcaudit/internal/bounds"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// An unknown flag gets the nearest flag of its command; an unknown
// command the nearest command.
func TestUnknownFlagsAndCommandsSuggest(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--trails", "40"}, "audit run: flag provided but not defined: --trails (did you mean --trials?)"},
		{[]string{"run", "--claim_gdp", "1"}, "audit run: flag provided but not defined: --claim_gdp (did you mean --claim-gdp?)"},
		{[]string{"epsilon", "--negatves", "3"}, "audit epsilon: flag provided but not defined: --negatves (did you mean --negatives?)"},
		{[]string{"bounds", "--delt", "0.1"}, "audit bounds: flag provided but not defined: --delt (did you mean --delta?)"},
		{[]string{"curve", "--eta-scal", "1"}, "audit curve: flag provided but not defined: --eta-scal (did you mean --eta-scale?)"},
		{[]string{"run", "--frobnicate"}, "audit run: flag provided but not defined: --frobnicate (audit run -h lists the flags)"},
		{[]string{"rnu"}, `audit: unknown command "rnu" (did you mean "run"? commands: analyze, bounds, curve, epsilon, merge, run, version)`},
		{[]string{"--verison"}, `audit: unknown command "--verison" (did you mean "version"? commands: analyze, bounds, curve, epsilon, merge, run, version)`},
	}
	for _, c := range cases {
		out, errs, code := runCLI(t, c.args...)
		if code != exitUsage || out != "" || errs != c.want+"\n" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, out, errs, c.want)
		}
	}
}

// -h shows each flag's default once, never NaN, and no "(default false)"
// for a switch; audit -h lists every exit code.
func TestHelpDefaults(t *testing.T) {
	for _, cmd := range []string{"run", "bounds", "epsilon", "merge", "curve", "version"} {
		out, _, code := runCLI(t, cmd, "-h")
		if code != exitOK {
			t.Fatalf("%s -h: exit %d", cmd, code)
		}
		for _, line := range strings.Split(out, "\n") {
			if !strings.HasPrefix(line, "  --") {
				continue
			}
			if strings.Contains(line, "NaN") {
				t.Errorf("%s -h: %q shows NaN", cmd, line)
			}
			if n := strings.Count(line, "default"); n > 1 {
				t.Errorf("%s -h: %q states its default %d times", cmd, line, n)
			}
			if strings.Contains(line, "(default false)") {
				t.Errorf("%s -h: %q", cmd, line)
			}
		}
	}
	out, _, _ := runCLI(t, "bounds", "-h")
	if !strings.Contains(out, "--delta          δ at which to report ε (default: the scenario's audit.delta); in (0, 1)\n") {
		t.Errorf("bounds -h: --delta line:\n%s", out)
	}
	out, _, _ = runCLI(t, "run", "-h")
	if !strings.Contains(out, "--claim-gdp      claimed μ of μ-GDP, in [0, ∞)\n") {
		t.Errorf("run -h: --claim-gdp line:\n%s", out)
	}
	out, _, _ = runCLI(t, "-h")
	for _, code := range []string{"  0 ", "  1 ", "  2 ", "  3 ", "  130 "} {
		if !strings.Contains(out, code) {
			t.Errorf("audit -h does not list exit code %q:\n%s", strings.TrimSpace(code), out)
		}
	}
}

// Integer flags take exact integers only; out-of-range values are refused
// in one line naming the flag.
func TestIntegerFlagsExact(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--seed", "1.5"}, `--seed: invalid value "1.5": must be an unsigned integer`},
		{[]string{"run", "--seed", "18446744073709551616"}, `--seed: invalid value "18446744073709551616": must be an unsigned integer`},
		{[]string{"run", "--seed", "-1"}, `--seed: invalid value "-1": must be an unsigned integer`},
		{[]string{"run", "--trials", "40.5"}, `--trials: invalid value "40.5": must be an integer in [0, 100000000]`},
		{[]string{"run", "--trials", "1e3"}, `--trials: invalid value "1e3": must be an integer in [0, 100000000]`},
		{[]string{"bounds", "--iterations", "1099511627777"}, `--iterations: invalid value "1099511627777": must be an integer in [0, 2^40]`},
		{[]string{"epsilon", "--fp", "0.5", "--negatives", "2", "--fn", "0", "--positives", "2"}, `--fp: invalid value "0.5": must be an integer in [0, 100000000]`},
	}
	for _, c := range cases {
		out, errs, code := runCLI(t, c.args...)
		if code != exitUsage || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", c.args, code, errs, c.want)
		}
	}
	// A value the flag overrides is not blamed on the scenario file's line.
	_, errs, code := runCLI(t, "run", "../../testdata/sgld-interim.yaml", "--trials", "10", "--quiet")
	if code != exitUsage || errs != "audit run: audit.trials: must be in [20, 100000000], got 10\n" {
		t.Errorf("--trials 10: exit %d, %q", code, errs)
	}
}

// "audit --version" and "audit version" print the module, the revision
// (or that it is unknown) and the Go version.
func TestVersion(t *testing.T) {
	a, _, code := runCLI(t, "--version")
	b, _, code2 := runCLI(t, "version")
	if code != exitOK || code2 != exitOK || a != b {
		t.Fatalf("--version (exit %d) %q and version (exit %d) %q differ", code, a, code2, b)
	}
	bi, ok := debug.ReadBuildInfo()
	if a != versionText(bi, ok) {
		t.Errorf("audit --version = %q, want %q", a, versionText(bi, ok))
	}
	if !regexp.MustCompile(`^audit github\.com/mcmcaudit/mcmcaudit \S+\nrevision `).MatchString(a) {
		t.Errorf("audit --version = %q", a)
	}
	platform := runtime.GOOS + "/" + runtime.GOARCH
	cases := []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{"no build information", nil, false,
			"audit github.com/mcmcaudit/mcmcaudit (devel)\nrevision unknown (the build recorded no version control information)\n" + runtime.Version() + " " + platform + "\n"},
		{"built without VCS", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/mcmcaudit/mcmcaudit", Version: "(devel)"}}, true,
			"audit github.com/mcmcaudit/mcmcaudit (devel)\nrevision unknown (the build recorded no version control information)\ngo1.26.0 " + platform + "\n"},
		{"built from a clone", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/mcmcaudit/mcmcaudit", Version: "v0.0.0-20261123164100-0123456789ab+dirty"},
			Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
				{Key: "vcs.time", Value: "2026-11-23T16:41:00Z"}, {Key: "vcs.modified", Value: "true"}}}, true,
			"audit github.com/mcmcaudit/mcmcaudit v0.0.0-20261123164100-0123456789ab+dirty\nrevision 0123456789abcdef0123456789abcdef01234567 (committed 2026-11-23T16:41:00Z, with uncommitted changes)\ngo1.26.0 " + platform + "\n"},
		{"a release", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/mcmcaudit/mcmcaudit", Version: "v1.2.3"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"}}}, true,
			"audit github.com/mcmcaudit/mcmcaudit v1.2.3\nrevision abc\ngo1.26.0 " + platform + "\n"},
	}
	for _, c := range cases {
		if got := versionText(c.bi, c.ok); got != c.want {
			t.Errorf("%s:\n got  %q\n want %q", c.name, got, c.want)
		}
	}
	if _, errs, code := runCLI(t, "version", "extra"); code != exitUsage || !strings.Contains(errs, `unexpected argument "extra"`) {
		t.Errorf("version extra: exit %d %q", code, errs)
	}
}

// "audit run --explain FIELD" prints the field's reference; alone it lists
// every field; an unknown field gets the nearest one.
func TestExplainFlag(t *testing.T) {
	for _, args := range [][]string{{"run", "--explain", "sampler.sgld.step.eta"}, {"run", "--explain=sampler.sgld.step.eta"}} {
		out, errs, code := runCLI(t, args...)
		if code != exitOK || errs != "" || !strings.HasPrefix(out, "sampler.sgld.step.eta\n\nThe first step size η₀. Type: number. Required.") {
			t.Errorf("%v: exit %d, %q %q", args, code, out, errs)
		}
	}
	out, _, code := runCLI(t, "run", "--explain")
	if code != exitOK || strings.Count(out, "\n") < 150 || !strings.Contains(out, "  audit.split.train ") {
		t.Errorf("--explain alone: exit %d, %d lines", code, strings.Count(out, "\n"))
	}
	_, errs, code := runCLI(t, "run", "--explain", "audit.split.trian")
	if code != exitUsage || errs != "audit run: --explain: no scenario field \"audit.split.trian\" (did you mean \"audit.split.train\"?); --explain alone lists them all\n" {
		t.Errorf("--explain misspelt: exit %d %q", code, errs)
	}
}

// "audit bounds" fits 120 columns for every scenario of testdata, and
// loses nothing the JSON has: every ε, every assumption checked and every
// reason a theorem fails is in the text.
func TestBoundsFit120Columns(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	files, err := filepath.Glob("../../testdata/*.yaml")
	if err != nil || len(files) < 10 {
		t.Fatalf("%d scenarios: %v", len(files), err)
	}
	for _, f := range files {
		jsonPath := filepath.Join(t.TempDir(), "b.json")
		out, errs, code := runCLI(t, "bounds", f, "--json", jsonPath)
		if code != exitOK {
			t.Errorf("%s: exit %d %s", f, code, errs)
			continue
		}
		for i, line := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(line); n > 120 {
				t.Errorf("%s: line %d has %d columns: %q", filepath.Base(f), i+1, n, line)
			}
		}
		var doc struct {
			Guarantees []bounds.Row `json:"guarantees"`
		}
		b, _ := os.ReadFile(jsonPath)
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		flat := strings.Join(strings.Fields(out), " ")
		for _, g := range doc.Guarantees {
			want := []string{strings.Join(strings.Fields(bounds.ChecksText(g)), " ")}
			if g.Epsilon != nil {
				want = append(want, stats.FormatFloat(float64(*g.Epsilon)))
			}
			for _, w := range want {
				if !strings.Contains(flat, w) {
					t.Errorf("%s: the text lacks %q", filepath.Base(f), w)
				}
			}
		}
	}
}

// The layout table of docs/reference.md names every Go package of the module (each
// directory below the root holding non-test .go files, outside examples/,
// bench/ and testdata/), and every path it names exists.
func TestReadmeLayoutMatchesTree(t *testing.T) {
	section := docSection(t, "docs/reference.md", "## Layout")
	named := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first := strings.SplitN(line, "|", 3)[1]
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(first, -1) {
			p := strings.TrimSuffix(m[1], "/")
			named[p] = true
			if _, err := os.Stat(filepath.Join("../..", p)); err != nil {
				t.Errorf("layout table names %s, which does not exist", m[1])
			}
		}
	}
	root, _ := filepath.Abs("../..")
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		top := strings.SplitN(rel, string(filepath.Separator), 2)[0]
		if strings.HasPrefix(d.Name(), ".") && rel != "." || top == "examples" || top == "bench" || top == "testdata" || d.Name() == "testdata" {
			return filepath.SkipDir
		}
		files, _ := filepath.Glob(filepath.Join(path, "*.go"))
		for _, f := range files {
			if !strings.HasSuffix(f, "_test.go") {
				if rel != "." && !named[filepath.ToSlash(rel)] {
					t.Errorf("package directory %s is not in the layout table of docs/reference.md", rel)
				}
				break
			}
		}
		return nil
	})
}
