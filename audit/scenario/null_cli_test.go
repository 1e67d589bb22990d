package scenario

import (
	"strings"
	"testing"
)

// An unquoted null in a list of strings — sampler.program.command
// [prog, null], "- ~", or a bare "-" — used to become an empty string: a
// program got an empty argument nobody wrote. It is refused with the item's
// line and path; a quoted "" stays an empty argument.
func TestNullInStringListRefused(t *testing.T) {
	head := "name: n\nseed: 1\naudit: {trials: 20, split: {train: 0.5, eval: 0.5}, attacks: [threshold], delta: 1.0e-5, confidence: 0.95}\n"
	for _, c := range []struct{ yml, want string }{
		{"sampler: {program: {command: [python3, null]}}\n", "line 4: sampler.program.command[1]: must be a string, got nothing (null); write \"\" for an empty string"},
		{"sampler: {program: {command: [python3, ~, x.py]}}\n", "line 4: sampler.program.command[1]: must be a string, got nothing (null)"},
		{"sampler:\n  program:\n    command:\n      - python3\n      -\n      - x.py\n", "line 8: sampler.program.command[1]: must be a string, got nothing (null)"},
		{"sampler: {program: {command: [&n null, *n]}}\n", "line 4: sampler.program.command[0]: must be a string, got nothing (null)"},
	} {
		_, err := ParseConfig([]byte(head + c.yml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.yml, err, c.want)
		}
	}
	cfg, err := ParseConfig([]byte(head + "sampler: {program: {command: [python3, \"\", 'null']}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Sampler.Program.Command; len(got) != 3 || got[1] != "" || got[2] != "null" {
		t.Errorf("command %q, want [python3 \"\" null]", got)
	}
}
