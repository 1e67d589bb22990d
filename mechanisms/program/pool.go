package program

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Pool serves trials with up to Config.MaxProcs long-lived processes of one
// program. Its methods are safe for concurrent use.
type Pool struct {
	cfg     Config
	hs      Handshake
	sink    *stderrSink
	maxLine int

	mu      sync.Mutex
	idle    []*proc
	all     map[*proc]struct{}
	live    int // processes counted against MaxProcs, including those starting
	nextID  int
	closed  bool
	changed chan struct{} // closed and replaced whenever a process or a slot frees up
}

// Start validates c, starts one process and reads its handshake, which
// every later process must repeat. ctx bounds the start-up only; the
// processes live until Close. On error nothing is left running.
func Start(ctx context.Context, c Config) (*Pool, Handshake, error) {
	return startPool(ctx, c, MaxLineBytes)
}

// startPool is Start with a line limit (tests lower it).
func startPool(ctx context.Context, c Config, maxLine int) (*Pool, Handshake, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, Handshake{}, fmt.Errorf("program: %w", err)
	}
	pl := &Pool{
		cfg:     c,
		sink:    &stderrSink{w: c.Stderr},
		maxLine: maxLine,
		all:     map[*proc]struct{}{},
		changed: make(chan struct{}),
		live:    1,
		nextID:  1,
	}
	p, e := pl.startNew(ctx, 1, true)
	if e != nil {
		return nil, Handshake{}, e
	}
	pl.idle = append(pl.idle, p)
	return pl, pl.hs, nil
}

// Handshake returns the program's handshake.
func (pl *Pool) Handshake() Handshake { return pl.hs }

// Run serves r in an idle process, or a new one while fewer than MaxProcs
// live, or else waits for one to become idle. A crash or a timeout is
// retried in another process up to Config.Retries times; every other fault
// is returned at once. Errors are *Error or *TrialError (or a validation
// error for a malformed request).
func (pl *Pool) Run(ctx context.Context, r Request) (Result, error) {
	return pl.run(ctx, r, false)
}

// RunFresh serves r like Run but in a brand-new process, closed (as by
// Close) once it has answered, so that a caller can check that a trial
// does not depend on what a process served before. It counts against
// MaxProcs (closing an idle process if need be).
func (pl *Pool) RunFresh(ctx context.Context, r Request) (Result, error) {
	return pl.run(ctx, r, true)
}

func (pl *Pool) run(ctx context.Context, r Request, fresh bool) (Result, error) {
	if err := r.check(); err != nil {
		return Result{}, err
	}
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return Result{}, pl.stopped(err, &r, attempt)
		}
		p, id, err := pl.acquire(ctx, fresh)
		if err != nil {
			return Result{}, pl.stopped(err, &r, attempt)
		}
		if p != nil && ctx.Err() != nil {
			// Canceled while waiting: the process has done nothing wrong.
			pl.release(p)
			return Result{}, pl.stopped(ctx.Err(), &r, attempt)
		}
		if p == nil {
			var e *Error
			if p, e = pl.startNew(ctx, id, false); e != nil {
				e.Request, e.Attempts = &r, attempt
				if pl.retry(e, attempt) {
					continue
				}
				return Result{}, e
			}
		}
		res, terr, e := pl.exchange(ctx, p, r)
		if e == nil {
			if fresh {
				pl.retire(p)
			} else {
				pl.release(p)
			}
			if terr != nil {
				return Result{}, terr
			}
			return res, nil
		}
		pl.drop(p)
		e.Attempts = attempt
		if pl.isClosed() {
			return Result{}, pl.stopped(ErrClosed, &r, attempt)
		}
		if pl.retry(e, attempt) {
			continue
		}
		return Result{}, e
	}
}

// retry reports whether a failed attempt is retried: crashes and timeouts,
// while attempts remain and the pool is open.
func (pl *Pool) retry(e *Error, attempt int) bool {
	return (e.Fault == FaultCrash || e.Fault == FaultTimeout) && attempt <= pl.cfg.Retries && !pl.isClosed()
}

