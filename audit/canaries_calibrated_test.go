package audit

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// handTrials stores rows[j][k] as trial j's features at release point k.
func handTrials(rows [][][]float64) *Trials {
	n, p, f := len(rows), len(rows[0]), len(rows[0][0])
	t := &Trials{N: n, Lo: 0, Hi: n, P: p, F: f, Ref: make([]float64, p*f), X: make([]float32, n*p*f)}
	for j, rj := range rows {
		for k, v := range rj {
			for i, x := range v {
				t.X[(j*p+k)*f+i] = float32(x)
			}
		}
	}
	return t
}

// The calibrated score is the run's score minus the mean of the reference
// runs' (trials Runs … Runs+R−1), each canary from the run it belongs to;
// averaged, it is the mean of those over the releases so far. Values are
// exact in float32, so the comparison is exact.
func TestCanaryCalibratedScoreByHand(t *testing.T) {
	// Two runs (canaries 0-1 in run 0, 2-3 in run 1), two references,
	// two release points.
	rows := [][][]float64{
		{{1, 2, 90, 90}, {3, 4, 90, 90}}, // run 0: only canaries 0, 1 are read
		{{90, 90, 5, 6}, {7, 8, 9, 10}},  // run 1: only canaries 2, 3
		{{0, 1, 2, 3}, {1, 1, 1, 1}},     // reference 0
		{{2, 1, 0, -1}, {3, 3, 3, 3}},    // reference 1
	}
	tr := handTrials(rows)
	for _, c := range []struct {
		name string
		cd   CanaryDesign
		want [][]float64
	}{
		{"raw", CanaryDesign{Count: 4, Runs: 2}, [][]float64{{1, 2, 5, 6}, {3, 4, 9, 10}}},
		// Reference means: point 0 (1, 1, 1, 1); point 1 (2, 2, 2, 2).
		{"calibrated", CanaryDesign{Count: 4, Runs: 2, Score: ScoreCalibrated, References: 2}, [][]float64{{0, 1, 4, 5}, {1, 2, 7, 8}}},
		{"calibrated, averaged", CanaryDesign{Count: 4, Runs: 2, Score: ScoreCalibrated, References: 2, AverageReleases: true}, [][]float64{{0, 1, 4, 5}, {0.5, 1.5, 5.5, 6.5}}},
		{"raw, averaged", CanaryDesign{Count: 4, Runs: 2, AverageReleases: true}, [][]float64{{1, 2, 5, 6}, {2, 3, 7, 8}}},
	} {
		sc := newCanaryScorer(&c.cd, tr)
		for k, want := range c.want {
			got := sc.at(k)
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("%s, point %d: scores %v, want %v", c.name, k, got, want)
					break
				}
			}
		}
	}
}

