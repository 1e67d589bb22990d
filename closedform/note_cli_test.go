package closedform

import (
	"fmt"
	"strings"
	"testing"
)

// The accountants' notes state figures at a δ; they were computed at 1e-5
// whatever δ was asked, so "audit bounds --delta 0.001" printed "at δ =
// 1e-05". NoteFor(δ) states them at δ — the same ε as EpsilonAt(δ) — and
// keeps what was appended after (the DP-SGLD mapping); Note is
// NoteFor(1e-5).
func TestGuaranteeNoteAtDelta(t *testing.T) {
	eta := 1e-4
	c := DPSGLD{N: 10000, Sampling: WithoutReplacement, BatchSize: 100, Clip: 1, Drift: eta / 2, NoiseVar: eta, Steps: 1000}
	gs, err := c.Guarantees()
	if err != nil || len(gs) != 1 {
		t.Fatal(err)
	}
	g := gs[0]
	if g.NoteFor(1e-5) != g.Note {
		t.Errorf("NoteFor(1e-5) differs from Note:\n%s\n%s", g.NoteFor(1e-5), g.Note)
	}
	for _, delta := range []float64{1e-3, 1e-8} {
		n := g.NoteFor(delta)
		eps := g.EpsilonAt(delta)
		for _, want := range []string{fmt.Sprintf("at δ = %g the", delta), fmt.Sprintf("ε(%g) = %.6g pessimistic", delta, eps), "; DP-SGLD mapped with s = "} {
			if !strings.Contains(n, want) {
				t.Errorf("δ = %g: the note lacks %q:\n%s", delta, want, n)
			}
		}
		if strings.Contains(n, "1e-05") {
			t.Errorf("δ = %g: the note still speaks of 1e-05:\n%s", delta, n)
		}
	}
	m, _ := c.SGM()
	pld, err := m.ReplaceOnePLD()
	if err != nil {
		t.Fatal(err)
	}
	if n := pld.NoteFor(1e-3); !strings.Contains(n, "ε(0.001) = ") || strings.Contains(n, "1e-05") {
		t.Errorf("the PLD accountant's note at δ = 0.001:\n%s", n)
	}
}