// stopped turns a context error or ErrClosed into an *Error.
func (pl *Pool) stopped(err error, r *Request, attempt int) *Error {
	e := &Error{Fault: FaultCanceled, Request: r, Command: pl.cfg.Command, Attempts: attempt, Err: err}
	if errors.Is(err, ErrClosed) {
		e.Fault, e.Detail = FaultClosed, "the pool is closed"
	} else {
		e.Detail = "stopped: " + err.Error()
	}
	return e
}

func (pl *Pool) isClosed() bool {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.closed
}

// acquire returns an idle process (never for fresh), or p == nil and the
// number id of a process the caller must start (its slot is reserved), or
// waits.
func (pl *Pool) acquire(ctx context.Context, fresh bool) (p *proc, id int, err error) {
	var evict *proc
	pl.mu.Lock()
	for {
		if pl.closed {
			pl.mu.Unlock()
			return nil, 0, ErrClosed
		}
		if !fresh && len(pl.idle) > 0 {
			p = pl.idle[len(pl.idle)-1]
			pl.idle = pl.idle[:len(pl.idle)-1]
			pl.mu.Unlock()
			return p, 0, nil
		}
		if pl.live < pl.cfg.MaxProcs || (fresh && len(pl.idle) > 0) {
			if pl.live < pl.cfg.MaxProcs {
				pl.live++
			} else {
				// A fresh process takes the slot of an idle one.
				evict = pl.idle[0]
				pl.idle = pl.idle[1:]
				delete(pl.all, evict)
			}
			pl.nextID++
			id = pl.nextID
			pl.mu.Unlock()
			if evict != nil {
				evict.retire(pl.cfg.Grace)
			}
			return nil, id, nil
		}
		ch := pl.changed
		pl.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		case <-ch:
		}
		pl.mu.Lock()
	}
}

// broadcast wakes the goroutines waiting in acquire; pl.mu must be held.
func (pl *Pool) broadcast() {
	close(pl.changed)
	pl.changed = make(chan struct{})
}

// release returns a healthy process to the idle list.
func (pl *Pool) release(p *proc) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.closed {
		// Close owns it now.
		return
	}
	pl.idle = append(pl.idle, p)
	pl.broadcast()
}

// drop forgets a process that is dead (killed and reaped) and frees its
// slot.
func (pl *Pool) drop(p *proc) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if _, ok := pl.all[p]; ok {
		delete(pl.all, p)
		pl.live--
		pl.broadcast()
	}
}

// retire closes a process gracefully (as Close does) and frees its slot.
func (pl *Pool) retire(p *proc) {
	p.retire(pl.cfg.Grace)
	pl.drop(p)
}

// startNew starts process number id (its slot already counted in live)
// and reads its handshake; first says it is the pool's first process,
// whose handshake sets the pool's. On error the process is dead and its
// slot freed.
func (pl *Pool) startNew(ctx context.Context, id int, first bool) (*proc, *Error) {
	fail := func(e *Error) (*proc, *Error) {
		pl.mu.Lock()
		pl.live--
		pl.broadcast()
		pl.mu.Unlock()
		return nil, e
	}
	p, err := startProc(&pl.cfg, id, pl.sink, pl.maxLine)
	if err != nil {
		return fail(&Error{Fault: FaultStart, Command: pl.cfg.Command, Process: id,
			Detail: fmt.Sprintf("cannot start process %d: %v", id, err), Err: err})
	}
	pl.mu.Lock()
	if pl.closed {
		pl.mu.Unlock()
		p.kill()
		return fail(pl.stopped(ErrClosed, nil, 0))
	}
	pl.all[p] = struct{}{}
	pl.mu.Unlock()
	fail = func(e *Error) (*proc, *Error) {
		p.kill()
		e.Stderr = p.stderrTail()
		pl.drop(p)
		if pl.isClosed() && e.Fault != FaultCanceled {
			return nil, pl.stopped(ErrClosed, nil, 0)
		}
		return nil, e
	}
	hs, e := pl.readHandshake(ctx, p)
	if e != nil {
		return fail(e)
	}
	if first {
		pl.hs = hs
	} else if !hs.Equal(pl.hs) {
		return fail(&Error{Fault: FaultHandshake, Command: pl.cfg.Command, Process: id,
			Detail: fmt.Sprintf("process %d's handshake %v differs from the first process's %v (a program must declare the same releases every time)", id, hs, pl.hs)})
	}
	p.hs = hs
	// From now on the process may only write answers to this handshake.
	p.lineLimit.Store(min(int64(pl.maxLine), answerLineLimit(hs, pl.cfg.Canaries)))
	return p, nil
}

