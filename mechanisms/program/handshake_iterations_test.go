package program

import (
	"slices"
	"strings"
	"testing"
)

// The handshake's optional iterations: one increasing integer ≥ 1 per
// label, or a one-line fault naming the key.
func TestHandshakeIterations(t *testing.T) {
	hs, f := parseHandshake([]byte(`{"mcmcaudit": 1, "dim": 2, "releases": ["a", "b"], "iterations": [4, 8]}`))
	if f != nil || !slices.Equal(hs.Iterations, []int{4, 8}) {
		t.Fatalf("%+v %v", hs, f)
	}
	m := FromHandshake(hs, MechanismConfig{})
	if pts, _ := m.Points(nil); !m.IterationsKnown() || pts[1].Iteration != 8 {
		t.Errorf("points %+v known %v", pts, m.IterationsKnown())
	}
	if m := FromHandshake(Handshake{Dim: 1, Releases: []string{"a", "b"}}, MechanismConfig{}); m.IterationsKnown() {
		t.Errorf("bare labels: iterations known")
	}
	for _, bad := range []string{`[4]`, `[8, 4]`, `[0, 4]`, `"4, 8"`, `[4.5, 8]`} {
		line := `{"mcmcaudit": 1, "dim": 2, "releases": ["a", "b"], "iterations": ` + bad + `}`
		if _, f := parseHandshake([]byte(line)); f == nil || !strings.Contains(f.detail, "handshake iterations") {
			t.Errorf("%s: fault %v", bad, f)
		}
	}
}
