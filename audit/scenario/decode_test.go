package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
)

// legacyParse is the decoder this package used before the node walker:
// yaml.v3's struct decoding with unknown fields refused. It is kept here
// to show that every existing scenario decodes to the same Config.
func legacyParse(b []byte) (*Config, error) {
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return nil, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("only one YAML document is allowed")
	}
	c.defaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// scenarioFiles lists every scenario of the repository: testdata, the bad
// corpus, the built-in scenario.
func scenarioFiles(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{"default.yaml": DefaultScenario()}
	for _, pattern := range []string{"../../testdata/*.yaml", "../../testdata/bad/*.yaml", "../../examples/*/*.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out[f] = b
		}
	}
	return out
}

// Every scenario the old decoder accepted decodes to the same Config (the
// same hash, so shards and checkpoints of existing audits stay valid); one
// it refused is refused.
func TestDecoderMatchesTheLegacyDecoder(t *testing.T) {
	files := scenarioFiles(t)
	good := 0
	for name, b := range files {
		old, oldErr := legacyParse(b)
		cur, err := ParseConfig(b)
		switch {
		case oldErr != nil && err == nil:
			t.Errorf("%s: accepted, but the old decoder refused it: %v", name, oldErr)
		case oldErr == nil && err != nil:
			t.Errorf("%s: refused (%v), but the old decoder accepted it", name, err)
		case oldErr == nil:
			if old.Hash() != cur.Hash() {
				t.Errorf("%s: hash %s, the old decoder's %s", name, cur.Hash(), old.Hash())
			}
			good++
		}
	}
	if good < 15 {
		t.Errorf("only %d scenarios accepted by both decoders", good)
	}
}

// FuzzDecoderMatchesTheLegacyDecoder: on any input both decoders accept,
// the configs are the same; the new one refuses everything the old one
// refused, except the inputs the old one accepted only by coercing them
// (these are the new errors of TestParseErrorMessages).
func FuzzDecoderMatchesTheLegacyDecoder(f *testing.F) {
	for _, pattern := range []string{"../../testdata/*.yaml", "../../testdata/bad/*.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		old, oldErr := legacyParse(b)
		cur, err := ParseConfig(b)
		if oldErr == nil && err == nil && old.Hash() != cur.Hash() {
			t.Fatalf("hash differs: %s vs %s", cur.Hash(), old.Hash())
		}
		if oldErr != nil && err == nil {
			t.Fatalf("accepted what the old decoder refused: %v", oldErr)
		}
	})
}

// base is a small valid scenario; the line numbers of the cases below
// refer to it (line 1 is "name: base").
const base = `name: base
seed: 3
model:
  linreg: {dim: 1, alpha: 1, beta: 1}
data:
  records: [{x: [0.3], y: 0}, {x: [-0.2], y: 0}, {x: [0], y: 0}]
neighbour: {adjacency: replace-one, index: 2, record: {x: [1], y: 0}}
sampler:
  sgld:
    step: {eta: 0.05}
    batch: 1
    scheme: cyclic
    epochs: 2
audit:
  trials: 40
  split: {train: 0.5, eval: 0.5}
  delta: 1.0e-5
  confidence: 0.95
`

// replaceLine returns base with line n (1-based) replaced.
func replaceLine(n int, with string) string {
	lines := strings.Split(base, "\n")
	lines[n-1] = with
	return strings.Join(lines, "\n")
}

