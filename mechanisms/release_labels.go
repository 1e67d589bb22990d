package mechanisms

import (
	"strconv"
	"strings"
)

// IterationsReporter is implemented by a mechanism whose release points
// may not know the iteration each release follows (a program sampler that
// declares only labels): IterationsKnown reports whether
// ReleasePoint.Iteration is the iteration, or only the release's rank.
type IterationsReporter interface {
	IterationsKnown() bool
}

// IterationsKnown reports whether m's release points carry the iteration
// each release follows: true for every mechanism but an
// IterationsReporter that says otherwise.
func IterationsKnown(m Mechanism) bool {
	if r, ok := m.(IterationsReporter); ok {
		return r.IterationsKnown()
	}
	return true
}

// PointsFromLabels returns the release points of a sampler known only by
// its release labels (a program's handshake, the columns of a samples
// file), and whether their iterations are known. The iteration of each
// release comes from, in order: iterations, when it holds one value per
// label (a program's handshake "iterations"); the labels themselves, when
// every one reads "iteration K" with K ≥ 1 increasing (how built-in
// snapshot and trajectory releases are labelled, and the examples'
// programs); otherwise it is unknown, and Iteration is the release's rank
// 1, 2, … (known = false).
func PointsFromLabels(labels []string, iterations []int) (pts []ReleasePoint, known bool) {
	its, known := iterations, len(iterations) == len(labels) && increasing(iterations)
	if !known {
		its, known = labelIterations(labels)
	}
	for k, l := range labels {
		it := k + 1
		if known {
			it = its[k]
		}
		pts = append(pts, ReleasePoint{Iteration: it, Label: l})
	}
	return pts, known
}

// labelIterations reads K from labels "iteration K".
func labelIterations(labels []string) ([]int, bool) {
	out := make([]int, len(labels))
	for k, l := range labels {
		rest, ok := strings.CutPrefix(strings.TrimSpace(l), "iteration ")
		if !ok {
			return nil, false
		}
		v, err := strconv.Atoi(strings.TrimSpace(rest))
		if err != nil {
			return nil, false
		}
		out[k] = v
	}
	return out, len(out) > 0 && increasing(out)
}

// increasing reports whether xs is strictly increasing from a value ≥ 1.
func increasing(xs []int) bool {
	for k, x := range xs {
		if x < 1 || (k > 0 && x <= xs[k-1]) {
			return false
		}
	}
	return true
}