// calibratedAudit is New for perCanaryGauss with a calibrated score.
func calibratedAudit(t *testing.T, cd CanaryDesign, seed uint64) *Audit {
	t.Helper()
	a, err := New(canaryTarget(cd.Count, 2, 2), Options{Seed: seed, Canaries: &cd})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The reference runs never see S: with the coins of the runs flipped
// (every canary in swapped with every one out), the reference runs'
// releases are bit for bit the same, while the runs' change. They are
// trials Runs … Runs+R−1 of the audit, counted by Options.Trials and the
// work estimate, and their data holds no canary (or every one).
func TestCanaryReferencesIgnoreCoins(t *testing.T) {
	for _, refCanaries := range []string{"", ReferenceAll} {
		cd := CanaryDesign{Count: 40, Runs: 2, Score: ScoreCalibrated, References: 3, ReferenceCanaries: refCanaries}
		a := calibratedAudit(t, cd, 11)
		if got := a.Options().Trials; got != 5 {
			t.Fatalf("%q: %d trials, want 2 runs + 3 references", refCanaries, got)
		}
		if w := a.Work(); w.Runs(0, 5) <= w.Runs(0, 2) {
			t.Errorf("%q: the work estimate does not count the reference runs", refCanaries)
		}
		before, err := a.Simulate(context.Background(), 0, 5)
		if err != nil {
			t.Fatal(err)
		}
		// The same audit with every coin flipped.
		b := calibratedAudit(t, cd, 11)
		cr := b.canaries
		for i := range cr.include {
			cr.include[i] = !cr.include[i]
		}
		for j := range cd.Runs {
			lo, hi := cd.RunCanaries(j)
			clear(cr.masks[j])
			copy(cr.masks[j][lo:hi], cr.include[lo:hi])
			cr.data[j].Records = append(append([]dataset.Record(nil), b.target.Pair.D.Records...), included(b.target.Canaries, cr.masks[j])...)
		}
		for r := range 3 {
			want := len(b.target.Pair.D.Records)
			if refCanaries == ReferenceAll {
				want += cd.Count
			}
			if got := cr.data[cd.Runs+r].Len(); got != want {
				t.Errorf("%q: reference run %d trains on %d records, want %d", refCanaries, r, got, want)
			}
		}
		after, err := b.Simulate(context.Background(), 0, 5)
		if err != nil {
			t.Fatal(err)
		}
		row0, row1 := make([]float64, before.F), make([]float64, before.F)
		for j := range 5 {
			same := true
			for k := range before.P {
				before.Row(j, k, row0)
				after.Row(j, k, row1)
				for i := range row0 {
					same = same && row0[i] == row1[i]
				}
			}
			if isRef := j >= cd.Runs; same != isRef {
				t.Errorf("%q: trial %d (reference %v) unchanged by flipped coins: %v", refCanaries, j, isRef, same)
			}
		}
	}
}

// Score and References are part of the configuration: its hash changes
// with them, but not with the spelling of the defaults (raw, none, R = 1).
func TestCanaryCalibratedHash(t *testing.T) {
	id := func(cd CanaryDesign) string { return calibratedAudit(t, cd, 3).ID() }
	raw := id(CanaryDesign{Count: 20})
	if id(CanaryDesign{Count: 20, Score: ScoreRaw}) != raw {
		t.Error("score raw and the default hash differently")
	}
	cal := id(CanaryDesign{Count: 20, Score: ScoreCalibrated})
	if cal == raw {
		t.Error("the calibrated score hashes as the raw one")
	}
	if id(CanaryDesign{Count: 20, Score: ScoreCalibrated, References: 1, ReferenceCanaries: ReferenceNone}) != cal {
		t.Error("the calibrated defaults spelt out hash differently")
	}
	for _, cd := range []CanaryDesign{
		{Count: 20, Score: ScoreCalibrated, References: 2},
		{Count: 20, Score: ScoreCalibrated, ReferenceCanaries: ReferenceAll},
		{Count: 20, Score: ScoreCalibrated, AverageReleases: true},
	} {
		if id(cd) == cal {
			t.Errorf("%+v hashes as the calibrated default", cd)
		}
	}
}

// The calibrated design's fields are checked, each error naming its field.
func TestCanaryCalibratedRefused(t *testing.T) {
	for _, c := range []struct {
		cd     CanaryDesign
		trials int
		field  string
	}{
		{CanaryDesign{Count: 10, Score: "lira"}, 0, "Canaries.Score"},
		{CanaryDesign{Count: 10, References: 2}, 0, "Canaries.References"},
		{CanaryDesign{Count: 10, Score: ScoreRaw, References: 1}, 0, "Canaries.References"},
		{CanaryDesign{Count: 10, Score: ScoreCalibrated, References: -1}, 0, "Canaries.References"},
		{CanaryDesign{Count: 10, Score: ScoreCalibrated, References: MaxReferences + 1}, 0, "Canaries.References"},
		{CanaryDesign{Count: 10, ReferenceCanaries: ReferenceAll}, 0, "Canaries.ReferenceCanaries"},
		{CanaryDesign{Count: 10, Score: ScoreCalibrated, ReferenceCanaries: "half"}, 0, "Canaries.ReferenceCanaries"},
		// The trials are the runs and the references: 1 + 2 here.
		{CanaryDesign{Count: 10, Score: ScoreCalibrated, References: 2}, 1, "Trials"},
	} {
		cd := c.cd
		_, err := New(canaryTarget(10, 1, 1), Options{Canaries: &cd, Trials: c.trials})
		var fe *FieldError
		if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), c.field+": ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: error %v, want one line naming %s", c.cd, err, c.field)
		}
	}
	cd := CanaryDesign{Count: 10, Score: ScoreCalibrated, References: 2}
	if _, err := New(canaryTarget(10, 1, 1), Options{Canaries: &cd, Trials: 3}); err != nil {
		t.Errorf("trials = runs + references refused: %v", err)
	}
}

// Under the null — canaries without effect on the release — the calibrated
// and averaged scores are independent of S, so v ~ Bin(100, 1/2) exactly
// (m = 1000, r = 100) and ε_lb > 0 with probability P[Bin(100, 1/2) ≥ 59]
// = 0.0443, as for the raw score (TestCanaryNullValidity): over 500 seeds
// the count must stay at most 41, the 0.999 quantile of Bin(500, 0.05).
func TestCanaryCalibratedNull(t *testing.T) {
	seeds := 500
	if testing.Short() {
		seeds = 100
	}
	pos, posMu := 0, 0
	for s := range seeds {
		cd := CanaryDesign{Count: 1000, Score: ScoreCalibrated, References: 2, ReferenceCanaries: ReferenceAll, AverageReleases: true}
		r := canaryReport(t, canaryTarget(1000, 0, 2), Options{Seed: uint64(s), Canaries: &cd}, Execution{Workers: 1})
		if r.Epsilon.Epsilon > 0 {
			pos++
		}
		if r.Points[len(r.Points)-1].MuBound().Mu > 0 {
			posMu++
		}
	}
	lim := map[int]int{500: 41, 100: 13}[seeds]
	if pos > lim || posMu > lim {
		t.Errorf("null, calibrated: ε_lb > 0 in %d, μ_lb > 0 in %d of %d seeds (limit %d)", pos, posMu, seeds, lim)
	}
	t.Logf("null, calibrated: ε_lb > 0 in %d/%d, μ_lb > 0 in %d/%d", pos, seeds, posMu, seeds)
}

// With canaries that do move the release (μ = 2 per canary), the
// calibrated report names its score and finds the leakage.
func TestCanaryCalibratedReport(t *testing.T) {
	cd := CanaryDesign{Count: 200, Score: ScoreCalibrated, References: 3}
	r := canaryReport(t, canaryTarget(200, 2, 1), Options{Seed: 5, Canaries: &cd}, Execution{Workers: 1})
	c := r.Canaries
	if c == nil || c.Score != ScoreCalibrated || c.References != 3 || r.Trials != 4 {
		t.Fatalf("canary info %+v, %d trials", c, r.Trials)
	}
	if len(r.Attacks) != 1 || r.Attacks[0] != CanaryAttackCalibrated || r.Points[0].Attacks[0].Attack != CanaryAttackCalibrated {
		t.Errorf("attacks %v", r.Attacks)
	}
	if r.Epsilon.Epsilon <= 0 {
		t.Errorf("μ = 2 per canary, calibrated: ε_lb = %g", r.Epsilon.Epsilon)
	}
}
