package pool

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

// Every item runs once, whatever the number of workers, and no more than
// workers run at a time.
func TestEachRunsEveryItemOnce(t *testing.T) {
	for _, workers := range []int{0, 1, 3, 100} {
		const n = 200
		var hits [n]atomic.Int32
		var running, peak atomic.Int32
		err := Each(context.Background(), n, workers, func(_ context.Context, i int) error {
			r := running.Add(1)
			for {
				p := peak.Load()
				if r <= p || peak.CompareAndSwap(p, r) {
					break
				}
			}
			hits[i].Add(1)
			running.Add(-1)
			return nil
		})
		if err != nil {
			t.Fatalf("workers %d: %v", workers, err)
		}
		for i := range hits {
			if h := hits[i].Load(); h != 1 {
				t.Fatalf("workers %d: item %d ran %d times", workers, i, h)
			}
		}
		if workers > 0 && int(peak.Load()) > workers {
			t.Errorf("workers %d: %d ran at once", workers, peak.Load())
		}
	}
}

// The error returned is the lowest failing index's, for every number of
// workers.
func TestEachLowestError(t *testing.T) {
	for _, workers := range []int{1, 2, 7} {
		err := Each(context.Background(), 50, workers, func(_ context.Context, i int) error {
			if i%10 == 7 {
				return fmt.Errorf("item %d", i)
			}
			return nil
		})
		if err == nil || err.Error() != "item 7" {
			t.Errorf("workers %d: error %v, want item 7", workers, err)
		}
	}
}

// A cancelled context stops the job with its error and starts nothing
// more.
func TestEachCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var started atomic.Int32
	err := Each(ctx, 1000, 1, func(_ context.Context, i int) error {
		started.Add(1)
		if i == 4 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	if s := started.Load(); s > 6 {
		t.Errorf("%d items started after the cancellation at item 4", s)
	}
}
