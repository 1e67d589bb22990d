package cli

import (
	"math"
	"testing"
	"time"
)

// The estimate of the time left on a synthetic timeline like the run that
// prompted it: two minutes of start-up (datasets, programs started), then
// 16 workers each taking 16 s per trial, so that trials complete in
// batches of 16, one batch every 16 s (1 trial/s), for 3000 trials. The
// estimate waits for enough completed trials, then stays within 10% of
// the truth (the time the timeline really has left) at every report, or
// within one batch period near the end (the last batch holds 8 trials but
// takes the 16 s of a full one, which no rate can foresee).
// The former estimate, elapsed·(left/done), read at its first plain line
// after the first batch, was over five times the truth; this test checks
// that as well, so that the timeline is one where the difference shows.
func TestETAEstimatorSyntheticTimeline(t *testing.T) {
	const (
		total   = 3000
		startup = 120 * time.Second
		batch   = 16
		every   = 16 * time.Second
	)
	doneAt := func(el time.Duration) int {
		if el < startup {
			return 0
		}
		return min(total, batch*int((el-startup)/every))
	}
	end := startup + time.Duration(total/batch)*every
	if total%batch != 0 {
		end += every
	}
	e := etaEstimator{total: total}
	first := time.Duration(-1)
	oldFirst := 0.0
	for el := time.Second; el < end; el += time.Second {
		done := doneAt(el)
		e.observe(el, done)
		truth := end - el
		left, ok := e.estimate(el)
		if done > 0 && oldFirst == 0 {
			oldFirst = float64(el) * float64(total-done) / float64(done) / float64(truth)
		}
		if !ok {
			if first >= 0 {
				t.Fatalf("no estimate at %s after one at %s", el, first)
			}
			continue
		}
		if first < 0 {
			first = el
		}
		if r := float64(left) / float64(truth); math.Abs(float64(left-truth)) > math.Max(0.10*float64(truth), float64(every)) {
			t.Errorf("at %s (%d done): estimate %s, truth %s (ratio %.3f)", el, done, left, truth, r)
		}
	}
	if first < 0 {
		t.Fatal("never an estimate")
	}
	// The first estimate waits for max(20, 2% of 3000) = 60 trials past the
	// first batch and three reports of progress: 4 batches after the first.
	if want := startup + 5*every; first != want {
		t.Errorf("first estimate at %s, want %s", first, want)
	}
	if oldFirst < 5 {
		t.Errorf("the former estimate was %.2f× the truth: the timeline does not show the start-up bias", oldFirst)
	}
}

// Before any trial is done, and with a resumed run's trials reported at
// once, there is no estimate; the trials done before the first report do
// not count towards the rate.
func TestETAEstimatorResumed(t *testing.T) {
	e := etaEstimator{total: 1000}
	e.observe(time.Second, 0)
	if _, ok := e.estimate(time.Second); ok {
		t.Fatal("an estimate before any trial is done")
	}
	e.observe(2*time.Second, 900) // resumed from a checkpoint
	for i := 1; i <= 40; i++ {
		e.observe(time.Duration(2+i)*time.Second, 900+i)
	}
	// 40 trials in 40 s after the resumed 900: 60 s left.
	left, ok := e.estimate(42 * time.Second)
	if !ok || left != 60*time.Second {
		t.Errorf("estimate %s (%v), want 60s", left, ok)
	}
}
