package audit

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// DeterminismPolicy says what Simulate does when a trial run again does
// not release the same values bit for bit: a mechanism that draws from
// math/rand's global generator, the clock or state shared between runs
// instead of its Trial's RNG and Seed makes results that depend on the
// worker count, the shard layout and the run, so that nobody can
// reproduce them.
type DeterminismPolicy uint8

const (
	// DeterminismRefused (the zero value) reruns DeterminismChecks trials
	// and stops the audit with an error wrapping ErrNotDeterministic on a
	// mismatch.
	DeterminismRefused DeterminismPolicy = iota
	// DeterminismNoted reruns the same trials but lets the audit go on: the
	// report then carries a warning (Report.Warnings) and the mismatches
	// are counted in its sampler info (counter DeterminismCounter).
	DeterminismNoted
	// DeterminismUnchecked reruns nothing.
	DeterminismUnchecked
)

// DeterminismChecks is the number of trials of an audit run twice more,
// each time in a fresh goroutine, and compared bit for bit: trials
// ⌊(2j+1)·n/(2·DeterminismChecks)⌋ of n, j = 0, 1, … (the same whatever
// the shard or checkpoint layout, so each is checked once per audit).
// Programs are checked by their own rule (SelfChecking) and a canary
// design's runs, each a whole audit's worth of work, are not rerun.
const DeterminismChecks = 2

// DeterminismCounter is the sampler-info counter (mechanisms.Info.Counters)
// that counts the checked trials whose reruns differed under
// DeterminismNoted.
const DeterminismCounter = "determinism_check_mismatches"

// ErrNotDeterministic is wrapped by the error of an audit whose mechanism
// released different values when a trial was run again.
var ErrNotDeterministic = errors.New("the mechanism is not deterministic")

// SelfChecking is implemented by mechanisms that check their own
// determinism (a program, whose chosen trials are rerun in a fresh
// process); the engine then reruns none of their trials.
type SelfChecking interface {
	// ChecksDeterminism reports whether the mechanism checks itself.
	ChecksDeterminism() bool
}

// determinismTrials returns the trials of [lo, hi) that the determinism
// check reruns (none when the audit is not checked).
func (a *Audit) determinismTrials(lo, hi int) []int {
	if a.exec.Determinism == DeterminismUnchecked || a.canaries != nil || a.target.Mechanism == nil {
		return nil
	}
	if s, ok := a.target.Mechanism.(SelfChecking); ok && s.ChecksDeterminism() {
		return nil
	}
	var out []int
	n := int64(a.opts.Trials)
	for j := int64(0); j < DeterminismChecks; j++ {
		if i := int((2*j + 1) * n / (2 * DeterminismChecks)); i >= lo && i < hi {
			out = append(out, i)
		}
	}
	return out
}

// checkDeterminism runs each checked trial of [lo, hi) twice, each run in
// a goroutine of its own, and compares what they release bit for bit.
// Under DeterminismRefused a mismatch is an error; under DeterminismNoted
// it is counted in t.Info.Counters.
func (a *Audit) checkDeterminism(ctx context.Context, t *Trials, lo, hi int) error {
	for _, i := range a.determinismTrials(lo, hi) {
		side := a.side(i)
		first, err := a.rerun(ctx, i, side)
		if err != nil {
			return err
		}
		second, err := a.rerun(ctx, i, side)
		if err != nil {
			return err
		}
		diff := firstDifference(first, second, a.points)
		if diff == "" {
			continue
		}
		if a.exec.Determinism == DeterminismNoted {
			if t.Info.Counters == nil {
				t.Info.Counters = map[string]int64{}
			}
			t.Info.Counters[DeterminismCounter]++
			continue
		}
		return fmt.Errorf("audit: %w: trial %d (on %s) run twice more %s (a Go mechanism must draw every random number from its Trial's RNG or Seed, never from math/rand's global functions, the clock or state kept between runs; Execution.Determinism = DeterminismNoted runs it anyway, with a warning)",
			ErrNotDeterministic, i, side, diff)
	}
	return nil
}

// release is one emitted release of a rerun trial.
type release struct {
	k     int
	theta []float64
}

// rerun runs trial i on side once more, in a goroutine of its own (what a
// worker of another audit, shard or resumed run would be), with the
// trial's fresh random streams, and returns a copy of every release.
func (a *Audit) rerun(ctx context.Context, i int, side dataset.Side) ([]release, error) {
	d := a.target.Pair.D
	if side == dataset.SideDPrime {
		d = a.target.Pair.DPrime
	}
	type result struct {
		out []release
		err error
	}
	done := make(chan result, 1)
	go func() {
		var out []release
		_, err := a.target.Mechanism.Run(ctx, mechanisms.NewTrial(a.opts.Seed, side, i), d, func(k int, theta []float64) error {
			out = append(out, release{k, append([]float64(nil), theta...)})
			return nil
		})
		done <- result{out, err}
	}()
	r := <-done
	if r.err != nil {
		return nil, fmt.Errorf("trial %d (on %s), run again for the determinism check: %w", i, side, r.err)
	}
	return r.out, nil
}

// firstDifference describes the first difference between two runs'
// releases ("" when they are the same bit for bit).
func firstDifference(x, y []release, points []mechanisms.ReleasePoint) string {
	label := func(k int) string {
		if k >= 0 && k < len(points) {
			return fmt.Sprintf("%q", points[k].Label)
		}
		return fmt.Sprint(k)
	}
	for j := range min(len(x), len(y)) {
		if x[j].k != y[j].k {
			return fmt.Sprintf("and emitted release %s in one run where the other emitted %s", label(x[j].k), label(y[j].k))
		}
		if len(x[j].theta) != len(y[j].theta) {
			return fmt.Sprintf("and released %d values at release %s in one run, %d in the other", len(x[j].theta), label(x[j].k), len(y[j].theta))
		}
		for c, v := range x[j].theta {
			if w := y[j].theta[c]; math.Float64bits(v) != math.Float64bits(w) {
				return fmt.Sprintf("and released %.17g, then %.17g, at release %s coordinate %d", v, w, label(x[j].k), c)
			}
		}
	}
	if len(x) != len(y) {
		return fmt.Sprintf("and emitted %d releases in one run, %d in the other", len(x), len(y))
	}
	return ""
}

// noteDeterminism warns in the report when checked trials differed from
// their reruns (DeterminismNoted).
func (r *Report) noteDeterminism(t *Trials) {
	if n := t.Info.Counters[DeterminismCounter]; n > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d of the trials run again to check determinism released different values: the mechanism draws randomness from outside its trial's RNG, so these results cannot be reproduced and may depend on the worker count", n))
	}
}
