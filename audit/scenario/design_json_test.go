package scenario_test

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/audit/scenario"
	"github.com/mcmcaudit/mcmcaudit/closedform"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
)

// testdataScenarios returns every scenario of testdata/, built.
func testdataScenarios(t *testing.T) []*scenario.Plan {
	t.Helper()
	files, err := filepath.Glob("../../testdata/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario in testdata: %v", err)
	}
	var out []*scenario.Plan
	for _, f := range files {
		c, err := scenario.LoadConfig(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		p, err := scenario.Build(c)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		t.Cleanup(func() { p.Close() })
		out = append(out, p)
	}
	return out
}

// epsGrid returns the ε at which two profiles are compared: a geometric
// grid, a linear one on [0, 20], and the given knots with their
// neighbours; coarse for the accountants that minimise numerically at
// every ε.
func epsGrid(coarse bool, knots ...float64) []float64 {
	ratio, n := 1.2, 200
	if coarse {
		ratio, n = 2, 20
	}
	eps := []float64{0, 800}
	for x := 1e-6; x <= 1e3; x *= ratio {
		eps = append(eps, x)
	}
	for i := 0; i <= n; i++ {
		eps = append(eps, float64(i)*20/float64(n))
	}
	for _, k := range knots {
		if k >= 0 && !math.IsInf(k, 0) {
			eps = append(eps, k, math.Nextafter(k, 0), math.Nextafter(k, math.Inf(1)))
		}
	}
	return eps
}

// expensive reports whether a spec holds an accountant that minimises
// numerically at every ε (milliseconds per value).
func expensive(s *closedform.ProfileSpec) bool {
	if s == nil {
		return false
	}
	if strings.HasPrefix(s.Kind, "estimator-") || s.Kind == "transfer" {
		return true
	}
	for i := range s.Args {
		if expensive(&s.Args[i]) {
			return true
		}
	}
	return false
}

// specKnots returns the scalar parameters of a spec tree and a quarter of
// each (where the common forms jump).
func specKnots(s closedform.ProfileSpec) []float64 {
	var out []float64
	for _, v := range s.Params {
		out = append(out, float64(v), float64(v)/4)
	}
	for _, a := range s.Args {
		out = append(out, specKnots(a)...)
	}
	return out
}

// Every testdata scenario (its directory read, no list written here)
// is data: the guarantees its mechanism declares rebuild from their specs
// (checkGuarantees), and its design survives a JSON round trip
// (checkDesign).
func TestScenarioDesignsAsData(t *testing.T) {
	plans := testdataScenarios(t)
	checkGuarantees(t, plans)
	for _, p := range plans {
		checkDesign(t, p)
	}
}

