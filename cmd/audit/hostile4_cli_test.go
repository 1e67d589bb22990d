package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// refusedOneLine asserts the contract of a refused command line: exit 2,
// nothing on stdout, one line on stderr containing want.
func refusedOneLine(t *testing.T, args []string, want string) {
	t.Helper()
	out, errs, code := runCLI(t, args...)
	if code != exitUsage || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, want) {
		t.Errorf("%q:\n  exit %d, stdout %.80q, stderr %q\n  want exit 2, no stdout, one line containing %q", args, code, out, errs, want)
	}
}

// tinyScenario copies the hostile corpus's quick scenario into dir.
func tinyScenario(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(hostileDir, "tiny.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "scen.yaml")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// An empty output path (--json "" or --json=) used to mean "no output":
// the command did its work, wrote nothing and exited 0. Every command's
// file outputs refuse it, naming the flag.
func TestEmptyOutputPathRefused(t *testing.T) {
	dir := t.TempDir()
	scen := tinyScenario(t, dir)
	eps := []string{"epsilon", "--fp", "1", "--negatives", "100", "--fn", "2", "--positives", "100"}
	oneRun := []string{"epsilon", "--one-run", "--canaries", "10", "--guesses", "10", "--correct", "9"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{append(eps, "--json", ""), `--json: invalid value "": needs a file name, or - for standard output`},
		{append(eps, "--json="), `--json: invalid value "": needs a file name, or - for standard output`},
		{append(oneRun, "--json", ""), `--json: invalid value "": needs a file name`},
		{append(oneRun, "--json="), `--json: invalid value "": needs a file name`},
		{[]string{"run", scen, "--quiet", "--csv", ""}, `--csv: invalid value "": needs a file name`},
		{[]string{"run", scen, "--quiet", "--html="}, `--html: invalid value "": needs a file name`},
		{[]string{"run", scen, "--quiet", "--plot", ""}, `--plot: invalid value "": needs a file name`},
		{[]string{"run", scen, "--shard", "0/2", "--out", ""}, `--out: invalid value "": needs a file name`},
		{[]string{"bounds", scen, "--json", ""}, `--json: invalid value "": needs a file name`},
		{[]string{"curve", "--c", "1", "--epochs", "1:2", "--json="}, `--json: invalid value "": needs a file name`},
		{[]string{"merge", filepath.Join(dir, "part"), "--csv", ""}, `--csv: invalid value "": needs a file name`},
		{[]string{"analyze", scen, scen, "--json", ""}, `--json: invalid value "": needs a file name`},
	} {
		refusedOneLine(t, c.args, c.want)
	}
}

// --save-releases PREFIX names files PREFIX-D.csv and PREFIX-DPRIME.csv: a
// PREFIX ending in a separator wrote the hidden files out/-D.csv and
// out/-DPRIME.csv, and one naming a directory wrote out-D.csv beside it.
// Both are refused before the run, and nothing is written.
func TestSaveReleasesPrefixIsAFileName(t *testing.T) {
	dir := t.TempDir()
	scen := tinyScenario(t, dir)
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	refusedOneLine(t, []string{"run", scen, "--quiet", "--save-releases", out + "/"}, "--save-releases: PREFIX "+`"`+out+`/" ends in a path separator`)
	refusedOneLine(t, []string{"run", scen, "--quiet", "--save-releases", out}, "--save-releases: PREFIX "+`"`+out+`" is a directory`)
	refusedOneLine(t, []string{"run", scen, "--quiet", "--save-releases", "."}, `--save-releases: PREFIX "." is a directory`)
	if after := snapshot(t, dir); after != before {
		t.Errorf("the directory changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// A PREFIX inside the directory is what was meant.
	if _, errs, code := runCLI(t, "run", scen, "--quiet", "--save-releases", filepath.Join(out, "r")); code != 0 {
		t.Fatalf("--save-releases out/r: exit %d, %s", code, errs)
	}
	for _, f := range []string{"r-D.csv", "r-DPRIME.csv"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}

// "audit curve --json scen.yaml" replaced a scenario with JSON. curve reads
// no file, so the check of outputs against a command's inputs had nothing
// to compare with; no output of the tool is YAML, so every command now
// refuses to replace an existing .yaml or .yml file, and the file is left
// as it was.
func TestOutputNeverReplacesYAML(t *testing.T) {
	dir := t.TempDir()
	scen := tinyScenario(t, dir)
	other := filepath.Join(dir, "other.YML")
	if err := os.WriteFile(other, []byte("name: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	refusedOneLine(t, []string{"curve", "--c", "1", "--epochs", "1:2", "--json", scen}, "--json: "+scen+" is a YAML file, the format of scenarios")
	refusedOneLine(t, []string{"curve", "--c", "1", "--epochs", "1:2", "--csv", other}, "--csv: "+other+" is a YAML file")
	refusedOneLine(t, []string{"epsilon", "--one-run", "--canaries", "10", "--guesses", "10", "--correct", "9", "--json", scen}, "--json: "+scen+" is a YAML file")
	refusedOneLine(t, []string{"run", scen, "--quiet", "--html", other}, "--html: "+other+" is a YAML file")
	// The scenario the command reads keeps its own message.
	refusedOneLine(t, []string{"bounds", scen, "--json", scen}, "--json: "+scen+" is the scenario file this command reads")
	if after := snapshot(t, dir); after != before {
		t.Errorf("the directory changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// The data file a scenario reads (data.csv.path) is an input of "audit
// run" and "audit bounds" like the scenario itself: an output that would
// replace it — after the run, with the report — is refused before any
// work.
func TestOutputNeverReplacesScenarioData(t *testing.T) {
	dir := t.TempDir()
	scen := filepath.Join(dir, "s.yaml")
	data := filepath.Join(dir, "data.csv")
	text := `name: data-file
seed: 7
model: {linreg: {dim: 1, alpha: 1, beta: 1}}
data:
  csv: {path: data.csv, options: {header: true, real_labels: true}}
neighbour: {adjacency: replace-one, index: 2, record: {x: [1], y: 0}}
sampler: {gaussian_query: {sigma: 1}}
audit: {trials: 400, split: {train: 0.5, eval: 0.5}, attacks: [threshold], delta: 1.0e-5, confidence: 0.95}
`
	if err := os.WriteFile(scen, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(data, []byte("x1,y\n0.3,0\n-0.2,0\n0,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	want := "--json: " + data + " is the scenario's data.csv.path, which this command reads"
	refusedOneLine(t, []string{"run", scen, "--quiet", "--json", data}, want)
	refusedOneLine(t, []string{"bounds", scen, "--json", data}, want)
	refusedOneLine(t, []string{"run", scen, "--quiet", "--csv", filepath.Join(dir, ".", "data.csv")}, "--csv: ")
	if after := snapshot(t, dir); after != before {
		t.Errorf("the directory changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if _, errs, code := runCLI(t, "run", scen, "--quiet", "--json", filepath.Join(dir, "r.json")); code != 0 {
		t.Errorf("the same scenario with another output: exit %d, %s", code, errs)
	}
}

// namedScenario writes the quick scenario under another name.
func namedScenario(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(hostileDir, "tiny.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), "name: hostile-tiny", "name: "+name, 1)
	p := filepath.Join(dir, "named.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A scenario named by 100 kB of text (the 1 MB took 49 s of CPU
// in the text report, whose wrapping was quadratic): the text report's
// "scenario" line shows the first report.NameRunes = 60 runes and the
// name's length, on one line that fits the report's 110 columns, so the
// report is as long as for any name; the JSON report keeps the name whole.
// (The wrapping's linearity is counted in report's TestWrapTextLinear and
// TestWrapStyledLinear.)
func TestHugeScenarioNameClipped(t *testing.T) {
	dir := t.TempDir()
	name := strings.Repeat("a", 100_000)
	scen := namedScenario(t, dir, name)
	js := filepath.Join(dir, "r.json")
	out, errs, code := runCLI(t, "run", scen, "--quiet", "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	first, _, _ := strings.Cut(out, "\n")
	want := "scenario   " + strings.Repeat("a", 60) + "…(100000 bytes) (config "
	if !strings.HasPrefix(first, want) || len([]rune(first)) > 110 {
		t.Errorf("scenario line %.200q, want it to start %q and fit 110 columns", first, want)
	}
	if strings.Count(out, "a") > 1000 {
		t.Errorf("the text report holds %d bytes, %d of them 'a'", len(out), strings.Count(out, "a"))
	}
	b, err := os.ReadFile(js)
	if err != nil || !strings.Contains(string(b), `"`+name+`"`) {
		t.Errorf("the JSON report lacks the whole name (%v)", err)
	}
}

// Plot titles and the HTML report's title keep up to
// report.TitleNameRunes = 240 runes of the name, wrapped, then its length.
func TestLongScenarioNameInHTMLTitle(t *testing.T) {
	dir := t.TempDir()
	name := strings.Repeat("b", 1000)
	scen := namedScenario(t, dir, name)
	html := filepath.Join(dir, "r.html")
	if _, errs, code := runCLI(t, "run", scen, "--quiet", "--html", html); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	want := "<title>Privacy audit: " + strings.Repeat("b", 240) + "…(1000 bytes)</title>"
	if !strings.Contains(string(b), want) {
		i := strings.Index(string(b), "<title>")
		t.Errorf("HTML title %.400q…, want %.60q…", string(b)[max(i, 0):], want)
	}
}

// pointwiseScenario is a canary design (10 releases, the last one the
// headline) whose claim, (0.5, 1e-5)-DP, is rejected by the test of epoch
// 8 alone (33/40 guesses correct, ε_lb 0.7159) but not at the headline,
// epoch 10 (29/40, ε_lb 0.2437).
func pointwiseScenario(t *testing.T, dir string) string {
	t.Helper()
	scen := filepath.Join(dir, "pointwise.yaml")
	yml := `name: canaries-pointwise
seed: 9
model: {logistic: {dim: 100, alpha: 1}}
data: {synthetic_logistic: {n: 10, theta_star: [` + strings.Repeat("0.5, ", 99) + `0.5], seed: 3}}
sampler: {sgld: {step: {eta: 0.01}, batch: 5, scheme: without-replacement, epochs: 10}}
init: {from_prior: true}
release: {mode: epochs}
audit:
  design: canaries
  canaries: {count: 200, kind: random, guess_grid: [20, 40], runs: 4}
  delta: 1.0e-5
  confidence: 0.95
claim: {epsilon: 0.5, delta: 1.0e-5}
`
	if err := os.WriteFile(scen, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	return scen
}

// In the canary design the verdict rests on the headline release alone;
// a claim rejected by another release's test, at the level of one test,
// is no refutation. The text, HTML and CSV reports said "REFUTED" (JSON
// refuted: true) beside "verdict: not refuted", exit 0; they now mark it
// "rejected pointwise" (JSON pointwise_refuted: true, refuted: false). The
// headline row's "*" is explained in the legend, whose descriptive
// columns are marked "†" instead of the same "*".
func TestCanaryPointwiseRejectionIsNotRefutation(t *testing.T) {
	dir := t.TempDir()
	scen := pointwiseScenario(t, dir)
	js, html, csvPath := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html"), filepath.Join(dir, "r.csv")
	out, errs, code := runCLI(t, "run", scen, "--quiet", "--no-checkpoint", "--json", js, "--html", html, "--csv", csvPath)
	if code != exitOK {
		t.Fatalf("exit %d, want 0: %s", code, errs)
	}
	if !strings.Contains(out, "verdict: not refuted") {
		t.Errorf("verdict:\n%s", out)
	}
	var row8, row10 string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(strings.Trim(l, "│"))
		if strings.HasPrefix(l, "epoch ") && strings.Contains(l, "REFUTED") {
			t.Errorf("a row says REFUTED beside \"verdict: not refuted\": %q", l)
		}
		switch {
		case strings.HasPrefix(l, "epoch 8 ") && row8 == "":
			row8 = l
		case strings.HasPrefix(l, "epoch 10 ") && row10 == "":
			row10 = l
		}
	}
	if !strings.Contains(row8, "33/40") || !strings.HasSuffix(row8, "rejected pointwise") {
		t.Errorf("epoch 8's row %q: want 33/40 and the claim rejected pointwise", row8)
	}
	if !strings.HasPrefix(row10, "epoch 10 *") || !strings.HasSuffix(row10, " ok") {
		t.Errorf("the headline row %q: want \"epoch 10 *\" and the claim ok", row10)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"* the release fixed in advance (the last), on which the headline and verdict rest.",
		`"rejected pointwise" one at another release: that release's test alone rejects the claim`} {
		if !strings.Contains(flat, want) {
			t.Errorf("the report lacks %q", want)
		}
	}

	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Report struct {
			Verdict  string `json:"verdict"`
			Headline int    `json:"headline"`
			Points   []struct {
				Claims []struct {
					Rejected bool   `json:"rejected"`
					Test     string `json:"test"`
				} `json:"claims"`
			} `json:"points"`
		} `json:"report"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	o := doc.Report
	if len(o.Points) != 10 || o.Headline != 9 {
		t.Fatalf("%d points, headline %d; want 10 and 9", len(o.Points), o.Headline)
	}
	for k, p := range o.Points {
		c := p.Claims[0]
		if c.Test == "" || c.Rejected != (k == 7) {
			t.Errorf("point %d: rejected %v (test %q); want %v", k, c.Rejected, c.Test, k == 7)
		}
	}
	h, _ := os.ReadFile(html)
	if strings.Contains(string(h), ">REFUTED") || !strings.Contains(string(h), ">rejected pointwise: one-run p-value") {
		t.Error("the HTML table says REFUTED, or lacks the pointwise mark")
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != 11 {
		t.Fatalf("CSV: %d rows, %v", len(rows), err)
	}
	col := -1
	for i, h := range rows[0] {
		if h == "claim_refuted:claimed (0.5, 1e-05)-DP" {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("CSV header %q", rows[0])
	}
	for k, row := range rows[1:] {
		if row[col] != "false" {
			t.Errorf("CSV row %d: claim_refuted %q beside a verdict not refuted", k, row[col])
		}
	}
}

// "command: [prog, null]" ran prog with an empty argument; it is refused
// before anything starts (exit 2, the line and the item's path).
func TestProgramCommandNullRefused(t *testing.T) {
	dir := t.TempDir()
	scen := filepath.Join(dir, "p.yaml")
	text := "name: n\nseed: 1\nsampler: {program: {command: [/bin/true, null]}}\n" +
		"audit: {trials: 20, split: {train: 0.5, eval: 0.5}, attacks: [threshold], delta: 1.0e-5, confidence: 0.95}\n"
	if err := os.WriteFile(scen, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	refusedOneLine(t, []string{"run", scen, "--quiet"}, `line 3: sampler.program.command[1]: must be a string, got nothing (null); write "" for an empty string`)
}

// μ_lb = 0 is a result, not a missing value: "audit epsilon --one-run
// --json" wrote fdp without "mu" when it was 0 (and "audit epsilon" its
// gdp likewise). Both write "mu": 0; the Steinke et al. estimate, which
// has no μ, still has no "mu".
func TestEpsilonJSONWritesZeroMu(t *testing.T) {
	for _, c := range []struct {
		args []string
		key  string
	}{
		{[]string{"epsilon", "--one-run", "--canaries", "10", "--guesses", "10", "--correct", "5", "--json", "-"}, "fdp"},
		{[]string{"epsilon", "--fp", "50", "--negatives", "100", "--fn", "50", "--positives", "100", "--json", "-"}, "gdp"},
	} {
		out, errs, code := runCLI(t, c.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d, %s", c.args, code, errs)
		}
		var doc map[string]json.RawMessage
		var est, steinke map[string]any
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if err := json.Unmarshal(doc[c.key], &est); err != nil {
			t.Fatalf("%v: %s: %v", c.args, c.key, err)
		}
		if mu, ok := est["mu"]; !ok || mu != 0.0 {
			t.Errorf("%v: %s.mu = %v (present %v), want 0", c.args, c.key, mu, ok)
		}
		if doc["one_run"] != nil {
			if err := json.Unmarshal(doc["one_run"], &steinke); err != nil {
				t.Fatal(err)
			}
			if _, ok := steinke["mu"]; ok {
				t.Errorf("%v: one_run has a mu", c.args)
			}
		}
	}
}

// "audit bounds --delta D" printed the accountants' notes at δ = 1e-05
// whatever D was; the notes, text and JSON, now state their figures at D.
func TestBoundsNotesAtAskedDelta(t *testing.T) {
	scen := "../../testdata/dp-sgld-correct.yaml"
	out, errs, code := runCLI(t, "bounds", scen, "--delta", "0.001")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"at δ = 0.001 the PLD bound is the tighter", "ε(0.001) = "} {
		if !strings.Contains(flat, want) {
			t.Errorf("the notes lack %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "1e-05") {
		t.Errorf("the report at δ = 0.001 speaks of 1e-05:\n%s", out)
	}
	js, errs, code := runCLI(t, "bounds", scen, "--delta", "0.001", "--json", "-")
	if code != 0 || !strings.Contains(js, "at δ = 0.001 the PLD bound") || strings.Contains(js, "1e-05") {
		t.Errorf("--json: exit %d, %s; the notes at δ = 0.001:\n%.2000s", code, errs, js)
	}
}

// Comments and documents cite only files of the repository:
// epsilon_onerun_test.go and docs/derivations/one-run.md cited §6 of a
// mathematics note kept outside it. Every Markdown file named in a .go or
// Markdown file must be one of the repository's (by its base name).
func TestCitedMarkdownFilesExist(t *testing.T) {
	root := "../.."
	have := map[string]bool{}
	var files []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		switch filepath.Ext(p) {
		case ".md":
			have[d.Name()] = true
			files = append(files, p)
		case ".go":
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cite := regexp.MustCompile(`[A-Za-z0-9_-]+\.md\b`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range cite.FindAll(b, -1) {
			if !have[string(m)] {
				t.Errorf("%s cites %s, which is not in the repository", strings.TrimPrefix(f, root+"/"), m)
			}
		}
	}
}

// "audit epsilon --one-run --canaries 10 --guesses 10 --correct 10
// --confidence 1e-300" ended in "internal error … no crossing below 4096"
// (exit 3). The bounds exist: ε_lb = 693.0779 (δ = 1e-5) and μ_lb =
// 74.1753, as an independent computation at 400 digits gives
// (stats/testdata/onerun_refs.py); below 1e-300 the confidence is refused
// with its range (exit 2), here and in a canary scenario's audit.confidence.
func TestEpsilonOneRunTinyConfidence(t *testing.T) {
	args := []string{"epsilon", "--one-run", "--canaries", "10", "--guesses", "10", "--correct", "10"}
	out, errs, code := runCLI(t, append(args, "--confidence", "1e-300")...)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if !strings.HasPrefix(out, "ε_lb = 693.0779 ") || !strings.Contains(out, "μ_lb = 74.1753,") {
		t.Errorf("output:\n%s", out)
	}
	refusedOneLine(t, append(args, "--confidence", "1e-301"), "--confidence: must be in [1e-300, 1) with --one-run, got 1e-301")

	dir := t.TempDir()
	scen := filepath.Join(dir, "c.yaml")
	text := "name: c\nseed: 9\nmodel: {logistic: {dim: 2, alpha: 1}}\ndata: {synthetic_logistic: {n: 10, theta_star: [0.5, 0.5], seed: 3}}\n" +
		"sampler: {sgld: {step: {eta: 0.01}, batch: 5, scheme: cyclic, epochs: 2}}\ninit: {from_prior: true}\n" +
		"audit: {design: canaries, canaries: {count: 20, kind: random, guesses: 4}, delta: 1.0e-5, confidence: 1.0e-301}\n"
	if err := os.WriteFile(scen, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	refusedOneLine(t, []string{"run", scen, "--quiet"}, "audit.confidence: must be in [1e-300, 1) in the canary design (the one-run bounds), got 1e-301")
	// At 1e-300 the canary design runs: one guess pair at one release
	// point is tested at the confidence itself (1 − (1 − c) was 0).
	if err := os.WriteFile(scen, []byte(strings.Replace(text, "1.0e-301", "1.0e-300", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code = runCLI(t, "run", scen, "--quiet", "--no-checkpoint")
	if code != 0 || !strings.Contains(out, "; confidence 1e-300; δ = 1e-05; one-run design") {
		t.Errorf("confidence 1e-300 in the canary design: exit %d, %s\n%s", code, errs, out)
	}
}

// "audit bounds --sweep" printed a scenario's name whole on its first line
// and in its plot's title, one line of glyph outlines: a 100 kB name made
// a 4.7 MB SVG. Both are clipped like the report's.
func TestSweepClipsScenarioName(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile("../../testdata/dp-sgld-correct.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := regexp.MustCompile(`(?m)^name: .*$`).ReplaceAllString(string(b), "name: "+strings.Repeat("z", 100_000))
	scen := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(scen, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	svg := filepath.Join(dir, "s.svg")
	out, errs, code := runCLI(t, "bounds", scen, "--sweep", "iterations=1:10:4", "--plot", svg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if first, _, _ := strings.Cut(out, "\n"); first != "scenario   "+strings.Repeat("z", 60)+"…(100000 bytes)" {
		t.Errorf("first line %.200q", first)
	}
	st, err := os.Stat(svg)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > 200_000 {
		t.Errorf("the plot has %d bytes, more than 200 kB: the name is drawn whole", st.Size())
	}
}
