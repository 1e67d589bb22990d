package scenario

import (
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
)

// Each of Balle et al.'s wired bounds appears, with every assumption
// checked and holding, for the scenario of testdata that it covers, and
// says why it does not apply to the others (at their last release, as
// "audit bounds" lists them).
func TestBalleBoundsPerScenario(t *testing.T) {
	type want struct {
		source, variant string
		applies         bool
		reason          string
	}
	cases := map[string][]want{
		"sgld-onepass-gauss": {
			{"Thm 5 (one-pass", "gradient-difference sensitivity (proof of Thm 5)", true, ""},
			{"Thm 5 (one-pass", "random visiting order", true, ""},
			{"Cor 7", "", false, "random minibatch"},
			{"Thm 1 (amplification by mixing)", "", false, "data-independent Markov kernel"},
		},
		"ula-gauss-ou": {
			{"Cor 7", "", true, ""},
			{"Thm 5 (one-pass", "", false, "not one pass"},
		},
		"ula-projected-linreg": {
			{"Cor 7", "", false, "projection"},
			{"Thm 5 (one-pass", "", false, "not one pass"},
			{"composition", "", true, ""},
		},
		"ula-logistic":     {{"Cor 7", "", false, "not known to be Gaussian"}, {"Thm 5 (one-pass", "", false, "not one pass"}},
		"ula-linreg":       {{"Cor 7", "", false, "multiple of the identity"}},
		"sgld-interim":     {{"Thm 5 (one-pass", "", false, "not one pass"}},
		"dp-sgld-correct":  {{"Thm 5 (one-pass", "", false, "scheme"}},
		"dp-hmc-gauss":     {{"Thm 5 and Cor 7", "", false, "accept/reject"}},
		"dp-penalty-gauss": {{"Thm 5 and Cor 7", "", false, "accept/reject"}},
	}
	for name, ws := range cases {
		c, err := LoadConfig("../../testdata/" + name + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		p, err := Build(c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		pts := p.Points()
		gs := mechanisms.Guarantees(p.Mechanism, p.Pair, pts[len(pts)-1])
		for _, w := range ws {
			var g *closedform.Guarantee
			for i := range gs {
				if strings.Contains(gs[i].Source, w.source) && strings.Contains(gs[i].Variant, w.variant) {
					g = &gs[i]
					break
				}
			}
			if g == nil {
				t.Errorf("%s: no %s [%s]", name, w.source, w.variant)
				continue
			}
			if g.Applies != w.applies || !strings.Contains(g.Reason, w.reason) {
				t.Errorf("%s: %s [%s]: applies %v (%q), want %v (%q)", name, g.Source, g.Variant, g.Applies, g.Reason, w.applies, w.reason)
			}
			for _, ch := range g.Checks {
				if g.Applies && (!ch.Holds || ch.Detail == "") {
					t.Errorf("%s: %s: check %q (%q)", name, g.Source, ch.Name, ch.Detail)
				}
			}
		}
	}
}
