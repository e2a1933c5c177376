// Package clustercondition evaluates the matching rules of update risks
// against a cluster, as the cluster-version operator's clusterconditions
// do: a rule of type Always matches; a rule of type PromQL matches when
// its query, asked of the cluster's Prometheus (in OpenShift the Thanos
// querier) through prometheus/client_golang's api package, returns one
// sample of value 1, does not when it returns 0, and fails to evaluate
// otherwise (no sample, several, another value, an error). Rules are
// walked in order and the first one that evaluates decides; unknown types
// are skipped; when none evaluates, Match returns an error naming each
// rule and why.
//
// An Evaluator keeps each query's result for Options.Period (the CVO
// keeps one an hour), and a failure for Options.RetryFailed, so that a
// graph's risks cost one query each per period, whatever the number of
// edges that carry them; concurrent evaluations of one query share one
// request. Requests are GETs (Thanos' kube-rbac-proxy maps a POST to
// another verb), carry the bearer token of Options.BearerTokenFile read
// afresh each time, and their answers are bounded.
//
// May import: lib/cincinnati.
package clustercondition

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"golang.org/x/sync/singleflight"

	"github.com/payload-apply/payload-apply/lib/cincinnati"
)

// Options configure an Evaluator. The zero value evaluates Always rules
// only: PromQL rules fail for want of a Prometheus.
type Options struct {
	// PrometheusURL is the base URL of the Prometheus HTTP API (the
	// Thanos querier's in OpenShift). Empty: PromQL rules fail to
	// evaluate.
	PrometheusURL string
	// Transport sends the requests; nil: a clone of
	// http.DefaultTransport.
	Transport http.RoundTripper
	// BearerTokenFile holds the token sent to Prometheus, read at each
	// query (it may be rotated); empty: none.
	BearerTokenFile string
	// Period is how long a query's result is kept; zero: DefaultPeriod.
	Period time.Duration
	// RetryFailed is how long a failed evaluation is kept before the query
	// is asked again; zero: DefaultRetryFailed.
	RetryFailed time.Duration
	// QueryTimeout bounds one query; zero: DefaultQueryTimeout.
	QueryTimeout time.Duration
	// MaxResponseBytes bounds an answer; zero: DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// Now is the clock; nil: time.Now.
	Now func() time.Time
}

// Defaults of Options.
const (
	// DefaultPeriod is the CVO's: a rule's result is kept for an hour.
	DefaultPeriod = time.Hour
	// DefaultRetryFailed: a rule that failed is tried again after a
	// minute (the CVO keeps a failure as long as a result).
	DefaultRetryFailed = time.Minute
	// DefaultQueryTimeout bounds a query.
	DefaultQueryTimeout = time.Minute
	// DefaultMaxResponseBytes bounds an answer: a rule's answer is one
	// sample.
	DefaultMaxResponseBytes = 1 << 20
)

// Evaluator evaluates matching rules, caching the results of queries. It
// is safe for concurrent use.
type Evaluator struct {
	opts  Options
	api   promv1.API
	group singleflight.Group

	mu    sync.Mutex
	cache map[string]result

	queries atomic.Int64
}

type result struct {
	match bool
	err   error
	at    time.Time
}

var _ cincinnati.Matcher = (*Evaluator)(nil)

// New returns an Evaluator; an error says the Prometheus URL is not
// valid.
func New(opts Options) (*Evaluator, error) {
	if opts.Period <= 0 {
		opts.Period = DefaultPeriod
	}
	if opts.RetryFailed <= 0 {
		opts.RetryFailed = DefaultRetryFailed
	}
	if opts.QueryTimeout <= 0 {
		opts.QueryTimeout = DefaultQueryTimeout
	}
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	e := &Evaluator{opts: opts, cache: map[string]result{}}
	if opts.PrometheusURL == "" {
		return e, nil
	}
	base := opts.Transport
	if base == nil {
		base = http.DefaultTransport.(*http.Transport).Clone()
	}
	client, err := api.NewClient(api.Config{Address: opts.PrometheusURL,
		RoundTripper: &transport{base: base, tokenFile: opts.BearerTokenFile, max: opts.MaxResponseBytes}})
	if err != nil {
		return nil, fmt.Errorf("prometheus URL %q: %w", opts.PrometheusURL, err)
	}
	e.api = promv1.NewAPI(client)
	return e, nil
}

// Queries returns how many PromQL queries were sent.
func (e *Evaluator) Queries() int64 { return e.queries.Load() }

