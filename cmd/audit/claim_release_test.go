package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A claim does not move the headline, and when its test rests on another
// release the report says so. sgld-interim: the headline ε_lb rests on
// epoch 7 with or without --claim-epsilon 3; the claim (3, 1e-5)-DP is
// tested, and refuted, at epoch 5, the release its own test prefers on
// the selection runs. The text verdict and the HTML page name both
// releases and say how each was chosen; the HTML's note under the table no
// longer calls the highlighted row (epoch 7) the release the verdict
// rests on.
func TestClaimTestedAtAnotherReleaseIsExplained(t *testing.T) {
	if testing.Short() {
		t.Skip("two audits: skipped by -short")
	}
	type doc struct {
		Report struct {
			Headline   int `json:"headline"`
			ClaimTests []struct {
				Release string `json:"release"`
			} `json:"claim_tests"`
		} `json:"report"`
	}
	dir := t.TempDir()
	audit := func(name string, code int, claim ...string) (doc, string, string) {
		t.Helper()
		js, page := filepath.Join(dir, name+".json"), filepath.Join(dir, name+".html")
		args := append([]string{"run", "../../testdata/sgld-interim.yaml", "--quiet", "--no-checkpoint", "--json", js, "--html", page}, claim...)
		out, errs, got := runCLI(t, args...)
		if got != code {
			t.Fatalf("%v: exit %d, want %d: %s", claim, got, code, errs)
		}
		var d doc
		b, _ := os.ReadFile(js)
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		h, _ := os.ReadFile(page)
		return d, strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(string(h)), " ")
	}
	plain, plainText, _ := audit("plain", exitOK)
	claimed, text, page := audit("claim", exitViolation, "--claim-epsilon", "3", "--claim-delta", "1e-5")
	if plain.Report.Headline != 6 || claimed.Report.Headline != plain.Report.Headline {
		t.Fatalf("headline at release %d without the claim, %d with it: want 6 (epoch 7) both times", plain.Report.Headline, claimed.Report.Headline)
	}
	if ct := claimed.Report.ClaimTests; len(ct) != 1 || ct[0].Release != "epoch 5" {
		t.Fatalf("claim tests %+v: want one, at epoch 5 (the case under test)", ct)
	}
	note := "claimed (3, 1e-05)-DP at epoch 5 was tested, not at the headline's epoch 7: the headline's release is chosen on the training runs by ε_lb alone, whatever the claims"
	if !strings.Contains(text, "release: "+note) {
		t.Errorf("the text verdict does not say why the claim's release differs:\n%s", text)
	}
	if strings.Contains(plainText, "not at the headline's") {
		t.Errorf("a note on claims' releases without a claim")
	}
	if !strings.Contains(page, strings.ReplaceAll("Release of the claims' tests: "+note, "'", "&#39;")) {
		t.Errorf("the HTML page does not say why the claim's release differs")
	}
	if strings.Contains(page, "The highlighted row is the release the verdict rests on.") {
		t.Errorf("the HTML page calls the headline's row the release the verdict rests on, while the claim was tested at epoch 5")
	}
}
