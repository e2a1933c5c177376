// Package updateservice asks an update service (Cincinnati, the OpenShift
// Update Service, `payload-apply update-graph --serve`) for a channel's
// graph, as the cluster-version operator's client does: one GET of the
// URL cincinnati.Check made, Accept application/json, the answer read
// within cincinnati.Limits and parsed by cincinnati.Parse. Every failure
// is a *cincinnati.Error with the CVO's reason: RemoteFailed (the service
// was not reached), ResponseFailed (an error status, with the service's
// own error answer in the message; a body that could not be read),
// ResponseInvalid (not a graph). RemoteFailed, and ResponseFailed for a
// 5xx or 429 status, are retried with a backoff (wait.Backoff); each
// attempt is bounded by a timeout, and all of it by the context.
//
// May import: lib/cincinnati.
package updateservice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/payload-apply/payload-apply/lib/cincinnati"
)

// Client fetches graphs. The zero value is ready: the defaults below, the
// proxy of the environment, the system's roots. It is safe for concurrent
// use.
type Client struct {
	// Transport sends the requests; nil: a clone of http.DefaultTransport.
	Transport http.RoundTripper
	// UserAgent is sent when set.
	UserAgent string
	// Limits bound the graph.
	Limits cincinnati.Limits
	// Backoff paces the attempts: Steps of them, Duration apart, growing
	// by Factor; zero: DefaultBackoff.
	Backoff wait.Backoff
	// Timeout bounds one attempt; zero: DefaultTimeout.
	Timeout time.Duration
}

// Defaults of Client.
var (
	// DefaultBackoff makes three attempts, one and two seconds apart.
	DefaultBackoff = wait.Backoff{Steps: 3, Duration: time.Second, Factor: 2, Jitter: 0.1}
	// DefaultTimeout bounds an attempt.
	DefaultTimeout = time.Minute
)

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 4 << 10

// Fetch returns the graph at u (cincinnati.Check's URL); see the package
// comment for its errors.
func (c *Client) Fetch(ctx context.Context, u *url.URL) (*cincinnati.Graph, error) {
	b := c.Backoff
	if b.Steps <= 0 {
		b = DefaultBackoff
	}
	for attempts := b.Steps; ; attempts-- {
		g, err, retry := c.once(ctx, u)
		if err == nil || !retry || attempts <= 1 || ctx.Err() != nil {
			return g, err
		}
		t := time.NewTimer(b.Step())
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
	}
}

// once makes one attempt; retry says whether another may do better.
func (c *Client) once(ctx context.Context, u *url.URL) (*cincinnati.Graph, error, bool) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, &cincinnati.Error{Reason: cincinnati.ReasonInvalidRequest, Message: err.Error(), Err: err}, false
	}
	req.Header.Set("Accept", cincinnati.MediaType)
	if c.UserAgent != "" {
		req.Header.Set("User-Agent", c.UserAgent)
	}
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil {
		return nil, &cincinnati.Error{Reason: cincinnati.ReasonRemoteFailed, Message: fmt.Sprintf("GET %s: %v", redact(u), unwrapURL(err)), Err: err}, true
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg := fmt.Sprintf("GET %s: unexpected HTTP status: %s", redact(u), resp.Status)
		if detail := errorAnswer(resp.Body); detail != "" {
			msg += ": " + detail
		}
		retry := resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests
		return nil, &cincinnati.Error{Reason: cincinnati.ReasonResponseFailed, Message: msg}, retry
	}
	g, err := cincinnati.Parse(resp.Body, c.Limits)
	if err != nil {
		e := err.(*cincinnati.Error)
		e.Message = fmt.Sprintf("GET %s: %s", redact(u), e.Message)
		return nil, e, e.Reason == cincinnati.ReasonResponseFailed
	}
	return g, nil, false
}

// errorAnswer returns the service's error answer: Cincinnati's
// {"kind": ..., "value": ...}, else the start of the body.
func errorAnswer(body io.Reader) string {
	data, _ := io.ReadAll(io.LimitReader(body, maxErrorBody))
	var e struct{ Kind, Value string }
	if json.Unmarshal(data, &e) == nil && e.Kind != "" {
		return e.Kind + ": " + e.Value
	}
	return strings.TrimSpace(string(data))
}

// redact drops the query (it carries the cluster's id) and any user
// information from u, for messages.
func redact(u *url.URL) string {
	c := *u
	c.RawQuery, c.User = "", nil
	return c.String()
}

// unwrapURL drops net/url's "Get URL:" wrapping, which repeats the URL
// with its query.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
