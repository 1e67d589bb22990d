package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// setScenario is the scenario of the --set tests: the Gaussian mechanism
// (inline data, so a copy runs from any directory), at setTrials runs.
const (
	setScenario = "../../testdata/gaussian-mechanism.yaml"
	setTrials   = "2000"
)

// runSetJSON runs "audit run" on scenario with args and returns the JSON
// report; it fails the test unless the run exits with want.
func runSetJSON(t *testing.T, want int, scenario string, args ...string) []byte {
	t.Helper()
	js := filepath.Join(t.TempDir(), "r.json")
	full := append([]string{"run", scenario, "--quiet", "--no-checkpoint", "--workers", "1", "--json", js}, args...)
	_, errs, code := runCLI(t, full...)
	if code != want {
		t.Fatalf("%v: exit %d, want %d (stderr %q)", args, code, want, errs)
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// editedScenario writes a copy of the test scenario with old replaced by
// new (which must occur once) and returns its path.
func editedScenario(t *testing.T, old, new string) string {
	t.Helper()
	b, err := os.ReadFile(setScenario)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte(old)); n != 1 {
		t.Fatalf("%q occurs %d times in %s, want once", old, n, setScenario)
	}
	p := filepath.Join(t.TempDir(), "edited.yaml")
	if err := os.WriteFile(p, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A --set of a numeric field writes the report an edit of the file writes,
// byte for byte (config hash included), and one that differs from the
// scenario's own.
func TestRunSetEqualsEdit(t *testing.T) {
	edited := editedScenario(t, "sigma: 1}", "sigma: 1.5}")
	want := runSetJSON(t, 0, edited, "--trials", setTrials)
	got := runSetJSON(t, 0, setScenario, "--trials", setTrials, "--set", "sampler.gaussian_query.sigma=1.5")
	if !bytes.Equal(got, want) {
		t.Error("the JSON report of --set sampler.gaussian_query.sigma=1.5 differs from the edited file's")
	}
	base := runSetJSON(t, 0, setScenario, "--trials", setTrials)
	if bytes.Equal(base, got) {
		t.Error("--set sampler.gaussian_query.sigma=1.5 changed nothing in the report")
	}
}

// Settings apply in the order given: a later one wins, and one under a
// mapping set before it edits that mapping.
func TestRunSetOrder(t *testing.T) {
	want := runSetJSON(t, 0, editedScenario(t, "sigma: 1}", "sigma: 1.5}"), "--trials", setTrials)
	for _, sets := range [][]string{
		{"sampler.gaussian_query.sigma=3", "sampler.gaussian_query.sigma=1.5"},
		{"sampler.gaussian_query={sigma: 3}", "sampler.gaussian_query.sigma=1.5"},
	} {
		args := []string{"--trials", setTrials, "--set", sets[0], "--set", sets[1]}
		if got := runSetJSON(t, 0, setScenario, args...); !bytes.Equal(got, want) {
			t.Errorf("--set %s --set %s: report differs from the file edited to sigma 1.5", sets[0], sets[1])
		}
		args = []string{"--trials", setTrials, "--set", sets[1], "--set", sets[0]}
		if got := runSetJSON(t, 0, setScenario, args...); bytes.Equal(got, want) {
			t.Errorf("--set %s --set %s: the later setting did not win", sets[1], sets[0])
		}
	}
}

// --set audit.trials=N writes the report --trials N writes.
func TestRunSetTrials(t *testing.T) {
	want := runSetJSON(t, 0, setScenario, "--trials", setTrials)
	got := runSetJSON(t, 0, setScenario, "--set", "audit.trials="+setTrials)
	if !bytes.Equal(got, want) {
		t.Error("--set audit.trials differs from --trials")
	}
}

// A bad field or value exits 2 with one line naming the field (and the
// setting), and writes nothing.
func TestRunSetBad(t *testing.T) {
	for _, c := range []struct {
		set  string
		want []string
	}{
		{"sampler.gaussian_query.sigmaa=1", []string{"sampler.gaussian_query", `unknown field "sigmaa"`, `"sigma"`, "--set sampler.gaussian_query.sigmaa=1"}},
		{"sampler.gaussian_query.sigma=-1", []string{"sampler.gaussian_query.sigma", "> 0", "--set sampler.gaussian_query.sigma=-1"}},
		{"audit.trials=1.5", []string{"audit.trials", "[20, ", "--set audit.trials=1.5"}},
		{"audit.trials=[1", []string{"audit.trials", "not valid YAML"}},
		{"seed.x=1", []string{"seed.x", "seed is the number 7, not a mapping"}},
		{"audit.attacks=[nope]", []string{"audit.attacks", "threshold"}},
		{"=1", []string{"--set", "FIELD=VALUE"}},
		{"audit..trials=1", []string{"--set", "audit..trials"}},
	} {
		js := filepath.Join(t.TempDir(), "r.json")
		out, errs, code := runCLI(t, "run", setScenario, "--quiet", "--no-checkpoint", "--trials", setTrials, "--json", js, "--set", c.set)
		if code != 2 {
			t.Errorf("--set %s: exit %d, want 2", c.set, code)
		}
		if lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n"); len(lines) != 1 {
			t.Errorf("--set %s: %d lines on stderr, want 1: %q", c.set, len(lines), errs)
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("--set %s: stderr %q lacks %q", c.set, errs, w)
			}
		}
		if strings.Contains(errs, "line ") {
			t.Errorf("--set %s: the error blames a line of the file: %q", c.set, errs)
		}
		if _, err := os.Stat(js); err == nil || out != "" {
			t.Errorf("--set %s: output written", c.set)
		}
	}
}

// A setting goes through an alias by copying what it names: the other
// fields that use the anchor keep their values.
func TestRunSetThroughAlias(t *testing.T) {
	// D′'s record is an alias of D's record 2 ({x: [0]}); setting its x to
	// [1] must give the scenario as written, with record 2 unchanged.
	b, err := os.ReadFile(setScenario)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, r := range [][2]string{
		{"{x: [0], y: 0}]", "&r {x: [0], y: 0}]"},
		{"record: {x: [1], y: 0}}", "record: *r}"},
	} {
		if strings.Count(text, r[0]) != 1 {
			t.Fatalf("%q does not occur once in %s", r[0], setScenario)
		}
		text = strings.Replace(text, r[0], r[1], 1)
	}
	p := filepath.Join(t.TempDir(), "alias.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	want := runSetJSON(t, 0, setScenario, "--trials", setTrials)
	got := runSetJSON(t, 0, p, "--trials", setTrials, "--set", "neighbour.record.x=[1]")
	if !bytes.Equal(got, want) {
		t.Error("--set through an alias: report differs from the scenario's (was the anchored record changed too?)")
	}
}

// The shards of a --set run merge into the report of the whole --set run,
// and the HTML report's scenario shows the settings.
func TestRunSetShardMerge(t *testing.T) {
	dir := t.TempDir()
	set := []string{"--set", "sampler.gaussian_query.sigma=1.5", "--trials", setTrials}
	var parts []string
	for _, s := range []string{"0/2", "1/2"} {
		part := filepath.Join(dir, "part"+s[:1])
		args := append([]string{"run", setScenario, "--quiet", "--shard", s, "--out", part}, set...)
		if _, errs, code := runCLI(t, args...); code != 0 {
			t.Fatalf("shard %s: exit %d (%s)", s, code, errs)
		}
		parts = append(parts, part)
	}
	merged := filepath.Join(dir, "merged.json")
	if _, errs, code := runCLI(t, append([]string{"merge", "--json", merged}, parts...)...); code != 0 {
		t.Fatalf("merge: exit %d (%s)", code, errs)
	}
	got, err := os.ReadFile(merged)
	if err != nil {
		t.Fatal(err)
	}
	html := filepath.Join(dir, "r.html")
	want := runSetJSON(t, 0, setScenario, append(set, "--html", html)...)
	if !bytes.Equal(got, want) {
		t.Error("merged shards of a --set run differ from the whole --set run")
	}
	h, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(h, []byte("--set sampler.gaussian_query.sigma=1.5")) {
		t.Error("the HTML report does not show the --set the scenario was audited with")
	}
}
