package registry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// Limits bound what a registry can make a Client do. A zero field takes
// its value from DefaultLimits.
type Limits struct {
	// MaxManifestSize bounds every response that is not a blob: manifests,
	// image indexes, tokens, errors. Configs are checked against it by
	// their declared size before they are read.
	MaxManifestSize int64
	// MaxRedirects is the longest redirect chain followed.
	MaxRedirects int
	// MinRate and RateWindow: a response body must bring at least
	// MinRate bytes a second, on average over every RateWindow, until it
	// ends (curl's --speed-limit and --speed-time); a body that stalls for
	// RateWindow fails too. The error wraps ErrTooSlow.
	MinRate    int64
	RateWindow time.Duration
	// ReadBudget bounds a whole response, headers and body, that is not
	// a layer or config blob: manifests, image indexes, tokens, errors,
	// signatures. A blob gets ReadBudget plus its length at MinRate (its
	// length: Content-Length, else MaxBlobSize). The error wraps
	// ErrTooSlow.
	ReadBudget time.Duration
	// MaxBlobSize is the length a blob without Content-Length is given
	// its budget for.
	MaxBlobSize int64
	// ResponseTimeout bounds the wait for a response's headers (and the
	// TCP and TLS handshakes).
	ResponseTimeout time.Duration
	// Retries is how many times a request answered 408, 429, 500, 502,
	// 503 or 504, or failing on the network, is tried again, after 1, 2,
	// 4, ... seconds (RetryDelay). Negative: never.
	Retries int
	// RetryDelay is the first wait before a retry.
	RetryDelay time.Duration
}

// DefaultLimits returns the limits a Client uses unless told otherwise:
// 8 MiB of metadata per response, 5 redirects, at least 4 KiB/s over
// every 15 s of a body, 30 s for a response that is not a blob (a blob:
// 30 s plus its length at 4 KiB/s, a blob of unknown length as one of
// 16 GiB), 30 s for response headers, 2 retries after 1 s and 2 s.
func DefaultLimits() Limits {
	return Limits{
		MaxManifestSize: 8 << 20,
		MaxRedirects:    5,
		MinRate:         4 << 10,
		RateWindow:      15 * time.Second,
		ReadBudget:      30 * time.Second,
		MaxBlobSize:     16 << 30,
		ResponseTimeout: 30 * time.Second,
		Retries:         2,
		RetryDelay:      time.Second,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxManifestSize <= 0 {
		l.MaxManifestSize = d.MaxManifestSize
	}
	if l.MaxRedirects <= 0 {
		l.MaxRedirects = d.MaxRedirects
	}
	if l.MinRate <= 0 {
		l.MinRate = d.MinRate
	}
	if l.RateWindow <= 0 {
		l.RateWindow = d.RateWindow
	}
	if l.ReadBudget <= 0 {
		l.ReadBudget = d.ReadBudget
	}
	if l.MaxBlobSize <= 0 {
		l.MaxBlobSize = d.MaxBlobSize
	}
	if l.ResponseTimeout <= 0 {
		l.ResponseTimeout = d.ResponseTimeout
	}
	if l.Retries == 0 {
		l.Retries = d.Retries
	}
	if l.RetryDelay <= 0 {
		l.RetryDelay = d.RetryDelay
	}
	return l
}

// Budget returns how long a response may take in all, headers and body:
// ReadBudget for metadata (blob false), plus length at MinRate for a blob
// (length < 0: unknown, counted as MaxBlobSize).
func (l Limits) Budget(blob bool, length int64) time.Duration {
	l = l.withDefaults()
	if !blob {
		return l.ReadBudget
	}
	if length < 0 {
		length = l.MaxBlobSize
	}
	return l.ReadBudget + time.Duration(float64(length)/float64(l.MinRate)*float64(time.Second))
}

// ErrLimit marks a response refused for its size or its redirects.
var ErrLimit = errors.New("registry limit exceeded")

// ErrTooSlow marks a response that came slower than Limits.MinRate or
// took longer than its budget (Limits.Budget).
var ErrTooSlow = errors.New("registry transfer too slow")

// guard is the innermost transport of a Client: it picks the TLS
// configuration by host, refuses plain HTTP to hosts not marked insecure,
// bounds redirect chains and response bodies, holds every response to
// its budget and minimum rate, and counts requests.
type guard struct {
	secure, insecure *http.Transport
	insecureHosts    []string
	limits           Limits
	requests         atomic.Int64
}

func newGuard(roots *x509.CertPool, insecureHosts []string, limits Limits) *guard {
	mk := func(cfg *tls.Config) *http.Transport {
		return &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: limits.ResponseTimeout, KeepAlive: 30 * time.Second}).DialContext,
			TLSClientConfig:       cfg,
			TLSHandshakeTimeout:   limits.ResponseTimeout,
			ResponseHeaderTimeout: limits.ResponseTimeout,
			ExpectContinueTimeout: time.Second,
			MaxIdleConnsPerHost:   8,
			IdleConnTimeout:       90 * time.Second,
			ForceAttemptHTTP2:     true,
		}
	}
	return &guard{
		secure:        mk(&tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}),
		insecure:      mk(&tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}), //nolint:gosec // only for --insecure-registry hosts
		insecureHosts: insecureHosts,
		limits:        limits,
	}
}

