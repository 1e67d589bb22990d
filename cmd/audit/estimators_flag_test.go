package main

import (
	"strings"
	"testing"
)

// --estimators chooses the audit's estimators: an unknown name, or one
// of the other design's kind, is one line of error naming what is allowed
// (exit 2); a list without the region bound rests the headline on its
// first estimator, and the headline says what that bound assumes.
func TestRunEstimatorsFlag(t *testing.T) {
	scen := "../../testdata/gaussian-mechanism.yaml"
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--estimators", "region,nope"}, []string{"--estimators", `"nope"`, "region, gdp"}},
		{[]string{"--estimators", "one-run"}, []string{"audit.estimators", `"one-run"`, "(region, gdp)"}},
		{[]string{"--estimators", "region,region"}, []string{"--estimators", "twice"}},
	} {
		args := append([]string{"run", scen, "--quiet", "--no-checkpoint", "--trials", "200"}, c.args...)
		_, errs, code := runCLI(t, args...)
		if code != 2 || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line", c.args, code, errs)
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%v: %q does not say %q", c.args, errs, w)
			}
		}
	}
	_, errs, code := runCLI(t, "run", "../../testdata/sgld-canaries.yaml", "--quiet", "--no-checkpoint", "--estimators", "gdp")
	if code != 2 || !strings.Contains(errs, "(one-run, one-run-fdp)") {
		t.Errorf("gdp in the canary design: exit %d, stderr %q", code, errs)
	}
	out, errs, code := runCLI(t, "run", scen, "--quiet", "--no-checkpoint", "--trials", "2000", "--estimators", "gdp")
	flat := strings.Join(strings.Fields(out), " ")
	if code != 0 || !strings.Contains(flat, "; assumes a Gaussian (μ-GDP) trade-off curve") || !strings.Contains(flat, "ε_lb: the gdp estimator's ε") {
		t.Errorf("gdp alone: exit %d, stderr %q, report:\n%s", code, errs, out)
	}
}