// readHandshake waits (at most Config.Timeout) for the first non-blank
// stdout line and checks it.
func (pl *Pool) readHandshake(ctx context.Context, p *proc) (Handshake, *Error) {
	t := time.NewTimer(pl.cfg.Timeout)
	defer t.Stop()
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				return Handshake{}, pl.stdoutEnded(p, "before its handshake")
			}
			if isBlank(line) {
				continue
			}
			hs, f := parseHandshake(line)
			if f != nil {
				return Handshake{}, &Error{Fault: FaultHandshake, Command: pl.cfg.Command, Process: p.id,
					Detail: fmt.Sprintf("process %d: %s", p.id, f.detail), Line: string(line)}
			}
			return hs, nil
		case <-t.C:
			return Handshake{}, &Error{Fault: FaultTimeout, Command: pl.cfg.Command, Process: p.id,
				Detail: fmt.Sprintf("process %d sent no handshake within %v (timeout); its process group was killed", p.id, pl.cfg.Timeout)}
		case <-ctx.Done():
			e := pl.stopped(ctx.Err(), nil, 0)
			e.Process = p.id
			return Handshake{}, e
		}
	}
}

// stdoutEnded builds the error for a process whose stdout ended (when),
// or that wrote a line too long. A process whose stdout has reached end of
// file can answer nothing more: it is taken as dead at once — its group
// killed and the process reaped, with no time given to exit — so that a
// program that closes its stdout and lives on costs no wait. Its exit
// status then tells a crash (it had exited by itself: exit 3, a signal)
// from a program that only closed its stdout (it died of our SIGKILL).
// The caller kills and reaps p (again: a no-op).
func (pl *Pool) stdoutEnded(p *proc, when string) *Error {
	e := &Error{Command: pl.cfg.Command, Process: p.id}
	if errors.Is(p.readErr, errLineTooLong) {
		e.Fault = FaultProtocol
		lim := p.lineLimit.Load()
		e.Detail = fmt.Sprintf("process %d wrote a stdout line longer than %d bytes", p.id, lim)
		if p.hs.Dim > 0 && lim < MaxLineBytes && lim == answerLineLimit(p.hs, pl.cfg.Canaries) {
			e.Detail += ", " + answerLimitText(p.hs, pl.cfg.Canaries)
		}
		e.Line = string(p.partial)
		return e
	}
	p.kill()
	e.Fault = FaultCrash
	if p.killed.Load() && killedBySIGKILL(p.waitErr) {
		e.Detail = fmt.Sprintf("process %d closed its stdout %s without exiting (end of file on its stdout); it was taken as dead and its process group was killed", p.id, when)
	} else {
		e.Err = p.waitErr
		e.Detail = fmt.Sprintf("process %d exited (%s) %s", p.id, p.exitStatus(), when)
	}
	if len(p.partial) > 0 {
		e.Detail += ", leaving an unterminated stdout line"
		e.Line = string(p.partial)
	}
	e.Stderr = p.stderrTail()
	return e
}

