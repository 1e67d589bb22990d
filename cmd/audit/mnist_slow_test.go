//go:build slow

package main

import (
	"encoding/json"
	"github.com/mcmcaudit/mcmcaudit/stats"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The MNIST/LeNet5 example in its reduced version (examples/mnist/lenet5_ci.yaml):
// the one-run canary design through a real PyTorch program, 2,000 training
// images, 200 random canaries, one epoch. The MNIST files are fetched by
// examples/mnist/fetch.sh from the Go module proxy (hashes checked) unless
// MNIST_DIR names a directory holding them. The test skips while the
// scenario parser does not know the canary design (audit.design), so that
// it can land before the design does.
func TestMNISTExampleCI(t *testing.T) {
	requirePython(t, "torch")
	dir := os.Getenv("MNIST_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	if out, err := exec.Command("sh", "../../examples/mnist/fetch.sh", dir).CombinedOutput(); err != nil {
		msg := "examples/mnist/fetch.sh: " + err.Error() + " " + strings.TrimSpace(string(out))
		if os.Getenv("MCMCAUDIT_REQUIRE_PYTHON") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	t.Setenv("MNIST_DIR", dir) // the program inherits the tool's environment
	out := filepath.Join(t.TempDir(), "r.json")
	_, errs, code := runCLI(t, "run", "../../examples/mnist/lenet5_ci.yaml", "--quiet", "--json", out)
	if code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc oneRunReport
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	o := doc.Report
	// The scenario's design: 200 canaries, 40 guesses, one epoch; the
	// program's 2,000 test images give the accuracy (test_size).
	if o.Canaries == nil || o.Canaries.Canaries != 200 || o.Canaries.Included < 1 || o.Canaries.Included > 199 || len(o.Points) != 1 {
		t.Fatalf("canary design %+v, %d releases", o.Canaries, len(o.Points))
	}
	if a := o.Points[0].TestAccuracy; a == nil || *a < 0 || *a > 1 || *a*2000 != math.Round(*a*2000) {
		t.Errorf("test accuracy %v: want correct/2000 in [0, 1]", a)
	}
	// The bounds are what the counts give, recomputed here from (m, r, v).
	pt := o.Points[0]
	c, fc := pt.guesses(t)
	if c.Canaries != 200 || c.Guesses != 40 || c.Correct < 0 || c.Correct > 40 || fc != c {
		t.Fatalf("counts %+v / %+v", c, fc)
	}
	eps, err := stats.OneRunEpsilon(c, 1e-5, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	fdp, err := stats.OneRunFDP(c, 1e-5, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	all := c
	all.Correct = all.Guesses
	ceil, err := stats.OneRunEpsilon(all, 1e-5, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if pt.Epsilon.Epsilon != eps.Epsilon || pt.FDP.Mu != fdp.Mu || pt.Ceiling.Epsilon != ceil.Epsilon {
		t.Errorf("report ε_lb %v, μ_lb %v, ceiling %v; from the counts %v, %v, %v", pt.Epsilon.Epsilon, pt.FDP.Mu, pt.Ceiling.Epsilon, eps.Epsilon, fdp.Mu, ceil.Epsilon)
	}
	// ceiling(200, 40) at δ = 1e-5, 95%: 2.5482 (the one-run peer table's method).
	if math.Abs(pt.Ceiling.Epsilon-2.5482) > 1e-4 {
		t.Errorf("ceiling %v, want 2.5482", pt.Ceiling.Epsilon)
	}
	t.Logf("one epoch: %d/40 correct, ε_lb %.4f, μ_lb %.4f, accuracy %.4f", c.Correct, pt.Epsilon.Epsilon, pt.FDP.Mu, *o.Points[0].TestAccuracy)
}
