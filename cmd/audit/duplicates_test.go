package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
)

// writeRowsCSV writes rows as a plain CSV file (no header) and returns
// its path.
func writeRowsCSV(t *testing.T, path string, rows [][]float64) string {
	t.Helper()
	var b strings.Builder
	for _, r := range rows {
		for j, v := range r {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// duplicatesOf decodes the report's duplicates object (nil when absent)
// and its notes.
func duplicatesOf(t *testing.T, path string) (map[string]any, []string) {
	t.Helper()
	r := reportOf(t, path)
	var notes []string
	for _, n := range r["notes"].([]any) {
		notes = append(notes, n.(string))
	}
	d, _ := r["duplicates"].(map[string]any)
	return d, notes
}

// Rows that repeat other rows are refused with their counts (exit 2, one
// line); --allow-duplicate-rows accepts them with a warning, and the JSON
// report gives the counts and a note. Here D's row 5 is copied over rows
// 10 and 11 (2 repeats within D) and D's row 20 over D′'s rows 0, 1 and 2
// (3 rows of D′ repeat a row of D, 2 of which also repeat an earlier row
// of D′). Independent rows give a report without a duplicates object.
func TestAnalyzeDuplicateRows(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(4, 4))
	draw := func(n int, shift float64) [][]float64 {
		rows := make([][]float64, n)
		for i := range rows {
			rows[i] = []float64{rng.NormFloat64() + shift, rng.NormFloat64()}
		}
		return rows
	}
	d, dp := draw(150, 0), draw(150, 1)
	cleanD := writeRowsCSV(t, filepath.Join(dir, "clean-D.csv"), d)
	cleanDP := writeRowsCSV(t, filepath.Join(dir, "clean-DP.csv"), dp)
	d[10], d[11] = d[5], d[5]
	dp[0], dp[1], dp[2] = d[20], d[20], d[20]
	dupD := writeRowsCSV(t, filepath.Join(dir, "D.csv"), d)
	dupDP := writeRowsCSV(t, filepath.Join(dir, "DP.csv"), dp)

	const counts = "samples: 2 rows of D and 2 of D′ repeat an earlier row of their file, and 3 rows of D′ repeat a row of D (across the files)"
	_, errs, code := runCLI(t, "analyze", dupD, dupDP, "--points", "2")
	if code != exitUsage || !strings.Contains(errs, counts) || !strings.Contains(errs, "--allow-duplicate-rows") || strings.Count(errs, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	out := filepath.Join(dir, "dup.json")
	_, errs, code = runCLI(t, "analyze", dupD, dupDP, "--points", "2", "--allow-duplicate-rows", "--json", out)
	if code != 0 || !strings.Contains(errs, "warning: "+counts) {
		t.Fatalf("with --allow-duplicate-rows: exit %d, stderr %q", code, errs)
	}
	dup, notes := duplicatesOf(t, out)
	want := map[string]any{"within_d": 2.0, "within_dprime": 2.0, "across": 3.0}
	if fmt.Sprint(dup) != fmt.Sprint(want) {
		t.Errorf("duplicates %v, want %v", dup, want)
	}
	note := "Repeated runs: 2 runs on D and 2 on D′ repeat an earlier run on the same dataset, and 3 runs on D′ repeat a run on D."
	found := 0
	for _, n := range notes {
		if strings.HasPrefix(n, "Repeated runs:") {
			found++
			if !strings.HasPrefix(n, note) {
				t.Errorf("note %q, want it to start %q", n, note)
			}
		}
	}
	if found != 1 {
		t.Errorf("%d notes on repeated runs in %q", found, notes)
	}
	clean := filepath.Join(dir, "clean.json")
	if _, errs, code := runCLI(t, "analyze", cleanD, cleanDP, "--points", "2", "--json", clean); code != 0 || errs != "" {
		t.Fatalf("independent rows: exit %d, stderr %q", code, errs)
	}
	raw, _ := os.ReadFile(clean)
	if strings.Contains(string(raw), "duplicates") || strings.Contains(string(raw), "Repeated runs") {
		t.Errorf("independent rows: the report mentions repeats")
	}
	// Only across the files: the audit itself sees no repeat on either
	// side, the report still counts the rows copied across.
	d2, dp2 := draw(100, 0), draw(100, 1)
	dp2[7] = d2[3]
	out2 := filepath.Join(dir, "across.json")
	_, errs, code = runCLI(t, "analyze", writeRowsCSV(t, filepath.Join(dir, "a-D.csv"), d2), writeRowsCSV(t, filepath.Join(dir, "a-DP.csv"), dp2),
		"--allow-duplicate-rows", "--json", out2)
	if code != 0 {
		t.Fatalf("across only: exit %d %s", code, errs)
	}
	if dup, _ := duplicatesOf(t, out2); fmt.Sprint(dup) != fmt.Sprint(map[string]any{"within_d": 0.0, "within_dprime": 0.0, "across": 1.0}) {
		t.Errorf("across only: duplicates %v", dup)
	}
}

// ignoresSeed is a Python sampler, served by examples/python's helper,
// that seeds its generator with a fixed default instead of the request's
// seed (as some published samplers do): every trial on a side releases
// the same value.
const ignoresSeed = `import os, random, sys
sys.path.insert(0, %q)
import mcmcaudit_protocol as mp


def run(seed, side, data):
    rng = random.Random(1234)  # the request's seed is ignored
    return [[rng.gauss(0.0, 1.0) + (1.0 if side == mp.SIDE_DPRIME else 0.0)]]


mp.serve(run, dim=1, releases=["final"])
`

// A program that ignores its seed passes the determinism check, but its
// trials on each side repeat one another: "audit run" refuses with the
// counts (exit 2), and so does "audit merge" on the shards of such a run,
// which each hold only some of the repeats; with
// sampler.program.allow_repeated_releases the run gives a report that
// counts them.
func TestProgramIgnoringSeedRefused(t *testing.T) {
	testutil.Slow(t)
	requirePython(t)
	dir := t.TempDir()
	examples, err := filepath.Abs("../../examples/python")
	if err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(dir, "fixed_seed.py")
	if err := os.WriteFile(prog, []byte(fmt.Sprintf(ignoresSeed, examples)), 0o644); err != nil {
		t.Fatal(err)
	}
	scen := func(name, extra string) string {
		path := filepath.Join(dir, name+".yaml")
		yml := fmt.Sprintf(`name: %s
seed: 3
sampler:
  program:
    command: [/usr/bin/python3, %q]
%s
audit: {trials: 40, assignment: balanced, split: {train: 0.5, eval: 0.5}, delta: 1.0e-5, confidence: 0.95}
`, name, prog, extra)
		if err := os.WriteFile(path, []byte(yml), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	const counts = "19 runs on D and 19 on D′ repeat an earlier run on the same dataset"
	refused := scen("refused", "")
	_, errs, code := runCLI(t, "run", refused, "--quiet", "--workers", "2")
	if code != exitUsage || !strings.Contains(errs, counts) || !strings.Contains(errs, "ignores its seed") || strings.Count(errs, "\n") != 1 {
		t.Fatalf("run: exit %d, stderr %q", code, errs)
	}
	var parts []string
	for i := 0; i < 2; i++ {
		p := filepath.Join(dir, fmt.Sprintf("part%d", i))
		if _, errs, code := runCLI(t, "run", refused, "--quiet", "--workers", "2", "--shard", fmt.Sprintf("%d/2", i), "--out", p); code != 0 {
			t.Fatalf("shard %d: exit %d %s", i, code, errs)
		}
		parts = append(parts, p)
	}
	_, errs, code = runCLI(t, append([]string{"merge"}, parts...)...)
	if code != exitUsage || !strings.Contains(errs, counts) {
		t.Fatalf("merge: exit %d, stderr %q", code, errs)
	}
	out := filepath.Join(dir, "allowed.json")
	if _, errs, code := runCLI(t, "run", scen("allowed", "    allow_repeated_releases: true"), "--quiet", "--workers", "2", "--json", out); code != 0 {
		t.Fatalf("allowed: exit %d %s", code, errs)
	}
	raw, _ := os.ReadFile(out)
	var doc struct {
		Report struct {
			Duplicates map[string]int `json:"duplicates"`
			Notes      []string       `json:"notes"`
		} `json:"report"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if d := doc.Report.Duplicates; d["within_d"] != 19 || d["within_dprime"] != 19 || d["across"] != 0 {
		t.Errorf("allowed: duplicates %v", d)
	}
	if n := doc.Report.Notes; len(n) == 0 || !strings.Contains(n[len(n)-1], counts) {
		t.Errorf("allowed: notes %q", n)
	}
}
