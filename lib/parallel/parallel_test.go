package parallel

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

func TestEach(t *testing.T) {
	for _, n := range []int{0, 1, 7, 1000} {
		seen := make([]int32, n)
		var workers atomic.Int32
		err := Each(context.Background(), n, 0, func() func(int) {
			workers.Add(1)
			return func(i int) { atomic.AddInt32(&seen[i], 1) }
		})
		if err != nil {
			t.Fatalf("n %d: %v", n, err)
		}
		for i, c := range seen {
			if c != 1 {
				t.Fatalf("n %d: index %d done %d times", n, i, c)
			}
		}
		if n == 0 && workers.Load() != 0 {
			t.Fatalf("no work, yet %d workers", workers.Load())
		}
	}
}

func TestEachStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	done := 0
	err := Each(ctx, 1000, 2, func() func(int) {
		return func(i int) {
			mu.Lock()
			defer mu.Unlock()
			if done++; done == 10 {
				cancel()
			}
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Each after cancel: %v", err)
	}
	if done >= 1000 {
		t.Fatalf("all %d indices done after the cancel", done)
	}
}
