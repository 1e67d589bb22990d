package audit

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/synthetic"
)

// canaryPenaltyReport runs the canary design (100 canaries drawn around
// the data, pooled over runs runs) on a DP-penalty chain with proposals of
// standard deviation sd, released every `every` of its 40 iterations.
func canaryPenaltyReport(t *testing.T, sd float64, runs, every int) *Report {
	t.Helper()
	g, err := mechanisms.NewGauss([]float64{0, 0}, 3, []float64{1, 0.3, 0.3, 1})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := synthetic.Gauss(40, []float64{0.5, -0.5}, []float64{1, 0.3, 0.3, 1}, 3)
	rng := mechanisms.TrialRNG(17, dataset.SideDPrime, 0, 99)
	tg := Target{Name: "penalty canaries", Pair: dataset.Pair{D: d},
		Mechanism: &mechanisms.Chain{Model: g, Sampler: &mechanisms.DPPenalty{Iters: 40, ProposalSD: []float64{sd}, ClipLLR: 3, Tau: 0.5},
			Init: mechanisms.Init{Theta: []float64{0.5, -0.5}}, Release: mechanisms.ReleaseSpec{Mode: mechanisms.ReleaseTrajectory, Every: every}}}
	for range 100 {
		tg.Canaries = append(tg.Canaries, dataset.Record{X: []float64{0.5 + 2*rng.NormFloat64(), -0.5 + 2*rng.NormFloat64()}})
	}
	o := Options{Seed: 21, Delta: 1e-5, Canaries: &CanaryDesign{Count: 100, Runs: runs}, Features: attacks.LogLik{Model: g, Records: tg.Canaries}}
	r, err := Run(context.Background(), tg, o, Execution{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The canary design reports the utility figures of its runs: per release,
// the counters of every run summed (Runs of them, every proposal counted),
// and the "barely moves" rule with its warnings. A DP-penalty chain whose
// proposals are 50 times wider than the posterior accepts none of them and
// is flagged at every release, with both warnings, however many runs are
// pooled; with proposals at the posterior's scale it moves and nothing is
// flagged, even released at every iteration, where some intervals of one
// proposal per run accept none: the rule then judges every proposal since
// the start (AcceptanceSinceStart), as the release depends on all of them.
func TestCanaryDesignUtility(t *testing.T) {
	for _, runs := range []int{1, 4} {
		stuck := canaryPenaltyReport(t, 50, runs, 10)
		for k, pr := range stuck.Points {
			u := pr.Utility
			if u == nil || u.Runs != runs || u.Iterations != 10 || u.Proposals != 10*runs || u.AcceptanceRate == nil || u.LLREvals == 0 {
				t.Fatalf("runs %d, sd 50, release %d: utility %+v", runs, k, u)
			}
			if *u.AcceptanceRate >= MinAcceptance || !u.BarelyMoves || !strings.Contains(strings.Join(u.Why, ";"), "proposals accepted") {
				t.Errorf("runs %d, sd 50, release %d: acceptance %g, barely moves %v (%v)", runs, k, *u.AcceptanceRate, u.BarelyMoves, u.Why)
			}
			// Fewer than MinJudgedProposals since the previous release:
			// the counts since the start are kept and judged.
			if u.ProposalsSinceStart != 10*runs*(k+1) || u.AcceptanceSinceStart == nil {
				t.Errorf("runs %d, sd 50, release %d: since start %d proposals (%v)", runs, k, u.ProposalsSinceStart, u.AcceptanceSinceStart)
			}
		}
		if !stuck.HeadlineBarelyMoves() || len(stuck.Warnings) != 2 || !strings.Contains(stuck.Warnings[1], "barely moves at 4 of 4 releases") {
			t.Errorf("runs %d, sd 50: warnings %q", runs, stuck.Warnings)
		}
		moving := canaryPenaltyReport(t, 0.15, runs, 1)
		noneAccepted := 0
		for k, pr := range moving.Points {
			u := pr.Utility
			if u == nil || u.Proposals != runs || u.AcceptanceSinceStart == nil {
				t.Fatalf("runs %d, sd 0.15, release %d: utility %+v", runs, k, u)
			}
			if u.Accepted == 0 {
				noneAccepted++
			}
			if u.BarelyMoves {
				t.Errorf("runs %d, sd 0.15, release %d: flagged (%v), %d of %d accepted since the start", runs, k, u.Why, u.AcceptedSinceStart, u.ProposalsSinceStart)
			}
		}
		// The rule on the interval alone would have flagged these.
		if noneAccepted == 0 || len(moving.Warnings) != 0 {
			t.Errorf("runs %d, sd 0.15: %d releases with no acceptance since the previous one; warnings %q", runs, noneAccepted, moving.Warnings)
		}
		last := moving.Points[len(moving.Points)-1].Utility
		t.Logf("runs %d: sd 0.15 accepts %d of %d proposals (%d of 40 intervals accept none); sd 50 accepts %d of %d", runs,
			last.AcceptedSinceStart, last.ProposalsSinceStart, noneAccepted, stuck.Points[3].Utility.AcceptedSinceStart, stuck.Points[3].Utility.ProposalsSinceStart)
	}
}

// The counts since the start are in the JSON only where the rule used
// them: a release with enough proposals of its own has none.
func TestUtilitySinceStartJSON(t *testing.T) {
	judge := func(per []mechanisms.Snapshot, k int) (*Utility, string) {
		u := &Utility{Iterations: 10}
		counterDiffs(u, per, k)
		barelyMoves(u)
		b, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		return u, string(b)
	}
	// 200 proposals of their own: judged alone.
	u, b := judge([]mechanisms.Snapshot{{Iterations: 10, Proposals: 200, Accepted: 1, Runs: 20}}, 0)
	if strings.Contains(b, "since_start") || !u.BarelyMoves || u.Why[0] != "acceptance rate 0.005 < 0.01 over the 10 iterations before it" {
		t.Errorf("200 proposals, 1 accepted: %s", b)
	}
	// None of 20 accepted, but 30 of the 220 since the start: it moves.
	u, b = judge([]mechanisms.Snapshot{{Proposals: 200, Accepted: 30, Runs: 20}, {Proposals: 220, Accepted: 30, Runs: 20}}, 1)
	if !strings.Contains(b, `"proposals_since_start":220,"accepted_since_start":30`) || u.BarelyMoves || *u.AcceptanceRate != 0 || *u.AcceptanceSinceStart != 30.0/220 {
		t.Errorf("20 proposals since the previous release: %s", b)
	}
	// One of 160 since the start: it barely moves, whatever the 10 since
	// the previous release say.
	u, b = judge([]mechanisms.Snapshot{{Proposals: 150, Accepted: 0, Runs: 1}, {Proposals: 160, Accepted: 1, Runs: 1}}, 1)
	if !u.BarelyMoves || *u.AcceptanceRate != 0.1 || u.Why[0] != "1 of 160 proposals accepted since the start (rate 0.00625 < 0.01; the 10 since the previous release are too few to judge alone)" {
		t.Errorf("stuck: %s", b)
	}
	// The first release, with few proposals: said as a count.
	u, _ = judge([]mechanisms.Snapshot{{Proposals: 20, Runs: 1}}, 0)
	if !u.BarelyMoves || u.Why[0] != "0 of 20 proposals accepted before it (rate 0 < 0.01)" {
		t.Errorf("first release: %v", u.Why)
	}
}

// totalsOnly is perCanaryGauss counting proposals like a program's info:
// totals for the run, no counters per release.
type totalsOnly struct {
	perCanaryGauss
	accepted int
}

func (g totalsOnly) Run(ctx context.Context, t mechanisms.Trial, d *dataset.Dataset, emit mechanisms.Emit) (mechanisms.Info, error) {
	info, err := g.perCanaryGauss.Run(ctx, t, d, emit)
	info.Proposals, info.Accepted = 20, g.accepted
	return info, err
}

// A sampler that counts its proposals but not per release (a program's
// info) has no utility rows, but a run that accepted none of its 20
// proposals is still warned about, from the totals; one that accepted 5
// is not.
func TestUtilityTotalsOnly(t *testing.T) {
	for _, accepted := range []int{0, 5} {
		tg := canaryTarget(200, 1, 2)
		tg.Mechanism = totalsOnly{perCanaryGauss{m: 200, mu: 1, points: 2}, accepted}
		r := canaryReport(t, tg, Options{Seed: 3, Canaries: &CanaryDesign{Count: 200, Runs: 2}}, Execution{Workers: 1})
		if r.HasUtility() || r.Info.Proposals != 40 {
			t.Fatalf("accepted %d: utility rows %v, %d proposals", accepted, r.HasUtility(), r.Info.Proposals)
		}
		warned := len(r.Warnings) == 1 && strings.HasPrefix(r.Warnings[0], "the chain barely moves: 0 of 40 proposals accepted over every run (rate 0 < 0.01;")
		if warned != (accepted == 0) || (accepted > 0 && len(r.Warnings) > 0) {
			t.Errorf("accepted %d of 20 per run: warnings %q", accepted, r.Warnings)
		}
	}
}
