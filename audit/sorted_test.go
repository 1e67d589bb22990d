package audit

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/internal/radix"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// Counting a rule on the sorted scores by binary search gives the counts
// of attacks.Tally run by run, and describing them low-first gives the
// figures of the negated scores, on scores with ties, NaNs, ±0 and ±Inf and
// thresholds at scores, between them, at ±0 and at ±Inf.
func TestSortedScoresAgreeRunByRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 13))
	special := []float64{math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), math.NaN()}
	for trial := range 200 {
		n := 1 + rng.IntN(3000)
		scores := make([]float64, n)
		label := make([]bool, n)
		for i := range scores {
			switch r := rng.IntN(20); {
			case r == 0:
				scores[i] = special[rng.IntN(len(special))]
			case r < 8:
				scores[i] = float64(rng.IntN(9)-4) / 2 // ties
			default:
				scores[i] = rng.NormFloat64()
			}
			label[i] = rng.IntN(3) == 0
		}
		label[0], label[n-1] = true, false // both labels present
		// Every negative's score NaN, or all but one, in the first trials.
		if trial < 8 {
			for i := range scores {
				if !label[i] && (trial < 4 || i != n-1) {
					scores[i] = math.NaN()
				}
			}
		}
		var ss sortedScores
		if !ss.fill(scores, label) {
			t.Fatal("fill refused two labels")
		}
		thresholds := append([]float64{scores[rng.IntN(n)], rng.NormFloat64(), 0.25, math.Copysign(0, -1)}, special...)
		for _, thr := range thresholds {
			for _, o := range []int{1, -1} {
				r := attacks.Rule{Threshold: thr, Orientation: o}
				got, ok := ss.count(r)
				if math.IsNaN(thr) { // left to the run-by-run count
					if ok {
						t.Fatal("a NaN threshold was counted by binary search")
					}
					continue
				}
				want := countScores(scores, label, []attacks.Rule{r}, nil)[0]
				if !ok || got != want {
					t.Fatalf("trial %d, rule %+v: sorted counts %+v (ok %v), run by run %+v", trial, r, got, ok, want)
				}
			}
		}
		neg := make([]float64, n)
		for i, s := range scores {
			neg[i] = -s
		}
		if got, want := ss.describe(false), describeScores(neg, label); !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d: low-first walk %+v, negated scores %+v", trial, got, want)
		}
		if got, want := ss.describe(true), describeScores(scores, label); !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d: high-first walk %+v, describeScores %+v", trial, got, want)
		}
		for _, high := range []bool{true, false} {
			if got, want := ss.describe(high), walkGroups(&ss, high); !reflect.DeepEqual(got, want) {
				t.Fatalf("trial %d, high first %v: %+v, the group walk gives %+v", trial, high, got, want)
			}
		}
	}
}

// walkGroups is the reference for sortedScores.describe: the groups of
// equal keys walked one by one (rocWalk) from the highest down (from the
// lowest up when highFirst is false), the NaN scores last as one group.
func walkGroups(ss *sortedScores, highFirst bool) Descriptive {
	type run struct {
		key uint64
		pos bool
	}
	var runs []run
	for _, k := range ss.ps {
		runs = append(runs, run{k, true})
	}
	for _, k := range ss.ns {
		runs = append(runs, run{k, false})
	}
	slices.SortFunc(runs, func(a, b run) int {
		if highFirst {
			return cmp.Compare(b.key, a.key)
		}
		return cmp.Compare(a.key, b.key)
	})
	var w rocWalk
	for i := 0; i < len(runs); {
		var gp, gn int
		j := i
		for ; j < len(runs) && runs[j].key == runs[i].key; j++ {
			if runs[j].pos {
				gp++
			} else {
				gn++
			}
		}
		w.group(gp, gn, ss.pos, ss.neg)
		i = j
	}
	if ss.nanP+ss.nanN > 0 {
		w.group(ss.nanP, ss.nanN, ss.pos, ss.neg)
	}
	return w.result(ss.pos, ss.neg)
}

// coarseReleases releases one value at three points: S + N(0, 1) rounded
// to quarters (many ties), the same times ±0 for a third of the runs (both
// zeros), and S + N(0, 1) unrounded, with S the sum of the records (0 on D,
// 1 on D′ of twoReleasePair).
type coarseReleases struct{}

func (coarseReleases) Dim() int { return 1 }

func (coarseReleases) Points(*dataset.Dataset) ([]mechanisms.ReleasePoint, error) {
	return []mechanisms.ReleasePoint{{Iteration: 1, Label: "ties"}, {Iteration: 2, Label: "zeros"}, {Iteration: 3, Label: "plain"}}, nil
}

func (coarseReleases) Run(_ context.Context, t mechanisms.Trial, d *dataset.Dataset, emit mechanisms.Emit) (mechanisms.Info, error) {
	s := 0.0
	for _, r := range d.Records {
		s += r.X[0]
	}
	v := math.Round(4*(s+t.RNG.NormFloat64())) / 4
	if err := emit(0, []float64{v}); err != nil {
		return mechanisms.Info{}, err
	}
	z := v
	if t.RNG.IntN(3) == 0 {
		z = math.Copysign(0, t.RNG.NormFloat64())
	}
	if err := emit(1, []float64{z}); err != nil {
		return mechanisms.Info{}, err
	}
	return mechanisms.Info{}, emit(2, []float64{s + t.RNG.NormFloat64()})
}

