package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// copyFile copies src to dst with mode perm.
func copyFile(t *testing.T, src, dst string, perm os.FileMode) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// The parts of a program sampler's audit carry the audit's design, so that
// merging them needs nothing else: with the program, the scenario and its
// data file deleted, 'audit merge' run in an empty directory gives the
// single run's report byte for byte (it could not start the program, read
// the data or rebuild the scenario if it tried), and the parts embed no
// data file.
func TestMergeProgramPartsAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	work, empty := t.TempDir(), t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	prog, data := filepath.Join(work, "sampler"), filepath.Join(work, "digits.csv.gz")
	copyFile(t, exe, prog, 0o755)
	copyFile(t, "../../testdata/digits.csv.gz", data, 0o644)
	scen := filepath.Join(work, "program.yaml")
	yml := fmt.Sprintf(`name: program-merge
seed: 5
model: {mlp: {features: 64, hidden: 16, classes: 10, alpha: 1}}
data:
  csv: {path: %q, preset: digits, test_fraction: 0.2, seed: 1}
neighbour: {adjacency: remove-one, index: 0}
sampler:
  program:
    command: [%q]
    env: {AUDIT_TEST_PROGRAM: plain, AUDIT_TEST_AT: "-1"}
    timeout: 10s
audit: {trials: 300, split: {train: 0.5, eval: 0.5}, features: [theta], attacks: [threshold, linear], delta: 1.0e-5, confidence: 0.95}
claim: {gdp: 1}
`, data, prog)
	if err := os.WriteFile(scen, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	single := filepath.Join(work, "single.json")
	if _, errs, code := runCLI(t, "run", scen, "--quiet", "--no-checkpoint", "--json", single); code != 0 {
		t.Fatalf("single run: exit %d %s", code, errs)
	}
	want, _ := os.ReadFile(single)
	var parts []string
	for i := 0; i < 3; i++ {
		p := filepath.Join(work, fmt.Sprintf("part-%d", i))
		if _, errs, code := runCLI(t, "run", scen, "--quiet", "--shard", fmt.Sprintf("%d/3", i), "--out", p); code != 0 {
			t.Fatalf("shard %d: exit %d %s", i, code, errs)
		}
		parts = append(parts, p)
		raw, _ := os.ReadFile(p)
		if !bytes.Contains(raw, []byte(`"design":{`)) || bytes.Contains(raw, []byte(`"files":{`)) {
			t.Fatalf("part %d: carries no design, or carries the data files", i)
		}
	}
	for _, f := range []string{prog, data, scen} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(empty)
	merged := filepath.Join(empty, "merged.json")
	if _, errs, code := runCLI(t, append([]string{"merge", "--json", merged}, parts...)...); code != 0 {
		t.Fatalf("merge with the program, scenario and data deleted: exit %d %s", code, errs)
	}
	got, _ := os.ReadFile(merged)
	if len(want) == 0 || !bytes.Equal(got, want) {
		t.Fatalf("the merged report differs from the single run's:\n%s\nwant\n%s", got, want)
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 1 {
		t.Errorf("the merge left %d entries in its directory, want only merged.json", len(entries))
	}
}
