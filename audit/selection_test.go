package audit

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// twoReleases releases two noisy views of the sum S of the records (S = 0
// on D, 1 on D′, see twoReleasePair): at "A" (1.7·S + Z₁, 1.2·S + Z₂), where
// the linear attack sees both coordinates and the threshold attack the
// first, and at "B" (1.9·S + Z₃, Z₄), where both see the first. Zᵢ ~ N(0, 1).
type twoReleases struct{}

func (twoReleases) Dim() int { return 2 }

func (twoReleases) Points(*dataset.Dataset) ([]mechanisms.ReleasePoint, error) {
	return []mechanisms.ReleasePoint{{Iteration: 1, Label: "A"}, {Iteration: 2, Label: "B"}}, nil
}

func (twoReleases) Run(_ context.Context, t mechanisms.Trial, d *dataset.Dataset, emit mechanisms.Emit) (mechanisms.Info, error) {
	s := 0.0
	for _, r := range d.Records {
		s += r.X[0]
	}
	if err := emit(0, []float64{1.7*s + t.RNG.NormFloat64(), 1.2*s + t.RNG.NormFloat64()}); err != nil {
		return mechanisms.Info{}, err
	}
	return mechanisms.Info{}, emit(1, []float64{1.9*s + t.RNG.NormFloat64(), t.RNG.NormFloat64()})
}

func twoReleasePair(t testing.TB) dataset.Pair {
	d := &dataset.Dataset{Name: "D", Records: []dataset.Record{{X: []float64{0.5}}, {X: []float64{-0.5}}}}
	pair, err := dataset.Neighbour(d, dataset.ReplaceOne, 0, dataset.Record{X: []float64{1.5}})
	if err != nil {
		t.Fatal(err)
	}
	return pair
}

// With every attack counted on the evaluation runs (Bonferroni), the
// release the verdict rests on must still be chosen on training runs only
// (DESIGN: "attack and release point chosen there"). The evaluation runs at
// A are corrupted — N(0, 50²) noise added to the second coordinate, which
// the linear attack leans on and the threshold attack ignores — so that
// another attack wins A on the evaluation runs; nothing the training runs
// say changes, so neither may the headline release. (Before the fix the
// release was ranked by the training score of the attack that won on the
// evaluation runs, and the headline moved from A to B.) The same holds
// when a claim is tested (then releases are ranked by the selection runs'
// evidence against it).
func TestBonferroniReleaseRankedOnTrainingRunsOnly(t *testing.T) {
	for _, claims := range [][]Claim{nil, {GDPClaim(1)}} {
		o := gaussOptions(11, 4000, "threshold", "linear")
		o.AttackSelection, o.Claims = SelectBonferroni, claims
		a, err := New(Target{Name: "two releases", Mechanism: twoReleases{}, Pair: twoReleasePair(t)}, o)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := a.Simulate(context.Background(), 0, o.Trials)
		if err != nil {
			t.Fatal(err)
		}
		before, err := a.Analyze(tr)
		if err != nil {
			t.Fatal(err)
		}
		pa, pb := before.Points[0], before.Points[1]
		if claims == nil {
			// Preconditions that make the test able to fail: at A the
			// linear attack wins on the selection runs, at B the
			// selection-run score lies between the two attacks' at A.
			thrA, linA := pa.Attacks[0].Estimates[0].Selection.Epsilon, pa.Attacks[1].Estimates[0].Selection.Epsilon
			selB := max(pb.Attacks[0].Estimates[0].Selection.Epsilon, pb.Attacks[1].Estimates[0].Selection.Epsilon)
			t.Logf("selection-run region bounds: A threshold %.4f, A linear %.4f, B best %.4f", thrA, linA, selB)
			if !(thrA < selB && selB < linA) {
				t.Fatalf("the setting does not separate the rankings: A threshold %.4f, B %.4f, A linear %.4f", thrA, selB, linA)
			}
			if before.Headline != 0 {
				t.Fatalf("headline %d before the evaluation runs were touched, want 0 (A)", before.Headline)
			}
		}
		if pa.Estimates[0].Best != 1 {
			t.Fatalf("claims %d: the linear attack does not win A on the untouched evaluation runs", len(claims))
		}

		nTr, nSe, _ := a.Options().Split.Sizes(o.Trials) // the split New filled in
		rng := rand.New(rand.NewPCG(1, 2))
		row := make([]float64, tr.F)
		for i := nTr + nSe; i < o.Trials; i++ {
			tr.Row(i, 0, row)
			row[1] += 50 * rng.NormFloat64()
			if err := tr.set(i, 0, row); err != nil {
				t.Fatal(err)
			}
		}
		after, err := a.Analyze(tr)
		if err != nil {
			t.Fatal(err)
		}
		pa = after.Points[0]
		if pa.Estimates[0].Best != 0 {
			t.Fatalf("after corrupting A's evaluation runs the %s attack still wins there (ε_lb: threshold %.4f, linear %.4f): the test shows nothing",
				pa.Attacks[pa.Estimates[0].Best].Attack, pa.Attacks[0].Estimates[0].Bound.Epsilon, pa.Attacks[1].Estimates[0].Bound.Epsilon)
		}
		for k := range before.Points {
			if a, b := before.Points[k].Attacks, after.Points[k].Attacks; a[0].Estimates[0].Selection != b[0].Estimates[0].Selection || a[1].Estimates[0].Selection != b[1].Estimates[0].Selection {
				t.Fatalf("release %d: selection-run results changed with the evaluation runs: %+v %+v → %+v %+v", k, a[0].Estimates[0].Selection, a[1].Estimates[0].Selection, b[0].Estimates[0].Selection, b[1].Estimates[0].Selection)
			}
		}
		if after.Headline != before.Headline {
			t.Errorf("claims %d: headline release moved from %s to %s when only evaluation runs changed", len(claims),
				before.Points[before.Headline].Point.Label, after.Points[after.Headline].Point.Label)
		}
	}
}
