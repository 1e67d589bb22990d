package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress reports how many trials are done on stderr: a progress bar with
// an ETA when stderr is a terminal, a plain line every 10 seconds otherwise,
// nothing with --quiet.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	total int
	start time.Time
	last  time.Time
	quiet bool
	bar   *progressbar.ProgressBar
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func newProgress(w io.Writer, total int, quiet bool) *progress {
	now := time.Now()
	p := &progress{w: w, total: total, start: now, last: now, quiet: quiet}
	if !quiet && isTerminal(w) {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("trials"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	return p
}

func (p *progress) update(done int) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Set(done)
		return
	}
	now := time.Now()
	if now.Sub(p.last) < 10*time.Second {
		return
	}
	p.last = now
	el := now.Sub(p.start)
	eta := time.Duration(float64(el) * float64(p.total-done) / float64(max(done, 1)))
	fmt.Fprintf(p.w, "audit: %d/%d trials (%.0f%%), elapsed %s, about %s left\n",
		done, p.total, 100*float64(done)/float64(p.total), el.Round(time.Second), eta.Round(time.Second))
}

func (p *progress) finish() {
	if p.bar != nil {
		p.bar.Finish()
	}
}