// Match walks rules in order and returns the first one's outcome that
// evaluates: Always matches, PromQL as its query says (see the package
// comment); other types are skipped. When none evaluates, the error names
// each rule and why.
func (e *Evaluator) Match(ctx context.Context, rules []configv1.ClusterCondition) (bool, error) {
	var errs []string
	for i, r := range rules {
		switch {
		case r.Type == cincinnati.RuleAlways:
			return true, nil
		case r.Type == cincinnati.RulePromQL && r.PromQL != nil:
			m, err := e.promQL(ctx, r.PromQL.PromQL)
			if err == nil {
				return m, nil
			}
			errs = append(errs, fmt.Sprintf("rule %d (PromQL): %v", i, err))
		default:
			errs = append(errs, fmt.Sprintf("rule %d: unknown type %q", i, r.Type))
		}
	}
	if len(errs) == 0 {
		return false, errors.New("no matching rules")
	}
	return false, errors.New(strings.Join(errs, "; "))
}

// promQL returns the query's outcome, from the cache while it is fresh.
func (e *Evaluator) promQL(ctx context.Context, query string) (bool, error) {
	if r, ok := e.cached(query); ok {
		return r.match, r.err
	}
	v, _, _ := e.group.Do(query, func() (any, error) {
		if r, ok := e.cached(query); ok {
			return r, nil
		}
		m, err := e.query(ctx, query)
		r := result{match: m, err: err, at: e.opts.Now()}
		// A query cut short by its caller says nothing of the cluster.
		if ctx.Err() == nil {
			e.mu.Lock()
			e.cache[query] = r
			e.mu.Unlock()
		}
		return r, nil
	})
	r := v.(result)
	return r.match, r.err
}

// cached returns the fresh result of query, dropping stale entries.
func (e *Evaluator) cached(query string) (result, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.opts.Now()
	for q, r := range e.cache {
		if now.Sub(r.at) >= e.keep(r) {
			delete(e.cache, q)
		}
	}
	r, ok := e.cache[query]
	return r, ok
}

func (e *Evaluator) keep(r result) time.Duration {
	if r.err != nil {
		return e.opts.RetryFailed
	}
	return e.opts.Period
}

// query asks Prometheus.
func (e *Evaluator) query(ctx context.Context, query string) (bool, error) {
	if e.api == nil {
		return false, errors.New("no Prometheus to ask (--prometheus-url)")
	}
	e.queries.Add(1)
	ctx, cancel := context.WithTimeout(ctx, e.opts.QueryTimeout)
	defer cancel()
	v, _, _, err := e.api.Query(ctx, query, e.opts.Now())
	if err != nil {
		return false, fmt.Errorf("query %q: %w", query, err)
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return false, fmt.Errorf("query %q: the result is a %s, want a vector", query, v.Type())
	}
	if len(vec) != 1 {
		return false, fmt.Errorf("query %q: %d samples, want one", query, len(vec))
	}
	switch vec[0].Value {
	case 0:
		return false, nil
	case 1:
		return true, nil
	}
	return false, fmt.Errorf("query %q: the value is %v, want 0 or 1", query, vec[0].Value)
}

// transport sends a form POST as a GET with the form as the query, adds
// the bearer token and bounds the answer.
type transport struct {
	base      http.RoundTripper
	tokenFile string
	max       int64
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && req.Body != nil {
		form, err := io.ReadAll(io.LimitReader(req.Body, t.max))
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		get := req.Clone(req.Context())
		get.Method, get.Body, get.GetBody, get.ContentLength = http.MethodGet, nil, nil, 0
		get.Header.Del("Content-Type")
		get.URL.RawQuery = string(form)
		req = get
	} else {
		req = req.Clone(req.Context())
	}
	if t.tokenFile != "" {
		tok, err := os.ReadFile(t.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("bearer token: %w", err)
		}
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &bounded{r: resp.Body, max: t.max}
	return resp, nil
}

// bounded fails a body longer than max bytes.
type bounded struct {
	r         io.ReadCloser
	read, max int64
}

func (b *bounded) Read(p []byte) (int, error) {
	if b.read > b.max {
		return 0, fmt.Errorf("the answer is larger than %d bytes", b.max)
	}
	// Up to one byte past the bound, to tell a body of exactly max bytes
	// from a longer one.
	if room := b.max + 1 - b.read; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := b.r.Read(p)
	b.read += int64(n)
	if b.read > b.max {
		return n, fmt.Errorf("the answer is larger than %d bytes", b.max)
	}
	return n, err
}

func (b *bounded) Close() error { return b.r.Close() }
