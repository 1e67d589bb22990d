package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testProgram serves mcmcaudit/1 when this test binary is started with
// AUDIT_TEST_PROGRAM set: the Gaussian mechanism on the sum query (the
// release is q + N(0, 1), q = 0 on D and 1 on D′: exactly 1-GDP), drawn from
// the trial's seed only — unless the mode plants a fault at trial K
// (AUDIT_TEST_AT): crash, crash-if-file (crash while the file
// AUDIT_TEST_FILE exists), hang, stray, wrong-id, wrong-dim, nan,
// nondeterministic (noise from the clock), error (a deliberate error
// answer); float32 rounds every release to float32.
func testProgram(mode string) {
	at, _ := strconv.Atoi(os.Getenv("AUDIT_TEST_AT"))
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(out, `{"mcmcaudit": 1, "dim": 1, "releases": ["sum"]}`)
	out.Flush()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var req struct {
			Trial int    `json:"trial"`
			Side  string `json:"side"`
			Seed  uint64 `json:"seed"`
		}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			os.Exit(5)
		}
		x := rand.New(rand.NewPCG(req.Seed, 1)).NormFloat64()
		if req.Side == "D'" {
			x++
		}
		if mode == "float32" { // a sampler computing in float32 (PyTorch's default)
			x = float64(float32(x))
		}
		id, vals := req.Trial, fmt.Sprintf("[%s]", strconv.FormatFloat(x, 'g', -1, 64))
		if req.Trial == at {
			switch mode {
			case "crash":
				fmt.Fprintln(os.Stderr, "about to fail on purpose")
				os.Exit(3)
			case "crash-if-file":
				if _, err := os.Stat(os.Getenv("AUDIT_TEST_FILE")); err == nil {
					os.Exit(3)
				}
			case "hang":
				time.Sleep(time.Hour)
			case "stray":
				fmt.Fprintln(out, "loss = 0.25")
			case "wrong-id":
				id++
			case "wrong-dim":
				vals = "[1, 2]"
			case "nan":
				vals = "[NaN]"
			case "error":
				fmt.Fprintf(out, "{\"trial\": %d, \"error\": \"the model diverged\"}\n", id)
				out.Flush()
				continue
			}
		}
		if mode == "nondeterministic" {
			vals = fmt.Sprintf("[%d]", time.Now().UnixNano())
		}
		fmt.Fprintf(out, "{\"trial\": %d, \"releases\": [%s]}\n", id, vals)
		out.Flush()
	}
}

// programScenario writes a scenario whose sampler is this test binary in
// the given mode, and returns its path.
func programScenario(t *testing.T, dir, mode string, at, trials int, extra string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	yml := fmt.Sprintf(`name: program-%s
seed: 5
sampler:
  program:
    command: [%q]
    env: {AUDIT_TEST_PROGRAM: %s, AUDIT_TEST_AT: "%d", AUDIT_TEST_FILE: %q}
    timeout: 2s
%s
audit: {trials: %d, split: {train: 0.5, eval: 0.5}, delta: 1.0e-5, confidence: 0.95}
claim: {gdp: 1}
`, mode, exe, mode, at, filepath.Join(dir, "crash-here"), extra, trials)
	path := filepath.Join(dir, mode+".yaml")
	if err := os.WriteFile(path, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// children lists the live processes whose parent is this test process
// (zombies included: a reaped child is gone).
func children(t *testing.T) []string {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	me := strconv.Itoa(os.Getpid())
	var out []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == me {
			out = append(out, e.Name()+" "+s[:strings.LastIndexByte(s, ')')+1]+" "+f[0])
		}
	}
	return out
}

// Every fault of a program sampler is refused with one clear line (exit 2),
// and no process is left behind.
func TestProgramFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	dir := t.TempDir()
	cases := []struct {
		mode string
		want string
	}{
		{"crash", "trial 57"},
		{"hang", "no answer within 2s"},
		{"stray", "loss = 0.25"},
		{"wrong-id", "trial 58"},
		{"wrong-dim", "must have dim = 1 coordinates, got 2"},
		{"nan", "NaN"},
		{"error", "the model diverged"},
		{"nondeterministic", "not deterministic"},
	}
	for _, c := range cases {
		scen := programScenario(t, dir, c.mode, 57, 200, "")
		_, errs, code := runCLI(t, "run", scen, "--quiet", "--workers", "2")
		// The program's own stderr is passed through, each line prefixed
		// "[sampler N] "; the tool's message is one line of its own.
		var ours []string
		for _, l := range strings.Split(strings.TrimSpace(errs), "\n") {
			if !strings.HasPrefix(l, "[sampler ") {
				ours = append(ours, l)
			}
		}
		if code != exitUsage || len(ours) != 1 || !strings.Contains(ours[0], c.want) {
			t.Errorf("%s: exit %d, stderr %q; want one line with %q", c.mode, code, errs, c.want)
		}
		if kids := children(t); len(kids) > 0 {
			t.Errorf("%s: processes left behind: %v", c.mode, kids)
		}
	}
}

