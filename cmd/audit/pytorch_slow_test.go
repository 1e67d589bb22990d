//go:build slow

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The PyTorch example (Heller & Fetaya §V with the training in PyTorch) in
// its reduced version: the tool splits the digits, crafts the DeepFool
// canary, hands D, D′, the test set and the canary to the program, and
// reports ε_lb per epoch with the test accuracy the program measures.
// Three epochs of SGLD must improve the accuracy well beyond chance.
func TestPyTorchExampleCI(t *testing.T) {
	requirePython(t, "torch")
	out := filepath.Join(t.TempDir(), "r.json")
	if _, errs, code := runCLI(t, "run", "../../examples/pytorch/digits_sgld_ci.yaml", "--quiet", "--json", out); code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	b, _ := os.ReadFile(out)
	var doc struct {
		Report struct {
			Points []struct {
				TestAccuracy *float64 `json:"test_accuracy"`
				Region       struct {
					Epsilon float64 `json:"epsilon"`
				} `json:"region"`
			} `json:"points"`
		} `json:"report"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	pts := doc.Report.Points
	if len(pts) != 3 {
		t.Fatalf("%d release points, want 3 epochs", len(pts))
	}
	for k, p := range pts {
		if p.TestAccuracy == nil {
			t.Fatalf("epoch %d: no test accuracy", k+1)
		}
		t.Logf("epoch %d: ε_lb %.4f, test accuracy %.4f", k+1, p.Region.Epsilon, *p.TestAccuracy)
	}
	if a1, a3 := *pts[0].TestAccuracy, *pts[2].TestAccuracy; !(a3 > a1 && a3 > 0.5) {
		t.Errorf("test accuracy %.3f after epoch 1, %.3f after epoch 3: training does not work", a1, a3)
	}
}
