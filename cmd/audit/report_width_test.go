package main

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// The text report of the default scenario fits 120 columns, with and
// without a claim (the claim column names the refuted pair), and shows
// no parameter to seventeen digits, no "0 / 0" p-values and no column of
// zeros.
func TestDefaultReportFits120Columns(t *testing.T) {
	for _, args := range [][]string{{"run"}, {"run", "--claim-gdp", "1.5"}} {
		out, errs, code := runCLI(t, args...)
		if code != 0 && code != 1 {
			t.Fatalf("%v: exit %d, %s", args, code, errs)
		}
		for i, l := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(l); n > 120 {
				t.Errorf("%v: line %d is %d columns wide:\n%s", args, i+1, n, l)
			}
		}
		for _, bad := range []string{"0.0016899675500270416", "0 / 0", "clipped grads", "0 threshold-selection"} {
			if strings.Contains(out, bad) {
				t.Errorf("%v: the report shows %q", args, bad)
			}
		}
		for _, want := range []string{"eta=0.00168997", "FP/neg, FN/pos: the errors of the attack's rule", "thresholds chosen on them"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: the report lacks %q", args, want)
			}
		}
	}
}