// Every error the decoder and the validation produce names the line and
// the field path, with types in YAML terms. Each message is asserted in
// full.
func TestParseErrorMessages(t *testing.T) {
	if _, err := ParseConfig([]byte(base)); err != nil {
		t.Fatalf("base scenario: %v", err)
	}
	cases := []struct{ name, yaml, want string }{
		{"scalar for a mapping", replaceLine(10, "    step: 0.05"),
			"line 10: sampler.sgld.step: must be a mapping {eta, b, gamma}, got the number 0.05"},
		{"misspelt field", replaceLine(4, "  linreg: {d: 1, alpha: 1, beta: 1}"),
			`line 4: model.linreg: unknown field "d" (did you mean "dim"?)`},
		{"transposed letters", replaceLine(15, "  trails: 40"),
			`line 15: audit: unknown field "trails" (did you mean "trials"?)`},
		{"field one level too high", replaceLine(13, "  epochs: 2"),
			`line 13: sampler: unknown field "epochs" (epochs is a field of sampler.exact_cyclic_sgld, sampler.sgld)`},
		{"unknown top-level field", base + "colour: red\n",
			`line 19: unknown top-level field "colour" (allowed here: name, description, seed, model, data, neighbour, sampler, init, release, audit, claim, threat)`},
		{"seed not whole", replaceLine(2, "seed: 1.5"),
			"line 2: seed: must be an integer in [0, 18446744073709551615], got the number 1.5 (not a whole number)"},
		{"seed negative", replaceLine(2, "seed: -1"),
			"line 2: seed: must be an integer in [0, 18446744073709551615], got the number -1 (out of range)"},
		{"seed 2^64", replaceLine(2, "seed: 18446744073709551616"),
			"line 2: seed: must be an integer in [0, 18446744073709551615], got the number 18446744073709551616 (out of range)"},
		{"seed with a leading zero", replaceLine(2, "seed: 0123"),
			"line 2: seed: 0123 has a leading zero, which YAML would read as an octal number; write it without the zero (or as 0o… for octal)"},
		{"trials not whole", replaceLine(15, "  trials: 40.5"),
			"line 15: audit.trials: must be an integer in [20, 100000000], got the number 40.5 (not a whole number)"},
		{"trials quoted", replaceLine(15, `  trials: "40"`),
			`line 15: audit.trials: must be an integer in [20, 100000000], got the string "40"`},
		{"trials beyond int64", replaceLine(15, "  trials: 1e19"),
			"line 15: audit.trials: must be an integer in [20, 100000000], got the number 1e19 (out of range)"},
		{"trials out of the documented range", replaceLine(15, "  trials: 10"),
			"line 15: audit.trials: must be in [20, 100000000], got 10"},
		{"string for a list", base + "  features: theta\n",
			`line 19: audit.features: must be a list of strings, got the string "theta"`},
		{"list item of the wrong type", replaceLine(6, "  records: [{x: [0.3], y: 0}, {x: 3, y: 0}, {x: [0], y: 0}]"),
			"line 6: data.records[1].x: must be a list of numbers, got the number 3"},
		{"mapping for a number", replaceLine(17, "  delta: {value: 1}"),
			"line 17: audit.delta: must be a number, got a mapping {value}"},
		{"quoted number", replaceLine(10, `    step: {eta: "0.05"}`),
			`line 10: sampler.sgld.step.eta: must be a number, got the string "0.05"`},
		{"number beyond float64", replaceLine(10, "    step: {eta: 1e400}"),
			"line 10: sampler.sgld.step.eta: must be a number within ±1.8e308, got 1e400"},
		{"boolean spelt yes", base + "claim: {theorems: yes}\n",
			`line 19: claim.theorems: must be true or false, got the string "yes"`},
		{"list for a choice section", replaceLine(4, "  [linreg]"),
			"line 4: model: must be a mapping with one key of linreg, logistic, gauss, banana, mixture, softmax, mlp, inert, got a list of 1 item"},
		{"choice section as a list", strings.Replace(base, "model:\n  linreg: {dim: 1, alpha: 1, beta: 1}", "model: [linreg]", 1),
			"line 3: model: must be a mapping with one key of linreg, logistic, gauss, banana, mixture, softmax, mlp, inert, got a list of 1 item"},
		{"key given twice", replaceLine(16, "  trials: 50"),
			"line 16: audit.trials: given twice (first on line 15)"},
		{"syntax error", replaceLine(6, "  records: [{x: [0.3], y: 0}"),
			"line 6: not valid YAML: did not find expected ',' or ']'"},
		{"tab indentation", replaceLine(11, "\tbatch: 1"),
			"line 11: not valid YAML: found character that cannot start any token"},
		{"two documents", base + "---\nname: again\n",
			"line 19: only one YAML document is allowed (remove the second \"---\" and what follows)"},
		{"empty document", "", "config: empty document"},
		{"comments only", "# nothing\n", "config: empty document"},
		{"null document", "~\n", "line 1: empty document"},
		{"alias of the wrong type", replaceLine(1, "name: &n base") + "description: x\nrelease: *n\n",
			`line 20: release: must be a mapping {mode, every, at, estimator}, got the string "base" (through the alias *n of line 1)`},
		{"validation error", replaceLine(18, "  confidence: 1"),
			"line 18: audit.confidence: must be in (0, 1), got 1"},
		{"section missing", strings.Replace(base, "sampler:\n  sgld:", "other:\n  sgld:", 1),
			`line 8: unknown top-level field "other" (allowed here: name, description, seed, model, data, neighbour, sampler, init, release, audit, claim, threat)`},
		{"unused synthetic field", strings.Replace(base, "records: [{x: [0.3], y: 0}, {x: [-0.2], y: 0}, {x: [0], y: 0}]", "synthetic_logistic: {n: 5, theta_star: [1], beta: 2}", 1),
			"line 6: data.synthetic_logistic.beta: not used by synthetic_logistic (only synthetic_linreg draws noisy labels); remove it"},
	}
	for _, c := range cases {
		_, err := ParseConfig([]byte(c.yaml))
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if err.Error() != c.want {
			t.Errorf("%s:\n got  %s\n want %s", c.name, err, c.want)
		}
	}
}