// A program sampler's report does not depend on the worker count or the
// shard layout, and a run that stops at a crashing trial resumes from its
// checkpoint into the report of an uninterrupted run.
func TestProgramWorkersShardsResume(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	dir := t.TempDir()
	scen := programScenario(t, dir, "crash-if-file", 700, 1200, "")
	var reports [][]byte
	for _, w := range []string{"1", "2"} {
		out := filepath.Join(dir, "w"+w+".json")
		if _, errs, code := runCLI(t, "run", scen, "--quiet", "--workers", w, "--json", out); code != 0 {
			t.Fatalf("workers %s: exit %d %s", w, code, errs)
		}
		b, _ := os.ReadFile(out)
		reports = append(reports, b)
	}
	if len(reports[0]) == 0 || !bytes.Equal(reports[0], reports[1]) {
		t.Fatal("reports with 1 and 2 workers differ")
	}
	var parts []string
	for i := 0; i < 3; i++ {
		p := filepath.Join(dir, fmt.Sprintf("part-%d", i))
		if _, errs, code := runCLI(t, "run", scen, "--quiet", "--shard", fmt.Sprintf("%d/3", i), "--out", p); code != 0 {
			t.Fatalf("shard %d: exit %d %s", i, code, errs)
		}
		parts = append(parts, p)
	}
	merged := filepath.Join(dir, "merged.json")
	if _, errs, code := runCLI(t, append([]string{"merge", "--json", merged}, parts...)...); code != 0 {
		t.Fatalf("merge: exit %d %s", code, errs)
	}
	if b, _ := os.ReadFile(merged); !bytes.Equal(b, reports[0]) {
		t.Fatal("3 shards merged differ from a single run")
	}
	// The program crashes at trial 700 while the file exists: the run
	// stops (exit 2) with two blocks of 256 trials saved; once the program
	// is fixed, --resume finishes with the uninterrupted run's report.
	os.WriteFile(filepath.Join(dir, "crash-here"), nil, 0o644)
	ck := filepath.Join(dir, "ck")
	if _, errs, code := runCLI(t, "run", scen, "--quiet", "--workers", "1", "--checkpoint", ck); code != exitUsage || !strings.Contains(errs, "trial 700") {
		t.Fatalf("crashing run: exit %d %s", code, errs)
	}
	blocks, _ := filepath.Glob(filepath.Join(ck, "trials-*.part"))
	if len(blocks) != 2 {
		t.Fatalf("%d blocks saved, want 2", len(blocks))
	}
	os.Remove(filepath.Join(dir, "crash-here"))
	resumed := filepath.Join(dir, "resumed.json")
	if _, errs, code := runCLI(t, "run", scen, "--quiet", "--checkpoint", ck, "--resume", "--json", resumed); code != 0 {
		t.Fatalf("resume: exit %d %s", code, errs)
	}
	if b, _ := os.ReadFile(resumed); !bytes.Equal(b, reports[0]) {
		t.Fatal("the resumed report differs from an uninterrupted run's")
	}
	if kids := children(t); len(kids) > 0 {
		t.Errorf("processes left behind: %v", kids)
	}
	// The exact law is 1-GDP: the claim stands, and ε_lb stays below 4.3772.
	var doc struct {
		Report struct {
			Verdict string `json:"verdict"`
			Epsilon struct {
				Epsilon float64 `json:"epsilon"`
			} `json:"epsilon"`
		} `json:"report"`
	}
	json.Unmarshal(reports[0], &doc)
	if doc.Report.Verdict != "not refuted" || !(doc.Report.Epsilon.Epsilon > 0 && doc.Report.Epsilon.Epsilon < 4.3772) || math.IsNaN(doc.Report.Epsilon.Epsilon) {
		t.Errorf("verdict %q, ε_lb %g", doc.Report.Verdict, doc.Report.Epsilon.Epsilon)
	}
}

// A program's releases need not have the model's dimension: with an MLP
// model of 1210 parameters (there to craft canaries) and a program that
// releases one number, the linear attack (at most 1000 features) is judged
// on the one feature the program releases, not refused on the model's θ
// (a release wider than an attack can take is refused by the engine once
// the handshake has declared it: audit's TestWorkAndDimensionLimits).
func TestProgramFeaturesFromHandshake(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	digits, err := filepath.Abs("../../testdata/digits.csv.gz")
	if err != nil {
		t.Fatal(err)
	}
	scen := func(name, attack string) string {
		yml := fmt.Sprintf(`name: %s
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
audit: {trials: 200, split: {train: 0.5, eval: 0.5}, features: [theta], attacks: [%s], delta: 1.0e-5, confidence: 0.95}
`, name, digits, exe, attack)
		path := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(path, []byte(yml), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	out, errs, code := runCLI(t, "run", scen("mlp-linear", "linear"), "--quiet")
	if code != 0 {
		t.Fatalf("program releasing 1 number, MLP model, linear attack: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "linear") {
		t.Errorf("report does not name the linear attack:\n%s", out)
	}
}
