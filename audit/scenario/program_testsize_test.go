package scenario

import (
	"strings"
	"testing"
)

// sampler.program.test_size: in range, only with the accuracy metric,
// and never beside a test set the scenario splits off itself. Each is
// refused before the program starts (its command does not exist).
func TestProgramTestSizeErrors(t *testing.T) {
	base := `
name: ts
seed: 1
sampler:
  program:
    command: [/nonexistent/sampler]
    test_size: %s
audit:
  trials: 200
  split: {train: 0.5, eval: 0.5}
  delta: 1.0e-5
  confidence: 0.95
`
	for _, c := range []struct{ size, extra, want string }{
		{"-1", "", "sampler.program.test_size: must be in [0, 1000000000]"},
		{"2000000000", "", "sampler.program.test_size: must be in [0, 1000000000]"},
		{"100", "", "sampler.program.test_size: needs audit.metrics: [accuracy]"},
	} {
		yml := strings.Replace(base, "%s", c.size, 1) + c.extra
		cfg, err := ParseConfig([]byte(yml))
		if err == nil {
			var p *Plan
			p, err = Build(cfg)
			if p != nil {
				p.Close()
			}
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("test_size %s: error %v, want %q", c.size, err, c.want)
		}
	}
}