// An audit whose one attack is the threshold on the one stored feature
// sorts the store itself (fitStoreScored); it must find what the general
// path finds. With the threshold attack listed twice the general path runs
// (two attacks), whose first attack's results, the descriptive figures and
// the bounds are compared with the one-attack audit's at every release.
func TestStoreScoredMatchesGeneralPath(t *testing.T) {
	one := gaussOptions(5, 3000, "threshold")
	two := gaussOptions(5, 3000, "threshold", "threshold")
	var reps [2]*Report
	for i, o := range []Options{one, two} {
		a, err := New(Target{Name: "coarse", Mechanism: coarseReleases{}, Pair: twoReleasePair(t)}, o)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := a.Simulate(context.Background(), 0, o.Trials)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 && !a.storeScored(tr) {
			t.Fatal("the one-attack audit does not sort the store")
		}
		if reps[i], err = a.Analyze(tr); err != nil {
			t.Fatal(err)
		}
	}
	for k := range reps[0].Points {
		p, q := reps[0].Points[k], reps[1].Points[k]
		if !reflect.DeepEqual(p.Attacks[0], q.Attacks[0]) {
			t.Errorf("release %s: attack %+v from the store, %+v by the general path", p.Point.Label, p.Attacks[0], q.Attacks[0])
		}
		if !reflect.DeepEqual(p.Descriptive, q.Descriptive) {
			t.Errorf("release %s: descriptive %+v from the store, %+v by the general path", p.Point.Label, p.Descriptive, q.Descriptive)
		}
		for j := range p.Estimates {
			if p.Estimates[j].Bound != q.Estimates[j].Bound {
				t.Errorf("release %s: bound %+v from the store, %+v by the general path", p.Point.Label, p.Estimates[j].Bound, q.Estimates[j].Bound)
			}
		}
	}
}

// gather reads two points in one pass: each side's keys in trial order,
// positives first, and a NaN at one point marks that point alone.
func TestGatherTwoPoints(t *testing.T) {
	const n = 7
	tr := &Trials{N: n, Lo: 0, Hi: n, P: 3, F: 1, Ref: make([]float64, 3), X: make([]float32, n*3)}
	label := []bool{true, false, false, true, false, true, false}
	for i := range n {
		tr.X[i*3], tr.X[i*3+2] = float32(i), float32(-i)
	}
	tr.X[4*3+2] = float32(math.NaN())
	var g0, g2 gathered
	gather(tr, []int{0, 2}, 0, n, label, []*gathered{&g0, &g2})
	want := []uint32{}
	for _, side := range []bool{true, false} {
		for i, l := range label {
			if l == side {
				want = append(want, radix.Float32Key(float32(i)))
			}
		}
	}
	if !g0.ok || g2.ok || g0.pos != 3 || !slices.Equal(g0.k32, want) {
		t.Fatalf("point 0: ok %v keys %v (pos %d), want %v; point 2 ok %v, want false (NaN)", g0.ok, g0.k32, g0.pos, want, g2.ok)
	}
	var one gathered
	gather(tr, []int{2}, 0, 4, label[:4], []*gathered{&one})
	if !one.ok || one.pos != 2 {
		t.Fatalf("point 2 on trials 0–3: ok %v pos %d, want true and 2", one.ok, one.pos)
	}
}

// manyReleases releases one value at each of its points: S·k/points +
// N(0, 1), rounded to quarters at every third point (ties), with S the sum
// of the records.
type manyReleases struct{ points int }

func (m manyReleases) Dim() int { return 1 }

func (m manyReleases) Points(*dataset.Dataset) ([]mechanisms.ReleasePoint, error) {
	ps := make([]mechanisms.ReleasePoint, m.points)
	for k := range ps {
		ps[k] = mechanisms.ReleasePoint{Iteration: k + 1, Label: fmt.Sprintf("p%d", k)}
	}
	return ps, nil
}

func (m manyReleases) Run(_ context.Context, t mechanisms.Trial, d *dataset.Dataset, emit mechanisms.Emit) (mechanisms.Info, error) {
	s := 0.0
	for _, r := range d.Records {
		s += r.X[0]
	}
	for k := range m.points {
		v := s*float64(k)/float64(m.points) + t.RNG.NormFloat64()
		if k%3 == 0 {
			v = math.Round(4*v) / 4
		}
		if err := emit(k, []float64{v}); err != nil {
			return mechanisms.Info{}, err
		}
	}
	return mechanisms.Info{}, nil
}

// An analysis that sorts the store (each worker gathering the keys of two
// points at a time, and the points taken in any order) gives every point
// what one worker gives: with 2, 3 and 4 workers, 11 points, ties.
func TestStoreScoredAnyWorkers(t *testing.T) {
	o := gaussOptions(5, 3000, "threshold")
	a, err := New(Target{Name: "many", Mechanism: manyReleases{points: 11}, Pair: twoReleasePair(t)}, o)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := a.Simulate(context.Background(), 0, o.Trials)
	if err != nil {
		t.Fatal(err)
	}
	if !a.storeScored(tr) {
		t.Fatal("the audit does not sort the store")
	}
	var want *Report
	for _, w := range []int{1, 2, 3, 4} {
		b, err := a.WithExecution(Execution{Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.Analyze(tr)
		if err != nil {
			t.Fatal(err)
		}
		if w == 1 {
			want = got
			continue
		}
		for k := range want.Points {
			if !reflect.DeepEqual(got.Points[k], want.Points[k]) {
				t.Errorf("%d workers, release %s: %+v; one worker: %+v", w, want.Points[k].Point.Label, got.Points[k], want.Points[k])
			}
		}
	}
}
