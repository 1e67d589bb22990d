package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Hostile scenario inputs, found validated only after the work they
// should have prevented: a window or a file sized before it was checked,
// a FIFO opened and waited on, zeros and keys taken for something else
// than what was written.

// input4Canaries is a canary design for a program that loads its own
// data: random canaries, nothing to read but the scenario. PROGRAM and
// CANARIES are replaced by each case.
const input4Canaries = `name: input4
seed: 3
sampler:
  program:
    command: PROGRAM
    determinism_checks: 0
audit:
  design: canaries
  canaries: CANARIES
  delta: 1.0e-5
  confidence: 0.95
`

const (
	input4Exit1    = `[sh, -c, "exit 1"]`
	input4Random   = `{count: 1000, kind: random, features: 2, classes: 2, range: [0, 1], guesses: 10}`
	input4FromPool = `{count: 5, kind: mislabel, pool: pool.csv, guesses: 2}`
)

// input4Scenario fills input4Canaries.
func input4Scenario(program, canaries string) string {
	return strings.NewReplacer("PROGRAM", program, "CANARIES", canaries).Replace(input4Canaries)
}

// input4Estimator is testdata/ula-estimator.yaml (a 100-iteration chain)
// with its release section replaced.
func input4Estimator(t *testing.T, release string) string {
	t.Helper()
	b, err := os.ReadFile("../../testdata/ula-estimator.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i, j := strings.Index(s, "release:\n"), strings.Index(s, "audit:\n")
	if i < 0 || j < i {
		t.Fatal("ula-estimator.yaml has no release section before audit")
	}
	return s[:i] + release + "\n" + s[j:]
}

// A program that answers a request for 1000 scores with 12·10⁶ of them,
// on one line of 48 MB (the was 6·10⁷ scores, 240 MB: 2 GB and
// 10 s of CPU to refuse).
const input4FloodProgram = `[sh, -c, "printf '{\"mcmcaudit\": 1, \"dim\": 2, \"releases\": [\"final\"], \"scores\": true}\\n'; read r; printf '{\"trial\": 0, \"scores\": [['; yes 0.5, | head -n 12000000 | tr -d '\\n'; printf '0.5]]}\\n'; read r"]`

// Inputs refused by their size, each run as a process that must exit 2
// with one line naming the field and the limit, within 200 MB of resident
// memory (the child's own VmHWM), writing nothing: an estimator window of
// 10⁸ iterations on a 100-iteration chain (800 MB before the window was
// checked), a 120 MB canary pool and one of 150,000 records (the pool was
// read whole, up to 256 MB, and parsed, up to 10⁶ records), and a scores
// answer of 48 MB to a request for 1000 scores (read, copied and parsed
// whole, under a line limit of 256 MiB).
func TestInputRefusalsWithinMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	rows := "x1,y\n" + strings.Repeat("0.5,1\n0.25,0\n", 75_000)
	for _, c := range []struct {
		name, scenario string
		data           func(dir string)
		want           string
	}{
		{"estimator window", input4Estimator(t, "release:\n  mode: estimator\n  estimator: {f: [1], from: 1, to: 100000000, laplace: 0.5}"), nil,
			"release.estimator.from: the window may hold at most 100000 iterations, got 100000000"},
		{"pool of 120 MB", input4Scenario(input4Exit1, input4FromPool), func(dir string) {
			f, err := os.Create(filepath.Join(dir, "pool.csv"))
			if err != nil {
				t.Fatal(err)
			}
			f.Truncate(120 << 20) // sparse: nothing written
			f.Close()
		}, "audit.canaries.pool: pool.csv has 125829120 bytes, more than the limit of 33554432"},
		{"pool of 150,000 records", input4Scenario(input4Exit1, input4FromPool), func(dir string) {
			os.WriteFile(filepath.Join(dir, "pool.csv"), []byte(rows), 0o644)
		}, "audit.canaries.pool: pool: line 100002: more than max_records = 100000 rows"},
		{"48 MB scores answer", input4Scenario(input4FloodProgram, input4Random), nil,
			"wrote a stdout line longer than 1077642 bytes, the most an answer of 1 release point(s) × 1000 scores may take"},
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "scen.yaml"), []byte(c.scenario), 0o644)
		if c.data != nil {
			c.data(dir)
		}
		before := snapshot(t, dir)
		r := runChild(t, dir, "run", "scen.yaml", "--quiet", "--no-checkpoint", "--json", "r.json")
		if r.code != exitUsage || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q\n  want exit 2 and one line containing %q", c.name, r.code, r.stdout, r.stderr, c.want)
		}
		if !raceEnabled && r.maxRSSBytes > oversizedRSS {
			t.Errorf("%s: %d MB resident to refuse it; the limit is %d MB", c.name, r.maxRSSBytes>>20, oversizedRSS>>20)
		}
		if after := snapshot(t, dir); after != before {
			t.Errorf("%s: the directory changed:\n%s", c.name, after)
		}
		t.Logf("%-24s exit %d, %v CPU, %d MB RSS", c.name, r.code, r.cpu.Round(time.Millisecond), r.maxRSSBytes>>20)
	}
}

