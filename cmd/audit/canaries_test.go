package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// canaryScenario is a canary design pooled over 4 runs, with a claim.
func canaryScenario(t *testing.T, dir string, claim string) string {
	t.Helper()
	scen := filepath.Join(dir, "canaries.yaml")
	yml := `name: canaries-cli
seed: 8
model: {logistic: {dim: 100, alpha: 1}}
data: {synthetic_logistic: {n: 10, theta_star: [` + strings.Repeat("0.5, ", 99) + `0.5], seed: 3}}
sampler: {sgld: {step: {eta: 0.01}, batch: 5, scheme: without-replacement, epochs: 10}}
init: {from_prior: true}
release: {mode: epochs, every: 5}
audit:
  design: canaries
  canaries: {count: 200, kind: random, guess_grid: [20, 40], runs: 4}
  delta: 1.0e-5
  confidence: 0.95
claim: ` + claim + "\n"
	if err := os.WriteFile(scen, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	return scen
}

// Workers 1 and 2, three shards merged, and a checkpoint resumed after
// losing a run give the same JSON, CSV and HTML, byte for byte; a claim
// the bound refutes exits 1.
func TestCanaryDesignCLI(t *testing.T) {
	dir := t.TempDir()
	scen := canaryScenario(t, dir, "{epsilon: 0.05, delta: 1.0e-5}")
	outputs := func(tag string, extra ...string) (string, int) {
		t.Helper()
		j := filepath.Join(dir, tag+".json")
		args := append([]string{"run", scen, "--quiet", "--json", j, "--csv", filepath.Join(dir, tag+".csv")}, extra...)
		_, errs, code := runCLI(t, args...)
		if code != exitOK && code != exitViolation {
			t.Fatalf("%s: exit %d %s", tag, code, errs)
		}
		return j, code
	}
	readReport := func(path string) []byte {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// The document's versions may differ between runs of one binary;
		// the report is what must agree.
		i := bytes.Index(b, []byte(`"report"`))
		if i < 0 {
			t.Fatalf("%s: no report", path)
		}
		return b[i:]
	}
	w1, code := outputs("w1", "--workers", "1", "--no-checkpoint")
	if code != exitViolation {
		t.Errorf("a claim of ε = 0.05 was not refuted (exit %d)", code)
	}
	want := readReport(w1)
	if !bytes.Contains(want, []byte(`"one_run"`)) || !bytes.Contains(want, []byte(`"one_run_fdp"`)) || !bytes.Contains(want, []byte(`"guess_rule"`)) {
		t.Fatalf("no one-run bounds or canary design in the report:\n%.500s", want)
	}
	wantCSV, _ := os.ReadFile(filepath.Join(dir, "w1.csv"))
	w2, _ := outputs("w2", "--workers", "2", "--no-checkpoint")
	gotCSV, _ := os.ReadFile(filepath.Join(dir, "w2.csv"))
	if !bytes.Equal(readReport(w2), want) || !bytes.Equal(gotCSV, wantCSV) {
		t.Error("2 workers: the report differs from 1 worker's")
	}

	var parts []string
	for i := range 3 {
		p := filepath.Join(dir, fmt.Sprintf("part-%d", i))
		if _, errs, code := runCLI(t, "run", scen, "--quiet", "--shard", fmt.Sprintf("%d/3", i), "--out", p); code != exitOK {
			t.Fatalf("shard %d: exit %d %s", i, code, errs)
		}
		parts = append(parts, p)
	}
	merged := filepath.Join(dir, "merged.json")
	if _, errs, code := runCLI(t, append([]string{"merge", "--json", merged}, parts...)...); code != exitViolation {
		t.Fatalf("merge: exit %d %s", code, errs)
	}
	if got := readReport(merged); !bytes.Equal(got, want) {
		t.Errorf("the merged report differs from the single run's:\n%.400s\nwant\n%.400s", got, want)
	}

	ck := filepath.Join(dir, "ck")
	outputs("ck1", "--checkpoint", ck)
	blocks, _ := filepath.Glob(filepath.Join(ck, "trials-*.part"))
	if len(blocks) != 4 {
		t.Fatalf("%d checkpoint blocks, want one per run (4)", len(blocks))
	}
	if err := os.Remove(blocks[2]); err != nil {
		t.Fatal(err)
	}
	resumed, _ := outputs("ck2", "--checkpoint", ck, "--resume")
	if !bytes.Equal(readReport(resumed), want) {
		t.Error("the resumed run's report differs from the uninterrupted one's")
	}
}

// The Python example in the canary design runs as documented: the tool
// scoring the program's releases with the model, and the program scoring
// the canaries itself ("scores": true), give the same one-run results; an
// old-style program (no canaries, no scores) keeps running in the
// multi-run design (TestPython* and the program tests).
func TestCanaryPythonExample(t *testing.T) {
	requirePython(t)
	var results [2]string
	for i, name := range []string{"canaries.yaml", "canaries-scores.yaml"} {
		out := filepath.Join(t.TempDir(), "r.json")
		_, errs, code := runCLI(t, "run", filepath.Join("..", "..", "examples", "python", name), "--quiet", "--no-checkpoint", "--json", out)
		if code != exitOK {
			t.Fatalf("%s: exit %d %s", name, code, errs)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		// From the release points on: the bounds, headline, verdict and
		// the canary design.
		i0 := bytes.Index(b, []byte(`"points"`))
		if i0 < 0 || !bytes.Contains(b[i0:], []byte(`"one_run"`)) {
			t.Fatalf("%s: no one-run bounds", name)
		}
		results[i] = string(b[i0:])
		if !strings.Contains(results[i], `"canaries": 100`) || !strings.Contains(results[i], `"iteration 300"`) {
			t.Errorf("%s: %.300s", name, results[i])
		}
	}
	if results[0] != results[1] {
		t.Errorf("scored by the tool and by the program, the one-run results differ:\n%.600s\n%.600s", results[0], results[1])
	}
}
