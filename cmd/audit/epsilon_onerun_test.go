package main

import (
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"testing"
)

// The reference case of docs/derivations/one-run.md (Steinke, Nasr &
// Jagielski 2023, arXiv 2305.08846, Thm 3.1 / App. D, and Mahloujifar,
// Melis & Chaudhuri 2024, arXiv 2410.22235, as jax_privacy's
// _epsilon_one_run and _epsilon_one_run_fdp compute them on m = 1000,
// r = 100, v = 95, α = 0.05; the full peer table is in
// stats/onerun_test.go): ε_lb = 2.165175787875041 at δ = 1e-5,
// f-DP ε = 3.3233004900323637 with μ = 0.7868118148693677.
func TestEpsilonOneRun(t *testing.T) {
	args := []string{"epsilon", "--one-run", "--canaries", "1000", "--guesses", "100", "--correct", "95",
		"--delta", "1e-5", "--confidence", "0.95"}
	out, errs, code := runCLI(t, args...)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if !strings.HasPrefix(out, "ε_lb = 2.1652 ") || !strings.Contains(out, "μ_lb = 0.7868, ε(δ) = 3.3233 if the trade-off curve is Gaussian") {
		t.Errorf("output:\n%s", out)
	}
	golden(t, "epsilon-onerun-1000-100-95.stdout", out)

	jout, errs, code := runCLI(t, append(args, "--json", "-")...)
	if code != 0 || errs != "" {
		t.Fatalf("--json -: exit %d, stderr %q", code, errs)
	}
	type est struct {
		Kind       string  `json:"kind"`
		Estimator  string  `json:"estimator"`
		Epsilon    float64 `json:"epsilon"`
		Delta      float64 `json:"delta"`
		Confidence float64 `json:"confidence"`
		Counts     struct {
			Canaries, Guesses, Correct int
		} `json:"counts"`
		Mu         float64 `json:"mu"`
		Assumption string  `json:"assumption"`
	}
	var r struct {
		OneRun  est     `json:"one_run"`
		FDP     est     `json:"fdp"`
		Ceiling float64 `json:"ceiling"`
	}
	var loose map[string]any
	if err := json.Unmarshal([]byte(jout), &loose); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, jout)
	}
	if err := json.Unmarshal([]byte(jout), &r); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"one_run.epsilon", r.OneRun.Epsilon, 2.165175787875041},
		{"fdp.epsilon", r.FDP.Epsilon, 3.3233004900323637},
		{"fdp.mu", r.FDP.Mu, 0.7868118148693677},
		{"ceiling", r.Ceiling, 3.465376229385333}, // jax_privacy at v = r = 100
	} {
		if math.Abs(c.got-c.want) > 1e-6 {
			t.Errorf("%s = %.12g, jax_privacy %.12g", c.name, c.got, c.want)
		}
	}
	for _, e := range []est{r.OneRun, r.FDP} {
		if e.Kind != "lower-bound" || e.Estimator == "" || e.Delta != 1e-5 || e.Confidence != 0.95 ||
			e.Counts.Canaries != 1000 || e.Counts.Guesses != 100 || e.Counts.Correct != 95 {
			t.Errorf("estimate lacks its provenance: %+v", e)
		}
	}
	if !strings.Contains(r.FDP.Assumption, "Gaussian") || r.OneRun.Assumption != "" {
		t.Errorf("assumptions: one_run %q, fdp %q", r.OneRun.Assumption, r.FDP.Assumption)
	}
}

// Bad input and mixed modes: one line naming the flag, exit 2, no stdout.
func TestEpsilonOneRunBadInput(t *testing.T) {
	base := []string{"epsilon", "--one-run", "--canaries", "10", "--guesses", "5", "--correct", "4"}
	with := func(extra ...string) []string { return append(append([]string{}, base...), extra...) }
	cases := []struct {
		args []string
		want string
	}{
		{with("--fp", "1"), `--fp: not allowed with --one-run`},
		{with("--positives", "10"), `--positives: not allowed with --one-run`},
		{[]string{"epsilon", "--canaries", "10", "--fp", "1", "--negatives", "10", "--fn", "1", "--positives", "10"}, `--canaries: only with --one-run`},
		{[]string{"epsilon", "--correct", "3"}, `--correct: only with --one-run`},
		{[]string{"epsilon", "--one-run", "--canaries", "10", "--guesses", "5"}, `--correct is required with --one-run`},
		{with("--guesses", "11"), `--guesses: must be in [0, canaries=10], got 11`},
		{with("--correct", "6"), `--correct: must be in [0, guesses=5], got 6`},
		{with("--canaries", "0"), `--canaries: invalid value "0": must be an integer in [1, 10000000]`},
		{with("--canaries", "10000001"), `--canaries: invalid value "10000001"`},
		{with("--correct", "-1"), `--correct: invalid value "-1"`},
		{with("--delta", "1"), `--delta: invalid value "1": must be a number in [0, 1)`},
		{with("--confidence", "0"), `--confidence: invalid value "0": must be a number in (0, 1)`},
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

// The reference's --one-run example (docs/reference.md): run the command it shows and compare the
// numbers it quotes with the output.
func TestEpsilonOneRunREADME(t *testing.T) {
	sec := docSection(t, "docs/reference.md", "### `audit epsilon`")
	cmd := regexp.MustCompile("\naudit (epsilon --one-run [^\n]*)\n").FindStringSubmatch(sec)
	if cmd == nil {
		t.Fatal("no `audit epsilon --one-run` example in docs/reference.md")
	}
	out, errs, code := runCLI(t, strings.Fields(cmd[1])...)
	if code != 0 || errs != "" {
		t.Fatalf("%s: exit %d, %q", cmd[1], code, errs)
	}
	flat := strings.Join(strings.Fields(sec), " ")
	for _, q := range []struct{ quoted, printed string }{
		{`ε_lb = ([0-9.]+)`, `ε_lb = ([0-9.]+) `},
		{`μ_lb = ([0-9.]+)`, `μ_lb = ([0-9.]+),`},
		{`ε\(δ\) = ([0-9.]+)`, `ε\(δ\) = ([0-9.]+) if`},
		{`the ceiling ([0-9.]+)`, `│ ceiling +│ ([0-9.]+) `},
	} {
		want := regexp.MustCompile(q.quoted).FindStringSubmatch(flat[strings.Index(flat, "--one-run --canaries"):])
		got := regexp.MustCompile(q.printed).FindStringSubmatch(out)
		if want == nil || got == nil || strings.TrimSuffix(want[1], ".") != got[1] {
			t.Errorf("docs/reference.md quotes %v, the command prints %v (pattern %s)", want, got, q.printed)
		}
	}
}