// checkGuarantees checks that every guarantee a scenario's mechanism
// declares (whether or not the scenario tests the theorems), at every
// release point, carries a profile spec that
// survives a JSON round trip and rebuilds its profile bit for bit.
func checkGuarantees(t *testing.T, plans []*scenario.Plan) {
	t.Helper()
	checked := 0
	for _, p := range plans {
		for _, pt := range p.Points() {
			for _, g := range mechanisms.Guarantees(p.Mechanism, p.Pair, pt) {
				if !g.Applies {
					continue
				}
				if g.Spec == nil {
					t.Fatalf("%s, %s: %s applies but carries no profile spec", p.Config.Name, pt.Label, g.Source)
				}
				b, err := json.Marshal(g.Spec)
				if err != nil {
					t.Fatalf("%s: %v", p.Config.Name, err)
				}
				var s closedform.ProfileSpec
				if err := json.Unmarshal(b, &s); err != nil {
					t.Fatalf("%s: %v", p.Config.Name, err)
				}
				prof, err := s.Profile()
				if err != nil {
					t.Fatalf("%s, %s: %v", p.Config.Name, g.Source, err)
				}
				for _, e := range epsGrid(expensive(&s), specKnots(s)...) {
					if a, b := g.Profile(e), prof(e); math.Float64bits(a) != math.Float64bits(b) {
						t.Fatalf("%s, %s, %s: δ(%v) = %v, rebuilt %v", p.Config.Name, pt.Label, g.Source, e, a, b)
					}
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("no testdata scenario declares a guarantee")
	}
}

// checkDesign checks that the design of a scenario (theorem claims
// included) is data: it marshals, decodes and marshals again to the same
// bytes, and the decoded claims give the same profiles, ε at δ and Refute
// results as the built ones at every release point.
func checkDesign(t *testing.T, p *scenario.Plan) {
	t.Helper()
	d := p.Audit.Design()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatalf("%s: %v", p.Config.Name, err)
	}
	var back audit.Design
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("%s: %v", p.Config.Name, err)
	}
	b2, err := json.Marshal(back)
	if err != nil || !bytes.Equal(b, b2) {
		t.Fatalf("%s: the design's JSON changes on a round trip (%v)", p.Config.Name, err)
	}
	if _, err := audit.FromDesign(back); err != nil {
		t.Fatalf("%s: %v", p.Config.Name, err)
	}
	if len(back.Claims) != len(d.Claims) {
		t.Fatalf("%s: %d claims decoded, %d built", p.Config.Name, len(back.Claims), len(d.Claims))
	}
	theorems := 0
	for i, c := range d.Claims {
		if c.Spec != nil && c.Spec.Kind == "theorem" {
			theorems++
		}
		sameClaim(t, p.Config.Name, len(d.Points), d.Options.Delta, c, back.Claims[i])
	}
	if p.Config.Claim != nil && p.Config.Claim.Theorems && theorems == 0 {
		t.Fatalf("%s: tests the theorems, but its design holds no theorem claim", p.Config.Name)
	}
	for i, c := range back.Claims {
		if c.Spec == nil || c.Spec.Kind != "theorem" {
			continue
		}
		bad := back
		bad.Claims = append([]audit.Claim(nil), back.Claims...)
		s := *c.Spec
		s.Points = s.Points[:len(s.Points)-1]
		bad.Claims[i].Spec = &s
		if _, err := audit.FromDesign(bad); err == nil || !strings.Contains(err.Error(), "profiles for") {
			t.Fatalf("%s: a theorem claim with one profile too few: %v", p.Config.Name, err)
		}
		break
	}
}

// sameClaim compares a claim with its decoded copy at every release point.
func sameClaim(t *testing.T, scen string, points int, delta float64, c, got audit.Claim) {
	t.Helper()
	if got.Name != c.Name {
		t.Fatalf("%s: claim %q decoded as %q", scen, c.Name, got.Name)
	}
	for k := 0; k < points; k++ {
		pa, ka, oka := c.At(k)
		pb, kb, okb := got.At(k)
		if oka != okb || !reflect.DeepEqual(ka, kb) {
			t.Fatalf("%s, %s, point %d: covered %v, knots %v; decoded %v, %v", scen, c.Name, k, oka, ka, okb, kb)
		}
		if !oka {
			continue
		}
		var spec *closedform.ProfileSpec
		if c.Spec != nil && c.Spec.Kind == "theorem" {
			spec = c.Spec.Points[k]
		}
		knots := ka
		if spec != nil {
			knots = append(knots, specKnots(*spec)...)
		}
		for _, e := range epsGrid(expensive(spec), knots...) {
			if a, b := pa(e), pb(e); math.Float64bits(a) != math.Float64bits(b) {
				t.Fatalf("%s, %s, point %d: δ(%v) = %v, decoded %v", scen, c.Name, k, e, a, b)
			}
		}
		for _, dl := range []float64{delta, 1e-3} {
			if a, b := audit.EpsilonAt(pa, dl), audit.EpsilonAt(pb, dl); math.Float64bits(a) != math.Float64bits(b) {
				t.Fatalf("%s, %s, point %d: ε(%g) = %v, decoded %v", scen, c.Name, k, dl, a, b)
			}
		}
		if expensive(spec) && k != points-1 {
			continue // Refute evaluates the profile some 2,100 times
		}
		if a, b := audit.Refute(0.2, 0.3, pa, ka), audit.Refute(0.2, 0.3, pb, kb); !reflect.DeepEqual(a, b) {
			t.Fatalf("%s, %s, point %d: Refute %+v, decoded %+v", scen, c.Name, k, a, b)
		}
	}
}
