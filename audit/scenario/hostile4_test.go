package scenario

import (
	"os"
	"strings"
	"testing"
)

// fromTestdata returns testdata/NAME.yaml with each old → new replacement
// made once (the test fails if one is missing).
func fromTestdata(t *testing.T, name string, pairs ...string) string {
	t.Helper()
	b, err := os.ReadFile("../../testdata/" + name + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for i := 0; i+1 < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			t.Fatalf("%s.yaml: no %q", name, pairs[i])
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return s
}

// programCanaryYAML is a canary design of random canaries for a program that
// loads its own data; CANARIES is replaced.
const programCanaryYAML = `name: zeros
seed: 3
sampler:
  program:
    command: [/nonexistent/sampler]
audit:
  design: canaries
  canaries: CANARIES
  delta: 1.0e-5
  confidence: 0.95
`

func programCanaries(canaries string) string {
	return strings.Replace(programCanaryYAML, "CANARIES", canaries, 1)
}

// A field written as 0 (or as an empty list) whose range excludes it was
// taken for the omitted field and ran with its default — "guesses: 0"
// with count/10 guesses and the default's config hash, "runs: 0" with 1,
// "guess_grid: []" with the default guesses, an explicit n0, clip or
// variance_limit of 0 with the values the omitted keys take, "features:
// []" with [theta] — or, next to the key that decides, did nothing. Each
// is refused with its line, its path and its range.
func TestWrittenZerosRefused(t *testing.T) {
	const own = "kind: random, features: 2, classes: 2, range: [0, 1]"
	for _, c := range []struct{ name, yaml, want string }{
		{"guesses", programCanaries("{count: 1000, " + own + ", guesses: 0}"), "line 8: audit.canaries.guesses: must be in [1, count], got 0; 0 is not its default: omit the key for that (r = count/10, at least 1, split evenly)"},
		{"guesses 0.0", programCanaries("{count: 1000, " + own + ", guesses: 0.0}"), "audit.canaries.guesses: must be in [1, count], got 0"},
		{"runs", programCanaries("{count: 1000, " + own + ", runs: 0}"), "audit.canaries.runs: must be in [1, count], got 0; 0 is not its default: omit the key for that (1)"},
		{"guess_grid", programCanaries("{count: 1000, " + own + ", guess_grid: []}"), "audit.canaries.guess_grid: must hold at least one value (at most 64 values, each in [1, count]), got an empty list"},
		{"canary trials", strings.Replace(programCanaries("{count: 1000, "+own+"}"), "  delta:", "  trials: 0\n  delta:", 1), "audit.trials: must be in [20, 100000000], got 0"},
		{"features", fromTestdata(t, "ula-linreg", "features: [theta, loglik]", "features: []"), "audit.features: must hold at least one value (" + strings.Join(featureNames(nil, ""), ", ") + "), got an empty list; omit the key for its default ([theta])"},
		{"attacks", fromTestdata(t, "ula-linreg", "attacks: [threshold, linear, qda]", "attacks: []"), "audit.attacks: must hold at least one value (threshold, linear, logistic, qda), got an empty list; omit the key for its default ([threshold])"},
		{"n0", fromTestdata(t, "dp-barker-linreg", "n0: 20", "n0: 0"), "sampler.dp_barker.n0: must be in (0, n], got 0"},
		{"clip", fromTestdata(t, "dp-barker-linreg", "n0: 20", "n0: 20, clip: 0"), "sampler.dp_barker.clip: must be in (0, ∞), finite, got 0"},
		{"variance_limit", fromTestdata(t, "dp-barker-linreg", "n0: 20", "n0: 20, variance_limit: 0"), "sampler.dp_barker.variance_limit: must be in (0, c]"},
		{"linreg dim", fromTestdata(t, "ula-linreg", "dim: 2", "dim: 0"), "model.linreg.dim: must be in [1, ∞), got 0"},
		{"synthetic beta", fromTestdata(t, "ula-linreg", "x_scale: 1,", "x_scale: 1, beta: 0,"), "data.synthetic_linreg.beta: must be in (0, ∞), finite, got 0"},
		{"estimator noise", fromTestdata(t, "ula-estimator", "laplace: 0.5}", "laplace: 0.5, gaussian: 0}"), "release.estimator.gaussian: must be in (0, ∞); exactly one of laplace, gaussian, got 0"},
	} {
		_, err := ParseConfig([]byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v\n  want %q", c.name, err, c.want)
		}
	}
}

// Zeros with a documented meaning are still taken as written.
func TestDocumentedZerosAccepted(t *testing.T) {
	for _, y := range []string{
		programCanaries("{count: 1000, kind: random, features: 2, classes: 0, range: [0, 1], guesses_plus: 10, guesses_minus: 0}"),
		fromTestdata(t, "fig1-exact", "every: 5", "every: 0"),
		fromTestdata(t, "dp-barker-linreg", "batch: 200", "batch: 0"),
		fromTestdata(t, "ula-linreg", "delta: 1.0e-5", "delta: 0"),
		strings.Replace(programCanaries("{count: 1000, kind: random, features: 2, classes: 2, range: [0, 1]}"), "[/nonexistent/sampler]", "[/nonexistent/sampler]\n    determinism_checks: 0\n    test_size: 0", 1),
	} {
		if _, err := ParseConfig([]byte(y)); err != nil {
			t.Errorf("%v\n%s", err, y)
		}
	}
}

// sampler.program.retries is a count of further attempts in [0, 100]: 0 is
// a single attempt (it was the default, 2, and −1 none), omitted the
// default; −1 is below the range.
func TestProgramRetries(t *testing.T) {
	base := programCanaries("{count: 1000, kind: random, features: 2, classes: 2, range: [0, 1]}")
	with := func(r string) string {
		return strings.Replace(base, "[/nonexistent/sampler]", "[/nonexistent/sampler]\n    retries: "+r, 1)
	}
	for _, c := range []struct {
		yaml string
		want int // program.Config.Retries: 0 the default, −1 none
	}{{base, 0}, {with("0"), -1}, {with("1"), 1}, {with("100"), 100}} {
		cfg, err := ParseConfig([]byte(c.yaml))
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.Sampler.Program.retries(); got != c.want {
			t.Errorf("%q: pool retries %d, want %d", c.yaml, got, c.want)
		}
	}
	for _, r := range []string{"-1", "101"} {
		_, err := ParseConfig([]byte(with(r)))
		want := "sampler.program.retries: must be in [0, 100] (0: a single attempt; omit it for the default 2), got " + r
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("retries %s: %v, want %q", r, err, want)
		}
	}
}

