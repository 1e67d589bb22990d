package audit

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/closedform"
)

// A theorem's claim as data: decoded, it covers the points that have a
// profile, with the profile its spec describes; a spec that describes no
// claim is refused with one line naming what is wrong.
func TestTheoremClaimSpec(t *testing.T) {
	gdp := closedform.GDPSpec(0.8)
	b, err := json.Marshal(ClaimSpec{Kind: "theorem", Name: "T [v]", Points: []*closedform.ProfileSpec{nil, &gdp}})
	if err != nil {
		t.Fatal(err)
	}
	var s ClaimSpec
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	c, err := s.Claim()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := c.At(0); ok || c.Name != "T [v]" || c.Spec == nil || c.Spec.Kind != "theorem" {
		t.Errorf("point 0 covered, or name/spec lost: %q %+v", c.Name, c.Spec)
	}
	if _, _, ok := c.At(2); ok {
		t.Error("a point beyond the spec is covered")
	}
	prof, _, ok := c.At(1)
	want := GDPClaim(0.8)
	wp, _, _ := want.At(1)
	if !ok || math.Float64bits(prof(1.3)) != math.Float64bits(wp(1.3)) {
		t.Errorf("point 1: covered %v, δ(1.3) = %v, want %v", ok, prof(1.3), wp(1.3))
	}
	bad := closedform.ProfileSpec{Kind: "gdp"}
	for _, c := range []struct {
		spec ClaimSpec
		want string
	}{
		{ClaimSpec{Kind: "theorem", Points: []*closedform.ProfileSpec{&gdp}}, "needs a name"},
		{ClaimSpec{Kind: "theorem", Name: "T"}, "one profile per release point"},
		{ClaimSpec{Kind: "theorem", Name: "T", Points: []*closedform.ProfileSpec{&gdp, &bad}}, `claim "T": points[1]: profile gdp: params`},
		{ClaimSpec{Kind: "theorems"}, "claim kind: must be pure, gdp or theorem"},
	} {
		_, err := c.spec.Claim()
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: error %v, want one line with %q", c.spec, err, c.want)
		}
	}
}
