package scenario

import (
	"math"
	"testing"
)

// TestPathExactBarker checks the exact ε of the DP Barker path scenario:
// 0.497 at δ = 1e-5 for its 200 iterations (the 200-fold composition of
// the per-iteration mixture pair, closedform.TestMixturePLDComposed), and
// nil where it is unknown: under the releases threat model, and with a
// planted bug.
func TestPathExactBarker(t *testing.T) {
	c, err := LoadConfig("../../testdata/tight/dp-barker-path.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c.Audit.Trials = 100
	c.Audit.Delta = 1e-5 // the exact ε quoted in the scenario's comment
	p, err := Build(c)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	eps := pathExact(c, p, p.Points())
	if len(eps) != 1 || math.Abs(eps[0]-0.4974) > 0.002 {
		t.Fatalf("exact ε = %v, want [0.497]", eps)
	}
	rel := *c
	rel.Threat = ThreatReleases
	if e := pathExact(&rel, p, p.Points()); e != nil {
		t.Errorf("threat releases: exact ε %v, want nil", e)
	}
	sets := []string{"sampler.dp_barker.plant.noise=0.5"}
	for _, s := range sets {
		st, err := ParseSetting(s)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := LoadConfig("../../testdata/tight/dp-barker-path.yaml", st)
		if err != nil {
			t.Fatal(err)
		}
		c2.Audit.Trials = 100
		p2, err := Build(c2)
		if err != nil {
			t.Fatal(err)
		}
		if e := pathExact(c2, p2, p2.Points()); e != nil {
			t.Errorf("%s: exact ε %v, want nil", s, e)
		}
		p2.Close()
	}
}
