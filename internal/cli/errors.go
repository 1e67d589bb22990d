package cli

import (
	"errors"
	"fmt"
	"io"
)

// Env carries the streams a command writes to; tests substitute buffers.
type Env struct {
	Stdout, Stderr io.Writer
}

// UsageError marks bad input: it is printed as one line and exits 2.
type UsageError struct{ Msg string }

// Error implements error.
func (e UsageError) Error() string { return e.Msg }

// Usagef formats a UsageError.
func Usagef(format string, args ...any) error { return UsageError{Msg: fmt.Sprintf(format, args...)} }

// ViolationError marks a refuted claim: exit 1 after the report is written.
type ViolationError struct{ Msg string }

// Error implements error.
func (e ViolationError) Error() string { return e.Msg }

// InterruptedError is a command stopped by SIGINT/SIGTERM: exit code 130.
type InterruptedError struct{ Msg string }

// Error implements error.
func (e InterruptedError) Error() string { return e.Msg }

// ErrHelp is returned when -h was asked for; usage has been printed.
var ErrHelp = errors.New("help requested")
