package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A program takes part in a calibrated score: its reference runs get an
// all-'0' mask (or all-'1'), and the program scoring the canaries itself
// gives the same results as the tool scoring its releases (compared for
// the all-'0' mask, the default).
func TestCanaryPythonCalibrated(t *testing.T) {
	requirePython(t)
	for _, ref := range []string{"none", "all"} {
		names := []string{"canaries.yaml", "canaries-scores.yaml"}
		if ref == "all" {
			names = names[1:]
		}
		results := make([]string, len(names))
		for i, name := range names {
			out := filepath.Join(t.TempDir(), "r.json")
			_, errs, code := runCLI(t, "run", filepath.Join("..", "..", "examples", "python", name), "--quiet", "--no-checkpoint", "--json", out,
				"--set", "audit.canaries.score=calibrated", "--set", "audit.canaries.references=2", "--set", "audit.canaries.reference_canaries="+ref)
			if code != exitOK {
				t.Fatalf("%s, references %s: exit %d %s", name, ref, code, errs)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			i0 := bytes.Index(b, []byte(`"points"`))
			if i0 < 0 {
				t.Fatalf("%s: no release points", name)
			}
			results[i] = string(b[i0:])
			if !strings.Contains(results[i], `"score": "calibrated"`) || !strings.Contains(results[i], `"references": 2`) || !strings.Contains(string(b), `"trials": 3`) {
				t.Errorf("%s, references %s: the report does not name the calibrated score and its 2 references: %.300s", name, ref, results[i])
			}
		}
		if len(results) == 2 && results[0] != results[1] {
			t.Errorf("references %s: scored by the tool and by the program, the calibrated results differ:\n%.600s\n%.600s", ref, results[0], results[1])
		}
	}
}
