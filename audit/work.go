package audit

import (
	"fmt"
	"math"

	"github.com/mcmcaudit/mcmcaudit/attacks"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
	"github.com/mcmcaudit/mcmcaudit/mechanisms/dataset"
)

// Work is an audit's estimated work in the units of mechanisms.RunCost
// (roughly one multiply-add each): an order of magnitude known before any
// run, so that a configuration that would run for days is refused at once.
// The estimates are derived in docs/derivations/work-limits.md.
type Work struct {
	// PerRun is the work of one run: the larger of a run on D and one on
	// D′, with the features and the accuracy metric of its releases.
	PerRun float64
	// Analysis is the work of the attack stage: fitting every attack at
	// every release point and scoring the other runs.
	Analysis float64
}

// Work returns the audit's work estimate.
func (a *Audit) Work() Work {
	return Work{PerRun: a.perRunWork(), Analysis: a.analysisWork()}
}

// Runs returns the work of simulating trials [lo, hi): each call also
// recomputes trial 0, the features' reference.
func (w Work) Runs(lo, hi int) float64 { return float64(hi-lo+1) * w.PerRun }

// trialOverhead is the engine's own work per trial, in work units: seeding
// the trial's random streams, drawing its side, storing its features (about
// a microsecond, measured on the Gaussian-mechanism scenario whose
// mechanism does almost nothing).
const trialOverhead = 300

func (a *Audit) perRunWork() float64 {
	t := a.target
	if t.Mechanism == nil { // an audit of a design makes no run
		return 0
	}
	run := 0.0
	for _, d := range []*dataset.Dataset{t.Pair.D, t.Pair.DPrime} {
		if d == nil {
			d = &dataset.Dataset{}
		}
		run = math.Max(run, mechanisms.RunCost(t.Mechanism, d))
	}
	// Features of every release (RunCost counts the release of θ itself).
	release := float64(len(a.points)) * float64(len(a.features))
	if acc := t.Accuracy; acc != nil && acc.Test != nil {
		// Classifying the test set: one likelihood-sized pass per record.
		release += float64(len(a.points)) * float64(acc.Test.Len()) * float64(max(acc.Model.Dim(), 1))
	}
	return run + release + trialOverhead
}

func (a *Audit) analysisWork() float64 {
	o := a.opts
	if c := o.Canaries; c != nil {
		// Sorting the m scores and counting every guess, at every point
		// (and subtracting the reference runs' mean from each score).
		m := float64(c.Count)
		return float64(len(a.points)) * m * (math.Log2(m+2) + float64(len(c.Guesses)) + 1 + float64(c.References))
	}
	nTr, nSe, nEv := o.Split.Sizes(o.Trials)
	f := len(a.features)
	var per float64
	for _, c := range o.Attacks {
		// Fit on the training runs, score the selection (or training)
		// and evaluation runs, and choose two rules on the sorted scores.
		sel := max(nSe, nTr)
		per += attacks.Cost(c, nTr, sel+nEv, f) + 2*float64(sel)*(math.Log2(float64(sel)+2)+1)
	}
	// Gathering the columns of the training and selection runs.
	per += float64(nTr+nSe) * float64(f)
	return float64(len(a.points)) * per
}

// limitError is the *FieldError of a work estimate beyond Execution.MaxWork.
func (a *Audit) limitError(what string, work float64) error {
	return fieldErr("MaxWork", "%s is estimated at %.3g work units, beyond the limit of %.3g (a unit takes a few nanoseconds; raise the limit to run it on purpose)", what, work, a.exec.MaxWork)
}

// CheckWork returns a *FieldError naming MaxWork when simulating trials
// [lo, hi) — and, with analyze, the attack stage after them — is estimated
// beyond Execution.MaxWork. Simulate and Analyze check their own part; a
// caller about to do both checks the sum first.
func (a *Audit) CheckWork(lo, hi int, analyze bool) error {
	w := a.Work()
	total := 0.0
	what := ""
	if hi > lo {
		total = w.Runs(lo, hi)
		what = fmt.Sprintf("%d runs × %.3g units", hi-lo+1, w.PerRun)
	}
	if analyze {
		total += w.Analysis
		if what != "" {
			what += " + "
		}
		what += fmt.Sprintf("the attacks' %.3g units", w.Analysis)
	}
	if what == "" || total <= a.exec.MaxWork {
		return nil
	}
	return a.limitError("the audit's work ("+what+")", total)
}
