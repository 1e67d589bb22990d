package audit

import (
	"bytes"
	"context"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/synthetic"
	"gonum.org/v1/gonum/stat/distuv"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// fitPosterior on seven hand-made releases (exact in float32) against a
// correlated 2-D normal law, with three releases of the other side mixed
// in. References by numpy/scipy (docs/derivations/utility.md): whitening
// by scipy.linalg.cholesky, χ² tail by scipy.stats.chi2.sf, KS by
// scipy.stats.kstest(r, chi2(2).cdf, method='exact').
func TestPosteriorFitReference(t *testing.T) {
	law := Normal{Mean: []float64{0.5, -1}, Cov: []float64{2, 0.6, 0.6, 1}}
	draws := [][]float64{{0.625, -1.5}, {2.25, -0.375}, {-1, -2.125}, {1.5, 0.25}, {0, -1}, {3.125, -0.5}, {-0.75, -1.875}}
	sides := []dataset.Side{0, 1, 0, 0, 1, 0, 0, 1, 0, 0}
	tr := &Trials{N: 10, Lo: 0, Hi: 10, P: 1, F: 3, Side: sides, Ref: []float64{0, 0, 0}, X: make([]float32, 30)}
	k := 0
	for i, s := range sides {
		row := []float64{9, 9, 9} // the other side: must be ignored
		if s == dataset.SideD {
			row = []float64{draws[k][0], 7, draws[k][1]}
			k++
		}
		for f, v := range row {
			tr.X[i*3+f] = float32(v)
		}
	}
	cols := map[int]int{0: 0, 1: 2}
	f, err := fitPosterior(tr, 0, dataset.SideD, law, []int{0, 1}, cols)
	if err != nil {
		t.Fatal(err)
	}
	const tol = 1e-12
	if f.Draws != 7 || f.Side != "D" ||
		!near(f.MeanChi2, 0.4731054006968638, tol) || !near(f.MeanPValue, 0.7893442824870963, tol) ||
		!near(f.KS, 0.2887152026748837, tol) || !near(f.KSPValue, 0.5128857576516039, 1e-10) ||
		!near(f.VarianceRatio, 0.791367232868757, tol) ||
		!near(f.MeanError[0], 0.22728432, 1e-8) || !near(f.MeanError[1], -0.01785714, 1e-8) ||
		!near(f.SDRatio[0], 1.09194153, 1e-8) || !near(f.SDRatio[1], 0.86430539, 1e-8) {
		t.Errorf("fit %+v", f)
	}
	// The marginal law of coordinate 1 alone: N(−1, 1).
	f, _ = fitPosterior(tr, 0, dataset.SideD, law, []int{1}, cols)
	if !near(f.MeanChi2, 0.002232142857142857, tol) || !near(f.MeanPValue, 0.962317517108808, tol) ||
		!near(f.KS, 0.24006777969088328, tol) || !near(f.KSPValue, 0.7344781146061347, 1e-10) {
		t.Errorf("marginal fit %+v", f)
	}
}

func TestThetaColumns(t *testing.T) {
	ll := attacks.LogLik{Records: []dataset.Record{{X: []float64{1}}, {X: []float64{2}}}}
	for _, c := range []struct {
		fm   attacks.FeatureMap
		want map[int]int
	}{
		{attacks.Theta{D: 3}, map[int]int{0: 0, 1: 1, 2: 2}},
		{attacks.Concat{ll, attacks.Coords{Idx: []int{2, 0}}, attacks.Theta{D: 3}}, map[int]int{2: 2, 0: 3, 1: 5}},
		{attacks.Concat{attacks.Norm{}, ll}, map[int]int{}},
	} {
		if got := thetaColumns(c.fm); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v: %v, want %v", c.fm.Names(), got, c.want)
		}
	}
}

