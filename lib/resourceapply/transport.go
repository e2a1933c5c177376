package resourceapply

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// maxRetryAfterSpread bounds the extra pause spreadRetryAfter adds.
const maxRetryAfterSpread = 5 * time.Second

// spreadRetryAfter holds back a 429 or 503 response that says Retry-After
// for a random part of that delay (at most maxRetryAfterSpread) before
// client-go sees it; client-go then waits the delay itself and sends the
// request again. Without the spread, every request a server shed at once
// (32 at a time, from an apply) comes back at once exactly Retry-After
// later and is mostly shed again: applying the real payload to a server
// limited to one request in flight took a minute instead of seconds
// (docs/reliability.md).
type spreadRetryAfter struct {
	rt http.RoundTripper
	// fraction returns a number in [0, 1); wait pauses for d unless ctx
	// ends.
	fraction func() float64
	wait     func(ctx context.Context, d time.Duration)
}

// newSpreadRetryAfter wraps rt.
func newSpreadRetryAfter(rt http.RoundTripper) http.RoundTripper {
	return &spreadRetryAfter{rt: rt, fraction: rand.Float64, wait: sleep}
}

// RoundTrip sends req and spreads the retry of a shed request.
func (s *spreadRetryAfter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := s.rt.RoundTrip(req)
	if err != nil || (resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable) {
		return resp, err
	}
	secs, perr := strconv.Atoi(resp.Header.Get("Retry-After"))
	if perr != nil || secs <= 0 {
		return resp, nil
	}
	spread := min(time.Duration(secs)*time.Second, maxRetryAfterSpread)
	s.wait(req.Context(), time.Duration(s.fraction()*float64(spread)))
	return resp, nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
