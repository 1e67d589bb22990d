package audit

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/internal/radix"
	"github.com/mcmcaudit/mcmcaudit/stats"
)

// describeScores (a float sort per class) gives the bits of the stable
// index ranking it replaced, on scores with many ties, signed zeros and
// infinities; NaN scores rank last (the old walk never ended on one).
func TestDescribeScoresMatchesRanking(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	special := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1)}
	for trial := 0; trial < 200; trial++ {
		n := 2 + rng.IntN(3000)
		levels := 1 + rng.IntN(n)
		scores, label := make([]float64, n), make([]bool, n)
		for i := range scores {
			scores[i] = float64(rng.IntN(levels)) * 0.37
			if rng.IntN(50) == 0 {
				scores[i] = special[rng.IntN(len(special))]
			}
			label[i] = rng.IntN(3) == 0
		}
		label[0], label[1] = true, false
		pos, neg := 0, 0
		for _, l := range label {
			if l {
				pos++
			} else {
				neg++
			}
		}
		got, want := describeScores(scores, label), describeByRank(scores, label, pos, neg)
		if math.Float64bits(float64(got.AUROC)) != math.Float64bits(float64(want.AUROC)) ||
			got.TPRAt1 != want.TPRAt1 || got.TPRAt01 != want.TPRAt01 {
			t.Fatalf("trial %d (n %d, %d levels): %+v, ranking gives %+v", trial, n, levels, got, want)
		}
	}
	// NaN scores rank last, tied: positives 1 (NaN), 2 (score 2); negatives
	// 3 (NaN), 0 (score 1). Pairs won: 2 beats 0 and 3; 1 ties 3: 2.5 / 4.
	scores, label := []float64{1, math.NaN(), 2, math.NaN()}, []bool{false, true, true, false}
	if d := describeScores(scores, label); d.AUROC != 2.5/4 || d.TPRAt1 != 0.5 {
		t.Errorf("with NaN: %+v, want AUROC 0.625, TPR 0.5", d)
	}
}

// describeByRank is the walk describeScores replaced: the groups of equal
// scores in a stable ranking of the indices (NaN-free scores only).
func describeByRank(scores []float64, label []bool, pos, neg int) Descriptive {
	order := rankCanaries(scores)
	var w rocWalk
	for i := 0; i < len(order); {
		j := i
		var gp, gn int
		for j < len(order) && scores[order[j]] == scores[order[i]] {
			if label[order[j]] {
				gp++
			} else {
				gn++
			}
			j++
		}
		w.group(gp, gn, pos, neg)
		i = j
	}
	return w.result(pos, neg)
}

// sortKeys orders keys as a comparison sort does, and orderKey keeps the
// floats' order with −0 and +0 one key.
func TestSortKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, n := range []int{0, 1, 255, 256, 5000, 100000} {
		fs := make([]float64, n)
		for i := range fs {
			switch rng.IntN(4) {
			case 0:
				fs[i] = rng.NormFloat64() * 1e300
			case 1:
				fs[i] = float64(rng.IntN(10)) - 5
			default:
				fs[i] = rng.NormFloat64()
			}
		}
		keys := make([]uint64, n)
		for i, f := range fs {
			keys[i] = orderKey(f)
		}
		radix.Sort(keys, make([]uint64, n))
		slices.Sort(fs)
		for i := range fs {
			if keys[i] != orderKey(fs[i]) {
				t.Fatalf("n %d: key %d is %x, the sorted floats give %x (%g)", n, i, keys[i], orderKey(fs[i]), fs[i])
			}
		}
	}
	if orderKey(math.Copysign(0, -1)) != orderKey(0) || !(orderKey(-1) < orderKey(0) && orderKey(0) < orderKey(math.SmallestNonzeroFloat64) && orderKey(math.Inf(-1)) < orderKey(-math.MaxFloat64)) {
		t.Error("orderKey does not keep the order of -Inf, -1, ±0, the smallest positive float")
	}
}

// maxCountAt is the largest false-positive count whose rate, computed as
// the walk computes it, is at most f: checked against the predicate itself
// at every count up to neg, for every neg up to 3000 and a few rates.
func TestMaxCountAtIsTheRateBoundary(t *testing.T) {
	for neg := 1; neg <= 3000; neg++ {
		for _, f := range []float64{0.01, 0.001, 0.5, 1e-9} {
			m := maxCountAt(neg, f)
			if float64(m)/float64(neg) > f || (m < neg && float64(m+1)/float64(neg) <= f) {
				t.Fatalf("neg %d, f %g: maxCountAt = %d", neg, f, m)
			}
		}
	}
}

// rocWalk accumulates the descriptive figures over groups of equal scores,
// from the highest down, group by group: the walk describeScores once was,
// kept as the reference it is tested against.
type rocWalk struct {
	tp, fp      int
	auc         float64
	tpr1, tpr01 float64
	// fp1 and fp01 are the most false positives at an FPR of at most 1%
	// and 0.1% (maxCountAt): the walk then divides only where it must.
	fp1, fp01 int
	// grid holds the false-positive counts the ROC curve is sampled at
	// (rocGrid), roc the samples settled so far.
	grid []int
	roc  []ROCPoint
}

// group adds a group of gp positives and gn negatives of equal score.
func (w *rocWalk) group(gp, gn, pos, neg int) {
	if w.grid == nil {
		w.grid = rocGrid(neg)
		w.roc = make([]ROCPoint, 0, len(w.grid))
		w.fp1, w.fp01 = maxCountAt(neg, 0.01), maxCountAt(neg, 0.001)
	}
	// A grid count the walk now passes keeps the TPR before this group:
	// the last threshold with at most that many false positives.
	if len(w.roc) < len(w.grid) && w.grid[len(w.roc)] < w.fp+gn {
		before := float64(w.tp) / float64(pos)
		for len(w.roc) < len(w.grid) && w.grid[len(w.roc)] < w.fp+gn {
			w.roc = append(w.roc, ROCPoint{FPR: float64(w.grid[len(w.roc)]) / float64(neg), TPR: before})
		}
	}
	// Negatives of this group lose to the positives above it and tie
	// with those in it.
	w.auc += float64(gn) * (float64(w.tp) + float64(gp)/2)
	w.tp, w.fp = w.tp+gp, w.fp+gn
	// The FPR fp/neg is at most 1% (0.1%) exactly when fp ≤ fp1 (fp01).
	if w.fp <= w.fp1 {
		tpr := float64(w.tp) / float64(pos)
		w.tpr1 = tpr
		if w.fp <= w.fp01 {
			w.tpr01 = tpr
		}
	}
}

// result returns the figures of the walk, once every group is added.
func (w *rocWalk) result(pos, neg int) Descriptive {
	for len(w.roc) < len(w.grid) {
		w.roc = append(w.roc, ROCPoint{FPR: float64(w.grid[len(w.roc)]) / float64(neg), TPR: float64(w.tp) / float64(pos)})
	}
	return Descriptive{AUROC: stats.JSONFloat(w.auc / (float64(pos) * float64(neg))), TPRAt1: stats.JSONFloat(w.tpr1), TPRAt01: stats.JSONFloat(w.tpr01), ROC: w.roc}
}
