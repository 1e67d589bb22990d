package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// A program sampler may own its data: its scenario has no data section and
// the plan no dataset pair. "audit bounds" on it describes that instead of
// dereferencing the missing datasets (it panicked while printing), and says
// that no theorem covers the program.
func TestBoundsProgramWithoutData(t *testing.T) {
	scen := programScenario(t, t.TempDir(), "ok", -1, 100, "")
	stdout, stderr, code := runCLI(t, "bounds", scen)
	if code != exitOK || stderr != "" {
		t.Fatalf("bounds on a program without data: exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(stdout, "datasets   owned by the mechanism (the scenario has no data section)") {
		t.Errorf("the datasets line does not say the program owns its data:\n%s", stdout)
	}
	if !strings.Contains(stdout, "declares no theoretical guarantee") {
		t.Errorf("no line says that no theorem covers the program:\n%s", stdout)
	}
	stdout, stderr, code = runCLI(t, "bounds", scen, "--json", "-")
	var doc struct {
		Guarantees []boundRow `json:"guarantees"`
	}
	if code != exitOK || stderr != "" || json.Unmarshal([]byte(stdout), &doc) != nil {
		t.Fatalf("bounds --json on a program without data: exit %d, stderr %q, stdout %q", code, stderr, stdout)
	}
	if len(doc.Guarantees) != 1 || doc.Guarantees[0].Applies || doc.Guarantees[0].Epsilon != nil {
		t.Errorf("want one guarantee that does not apply, got %+v", doc.Guarantees)
	}
}
