package resourceapply

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// health follows whether the server answers: since when every response
// has been a failure (a connection error, a request timeout, a 5xx), or
// zero while it answers. It lets the waits of one object (for a kind, a
// namespace, a CustomResourceDefinition) and the retries of every request
// give up once the server has been failing for longer than the retry
// window, instead of each starting a window of its own: an outage longer
// than the window ends an apply in about the window, not in the window
// times the objects left.
type health struct {
	mu           sync.Mutex
	failingSince time.Time
	now          func() time.Time
}

func newHealth() *health { return &health{now: time.Now} }

// observe records the outcome of one request.
func (h *health) observe(req *http.Request, resp *http.Response, err error) {
	failed := err != nil || resp.StatusCode >= http.StatusInternalServerError
	if err != nil && errors.Is(req.Context().Err(), context.Canceled) {
		return // the caller gave up: says nothing about the server
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case !failed:
		h.failingSince = time.Time{}
	case h.failingSince.IsZero():
		h.failingSince = h.now()
	}
}

// outage returns how long the server has been failing (0 while it
// answers). A nil health never fails.
func (h *health) outage() time.Duration {
	if h == nil {
		return 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failingSince.IsZero() {
		return 0
	}
	return h.now().Sub(h.failingSince)
}

// healthRoundTripper tells health about every request.
type healthRoundTripper struct {
	rt http.RoundTripper
	h  *health
}

func (t *healthRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	t.h.observe(req, resp, err)
	return resp, err
}

// outageLimit is what waits and retries in a context know of the server's
// health: the tracker, and how long an outage may last (the retry window).
type outageLimit struct {
	h     *health
	limit time.Duration
}

type outageKey struct{}

// withOutageLimit makes the waits and retries under ctx give up when h has
// seen the server failing for longer than limit.
func withOutageLimit(ctx context.Context, h *health, limit time.Duration) context.Context {
	if h == nil || limit <= 0 {
		return ctx
	}
	return context.WithValue(ctx, outageKey{}, outageLimit{h: h, limit: limit})
}

// outageExceeded returns an error saying the server has been failing for
// longer than the retry window, or nil.
func outageExceeded(ctx context.Context) error {
	l, ok := ctx.Value(outageKey{}).(outageLimit)
	if !ok {
		return nil
	}
	if d := l.h.outage(); d > l.limit {
		return &OutageError{For: d, Limit: l.limit}
	}
	return nil
}

// OutageError says the server has not answered for longer than the retry
// window: a wait or retry stopped for it. Classify calls it
// ReasonUnavailable.
type OutageError struct {
	// For is how long the server has been failing, Limit the retry window.
	For, Limit time.Duration
	cause      error
}

// Error prints e.g. "the server has failed every request for 2m1s, longer
// than the retry window of 2m0s".
func (e *OutageError) Error() string {
	if e.cause != nil {
		return e.cause.Error()
	}
	return fmt.Sprintf("the server has failed every request for %s, longer than the retry window of %s", e.For.Round(time.Second), e.Limit)
}
