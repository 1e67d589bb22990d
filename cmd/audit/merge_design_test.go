package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/audit"
)

// mergeTrials is --trials for the merge tests: a few dozen, the fewest
// every multi-run testdata scenario splits into selection and evaluation
// runs without complaint.
const mergeTrials = "60"

// scenarioCopy returns the path of the scenario name of testdata/ to run:
// the file itself, or for a canary design (one run, which cannot be split
// into two shards) a copy in dir that pools two runs, next to links to the
// data files of testdata/.
func scenarioCopy(t *testing.T, name, dir string) (path string, canaries bool) {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("../../testdata", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte("design: canaries")) {
		return src, false
	}
	if bytes.Count(raw, []byte("canaries: {")) != 1 {
		t.Fatalf("%s: expected one flow mapping 'canaries: {…}' to add runs: 2 to", name)
	}
	raw = bytes.Replace(raw, []byte("canaries: {"), []byte("canaries: {runs: 2, "), 1)
	entries, err := os.ReadDir(filepath.Dir(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() && !strings.HasSuffix(e.Name(), ".yaml") {
			if err := os.Symlink(filepath.Join(filepath.Dir(src), e.Name()), filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	path = filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, true
}

// mergeReport is what a run or a merge printed and wrote.
type mergeReport struct {
	code                 int
	stdout, json, csv    string
	stderrForDiagnostics string
}

// checkMergeMatchesRun runs the testdata scenario name once, then as shards
// 0/2 and 1/2 written to an empty directory, and merges them there (cwd
// there, nothing else reachable by a relative path): the merged report —
// exit code, text, JSON and CSV — is the single run's, byte for byte.
func checkMergeMatchesRun(t *testing.T, name string) {
	work, empty := t.TempDir(), t.TempDir()
	scen, canaries := scenarioCopy(t, name, work)
	flags := []string{"--quiet", "--workers", "1"}
	if !canaries {
		flags = append(flags, "--trials", mergeTrials)
	}
	single := func(args ...string) mergeReport {
		t.Helper()
		js, csv := filepath.Join(work, "single.json"), filepath.Join(work, "single.csv")
		out, errs, code := runCLI(t, append(append([]string{"run", scen, "--no-checkpoint", "--json", js, "--csv", csv}, flags...), args...)...)
		return mergeReport{code: code, stdout: out, json: readString(t, js), csv: readString(t, csv), stderrForDiagnostics: errs}
	}
	want := single()
	if want.code != exitOK && want.code != exitViolation {
		t.Fatalf("%s: single run: exit %d %s", name, want.code, want.stderrForDiagnostics)
	}
	var parts []string
	for _, s := range []string{"0/2", "1/2"} {
		p := filepath.Join(empty, "part-"+s[:1])
		if _, errs, code := runCLI(t, append([]string{"run", scen, "--shard", s, "--out", p}, flags...)...); code != exitOK {
			t.Fatalf("%s: shard %s: exit %d %s", name, s, code, errs)
		}
		parts = append(parts, filepath.Base(p))
	}
	t.Chdir(empty)
	out, errs, code := runCLI(t, append([]string{"merge", "--json", "merged.json", "--csv", "merged.csv"}, parts...)...)
	got := mergeReport{code: code, stdout: out, json: readString(t, "merged.json"), csv: readString(t, "merged.csv"), stderrForDiagnostics: errs}
	switch {
	case got.code != want.code:
		t.Errorf("%s: merge exits %d (%s), the single run %d", name, got.code, got.stderrForDiagnostics, want.code)
	case got.json == "" || got.json != want.json:
		t.Errorf("%s: the merged JSON report differs from the single run's", name)
	case got.csv == "" || got.csv != want.csv:
		t.Errorf("%s: the merged CSV differs from the single run's:\n%s\n---\n%s", name, got.csv, want.csv)
	case got.stdout == "" || got.stdout != want.stdout:
		t.Errorf("%s: the merged text report differs from the single run's:\n%s\n---\n%s", name, got.stdout, want.stdout)
	}
}

// readString returns a file's contents, empty when it cannot be read.
func readString(t *testing.T, path string) string {
	t.Helper()
	b, _ := os.ReadFile(path)
	return string(b)
}

// Representative testdata scenarios — theorem claims whose profiles are
// rebuilt from data (the PLD and RDP accountants of DP-SGLD; Bertazzi,
// Balle and the convergence transfer on ULA), and a canary design — merge
// from an empty directory into the single run's report. The loop over all
// of them is TestMergeEveryScenario (slow).
func TestMergeDesignScenarios(t *testing.T) {
	for _, name := range []string{"dp-sgld-correct", "ula-gauss-ou", "sgld-canaries"} {
		t.Run(name, func(t *testing.T) { checkMergeMatchesRun(t, name) })
	}
}

// A trials file written before designs were carried (its spec holds the
// scenario and its data files, no design) is refused with one line saying
// it must be run again, exit 2.
func TestMergeRefusesPartWithoutDesign(t *testing.T) {
	dir := t.TempDir()
	scen, err := filepath.Abs("../../testdata/dp-sgld-correct.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, s := range []string{"0/2", "1/2"} {
		p := filepath.Join(dir, "part-"+s[:1])
		if _, errs, code := runCLI(t, "run", scen, "--shard", s, "--out", p, "--quiet", "--trials", mergeTrials); code != exitOK {
			t.Fatalf("shard %s: exit %d %s", s, code, errs)
		}
		parts = append(parts, p)
	}
	tr, spec, err := audit.ReadPartFile(parts[0])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(spec, &m); err != nil || m["design"] == nil {
		t.Fatalf("the part carries no design: %v", err)
	}
	delete(m, "design")
	m["files"] = json.RawMessage(`{}`)
	old, _ := json.Marshal(m)
	f, err := os.Create(parts[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := audit.WritePart(f, tr, old); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out, errs, code := runCLI(t, "merge", "--json", filepath.Join(dir, "merged.json"), parts[0], parts[1])
	if code != exitUsage || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "predates audit designs") ||
		!strings.Contains(errs, parts[0]) || !strings.Contains(errs, "--shard") {
		t.Errorf("a part without a design: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "merged.json")); err == nil {
		t.Error("a report was written")
	}
}
