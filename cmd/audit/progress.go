package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// progress prints how many trials are done, at most every few seconds, on
// stderr. (A terminal progress bar arrives with the scale-out work.)
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	total int
	start time.Time
	last  time.Time
	quiet bool
	shown bool
}

func newProgress(w io.Writer, total int, quiet bool) *progress {
	now := time.Now()
	return &progress{w: w, total: total, start: now, last: now, quiet: quiet}
}

func (p *progress) update(done int) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if now.Sub(p.last) < 5*time.Second {
		return
	}
	p.last = now
	el := now.Sub(p.start)
	eta := time.Duration(float64(el) * float64(p.total-done) / float64(max(done, 1)))
	fmt.Fprintf(p.w, "audit: %d/%d trials (%.0f%%), elapsed %s, about %s left\n",
		done, p.total, 100*float64(done)/float64(p.total), el.Round(time.Second), eta.Round(time.Second))
	p.shown = true
}

func (p *progress) finish() {}