// A FIFO named as any file the tool reads is refused at once, as data.csv
// already was: the canary pool, analyze's samples files (either side) and
// its --scenario. Opening a FIFO waits for a writer, forever.
func TestInputFIFOsRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pool.csv"), 0o644); err != nil {
		t.Fatal(err)
	}
	scen := filepath.Join(dir, "scen.yaml")
	os.WriteFile(scen, []byte(input4Scenario(input4Exit1, input4FromPool)), 0o644)
	good := filepath.Join(dir, "good.csv")
	var b strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "%d,%d\n", i, 2*i)
	}
	os.WriteFile(good, []byte(b.String()), 0o644)
	for _, c := range []hostileCase{
		{args: []string{"run", scen, "--quiet", "--no-checkpoint"}, want: "audit.canaries.pool: " + filepath.Join(dir, "pool.csv") + " is not a regular file (a FIFO)"},
		{args: []string{"analyze", fifo, good}, want: "cannot read " + fifo + ": it is a FIFO, not a regular file"},
		{args: []string{"analyze", good, fifo}, want: "cannot read " + fifo + ": it is a FIFO, not a regular file"},
		{args: []string{"analyze", good, good, "--scenario", fifo}, want: "--scenario: config: cannot read " + fifo + ": it is a FIFO, not a regular file"},
	} {
		c.exit, c.line = exitUsage, strings.Join(c.args, " ")
		stdout, stderr, code := runCLITimeout(t, 20*time.Second, c.args...)
		checkRefused(t, c, stdout, stderr, code)
	}
}

// Values the decoder cannot tell from an omitted key (0, an empty list)
// and keys the scenario's other choices ignore ran with something else
// than what was written, exit 0: "guesses: 0" ran with count/10 guesses
// (with the default's config hash), "runs: 0" with 1, "guess_grid: []"
// with the default guesses; an estimator beside release.mode final, and
// audit.split or audit.attacks in the canary design, did nothing; and
// sampler.program.retries: -1 was taken below its range's minimum. Each is
// refused with exit 2 and one line naming the key and what is allowed.
func TestInputZerosAndIdleKeys(t *testing.T) {
	dir := t.TempDir()
	canaries := func(c string) string { return input4Scenario(input4Exit1, c) }
	cases := []struct{ name, scenario, want string }{
		{"guesses 0", canaries(`{count: 1000, kind: random, features: 2, classes: 2, range: [0, 1], guesses: 0}`),
			"audit.canaries.guesses: must be in [1, count], got 0"},
		{"runs 0", canaries(`{count: 1000, kind: random, features: 2, classes: 2, range: [0, 1], runs: 0}`),
			"audit.canaries.runs: must be in [1, count], got 0"},
		{"guess_grid []", canaries(`{count: 1000, kind: random, features: 2, classes: 2, range: [0, 1], guess_grid: []}`),
			"audit.canaries.guess_grid: must hold at least one value (at most 64 values, each in [1, count]), got an empty list"},
		{"estimator with mode final", input4Estimator(t, "release:\n  mode: final\n  estimator: {f: [1], from: 51, to: 100, laplace: 0.5}"),
			"release.estimator: only with release.mode estimator: it does nothing with mode final"},
		{"split in the canary design", strings.Replace(canaries(input4Random), "  delta:", "  split: {train: 0.5, eval: 0.5}\n  delta:", 1),
			"audit.split: not used in the canary design"},
		{"attacks in the canary design", strings.Replace(canaries(input4Random), "  delta:", "  attacks: [linear]\n  delta:", 1),
			"audit.attacks: not used in the canary design"},
		{"retries -1", strings.Replace(canaries(input4Random), "determinism_checks: 0", "determinism_checks: 0\n    retries: -1", 1),
			"sampler.program.retries: must be in [0, 100] (0: a single attempt; omit it for the default 2), got -1"},
	}
	for _, c := range cases {
		scen := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".yaml")
		os.WriteFile(scen, []byte(c.scenario), 0o644)
		stdout, stderr, code := runCLI(t, "run", scen, "--quiet", "--no-checkpoint")
		checkRefused(t, hostileCase{exit: exitUsage, want: c.want, line: c.name}, stdout, stderr, code)
	}
}