// Errors found when building (sampler checks against the data, the
// canary's dimension, …) name the sampler's key and the line too; a value
// set after decoding (a command-line override) is not blamed on the file.
func TestBuildErrorMessages(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"batch larger than n", replaceLine(11, "    batch: 5"),
			"line 11: sampler.sgld.batch: must be in [1, n=3], got 5"},
		{"both lengths", replaceLine(13, "    iterations: 4\n    epochs: 2"),
			"line 9: sampler.sgld: set exactly one of epochs ≥ 1 or iterations ≥ 1 (got epochs=2, iterations=4)"},
		{"canary dimension", replaceLine(7, "neighbour: {adjacency: replace-one, index: 2, record: {x: [1, 2], y: 0}}"),
			"line 7: neighbour.record.x: must have 1 values, got 2"},
		{"model parameter", replaceLine(4, "  linreg: {dim: 1, alpha: -1, beta: 1}"),
			"line 4: model.linreg.alpha: must be finite and > 0, got -1"},
		{"gaussian query on a model of another dimension", strings.Replace(strings.Replace(base,
			"  linreg: {dim: 1, alpha: 1, beta: 1}", "  mixture: {var1: 1, var2: 1, var_x: 1}", 1),
			"  sgld:\n    step: {eta: 0.05}\n    batch: 1\n    scheme: cyclic\n    epochs: 2", "  gaussian_query: {sigma: 1}", 1),
			"line 3: model: the Gaussian query releases a record-sized sum; the model's dimension 2 must equal the records' 1"},
	}
	for _, c := range cases {
		cfg, err := ParseConfig([]byte(c.yaml))
		if err == nil {
			_, err = Build(cfg)
		}
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n got  %v\n want %s", c.name, err, c.want)
		}
	}
	// The exact sampler's step: η = eta_scale/s² must be below 2/s, i.e.
	// eta_scale < 2s, with s = alpha + n·xh²·beta = 2 + 10·1.8² = 34.4
	// (2s = 68.8, 2/s = 0.0581395…, 70/s² = 0.0591536…).
	exact := func(k string) string {
		return "model: {linreg: {alpha: 2, beta: 1}}\ndata: {counterexample: {n: 10, xh: 1.8, c: 25}}\n" +
			"sampler: {exact_cyclic_sgld: {eta_scale: " + k + ", epochs: 3}}\ninit: {from_prior: true}\n" +
			"audit: {trials: 20, split: {train: 0.5, eval: 0.5}, confidence: 0.95}\n"
	}
	if c, err := ParseConfig([]byte(exact("68"))); err != nil {
		t.Errorf("eta_scale 68 < 2s: %v", err)
	} else if _, err := Build(c); err != nil {
		t.Errorf("eta_scale 68 < 2s: %v", err)
	}
	c70, err := ParseConfig([]byte(exact("70")))
	if err == nil {
		_, err = Build(c70)
	}
	if want := "line 3: sampler.exact_cyclic_sgld.eta_scale: gives η = eta_scale/s² outside (0, 2/s) = (0, 0.05813953488372093) so that λ = 1 − ηs/2 ∈ (0, 1), got 0.059153596538669556 (the exact sampler's closed form)"; err == nil || err.Error() != want {
		t.Errorf("eta_scale 70 > 2s:\n got  %v\n want %s", err, want)
	}

	cfg, err := ParseConfig([]byte(base))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Audit.Trials = 10 // as --trials 10 would
	if err := cfg.locate(cfg.Validate()); err == nil || err.Error() != "audit.trials: must be in [20, 100000000], got 10" {
		t.Errorf("an overridden value: %v", err)
	}
}