// Keys that the scenario's other choices leave without effect are refused,
// naming the key and the choice: the release fields of another
// release.mode, and the runs design's statistics in the canary design.
func TestInapplicableKeysRefused(t *testing.T) {
	canaries := programCanaries("{count: 1000, kind: random, features: 2, classes: 2, range: [0, 1]}")
	inCanaries := func(line string) string { return strings.Replace(canaries, "  delta:", "  "+line+"\n  delta:", 1) }
	for _, c := range []struct{ name, yaml, want string }{
		{"estimator, mode final", fromTestdata(t, "ula-estimator", "mode: estimator", "mode: final"), "release.estimator: only with release.mode estimator: it does nothing with mode final"},
		{"estimator, no mode", fromTestdata(t, "ula-estimator", "  mode: estimator\n", ""), "release.estimator: only with release.mode estimator: it does nothing with mode final"},
		{"at, mode epochs", fromTestdata(t, "fig1-exact", "every: 5", "every: 5, at: [10]"), "release.at: only with release.mode snapshots: it does nothing with mode epochs"},
		{"every, mode final", fromTestdata(t, "ula-linreg", "mode: final", "mode: final, every: 2"), "release.every: only with release.mode epochs or trajectory: it does nothing with mode final"},
		{"every, mode snapshots", fromTestdata(t, "dp-barker-linreg", "at: [50, 200]", "at: [50, 200], every: 1"), "release.every: only with release.mode epochs or trajectory: it does nothing with mode snapshots"},
		{"split", inCanaries("split: {train: 0.5, eval: 0.5}"), "audit.split: not used in the canary design"},
		{"attacks", inCanaries("attacks: [threshold]"), "audit.attacks: not used in the canary design"},
		{"features", inCanaries("features: [theta]"), "audit.features: not used in the canary design"},
		{"attack_selection", inCanaries("attack_selection: bonferroni"), "audit.attack_selection: not used in the canary design"},
	} {
		_, err := ParseConfig([]byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v\n  want %q", c.name, err, c.want)
		}
	}
	// Where they do something, they are taken.
	for _, y := range []string{
		fromTestdata(t, "ula-estimator"), fromTestdata(t, "fig1-exact"), fromTestdata(t, "dp-barker-linreg"),
		fromTestdata(t, "dp-hmc-gauss"), inCanaries("point_selection: bonferroni"),
	} {
		if _, err := ParseConfig([]byte(y)); err != nil {
			t.Error(err)
		}
	}
}
