package cli

import (
	"context"
	"time"
)

// InterruptGrace is how long an interrupted command waits for the phase
// under way to notice the cancellation before it exits anyway.
const InterruptGrace = 2 * time.Second

// UntilInterrupted runs f; when ctx is cancelled first (SIGINT, SIGTERM)
// it waits up to InterruptGrace for f to return — f checks ctx itself where
// it can — and then returns without it: the command is about to exit.
func UntilInterrupted[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
	}
	select {
	case r := <-done:
		return r.v, r.err
	case <-time.After(InterruptGrace):
		var zero T
		return zero, ctx.Err()
	}
}