// Integers written as exact floats are accepted; the config is the one the
// integer spelling gives.
func TestExactIntegersAccepted(t *testing.T) {
	want, err := ParseConfig([]byte(replaceLine(15, "  trials: 1000")))
	if err != nil {
		t.Fatal(err)
	}
	for _, spelling := range []string{"1e3", "1000.0", "1.0e+3", "0x3e8", "1_000", "+1000"} {
		got, err := ParseConfig([]byte(replaceLine(15, "  trials: "+spelling)))
		if err != nil {
			t.Errorf("trials: %s: %v", spelling, err)
			continue
		}
		if got.Hash() != want.Hash() {
			t.Errorf("trials: %s decodes to %d", spelling, got.Audit.Trials)
		}
	}
	got, err := ParseConfig([]byte(replaceLine(2, "seed: 18446744073709551615")))
	if err != nil || got.Seed != 1<<64-1 {
		t.Errorf("seed 2^64 − 1: %v, %d", err, got.Seed)
	}
	// 2^53 + 1 is not a float64: written as a float it must still be exact.
	got, err = ParseConfig([]byte(replaceLine(2, "seed: 9007199254740993.0")))
	if err != nil || got.Seed != 1<<53+1 {
		t.Errorf("seed 2^53 + 1 as a float: %v, %d", err, got.Seed)
	}
}

