package audit

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/stats"
)

// One verdict answers for every claim tested, so α is divided among them:
// with m claims each is tested at confidence 1 − α/(m·mA·mP), and the chance
// of any false VIOLATION stays ≤ α. The claim 0.656-GDP is refuted by this
// audit's evaluation runs at confidence 0.95 but not at 0.975: tested alone
// it is a VIOLATION, tested beside a second claim it is not.
//
// References (scipy 1.10, one-sided Clopper–Pearson upper bounds at level
// (1 − conf)/2 each, beta.ppf(1 − a, k + 1, n − k)), for the GDP rule's
// evaluation counts FP 346/493, FN 34/507 of this seed:
//
//	conf 0.95:  FPR_ub 0.7419056868372665, FNR_ub 0.09245329731143373
//	conf 0.975: FPR_ub 0.7473385624695021, FNR_ub 0.09627502555983895
//
// A μ-GDP claim is refuted iff μ < Φ⁻¹(1 − FPR_ub) − Φ⁻¹(FNR_ub) (Dong,
// Roth & Su 2019, Def. 2.7; the trade-off curve is symmetric): 0.6766 at
// 0.95, 0.6369 at 0.975 (norm.ppf). The region rule's counts (FP 15/493,
// FN 417/507) give 0.5908 and 0.5435: they refute 0.656 at neither level.
func TestClaimsShareAlpha(t *testing.T) {
	const mu0 = 0.656
	run := func(claims ...Claim) *Report {
		o := gaussOptions(21, 2000, "threshold")
		o.Claims = claims
		return runGauss(t, 1, o)
	}
	check := func(r *Report, conf, fpr, fnr float64, refuted bool) {
		t.Helper()
		pr := r.Points[0]
		if c := pr.Attacks[0].Estimates[1].Counts; c.FP != 346 || c.Negatives != 493 || c.FN != 34 || c.Positives != 507 {
			t.Fatalf("GDP rule's evaluation counts %+v: the references below are for FP 346/493, FN 34/507", c)
		}
		if math.Abs(r.ClaimConfidence-conf) > 1e-15 {
			t.Errorf("%d claims: claim confidence %.17g, want %g", len(r.Claims), r.ClaimConfidence, conf)
		}
		ref := pr.Claims[0].Refutation
		if ref == nil {
			t.Fatal("claim not tested")
		}
		if math.Abs(ref.FPR-fpr) > 1e-12 || math.Abs(ref.FNR-fnr) > 1e-12 {
			t.Errorf("%d claims: rates tested FPR %.16g, FNR %.16g; want the GDP rule's at %g: %.16g, %.16g", len(r.Claims), ref.FPR, ref.FNR, conf, fpr, fnr)
		}
		if ref.Refuted != refuted {
			t.Errorf("%d claims: %s refuted %v, want %v (margin %g)", len(r.Claims), pr.Claims[0].Name, ref.Refuted, refuted, ref.Margin)
		}
	}

	alone := run(GDPClaim(mu0))
	check(alone, 0.95, 0.7419056868372665, 0.09245329731143373, true)
	if alone.Verdict != VerdictViolation || alone.ClaimsTested != 1 {
		t.Errorf("one claim: verdict %v, %d claims tested", alone.Verdict, alone.ClaimsTested)
	}
	if !strings.Contains(alone.Violations[0], "FPR ≤ 0.7419, FNR ≤ 0.09245 at confidence 0.95;") {
		t.Errorf("violation does not state its confidence: %q", alone.Violations[0])
	}

	two := run(GDPClaim(mu0), GDPClaim(3))
	check(two, 0.975, 0.7473385624695021, 0.09627502555983895, false)
	if two.Verdict != VerdictNotRefuted || two.ClaimsTested != 2 {
		t.Errorf("two claims: verdict %v, %d claims tested", two.Verdict, two.ClaimsTested)
	}
	// The level is stated with the verdict and in the JSON.
	for _, want := range []string{"2 claims tested, α divided among them", "each claim at α/2 = 0.025", "verdict holds at confidence 0.95 for the 2 claims together"} {
		if l := two.ClaimLevel(); !strings.Contains(l, want) {
			t.Errorf("level %q does not say %q", l, want)
		}
	}
	if !strings.Contains(two.Multiplicity, "each ε bound at level α = 0.05; 2 claims tested, α divided among them (Bonferroni): each claim's test at level α/2 = 0.025") {
		t.Errorf("multiplicity %q", two.Multiplicity)
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, two); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		N    int     `json:"claims_tested"`
		Conf float64 `json:"claim_confidence"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil || doc.N != 2 || doc.Conf != two.ClaimConfidence {
		t.Errorf("JSON claims_tested %d, claim_confidence %g (%v)", doc.N, doc.Conf, err)
	}
}

// The claims' share of α comes on top of the division among attacks and
// release points: 2 claims × 2 attacks under Bonferroni test each claim at
// 1 − 0.05/4, while the ε bounds stay at 1 − 0.05/2.
func TestClaimsShareAlphaWithAttacks(t *testing.T) {
	o := gaussOptions(21, 400, "threshold", "linear")
	o.AttackSelection = SelectBonferroni
	o.Claims = []Claim{GDPClaim(0.5), PureClaim(1, 1e-5)}
	r := runGauss(t, 1, o)
	if r.TestConfidence != 1-0.05/2 || r.ClaimConfidence != 1-0.05/4 {
		t.Errorf("test confidence %g, claim confidence %g; want %g, %g", r.TestConfidence, r.ClaimConfidence, 1-0.05/2, 1-0.05/4)
	}
	if l := r.ClaimLevel(); !strings.Contains(l, "each claim at α/2 = 0.025, each test at α/4 = 0.0125 (confidence 0.9875)") {
		t.Errorf("level %q", l)
	}
	// Each claim was tested with rate bounds at the claims' confidence:
	// those of one candidate rule's evaluation counts (either attack's
	// region or GDP rule), at 1 − 0.05/4.
	for _, cr := range r.Points[0].Claims {
		ref := cr.Refutation
		if ref == nil {
			t.Fatalf("%s not tested", cr.Name)
		}
		found := false
		for _, ar := range r.Points[0].Attacks {
			for _, c := range []stats.Counts{ar.Estimates[0].Counts, ar.Estimates[1].Counts} {
				if f, g := rateBounds(c, 1-0.05/4); f == ref.FPR && g == ref.FNR {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("%s tested with FPR ≤ %g, FNR ≤ %g: no candidate's bounds at confidence %g", cr.Name, ref.FPR, ref.FNR, 1-0.05/4)
		}
	}
}