// The Gaussian query's release law is known exactly: N(q_D, σ²) on D and
// N(q_D′, σ²) on D′. Given as the reference law, the utility figures must
// be those of exact draws; given a law with the wrong mean or spread, they
// must say so. Tolerances: 4.5 standard errors (mean error: SE 1/√n; SD
// ratio: SE ≈ 1/√(2(n−1))), the variance ratio within its χ² quantiles
// at 1e-4 and 1 − 1e-4, p-values above 1e-4 under the exact law (each
// fails with probability 1e-4 for a correct computation; the seed is
// fixed).
func TestUtilityAgainstExactReleaseLaw(t *testing.T) {
	const shift = 0.7
	run := func(post *Posterior) *Report {
		tg := gaussTarget(t, shift)
		tg.Posterior = post
		r, err := Run(context.Background(), tg, gaussOptions(5, 4000), Execution{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	law := func(m, v float64) Normal { return Normal{Mean: []float64{m}, Cov: []float64{v}} }
	// q_D = 0.3 − 0.2 + 0 = 0.1, q_D′ = 0.1 + shift, σ = 1.
	r := run(&Posterior{D: law(0.1, 1), DPrime: law(0.1+shift, 1)})
	u := r.Points[0].Utility
	if u == nil || len(u.Posterior) != 2 || u.AcceptanceRate != nil || u.BarelyMoves || len(r.Warnings) > 0 || !r.HasUtility() {
		t.Fatalf("utility %+v, warnings %v", u, r.Warnings)
	}
	for _, f := range u.Posterior {
		n := float64(f.Draws)
		chi := distuv.ChiSquared{K: n - 1}
		if !near(f.MeanError[0], 0, 4.5/math.Sqrt(n)) || !near(f.SDRatio[0], 1, 4.5/math.Sqrt(2*(n-1))) ||
			f.VarianceRatio < chi.Quantile(1e-4)/(n-1) || f.VarianceRatio > chi.Quantile(1-1e-4)/(n-1) ||
			f.MeanPValue < 1e-4 || f.KSPValue < 1e-4 {
			t.Errorf("exact law, side %s: %+v", f.Side, f)
		}
	}
	// Mean off by 0.3σ on D: n·0.09 ≈ 180 expected in the χ² statistic.
	r = run(&Posterior{D: law(0.4, 1), DPrime: law(0.1+shift, 1)})
	f := r.Points[0].Utility.Posterior[0]
	if n := float64(f.Draws); !near(f.MeanError[0], -0.3, 4.5/math.Sqrt(n)) || f.MeanPValue > 1e-6 {
		t.Errorf("shifted law: %+v", f)
	}
	// Variance 4 on D′ (spread twice the releases'): ratio ¼.
	r = run(&Posterior{D: law(0.1, 1), DPrime: law(0.1+shift, 4)})
	f = r.Points[0].Utility.Posterior[1]
	if n := float64(f.Draws); f.Side != "D′" || !near(f.VarianceRatio, 0.25, 4.5*0.25*math.Sqrt(2/(n-1))) || f.KSPValue > 1e-6 || !near(f.SDRatio[0], 0.5, 4.5*0.5/math.Sqrt(2*(n-1))) {
		t.Errorf("wide law: %+v", f)
	}
	// A posterior 100× wider than the releases: they barely move.
	r = run(&Posterior{D: law(0.1, 1e4), DPrime: law(0.1+shift, 1)})
	if u := r.Points[0].Utility; !u.BarelyMoves || len(r.Warnings) != 2 || !strings.Contains(r.Warnings[0], "headline rests on barely moves") ||
		!strings.Contains(u.Why[0], "on D the releases' variance") || !r.HeadlineBarelyMoves() {
		t.Errorf("narrow releases: %+v %v", u, r.Warnings)
	}
	// A law of the wrong dimension, or not positive definite, is refused.
	for _, bad := range []*Posterior{
		{D: Normal{Mean: []float64{0, 0}, Cov: []float64{1, 0, 0, 1}}, DPrime: law(0, 1)},
		{D: law(0, 1), DPrime: law(0, -1)},
		{D: law(0, 1), DPrime: law(math.NaN(), 1)},
	} {
		tg := gaussTarget(t, shift)
		tg.Posterior = bad
		var fe *FieldError
		if _, err := New(tg, gaussOptions(5, 100)); err == nil || !asFieldError(err, &fe) || fe.Path.Go() != "Posterior" {
			t.Errorf("posterior %+v: error %v", bad, err)
		}
	}
}

func asFieldError(err error, fe **FieldError) bool {
	e, ok := err.(*FieldError)
	*fe = e
	return ok
}

// A DP-penalty chain with proposals far wider than the posterior rejects
// almost every one: the report counts every proposal between releases,
// flags the releases, and warns; with proposals at the posterior's scale
// it moves and nothing is flagged. The exact posterior comes from the
// conjugate model (ExactPosterior).
func TestUtilityCountersAndWarning(t *testing.T) {
	g, err := mechanisms.NewGauss([]float64{0, 0}, 3, []float64{1, 0.3, 0.3, 1})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := synthetic.Gauss(40, []float64{0.5, -0.5}, []float64{1, 0.3, 0.3, 1}, 3)
	pair, err := dataset.Neighbour(d, dataset.ReplaceOne, 0, dataset.Record{X: []float64{3, 3}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sd    float64
		moves bool
	}{{50, false}, {0.15, true}} {
		ch := &mechanisms.Chain{Model: g, Sampler: &mechanisms.DPPenalty{Iters: 300, ProposalSD: []float64{c.sd}, ClipLLR: 3, Tau: 0.5},
			Init: mechanisms.Init{FromPrior: true}, Release: mechanisms.ReleaseSpec{Mode: mechanisms.ReleaseSnapshots, At: []int{100, 300}}}
		post, err := ExactPosterior(ch, pair)
		if err != nil || post == nil {
			t.Fatalf("exact posterior: %v %v", post, err)
		}
		tg := Target{Name: "penalty", Mechanism: ch, Pair: pair, Posterior: post}
		r, err := Run(context.Background(), tg, Options{Trials: 200, Seed: 9, Delta: 1e-5}, Execution{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		for k, pr := range r.Points {
			u := pr.Utility
			span := []int{100, 200}[k]
			if u.Iterations != span || u.Runs != 200 || u.Proposals != 200*span || u.AcceptanceRate == nil || len(u.Posterior) != 2 ||
				*u.AcceptanceRate != float64(u.Accepted)/float64(u.Proposals) || u.ClippedLLRFraction == nil || u.LLREvals != 40*u.Proposals {
				t.Errorf("sd %g release %d: %+v", c.sd, k, u)
			}
			if u.BarelyMoves == c.moves || (!c.moves && !strings.Contains(strings.Join(u.Why, ";"), "acceptance rate")) {
				t.Errorf("sd %g release %d: barely moves %v (%v), acceptance %g", c.sd, k, u.BarelyMoves, u.Why, *u.AcceptanceRate)
			}
		}
		if (len(r.Warnings) > 0) == c.moves || r.HeadlineBarelyMoves() == c.moves || (!c.moves && !strings.Contains(r.Warnings[0], "headline")) {
			t.Errorf("sd %g: warnings %v", c.sd, r.Warnings)
		}
		t.Logf("proposal sd %g: acceptance %.4g then %.4g; mean error on D %.3g SD", c.sd, *r.Points[0].Utility.AcceptanceRate,
			*r.Points[1].Utility.AcceptanceRate, r.Points[1].Utility.Posterior[0].MeanError)
	}
}

// The per-release counters travel in the trials file's header: a part
// written and read back carries them, and merging shards sums them to the
// counters of a single run of every trial (integers: any order, any
// layout).
func TestPerReleaseCountersInParts(t *testing.T) {
	g, _ := mechanisms.NewGauss([]float64{0, 0}, 3, []float64{1, 0.3, 0.3, 1})
	d, _ := synthetic.Gauss(20, []float64{0.5, -0.5}, []float64{1, 0.3, 0.3, 1}, 3)
	pair, _ := dataset.Neighbour(d, dataset.ReplaceOne, 0, dataset.Record{X: []float64{3, 3}})
	ch := &mechanisms.Chain{Model: g, Sampler: &mechanisms.DPPenalty{Iters: 30, ProposalSD: []float64{0.2}, ClipLLR: 3, Tau: 0.5},
		Init: mechanisms.Init{Theta: []float64{0, 0}}, Release: mechanisms.ReleaseSpec{Mode: mechanisms.ReleaseTrajectory, Every: 10}}
	a, err := New(Target{Name: "parts", Mechanism: ch, Pair: pair}, Options{Trials: 60, Seed: 4, Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	a = withWorkers(t, a, 3)
	whole, err := a.Simulate(context.Background(), 0, 60)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole.Info.PerRelease) != 3 || whole.Info.PerRelease[2].Runs != 60 || whole.Info.PerRelease[0].Proposals != 600 {
		t.Fatalf("per-release counters %+v", whole.Info.PerRelease)
	}
	var parts []*Trials
	for _, r := range [][2]int{{40, 60}, {0, 25}, {25, 40}} {
		tr, err := withWorkers(t, a, 1).Simulate(context.Background(), r[0], r[1])
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := WritePart(&buf, tr, nil); err != nil {
			t.Fatal(err)
		}
		back, _, err := ReadPart(&buf, int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.Info, tr.Info) {
			t.Fatalf("part [%d, %d): header info %+v, written %+v", r[0], r[1], back.Info, tr.Info)
		}
		parts = append(parts, back)
	}
	merged, err := MergeTrials(parts, []string{"c", "a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(merged.Info.PerRelease, whole.Info.PerRelease) {
		t.Errorf("merged %+v\nwhole %+v", merged.Info.PerRelease, whole.Info.PerRelease)
	}
}
