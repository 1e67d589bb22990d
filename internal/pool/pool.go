package pool

import (
	"context"
	"runtime"
	"sync"

	"golang.org/x/sync/errgroup"
)

// Each calls f(i) for every i in [0, n), at most workers at a time
// (workers ≤ 0: runtime.GOMAXPROCS(0)), starting the items in index order.
//
// It starts no further item once ctx is cancelled or an item has failed;
// the items under way run to their end (f is given ctx, not a context
// cancelled by a sibling's failure, so that an item's outcome depends on
// nothing but its index). It returns ctx's error when ctx was cancelled
// before every item was started or while they ran; otherwise the error of
// the lowest index that failed, which is the same for every number of
// workers: items start in order, so every item below a failed one has
// been started and run. It returns nil when every item succeeded.
func Each(ctx context.Context, n, workers int, f func(ctx context.Context, i int) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var g errgroup.Group
	g.SetLimit(workers)
	var mu sync.Mutex
	failed, first := false, n
	var firstErr error
	for i := 0; i < n; i++ {
		mu.Lock()
		stop := failed
		mu.Unlock()
		if stop || ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if err := f(ctx, i); err != nil {
				mu.Lock()
				defer mu.Unlock()
				failed = true
				if i < first {
					first, firstErr = i, err
				}
			}
			return nil
		})
	}
	g.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	return firstErr
}
