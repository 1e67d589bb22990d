package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/internal/bounds"
)

// A program sampler may own its data: its scenario has no data section and
// the plan no dataset pair. "audit bounds" on it describes that instead of
// dereferencing the missing datasets (it panicked while printing), and says
// that no theorem covers the program.
func TestBoundsProgramWithoutData(t *testing.T) {
	scen := programScenario(t, t.TempDir(), "ok", -1, 100, "")
	stdout, stderr, code := runCLI(t, "bounds", scen)
	if code != exitOK || stderr != "" {
		t.Fatalf("bounds on a program without data: exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(stdout, "datasets   owned by the mechanism (the scenario has no data section)") {
		t.Errorf("the datasets line does not say the program owns its data:\n%s", stdout)
	}
	if !strings.Contains(stdout, "declares no theoretical guarantee") {
		t.Errorf("no line says that no theorem covers the program:\n%s", stdout)
	}
	stdout, stderr, code = runCLI(t, "bounds", scen, "--json", "-")
	var doc struct {
		Guarantees []bounds.Row `json:"guarantees"`
	}
	if code != exitOK || stderr != "" || json.Unmarshal([]byte(stdout), &doc) != nil {
		t.Fatalf("bounds --json on a program without data: exit %d, stderr %q, stdout %q", code, stderr, stdout)
	}
	if len(doc.Guarantees) != 1 || doc.Guarantees[0].Applies || doc.Guarantees[0].Epsilon != nil {
		t.Errorf("want one guarantee that does not apply, got %+v", doc.Guarantees)
	}
}

// "audit bounds" lists Bertazzi et al.'s Prop. 3.2 where the release's law
// is known in closed form (ULA on the Gaussian-mean model) and Prop. 3.3's
// lower bound beside it; the lower bound may not exceed the exact ε of the
// chain that Balle et al.'s Cor. 7 gives for the same scenario (an exact
// GDP profile for ULA on a Gaussian target), and Prop. 3.2's ε may not fall
// below it. On the built-in interim-region scenario Prop. 3.3 proves
// nothing at its δ, and says why.
func TestBoundsConvergenceTransfer(t *testing.T) {
	type doc struct {
		Guarantees  []bounds.Row           `json:"guarantees"`
		LowerBounds []bounds.LowerBoundRow `json:"lower_bounds"`
	}
	// At δ = 1e-5 Prop. 3.3 proves something (β ≈ 0.14 is small against
	// the posteriors' profile there); at δ = 0.6 Prop. 3.2 is finite
	// (its floor, min over ε of δπ(ε) + β(1 + e^ε), is about 0.58).
	at := func(delta string) (prop32, cor7 float64, lower bounds.LowerBoundRow) {
		stdout, stderr, code := runCLI(t, "bounds", "../../testdata/ula-gauss-ou.yaml", "--delta", delta, "--json", "-")
		var d doc
		if code != exitOK || json.Unmarshal([]byte(stdout), &d) != nil || len(d.LowerBounds) != 1 {
			t.Fatalf("bounds --delta %s: exit %d, stderr %q", delta, code, stderr)
		}
		prop32, cor7 = -1, -1
		for _, g := range d.Guarantees {
			switch {
			case strings.HasPrefix(g.Source, "Bertazzi et al. 2025, Prop. 3.2") && g.Applies:
				prop32 = float64(*g.Epsilon)
			case strings.Contains(g.Source, "Cor 7") && g.Applies:
				cor7 = float64(*g.Epsilon)
			}
		}
		if prop32 < 0 || cor7 < 0 {
			t.Fatalf("--delta %s: want Prop. 3.2 and Cor 7 to apply: %+v", delta, d.Guarantees)
		}
		return prop32, cor7, d.LowerBounds[0]
	}
	_, cor7, lower := at("1e-5")
	if !lower.Applies || lower.Epsilon == nil {
		t.Fatalf("δ = 1e-5: Prop. 3.3 does not apply: %s", lower.Reason)
	}
	if lo := float64(*lower.Epsilon); !(lo > 0 && lo <= cor7) {
		t.Errorf("δ = 1e-5: Prop. 3.3 ε ≥ %g above the exact (Cor 7) ε = %g", lo, cor7)
	}
	prop32, cor7, _ := at("0.6")
	if !(cor7 <= prop32 && !math.IsInf(prop32, 1)) {
		t.Errorf("δ = 0.6: Prop. 3.2 ε ≤ %g, exact (Cor 7) ε = %g", prop32, cor7)
	}
	// Prop. 3.4: at δ = 0.3 Cor 7 makes the chain (ε, 0.3)-DP with an ε at
	// which the posteriors' δ′ exceeds 0.3, which forces a distance to the
	// posterior on D or D′; the certified β bounds both distances, so it
	// must exceed the forced one (or the theorem or β would be wrong).
	stdout, stderr, code := runCLI(t, "bounds", "../../testdata/ula-gauss-ou.yaml", "--delta", "0.3", "--json", "-")
	var d struct {
		LowerBounds []bounds.LowerBoundRow `json:"lower_bounds"`
		RequiredTV  []bounds.RequiredTVRow `json:"required_tv"`
	}
	if code != exitOK || json.Unmarshal([]byte(stdout), &d) != nil || len(d.LowerBounds) != 1 {
		t.Fatalf("bounds --delta 0.3: exit %d, stderr %q", code, stderr)
	}
	found := false
	for _, q := range d.RequiredTV {
		beta := math.Max(d.LowerBounds[0].BetaD, d.LowerBounds[0].BetaDPrime)
		if !(q.TV > 0 && q.TV < beta && q.DeltaPosterior > q.Delta) {
			t.Errorf("Prop. 3.4 for %s: forced TV %g, certified β %g, δ′ %g, δ %g", q.Theorem, q.TV, beta, q.DeltaPosterior, q.Delta)
		}
		found = found || strings.Contains(q.Theorem, "Cor 7")
	}
	if !found {
		t.Errorf("no Prop. 3.4 row for Cor 7 at δ = 0.3: %+v", d.RequiredTV)
	}
	stdout, _, code = runCLI(t, "bounds")
	if code != exitOK || !strings.Contains(stdout, "Prop. 3.3 / A.3 (lower bound from convergence): — proves nothing at δ") ||
		!strings.Contains(stdout, "Prop. 3.2 (i) / A.2") {
		t.Errorf("built-in scenario: exit %d, no Prop. 3.2 row or no reason for Prop. 3.3:\n%s", code, stdout)
	}
}
