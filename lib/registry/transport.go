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
	"sync"
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
	// StallTimeout ends a request whose body yields no byte for this long.
	StallTimeout time.Duration
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
// 8 MiB of metadata per response, 5 redirects, 60 s without data, 60 s for
// response headers, 2 retries after 1 s and 2 s.
func DefaultLimits() Limits {
	return Limits{
		MaxManifestSize: 8 << 20,
		MaxRedirects:    5,
		StallTimeout:    60 * time.Second,
		ResponseTimeout: 60 * time.Second,
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
	if l.StallTimeout <= 0 {
		l.StallTimeout = d.StallTimeout
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

// ErrLimit marks a response refused for its size or its redirects.
var ErrLimit = errors.New("registry limit exceeded")

// guard is the innermost transport of a Client: it picks the TLS
// configuration by host, refuses plain HTTP to hosts not marked insecure,
// bounds redirect chains and response bodies, ends stalled bodies, and
// counts requests.
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
	max := int64(-1)
	if !strings.Contains(req.URL.Path, "/blobs/") || resp.StatusCode >= 300 {
		max = g.limits.MaxManifestSize
	}
	if max >= 0 && resp.ContentLength > max {
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("%s %s: response of %d bytes, limit %d: %w", req.Method, req.URL.Redacted(), resp.ContentLength, max, ErrLimit)
	}
	resp.Body = &guardedBody{rc: resp.Body, max: max, stall: g.limits.StallTimeout, cancel: cancel,
		what: req.Method + " " + req.URL.Redacted()}
	return resp, nil
}

// guardedBody is a response body that fails past max bytes (max < 0: no
// limit) and cancels its request when one Read waits longer than stall.
type guardedBody struct {
	rc     io.ReadCloser
	n, max int64
	stall  time.Duration
	cancel context.CancelFunc
	what   string

	mu      sync.Mutex
	timer   *time.Timer
	stalled atomic.Bool
}

func (b *guardedBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	if b.timer == nil {
		b.timer = time.AfterFunc(b.stall, func() { b.stalled.Store(true); b.cancel() })
	} else {
		b.timer.Reset(b.stall)
	}
	b.mu.Unlock()
	n, err := b.rc.Read(p)
	b.mu.Lock()
	b.timer.Stop()
	b.mu.Unlock()
	b.n += int64(n)
	if b.max >= 0 && b.n > b.max {
		return n, fmt.Errorf("%s: response above %d bytes: %w", b.what, b.max, ErrLimit)
	}
	if err != nil && err != io.EOF && b.stalled.Load() {
		return n, fmt.Errorf("%s: no data for %s: stalled", b.what, b.stall)
	}
	return n, err
}

func (b *guardedBody) Close() error {
	b.mu.Lock()
	if b.timer != nil {
		b.timer.Stop()
	}
	b.mu.Unlock()
	err := b.rc.Close()
	b.cancel()
	return err
}
