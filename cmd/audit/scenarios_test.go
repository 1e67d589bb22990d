package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// Every scenario in testdata runs (with fewer trials), and "audit bounds"
// lists its guarantees: at least one that applies, or the reason none does.
func TestScenarioFiles(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/*.yaml")
	if len(files) < 6 {
		t.Fatalf("only %d scenarios", len(files))
	}
	for _, f := range files {
		_, errs, code := runCLI(t, "run", f, "--trials", "60", "--quiet")
		if code != 0 && code != exitViolation {
			t.Errorf("%s: exit %d %s", f, code, errs)
		}
		out, errs, code := runCLI(t, "bounds", f, "--json", "-")
		if code != 0 {
			t.Errorf("bounds %s: exit %d %s", f, code, errs)
			continue
		}
		var doc struct {
			Guarantees []struct {
				Source  string   `json:"source"`
				Applies bool     `json:"applies"`
				Reason  string   `json:"reason"`
				Epsilon *float64 `json:"epsilon"`
			} `json:"guarantees"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Guarantees) == 0 {
			t.Errorf("bounds %s: %v, %d guarantees", f, err, len(doc.Guarantees))
			continue
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
}
