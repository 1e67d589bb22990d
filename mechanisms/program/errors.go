package program

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcmcaudit/mcmcaudit/internal/clip"
)

// Fault classifies what went wrong with a program.
type Fault int

const (
	// FaultStart: the command could not be started (not found, not
	// executable, bad directory).
	FaultStart Fault = iota + 1
	// FaultHandshake: a process's first stdout line is not a valid
	// mcmcaudit/1 handshake, or differs from the first process's.
	FaultHandshake
	// FaultProtocol: a stdout line that is not the expected answer: not
	// JSON, not a protocol object, the wrong trial, the wrong number of
	// releases or coordinates, a value that is not a finite number, a line
	// longer than MaxLineBytes.
	FaultProtocol
	// FaultCrash: the process exited (or closed its stdout) before
	// answering. Retried.
	FaultCrash
	// FaultTimeout: no answer (or handshake) within Config.Timeout; the
	// process group was killed. Retried.
	FaultTimeout
	// FaultCanceled: the caller's context ended; Error.Err is the
	// context's error.
	FaultCanceled
	// FaultClosed: the Pool was closed; Error.Err is ErrClosed.
	FaultClosed
)

// String returns the fault's name.
func (f Fault) String() string {
	switch f {
	case FaultStart:
		return "start"
	case FaultHandshake:
		return "handshake"
	case FaultProtocol:
		return "protocol"
	case FaultCrash:
		return "crash"
	case FaultTimeout:
		return "timeout"
	case FaultCanceled:
		return "canceled"
	case FaultClosed:
		return "closed"
	}
	return "Fault(" + strconv.Itoa(int(f)) + ")"
}

// ErrClosed is wrapped by the errors of a Pool used after (or during)
// Close.
var ErrClosed = errors.New("pool closed")

// Error is a fault of a program or of its processes. Its message is one
// line; the fields carry the same facts for programs.
type Error struct {
	// Fault says what went wrong.
	Fault Fault
	// Request is the trial being served, or nil (Start, handshake).
	Request *Request
	// Command is the program's command.
	Command []string
	// Process numbers the process as in the stderr prefixes (0: none was
	// started).
	Process int
	// Attempts is the number of attempts made for the trial (0 outside a
	// trial).
	Attempts int
	// Detail says what happened, in one line.
	Detail string
	// Line is the offending stdout line, truncated, or "".
	Line string
	// Stderr holds the last (up to StderrTail) stderr lines of the process.
	Stderr []string
	// Err is the underlying cause (an exec error, an exit status, the
	// context's error, ErrClosed), or nil.
	Err error
}

// Error returns the fault as one line.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("program: ")
	if e.Request != nil {
		b.WriteString(e.Request.String())
		b.WriteString(": ")
	}
	b.WriteString(clip.Line(e.Detail, 600)) // it may hold the command's path (an exec error)
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (%d attempts)", e.Attempts)
	}
	if e.Line != "" {
		fmt.Fprintf(&b, "; offending line: %s", quoteTrunc(e.Line, 200))
	}
	fmt.Fprintf(&b, "; command: %s", commandLine(e.Command))
	if n := len(e.Stderr); n > 0 {
		const show = 6
		lines := e.Stderr[max(0, n-show):]
		fmt.Fprintf(&b, "; last %d stderr lines: ", len(lines))
		for i, l := range lines {
			if i > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(quoteTrunc(l, 300))
		}
	}
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// TrialError is a program's deliberate answer {"trial": i, "error": "..."}:
// the trial failed with the program's message. It is not retried.
type TrialError struct {
	// Request is the failed trial.
	Request Request
	// Command is the program's command.
	Command []string
	// Process numbers the process that answered.
	Process int
	// Message is the program's message, as sent.
	Message string
}

// Error returns the failure as one line.
func (e *TrialError) Error() string {
	msg := strings.Join(strings.Fields(strings.ReplaceAll(e.Message, "\n", " | ")), " ")
	return fmt.Sprintf("program: %s: the program reported an error: %s; command: %s",
		e.Request.String(), quoteTrunc(msg, 1000), commandLine(e.Command))
}

// quoteTrunc quotes s as a Go string literal (so that control characters
// cannot break the line), keeping at most n bytes of it.
func quoteTrunc(s string, n int) string {
	if len(s) <= n {
		return strconv.Quote(s)
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + fmt.Sprintf("… (%d bytes)", len(s))
}
