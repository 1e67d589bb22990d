package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/audit/scenario"
)

// The SGLD interim-region scenario: table on stdout, JSON and plot written,
// and the worker count changes nothing in the report.
func TestRunSGLDScenarioWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	dir := t.TempDir()
	var docs [2][]byte
	for i, w := range []string{"1", "2"} {
		js := filepath.Join(dir, "r"+w+".json")
		svg := filepath.Join(dir, "r"+w+".svg")
		out, errs, code := runCLI(t, "run", "../../testdata/sgld-interim.yaml", "--workers", w, "--json", js, "--plot", svg, "--quiet")
		if code != 0 {
			t.Fatalf("workers %s: exit %d, stderr %q", w, code, errs)
		}
		for _, want := range []string{"epoch 1", "epoch 20", "ε_lb =", "Clopper-Pearson region bound", "confidence 0.95", "2000 evaluation runs"} {
			if !strings.Contains(out, want) {
				t.Errorf("table lacks %q", want)
			}
		}
		b, err := os.ReadFile(js)
		if err != nil {
			t.Fatal(err)
		}
		docs[i] = b
		s, err := os.ReadFile(svg)
		if err != nil || !bytes.Contains(s, []byte("<svg")) {
			t.Errorf("plot not written as SVG: %v", err)
		}
	}
	if !bytes.Equal(docs[0], docs[1]) {
		t.Error("JSON reports differ between --workers 1 and --workers 2")
	}
	var doc struct {
		Report struct {
			Points []struct {
				Region struct {
					Epsilon float64 `json:"epsilon"`
				} `json:"region"`
			} `json:"points"`
			Epsilon struct {
				Epsilon    float64 `json:"epsilon"`
				Confidence float64 `json:"confidence"`
			} `json:"epsilon"`
		} `json:"report"`
		Config struct {
			Seed uint64 `json:"seed"`
		} `json:"config"`
		Versions struct {
			Go string `json:"go"`
		} `json:"versions"`
	}
	if err := json.Unmarshal(docs[0], &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Report.Points) != 20 || doc.Report.Epsilon.Epsilon <= 0 || doc.Report.Epsilon.Confidence != 0.95 ||
		doc.Config.Seed == 0 || doc.Versions.Go == "" {
		t.Errorf("JSON report incomplete: %d points, headline %+v, seed %d", len(doc.Report.Points),
			doc.Report.Epsilon, doc.Config.Seed)
	}
}

// --print-schema prints scenario.JSONSchema, byte for byte, and exits 0.
func TestRunPrintSchema(t *testing.T) {
	out, _, code := runCLI(t, "run", "--print-schema")
	want, err := scenario.JSONSchema()
	if code != 0 || err != nil || out != string(want) {
		t.Errorf("--print-schema: exit %d, %d bytes, want %d (%v)", code, len(out), len(want), err)
	}
}

func TestRunDefaultAndPrintDefault(t *testing.T) {
	out, _, code := runCLI(t, "run", "--print-default")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if _, err := scenario.ParseConfig([]byte(out)); err != nil {
		t.Errorf("--print-default output does not parse: %v", err)
	}
	out, errs, code := runCLI(t, "run", "--trials", "400", "--quiet")
	if code != 0 || !strings.Contains(out, "sgld-interim-region") {
		t.Errorf("default scenario: exit %d, stderr %q", code, errs)
	}
}

// A true claim is not refuted (exit 0); a false one is (exit 1, the
// report still printed, one VIOLATION line on stderr).
func TestRunClaims(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	out, errs, code := runCLI(t, "run", "../../testdata/gaussian-mechanism.yaml", "--quiet")
	if code != 0 || !strings.Contains(out, "not refuted") {
		t.Errorf("true claim: exit %d, stderr %q", code, errs)
	}
	out, errs, code = runCLI(t, "run", "../../testdata/gaussian-mechanism.yaml", "--claim-gdp", "0.8", "--quiet")
	if code != exitViolation || !strings.Contains(out, "VIOLATION") || !strings.HasPrefix(errs, "audit run: VIOLATION") || strings.Count(errs, "\n") != 1 {
		t.Errorf("false claim: exit %d, stderr %q", code, errs)
	}
}

func TestRunBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	good, _ := os.ReadFile("../../testdata/gaussian-mechanism.yaml")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", write("unknown.yaml", string(good)+"extra: 1\n")}, `line 19: unknown top-level field "extra"`},
		{[]string{"run", filepath.Join(dir, "missing.yaml")}, "cannot read"},
		{[]string{"run", write("empty.yaml", "")}, "empty document"},
		{[]string{"run", "a.yaml", "b.yaml"}, "unexpected argument"},
		{[]string{"run", "--claim-epsilon", "1"}, "--claim-epsilon and --claim-delta go together"},
		{[]string{"run", "--plot", filepath.Join(dir, "x.pdf")}, "--plot: file name must end in .svg or .png"},
		{[]string{"run", "--json", "/no/such/dir/x.json"}, `--json: directory "/no/such/dir" does not exist`},
		{[]string{"run", "--seed", "-3"}, "--seed"},
		{[]string{"run", "--trials", "5"}, "audit.trials: must be in [20,"},
	}
	for _, c := range cases {
		out, errs, code := runCLI(t, c.args...)
		if code != exitUsage || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stdout %d bytes, stderr %q; want one line with %q", c.args, code, len(out), errs, c.want)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".yaml") {
			t.Errorf("file left behind: %s", e.Name())
		}
	}
}
