// Package parallel runs work over indices on every core.
//
// May import: nothing.
// Cluster I/O: none.
package parallel

import (
	"context"
	"runtime"
	"sync"
)

// Each calls, for every i in [0, n), a worker's function with i, on up to
// workers workers at once (0 or less: GOMAXPROCS). newWorker is called once per worker and
// returns its function, so that a worker can keep state of its own (a
// buffer). When ctx ends no index is handed out any more: Each waits for
// the calls under way and returns ctx's error; otherwise nil once every
// index was done.
func Each(ctx context.Context, n, workers int, newWorker func() func(i int)) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, n) {
		fn := newWorker()
		wg.Go(func() {
			for i := range next {
				fn(i)
			}
		})
	}
	for i := range n {
		if ctx.Err() != nil { // Ctrl-C: stop between indices
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return ctx.Err()
}
