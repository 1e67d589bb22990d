package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Progress reports how many trials are done on stderr: a progress bar with
// an ETA when stderr is a terminal, a plain line every 10 seconds otherwise,
// nothing with --quiet.
type Progress struct {
	mu    sync.Mutex
	w     io.Writer
	total int
	start time.Time
	last  time.Time
	quiet bool
	bar   *progressbar.ProgressBar
	eta   etaEstimator
}

// etaEstimator estimates the time left from a timeline of completed
// trials. The start-up (building datasets, starting programs) and the
// first trials, which cost more than their share, are left out: the rate
// is measured from the first report of a completed trial to the last
// report that added trials, so trials finishing in batches (one per
// worker) are counted at the rate of their batches. No estimate is given
// before minETATrials trials (or 2% of the total, if more) and three
// reports of progress have come after that first one.
type etaEstimator struct {
	total int
	// t0, done0: the first report with trials done; tLast, doneLast: the
	// last report that added trials; steps counts those reports.
	t0, tLast       time.Duration
	done0, doneLast int
	steps           int
	started         bool
}

// minETATrials is the fewest trials completed after the first report
// before an estimate is given.
const minETATrials = 20

// observe records that done trials were complete at elapsed time t.
func (e *etaEstimator) observe(t time.Duration, done int) {
	switch {
	case !e.started && done > 0:
		e.started, e.t0, e.done0, e.tLast, e.doneLast = true, t, done, t, done
	case e.started && done > e.doneLast:
		e.tLast, e.doneLast = t, done
		e.steps++
	}
}

// estimate returns the time left at elapsed time now, and false while
// there is not enough of a timeline to say.
func (e *etaEstimator) estimate(now time.Duration) (time.Duration, bool) {
	n := e.doneLast - e.done0
	if !e.started || e.steps < 3 || n < max(minETATrials, e.total/50) || e.tLast <= e.t0 {
		return 0, false
	}
	perTrial := float64(e.tLast-e.t0) / float64(n)
	left := time.Duration(perTrial*float64(e.total-e.doneLast)) - (now - e.tLast)
	return max(left, 0), true
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// NewProgress reports the progress of total trials on w (nothing with
// quiet).
func NewProgress(w io.Writer, total int, quiet bool) *Progress {
	now := time.Now()
	p := &Progress{w: w, total: total, start: now, last: now, quiet: quiet, eta: etaEstimator{total: total}}
	if !quiet && isTerminal(w) {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("trials"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(false),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	return p
}

// Update reports that done trials are complete (an audit.Progress).
func (p *Progress) Update(done int) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	el := now.Sub(p.start)
	p.eta.observe(el, done)
	left, ok := p.eta.estimate(el)
	if p.bar != nil {
		desc := "trials (estimating the time left)"
		if ok {
			desc = fmt.Sprintf("trials (about %s left)", left.Round(time.Second))
		}
		p.bar.Describe(desc)
		p.bar.Set(done)
		return
	}
	if now.Sub(p.last) < 10*time.Second {
		return
	}
	p.last = now
	eta := "time left not yet estimated"
	if ok {
		eta = fmt.Sprintf("about %s left", left.Round(time.Second))
	}
	fmt.Fprintf(p.w, "audit: %d/%d trials (%.0f%%), elapsed %s, %s\n",
		done, p.total, 100*float64(done)/float64(p.total), el.Round(time.Second), eta)
}

// Finish ends the progress bar, if any.
func (p *Progress) Finish() {
	if p.bar != nil {
		p.bar.Finish()
	}
}

// Note prints one line on stderr, clearing the progress bar first; it is
// printed with --quiet too.
func (p *Progress) Note(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Clear()
	}
	fmt.Fprintf(p.w, "audit: %s\n", msg)
}
