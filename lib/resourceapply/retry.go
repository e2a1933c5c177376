package resourceapply

import (
	"context"
	"math/rand/v2"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// RetryOptions bound the retries of one request on one object.
type RetryOptions struct {
	// Timeout is how long transient failures are retried; zero: not at
	// all.
	Timeout time.Duration
	// InitialBackoff is the first pause; it doubles up to MaxBackoff,
	// with jitter. A 429 or 5xx with Retry-After waits at least that long.
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
}

// DefaultRetryOptions retry for two minutes, pausing 100 ms, then up to 5 s:
// enough to ride out an API server restart.
func DefaultRetryOptions() RetryOptions {
	return RetryOptions{Timeout: 2 * time.Minute, InitialBackoff: 100 * time.Millisecond, MaxBackoff: 5 * time.Second}
}

// backoff is the state of one retry loop.
type backoff struct {
	opts     RetryOptions
	deadline time.Time
	next     time.Duration
}

func newBackoff(opts RetryOptions) *backoff {
	if opts.InitialBackoff <= 0 {
		opts.InitialBackoff = 100 * time.Millisecond
	}
	if opts.MaxBackoff < opts.InitialBackoff {
		opts.MaxBackoff = opts.InitialBackoff
	}
	return &backoff{opts: opts, deadline: time.Now().Add(opts.Timeout), next: opts.InitialBackoff}
}

// wait pauses before the next attempt after err. It returns false, without
// pausing, when the pause would end after the deadline or the server has
// been failing for longer than the retry window (withOutageLimit), and
// when ctx ends.
func (b *backoff) wait(ctx context.Context, err error) bool {
	return b.waitOr(ctx, err, nil)
}

// waitOr is wait, ending the pause early (and reporting true) when wake
// is closed.
func (b *backoff) waitOr(ctx context.Context, err error, wake <-chan struct{}) bool {
	d := b.next
	// Jitter: 75% to 125% of the nominal pause.
	d = d*3/4 + time.Duration(rand.Int64N(int64(d/2)+1))
	if secs, ok := apierrors.SuggestsClientDelay(err); ok && time.Duration(secs)*time.Second > d {
		d = time.Duration(secs) * time.Second
	}
	if time.Now().Add(d).After(b.deadline) || outageExceeded(ctx) != nil {
		return false
	}
	if b.next *= 2; b.next > b.opts.MaxBackoff {
		b.next = b.opts.MaxBackoff
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	case <-wake:
		return true
	}
}

// retry calls fn until it succeeds, fails with an error that is not
// retryable, or the retry deadline or ctx ends; it returns fn's last
// error.
func retry(ctx context.Context, opts RetryOptions, fn func() error) error {
	b := newBackoff(opts)
	for {
		err := fn()
		if err == nil || !retryable(err) {
			return err
		}
		noteWait(ctx, "retrying: "+Classify(err).Text())
		if !b.wait(ctx, err) {
			return err
		}
	}
}

// Retry calls fn as the Manager retries its own requests (see
// RetryOptions): again while it fails transiently (connection errors,
// timeouts, 429, 5xx, conflicts), until the retry deadline or ctx ends;
// it returns fn's last error. For requests the Manager does not make
// itself, such as a status subresource write.
func Retry(ctx context.Context, opts RetryOptions, fn func() error) error {
	return retry(ctx, opts, fn)
}