// RoundTrip implements http.RoundTripper.
func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	host := req.URL.Host
	insecure := matchHost(g.insecureHosts, host)
	if req.URL.Scheme == "http" && !insecure {
		return nil, fmt.Errorf("%s %s: plain HTTP refused: the registry must speak TLS unless --insecure-registry %s", req.Method, req.URL.Redacted(), host)
	}
	hops := 0
	for r := req; r.Response != nil && r.Response.Request != nil; r = r.Response.Request {
		hops++
		if hops > 4*g.limits.MaxRedirects {
			break
		}
	}
	if hops > g.limits.MaxRedirects {
		return nil, fmt.Errorf("%s %s: more than %d redirects (a redirect loop?): %w", req.Method, req.URL.Redacted(), g.limits.MaxRedirects, ErrLimit)
	}
	g.requests.Add(1)
	start := time.Now()
	ctx, cancel := context.WithCancel(req.Context())
	req = req.WithContext(ctx)
	t := g.secure
	if insecure {
		t = g.insecure
	}
	resp, err := t.RoundTrip(req)
	if err != nil {
		cancel()
		return nil, err
	}
	blob := strings.Contains(req.URL.Path, "/blobs/") && resp.StatusCode < 300
	max := int64(-1)
	if !blob {
		max = g.limits.MaxManifestSize
	}
	what := req.Method + " " + req.URL.Redacted()
	if max >= 0 && resp.ContentLength > max {
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("%s: response of %d bytes, limit %d: %w", what, resp.ContentLength, max, ErrLimit)
	}
	resp.Body = newGuardedBody(resp.Body, max, g.limits, g.limits.Budget(blob, resp.ContentLength), start, cancel, what)
	return resp, nil
}

// guardedBody is a response body that fails past max bytes (max < 0: no
// limit), below the minimum rate over a window, or past its budget; the
// last two cancel the request, which ends a Read waiting for data.
type guardedBody struct {
	rc     io.ReadCloser
	max    int64
	limits Limits
	cancel context.CancelFunc
	what   string

	n      atomic.Int64
	last   int64 // n at the last window's end; the window timer's own
	window *time.Timer
	budget *time.Timer
	reason atomic.Pointer[error]
	done   atomic.Bool // the body ended: the timers have nothing to say
}

// newGuardedBody guards rc, a response whose request started at start and
// that has budget in all.
func newGuardedBody(rc io.ReadCloser, max int64, l Limits, budget time.Duration, start time.Time, cancel context.CancelFunc, what string) *guardedBody {
	b := &guardedBody{rc: rc, max: max, limits: l, cancel: cancel, what: what}
	b.window = time.AfterFunc(l.RateWindow, b.checkRate)
	b.budget = time.AfterFunc(budget-time.Since(start), func() {
		b.fail(fmt.Errorf("%s: not done after %s (%d bytes read), the budget of this response: %w", what, budget, b.n.Load(), ErrTooSlow))
	})
	return b
}

// checkRate ends the body when the last window brought less than
// MinRate on average.
func (b *guardedBody) checkRate() {
	if b.done.Load() {
		return
	}
	n := b.n.Load()
	want := int64(float64(b.limits.MinRate) * b.limits.RateWindow.Seconds())
	if n-b.last < want {
		b.fail(fmt.Errorf("%s: %d bytes in the last %s, below the minimum rate of %d bytes/s: %w", b.what, n-b.last, b.limits.RateWindow, b.limits.MinRate, ErrTooSlow))
		return
	}
	b.last = n
	b.window.Reset(b.limits.RateWindow)
}

func (b *guardedBody) fail(err error) {
	if !b.done.Load() && b.reason.CompareAndSwap(nil, &err) {
		b.cancel()
	}
}

func (b *guardedBody) Read(p []byte) (int, error) {
	if r := b.reason.Load(); r != nil {
		return 0, *r
	}
	n, err := b.rc.Read(p)
	total := b.n.Add(int64(n))
	if b.max >= 0 && total > b.max {
		return n, fmt.Errorf("%s: response above %d bytes: %w", b.what, b.max, ErrLimit)
	}
	if err != nil && err != io.EOF {
		if r := b.reason.Load(); r != nil {
			return n, *r
		}
	}
	if err != nil {
		b.stop()
	}
	return n, err
}

func (b *guardedBody) stop() {
	b.done.Store(true)
	b.window.Stop()
	b.budget.Stop()
}

func (b *guardedBody) Close() error {
	b.stop()
	err := b.rc.Close()
	b.cancel()
	return err
}