// Anchors, aliases and merge keys decode as YAML defines them.
func TestAliasesAndMerges(t *testing.T) {
	y := strings.Replace(base, "    step: {eta: 0.05}\n    batch: 1\n    scheme: cyclic\n    epochs: 2",
		"    <<: &common {step: {eta: 0.05}, batch: 1, scheme: cyclic}\n    epochs: 2", 1)
	got, err := ParseConfig([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := ParseConfig([]byte(base))
	if got.Hash() != want.Hash() {
		t.Errorf("merge key: config differs")
	}
	y = strings.Replace(base, "    epochs: 2", "    epochs: 2\n    <<: {epochs: 7, clip: 1}", 1)
	got, err = ParseConfig([]byte(y))
	if err != nil || got.Sampler.SGLD.Epochs != 2 || got.Sampler.SGLD.Clip != 1 {
		t.Errorf("explicit keys win over merged ones: %v %+v", err, got)
	}
}

// LoadConfig reads at most the size limit + 1 byte: an endless stream is
// refused, not slurped, and the file name prefixes the message; a device
// is no regular file and is refused without a read.
func TestLoadConfigBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	r := &countingReader{}
	if _, err := readConfig(r); err == nil || !strings.Contains(err.Error(), "larger than 67108864 bytes") {
		t.Errorf("endless reader: %v", err)
	}
	if r.n != MaxConfigBytes+1 {
		t.Errorf("read %d bytes, want exactly %d", r.n, MaxConfigBytes+1)
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		_, err := LoadConfig("/dev/zero")
		if err == nil || err.Error() != "config: cannot read /dev/zero: it is a character device, not a regular file" {
			t.Errorf("/dev/zero: %v", err)
		}
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "s.yaml")
	os.WriteFile(p, []byte(replaceLine(15, "  trials: 40.5")), 0o644)
	_, err := LoadConfig(p)
	if err == nil || err.Error() != "line 15: audit.trials: must be an integer in [20, 100000000], got the number 40.5 (not a whole number)" {
		t.Errorf("a file's error: %v", err)
	}
}

type countingReader struct{ n int }

func (r *countingReader) Read(b []byte) (int, error) {
	clear(b)
	r.n += len(b)
	return len(b), nil
}

// A 60 MB file of 30 million list items is refused before the YAML parser
// builds its nodes: the whole refusal allocates little beyond the file's
// bytes (BenchmarkRefuseHugeList measures its time).
func TestHugeListRefusedCheaply(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 60 MB file")
	}
	huge := hugeList()
	p := filepath.Join(t.TempDir(), "huge.yaml")
	if err := os.WriteFile(p, huge, 0o644); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := LoadConfig(p)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "too many YAML nodes") {
		t.Fatalf("huge list: %v", err)
	}
	// The file is read once, into a buffer sized from its length (60 MB;
	// a doubling buffer would take twice that): at most 1.25× the file.
	// The YAML parser would need gigabytes for 30 M nodes.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(len(huge))*5/4 {
		t.Errorf("refusing the huge list of %d MB allocated %d MB", len(huge)>>20, alloc>>20)
	} else {
		t.Logf("refusing the huge list of %d MB allocated %d MB", len(huge)>>20, alloc>>20)
	}
	// An alias bomb: a few kilobytes that expand to millions of nodes.
	y := strings.Replace(base, "  records: [{x: [0.3], y: 0}, {x: [-0.2], y: 0}, {x: [0], y: 0}]",
		"  records: [&r {x: &x ["+strings.Repeat("1, ", 999)+"1]}"+strings.Repeat(", *r", 2000)+"]", 1)
	if _, err := ParseConfig([]byte(y)); err == nil || !strings.Contains(err.Error(), "too many YAML nodes") {
		t.Errorf("alias bomb (%d bytes): %v", len(y), err)
	}
}

// hugeList is "items: [1,1,…]" with 30 million items.
func hugeList() []byte {
	var b bytes.Buffer
	b.WriteString("items: [")
	b.Write(bytes.Repeat([]byte("1,"), 30_000_000))
	b.WriteString("1]\n")
	return b.Bytes()
}

// BenchmarkRefuseHugeList times the refusal of the 60 MB list (parsing
// only; reading the file adds its disk time).
func BenchmarkRefuseHugeList(b *testing.B) {
	huge := hugeList()
	b.SetBytes(int64(len(huge)))
	for b.Loop() {
		if _, err := ParseConfig(huge); err == nil {
			b.Fatal("accepted")
		}
	}
}

// Every scenario of the bad corpus (testdata/bad) is refused with the
// error its "# want:" line names, located at a line — except the ones that
// fail only when run (a diverging chain), which Build accepts.
func TestBadCorpusErrorsNameTheLine(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/bad/*.yaml")
	if len(files) < 40 {
		t.Fatalf("only %d bad scenarios", len(files))
	}
	runtimeOnly := map[string]bool{"diverging-eta.yaml": true}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		first, _, _ := strings.Cut(string(b), "\n")
		want := strings.TrimPrefix(first, "# want: ")
		c, err := LoadConfig(f)
		if err == nil {
			_, err = Build(c)
		}
		name := filepath.Base(f)
		switch {
		case runtimeOnly[name]:
			if err != nil {
				t.Errorf("%s: refused before running: %v", name, err)
			}
		case err == nil:
			t.Errorf("%s: accepted", name)
		case !regexp.MustCompile(`^line [1-9][0-9]*: `).MatchString(err.Error()):
			t.Errorf("%s: %q names no line", name, err)
		case !testutil.ContainsInOrder(err.Error(), want):
			t.Errorf("%s: %q lacks %q", name, err, want)
		}
	}
}
