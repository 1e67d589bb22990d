package audit

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/stats"
)

// One verdict answers for every claim tested, so α is divided among them:
// with m claims each is tested once at confidence 1 − α/m, and the chance
// of any false VIOLATION stays ≤ α. The claim (1.03, 1e-5)-DP is refuted
// by this audit's evaluation runs at confidence 0.95 but not at 0.975:
// tested alone it is a VIOLATION, tested beside a second claim it is not.
//
// The rule tested is the headline's (a single (ε, δ) claim is tested with
// no other): the region estimator's rule, chosen
// on the selection runs; its evaluation counts are FP 15/493, FN 417/507
// for this seed (the headline ε_lb's counts). References (one-sided
// Clopper–Pearson upper bounds at level (1 − conf)/2 each, by bisection
// on the binomial CDF summed in log space in Python's floats, independent
// of the stats package):
//
//	conf 0.95:  FPR_ub 0.04968699265514607, FNR_ub 0.8547702608477388
//	conf 0.975: FPR_ub 0.052676548152222474, FNR_ub 0.8590146023691807
//
// An (ε₀, δ₀) claim is refuted iff 1 − δ₀ − FNR_ub − e^ε₀·FPR_ub > 0 (or
// the mirror image, far from it here; Heller & Fetaya eq. 10), i.e. iff
// ε₀ < ln((1 − δ₀ − FNR_ub)/FPR_ub): 1.07251 at 0.95, 0.98442 at 0.975 for
// δ₀ = 1e-5 (math.log in Python on the bounds above).
func TestClaimsShareAlpha(t *testing.T) {
	const eps0 = 1.03
	run := func(claims ...Claim) *Report {
		o := gaussOptions(21, 2000, "threshold")
		o.Claims = claims
		return runGauss(t, 1, o)
	}
	check := func(r *Report, conf, fpr, fnr float64, refuted bool) {
		t.Helper()
		ct := r.ClaimTests[0]
		if c := ct.Refutation.Counts; ct.Rule != "region" || c == nil || *c != r.Epsilon.Counts || c.FP != 15 || c.Negatives != 493 || c.FN != 417 || c.Positives != 507 {
			t.Fatalf("tested the %s rule, evaluation counts %+v: the references are for the region rule's FP 15/493, FN 417/507 (the headline's)", ct.Rule, c)
		}
		if math.Abs(r.ClaimConfidence-conf) > 1e-15 {
			t.Errorf("%d claims: claim confidence %.17g, want %g", len(r.Claims), r.ClaimConfidence, conf)
		}
		ref := r.ClaimTests[0].Refutation
		if ref == nil {
			t.Fatal("claim not tested")
		}
		if math.Abs(ref.FPR-fpr) > 1e-12 || math.Abs(ref.FNR-fnr) > 1e-12 {
			t.Errorf("%d claims: rates tested FPR %.16g, FNR %.16g; want the region rule's at %g: %.16g, %.16g", len(r.Claims), ref.FPR, ref.FNR, conf, fpr, fnr)
		}
		if ref.Refuted != refuted {
			t.Errorf("%d claims: %s refuted %v, want %v (margin %g)", len(r.Claims), r.ClaimTests[0].Name, ref.Refuted, refuted, ref.Margin)
		}
	}

	alone := run(PureClaim(eps0, 1e-5))
	check(alone, 0.95, 0.04968699265514607, 0.8547702608477388, true)
	if alone.Verdict != VerdictViolation || alone.ClaimsTested != 1 {
		t.Errorf("one claim: verdict %v, %d claims tested", alone.Verdict, alone.ClaimsTested)
	}
	if !strings.Contains(alone.Violations[0], "FPR ≤ 0.04969, FNR ≤ 0.8548 at confidence 0.95;") {
		t.Errorf("violation does not state its confidence: %q", alone.Violations[0])
	}

	two := run(PureClaim(eps0, 1e-5), GDPClaim(3))
	check(two, 0.975, 0.052676548152222474, 0.8590146023691807, false)
	if two.Verdict != VerdictNotRefuted || two.ClaimsTested != 2 {
		t.Errorf("two claims: verdict %v, %d claims tested", two.Verdict, two.ClaimsTested)
	}
	// The level is stated with the verdict and in the JSON.
	for _, want := range []string{"2 claims tested, α divided among them", "each claim at α/2 = 0.025", "verdict holds at confidence 0.95 for the 2 claims together"} {
		if l := two.ClaimLevel(); !strings.Contains(l, want) {
			t.Errorf("level %q does not say %q", l, want)
		}
	}
	if !strings.Contains(two.Multiplicity, "each ε bound at level α = 0.05; 2 claims tested, α divided among them (Bonferroni): each claim tested once, on the release, attack and rule chosen for it on the selection runs (no evaluation run enters the choice, so α is not divided over them), at level α/2 = 0.025") {
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

// The claims' share of α no longer comes on top of the division among
// attacks: 2 claims × 2 attacks under Bonferroni test each claim once at
// 1 − 0.05/2 (its attack and rule chosen on the selection runs), while the
// ε bounds, which take every attack to the evaluation runs, are at
// 1 − 0.05/2 too.
func TestClaimsShareAlphaWithAttacks(t *testing.T) {
	o := gaussOptions(21, 400, "threshold", "linear")
	o.AttackSelection = SelectBonferroni
	o.Claims = []Claim{GDPClaim(0.5), PureClaim(1, 1e-5)}
	r := runGauss(t, 1, o)
	if r.TestConfidence != 1-0.05/2 || r.ClaimConfidence != 1-0.05/2 {
		t.Errorf("test confidence %g, claim confidence %g; want %g, %g", r.TestConfidence, r.ClaimConfidence, 1-0.05/2, 1-0.05/2)
	}
	if l := r.ClaimLevel(); !strings.Contains(l, "each claim at α/2 = 0.025 (confidence 0.975); each claim tested once") {
		t.Errorf("level %q", l)
	}
	// Each claim was tested with rate bounds at the claims' confidence:
	// those of one estimator's evaluation counts at one of the two attacks
	// (both evaluated under Bonferroni), at 1 − 0.05/2 — the headline's
	// region rule for the single (ε, δ) claim, any estimator's for the
	// whole-profile GDP claim.
	for ci, ct := range r.ClaimTests {
		ref := ct.Refutation
		if ref == nil || ref.Counts == nil {
			t.Fatalf("%s not tested", ct.Name)
		}
		if ref.Estimator != ct.Rule || (ci == 1 && ct.Rule != "region") {
			t.Errorf("%s tested with the %s rule (refutation: %s)", ct.Name, ct.Rule, ref.Estimator)
		}
		j := slices.IndexFunc(o.Estimators, func(e Estimator) bool { return e.Name() == ct.Rule })
		if o.Estimators == nil {
			j = slices.IndexFunc(Estimators(), func(e Estimator) bool { return e.Name() == ct.Rule })
		}
		if f, g := rateBounds(*ref.Counts, 1-0.05/2); f != ref.FPR || g != ref.FNR {
			t.Errorf("%s tested with FPR ≤ %g, FNR ≤ %g, not its counts' bounds at %g", ct.Name, ref.FPR, ref.FNR, 1-0.05/2)
		}
		var cands []stats.Counts
		for _, ar := range r.Points[0].Attacks {
			if ar.Attack == ct.Attack {
				cands = append(cands, ar.Estimates[j].Counts)
			}
		}
		found := false
		for _, c := range cands {
			found = found || c == *ref.Counts
		}
		if !found {
			t.Errorf("%s tested with counts %+v: no candidate of the %s attack has them", ct.Name, *ref.Counts, ct.Attack)
		}
	}
}
