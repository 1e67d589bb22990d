package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A clipped DP-SGLD on add-one neighbours with claim.theorems: no theorem
// applies, and the one-line error (exit 2) says why: the sampler's gradient
// scale and rate follow the dataset's size. "audit bounds" on the same
// scenario without the claim lists the replace-one rows on D and the
// add/remove rows with n public.
func TestAddOneDPSGLD(t *testing.T) {
	base, err := os.ReadFile("../../testdata/dp-sgld-correct.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(base), "neighbour: {adjacency: replace-one, index: 0, record: {x: [1], y: 100}}",
		"neighbour: {adjacency: add-one, record: {x: [1], y: 100}}", 1)
	if text == string(base) {
		t.Fatal("the neighbour line of dp-sgld-correct.yaml changed: update the test")
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "add-one.yaml")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := runCLI(t, "run", f, "--quiet", "--no-checkpoint")
	if code != 2 || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 ||
		!strings.Contains(errs, "claim.theorems") || !strings.Contains(errs, "gradient scale n/b") {
		t.Errorf("run: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	g := filepath.Join(dir, "add-one-no-claim.yaml")
	if err := os.WriteFile(g, []byte(strings.Replace(text, "claim: {theorems: true}\n", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code = runCLI(t, "bounds", g)
	if code != 0 || !strings.Contains(out, "replace-one (on D)") || !strings.Contains(out, "add/remove (n public)") {
		t.Errorf("bounds: exit %d, stderr %q\n%s", code, errs, out)
	}
}

// The same on Poisson DP-SGLD with n public (sampler.sgld.n): the add-one
// path audit tests the add/remove accountant (ε 1.2352 at δ = 1e-5) and
// proves part of it, a planted noise × 0.5 is refuted, and without n the
// run exits 2 saying to set it.
func TestAddOnePublicN(t *testing.T) {
	f := filepath.Join("..", "..", "testdata", "tight", "dp-sgld-poisson-addone-path.yaml")
	out, errs, code := runCLI(t, "run", f, "--quiet", "--no-checkpoint", "--trials", "20000")
	if code != 0 || !strings.Contains(out, "[add/remove (n public)]") || !strings.Contains(out, "ε_ub 1.2352") {
		t.Errorf("run: exit %d, stderr %q\n%s", code, errs, out)
	}
	_, errs, code = runCLI(t, "run", f, "--quiet", "--no-checkpoint", "--trials", "20000", "--set", "sampler.sgld.plant.noise=0.5")
	if code != exitViolation {
		t.Errorf("noise × 0.5: exit %d, stderr %q", code, errs)
	}
	_, errs, code = runCLI(t, "run", f, "--quiet", "--no-checkpoint", "--set", "sampler.sgld.n=0")
	if code != 2 || !strings.Contains(errs, "set the sampler's n") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("without n: exit %d, stderr %q", code, errs)
	}
	_, errs, code = runCLI(t, "run", f, "--quiet", "--no-checkpoint", "--set", "sampler.sgld.scheme=without-replacement")
	if code != 2 || !strings.Contains(errs, "sampler.sgld.n") {
		t.Errorf("n with scheme without-replacement: exit %d, stderr %q", code, errs)
	}
}
