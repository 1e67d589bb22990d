package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/stats"
)

// scenarioVerdicts is the verdict every scenario of testdata must reach
// with its own seed and trial count; slow ones run only with -tags slow.
var scenarioVerdicts = map[string]struct {
	verdict string
	slow    bool
}{
	"digits-dp-sgld":       {"not refuted", true},
	"digits-sgld":          {"no claim", true},
	"dp-barker-linreg":     {"not refuted", false},
	"dp-hmc-gauss":         {"not refuted", false},
	"dp-penalty-gauss":     {"not refuted", false},
	"dp-sgld-correct":      {"not refuted", false},
	"dp-sgld-planted-bug":  {"VIOLATION", false},
	"fig1-exact":           {"no claim", true},
	"gaussian-mechanism":   {"not refuted", false},
	"sgld-interim":         {"no claim", false},
	"sgld-logistic":        {"not refuted", false},
	"sgld-onepass-gauss":   {"not refuted", false},
	"sgld-canaries":        {"not refuted", false},
	"digits-sgld-canaries": {"no claim", false},
	"ula-linreg":           {"no claim", false},
	"ula-gauss-ou":         {"not refuted", false},
	"ula-logistic":         {"not refuted", false},
	"ula-projected-linreg": {"not refuted", false},
	// Monte Carlo estimators as releases (Bertazzi et al. §3.2).
	"ula-estimator":         {"not refuted", false},
	"ula-estimator-planted": {"VIOLATION", false},
}

// Every scenario in testdata reaches its expected verdict (exit 1 exactly
// for a VIOLATION), and "audit bounds" lists its guarantees: at least one
// that applies, or the reason none does.
func TestScenarioFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("over a second of CPU: skipped by -short")
	}
	testScenarioFiles(t, false)
}

func testScenarioFiles(t *testing.T, slow bool) {
	files, _ := filepath.Glob("../../testdata/*.yaml")
	if len(files) != len(scenarioVerdicts) {
		t.Errorf("%d scenarios in testdata, %d expected verdicts: give every scenario one", len(files), len(scenarioVerdicts))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		want, ok := scenarioVerdicts[name]
		if !ok {
			t.Errorf("%s: no expected verdict", name)
			continue
		}
		if want.slow != slow {
			continue
		}
		out, errs, code := runCLI(t, "run", f, "--json", "-", "--quiet")
		var doc struct {
			Report struct {
				Verdict string `json:"verdict"`
			} `json:"report"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Errorf("%s: exit %d, %s, %v", name, code, errs, err)
			continue
		}
		wantCode := exitOK
		if want.verdict == "VIOLATION" {
			wantCode = exitViolation
		}
		if doc.Report.Verdict != want.verdict || code != wantCode {
			t.Errorf("%s: verdict %q (exit %d), want %q (exit %d)", name, doc.Report.Verdict, code, want.verdict, wantCode)
		}
		checkGolden(t, name, out)
		checkBounds(t, f)
	}
}

// checkBounds runs "audit bounds" on a scenario: every guarantee either
// applies with an ε or says why not.
func checkBounds(t *testing.T, f string) {
	out, errs, code := runCLI(t, "bounds", f, "--json", "-")
	if code != 0 {
		t.Errorf("bounds %s: exit %d %s", f, code, errs)
		return
	}
	var doc struct {
		Guarantees []struct {
			Source  string `json:"source"`
			Applies bool   `json:"applies"`
			Reason  string `json:"reason"`
			// +Inf where a theorem applies but certifies no finite ε
			// at δ (Prop. 3.2 when β(1 + e^ε) stays above δ).
			Epsilon *stats.JSONFloat `json:"epsilon"`
		} `json:"guarantees"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Guarantees) == 0 {
		t.Errorf("bounds %s: %v, %d guarantees", f, err, len(doc.Guarantees))
		return
	}
	for _, g := range doc.Guarantees {
		if g.Applies && (g.Epsilon == nil || *g.Epsilon < 0) {
			t.Errorf("bounds %s: %s applies without an ε", f, g.Source)
		}
		if !g.Applies && strings.TrimSpace(g.Reason) == "" {
			t.Errorf("bounds %s: %s does not apply and gives no reason", f, g.Source)
		}
	}
}