// killedBySIGKILL reports whether cmd.Wait's error says the process died
// of SIGKILL.
func killedBySIGKILL(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(interface {
		Signaled() bool
		Signal() syscall.Signal
	})
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// exchange sends r to p and waits for its answer. On a fault (third
// result) the process has been killed and reaped; otherwise it is healthy,
// whether it answered with releases or with an error (second result).
func (pl *Pool) exchange(ctx context.Context, p *proc, r Request) (Result, *TrialError, *Error) {
	fault := func(e *Error) (Result, *TrialError, *Error) {
		p.kill()
		e.Request = &r
		e.Stderr = p.stderrTail()
		return Result{}, nil, e
	}
	timeout := func() (Result, *TrialError, *Error) {
		return fault(&Error{Fault: FaultTimeout, Command: pl.cfg.Command, Process: p.id,
			Detail: fmt.Sprintf("process %d gave no answer within %v (timeout); its process group was killed", p.id, pl.cfg.Timeout)})
	}
	deadline := time.Now().Add(pl.cfg.Timeout)
	_ = p.stdin.SetWriteDeadline(deadline)
	if _, err := p.stdin.Write(appendRequest(make([]byte, 0, 64), r)); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return timeout()
		}
		// The program closed its stdin, or exited: its stdout tells.
		p.closeStdin()
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				return fault(pl.stdoutEnded(p, "during the trial"))
			}
			if isBlank(line) {
				continue
			}
			hs := &p.hs
			if hs.Scores {
				scores := p.hs
				scores.Dim = pl.cfg.Canaries
				hs = &scores
			}
			res, msg, isErr, f := parseAnswer(line, r.Trial, hs)
			if f != nil {
				return fault(&Error{Fault: FaultProtocol, Command: pl.cfg.Command, Process: p.id,
					Detail: fmt.Sprintf("process %d: %s", p.id, f.detail), Line: string(line)})
			}
			if isErr {
				return Result{}, &TrialError{Request: r, Command: pl.cfg.Command, Process: p.id, Message: msg}, nil
			}
			return res, nil, nil
		case <-t.C:
			return timeout()
		case <-ctx.Done():
			e := pl.stopped(ctx.Err(), &r, 0)
			e.Process = p.id
			return fault(e)
		}
	}
}

// Close asks every process to exit by closing its stdin, waits up to
// Config.Grace, then kills the process groups of those still running, and
// reaps them all. Runs in progress fail with FaultClosed. The error (nil
// if every process exited by itself with status 0) lists the processes
// that had to be killed or exited with another status. Close is
// idempotent.
func (pl *Pool) Close() error {
	pl.mu.Lock()
	if pl.closed {
		pl.mu.Unlock()
		return nil
	}
	pl.closed = true
	procs := make([]*proc, 0, len(pl.all))
	for p := range pl.all {
		procs = append(procs, p)
	}
	pl.idle = nil
	pl.broadcast()
	pl.mu.Unlock()

	for _, p := range procs {
		p.quitOnce.Do(func() { close(p.quit) })
		p.closeStdin()
	}
	deadline := time.NewTimer(pl.cfg.Grace)
	defer deadline.Stop()
	expired := false
	var errs []error
	for _, p := range procs {
		if !expired {
			select {
			case <-p.exited:
			case <-deadline.C:
				// The grace period is spent: every process still running
				// is killed at once.
				expired = true
			}
		}
		switch {
		case !p.isExited() && !p.killed.Load():
			p.kill()
			errs = append(errs, &Error{Fault: FaultTimeout, Command: pl.cfg.Command, Process: p.id,
				Detail: fmt.Sprintf("process %d did not exit within %v of its stdin being closed; its process group was killed", p.id, pl.cfg.Grace),
				Stderr: p.stderrTail()})
		case p.waitErr != nil && !p.killed.Load():
			p.waitStderr()
			errs = append(errs, &Error{Fault: FaultCrash, Command: pl.cfg.Command, Process: p.id,
				Detail: fmt.Sprintf("process %d exited (%s) when its stdin was closed", p.id, p.exitStatus()),
				Stderr: p.stderrTail(), Err: p.waitErr})
		}
		p.kill() // reaps and drains stderr; no signal for the exited
	}
	pl.mu.Lock()
	pl.all = map[*proc]struct{}{}
	pl.mu.Unlock()
	return errors.Join(errs...)
}
