package samples

import (
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/program"
)

// Recording the releases (run --save-releases) keeps what the engine knows
// of the recorded mechanism's determinism check: a program checks itself
// (its trials are not rerun by the engine), a Go sampler does not.
func TestRecorderForwardsSelfChecking(t *testing.T) {
	for _, c := range []struct {
		m    mechanisms.Mechanism
		want bool
	}{
		{program.FromHandshake(program.Handshake{Dim: 1, Releases: []string{"final"}}, program.MechanismConfig{}), true},
		{&mechanisms.Chain{}, false},
	} {
		if got := (&Recorder{Mechanism: c.m}).ChecksDeterminism(); got != c.want {
			t.Errorf("%T: ChecksDeterminism = %v, want %v", c.m, got, c.want)
		}
	}
}
