package clustercondition

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"

	"github.com/payload-apply/payload-apply/lib/cincinnati"
)

func promql(q string) configv1.ClusterCondition {
	return configv1.ClusterCondition{Type: cincinnati.RulePromQL, PromQL: &configv1.PromQLClusterCondition{PromQL: q}}
}

// answers is a Prometheus query API in a test: each query answers a
// fixed body; it records the requests' methods and tokens. (The real
// server is in the e2e test; this one checks the mechanism.)
type answers struct {
	mu      sync.Mutex
	bodies  map[string]string
	methods []string
	tokens  []string
	delay   time.Duration
	calls   atomic.Int64
}

func vector(values ...string) string {
	var samples []string
	for _, v := range values {
		samples = append(samples, fmt.Sprintf(`{"metric":{},"value":[1700000000,%q]}`, v))
	}
	return `{"status":"success","data":{"resultType":"vector","result":[` + strings.Join(samples, ",") + `]}}`
}

func (a *answers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.calls.Add(1)
	time.Sleep(a.delay)
	a.mu.Lock()
	a.methods = append(a.methods, r.Method)
	a.tokens = append(a.tokens, r.Header.Get("Authorization"))
	body, ok := a.bodies[r.URL.Query().Get("query")]
	a.mu.Unlock()
	if !ok {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"status":"error","errorType":"bad_data","error":"parse error"}`)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, body)
}

func TestMatch(t *testing.T) {
	a := &answers{bodies: map[string]string{
		"one": vector("1"), "zero": vector("0"), "two": vector("2"), "none": vector(), "pair": vector("1", "1"),
		"matrix": `{"status":"success","data":{"resultType":"scalar","result":[1700000000,"1"]}}`,
		"huge":   vector(strings.Repeat("9", 3000)),
	}}
	srv := httptest.NewServer(a)
	defer srv.Close()
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e, err := New(Options{PrometheusURL: srv.URL, BearerTokenFile: token, MaxResponseBytes: 2000})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		rules []configv1.ClusterCondition
		want  bool
		err   string
	}{
		{name: "1 matches", rules: []configv1.ClusterCondition{promql("one")}, want: true},
		{name: "0 does not", rules: []configv1.ClusterCondition{promql("zero")}},
		{name: "always", rules: []configv1.ClusterCondition{{Type: cincinnati.RuleAlways}}, want: true},
		{name: "the first that evaluates decides", rules: []configv1.ClusterCondition{{Type: "Telepathy"}, promql("none"), promql("zero"), {Type: cincinnati.RuleAlways}}},
		{name: "another value", rules: []configv1.ClusterCondition{promql("two")}, err: `rule 0 (PromQL): query "two": the value is 2, want 0 or 1`},
		{name: "no sample", rules: []configv1.ClusterCondition{promql("none")}, err: `query "none": 0 samples, want one`},
		{name: "two samples", rules: []configv1.ClusterCondition{promql("pair")}, err: `query "pair": 2 samples, want one`},
		{name: "not a vector", rules: []configv1.ClusterCondition{promql("matrix")}, err: `query "matrix": the result is a scalar, want a vector`},
		{name: "a query error", rules: []configv1.ClusterCondition{promql("nonsense(")}, err: `query "nonsense(": bad_data: parse error`},
		{name: "too large an answer", rules: []configv1.ClusterCondition{promql("huge")}, err: "larger than 2000 bytes"},
		{name: "all fail", rules: []configv1.ClusterCondition{{Type: "Telepathy"}, promql("none")}, err: `rule 0: unknown type "Telepathy"; rule 1 (PromQL): query "none": 0 samples`},
		{name: "no rules", err: "no matching rules"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := e.Match(t.Context(), tc.rules)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Match: %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	for i, m := range a.methods {
		if m != http.MethodGet || a.tokens[i] != "Bearer secret" {
			t.Errorf("request %d: %s with %q, want GET with the token", i, m, a.tokens[i])
		}
	}
}

// TestCache: a result is kept for the period, a failure for RetryFailed;
// concurrent evaluations of one query send one request.
func TestCache(t *testing.T) {
	a := &answers{bodies: map[string]string{"one": vector("1")}, delay: 50 * time.Millisecond}
	srv := httptest.NewServer(a)
	defer srv.Close()
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	e, err := New(Options{PrometheusURL: srv.URL, Period: time.Hour, RetryFailed: time.Minute, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if m, err := e.Match(t.Context(), []configv1.ClusterCondition{promql("one")}); !m || err != nil {
				t.Errorf("Match: %v %v", m, err)
			}
		}()
	}
	wg.Wait()
	for _, step := range []struct {
		name    string
		advance time.Duration
		query   string
		want    int64
	}{
		{name: "ten at once: one request", want: 1},
		{name: "within the period: cached", advance: 59 * time.Minute, query: "one", want: 1},
		{name: "after the period: asked again", advance: 2 * time.Minute, query: "one", want: 2},
		{name: "a failure", query: "missing", want: 3},
		{name: "a failure is kept", advance: 30 * time.Second, query: "missing", want: 3},
		{name: "and retried after RetryFailed", advance: 31 * time.Second, query: "missing", want: 4},
	} {
		advance(step.advance)
		if step.query != "" {
			_, _ = e.Match(t.Context(), []configv1.ClusterCondition{promql(step.query)})
		}
		if got := a.calls.Load(); got != step.want || e.Queries() != step.want {
			t.Errorf("%s: %d requests (%d queries), want %d", step.name, got, e.Queries(), step.want)
		}
	}
}

func TestNoPrometheus(t *testing.T) {
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := e.Match(t.Context(), []configv1.ClusterCondition{{Type: cincinnati.RuleAlways}}); !m || err != nil {
		t.Errorf("Always: %v %v", m, err)
	}
	if _, err := e.Match(t.Context(), []configv1.ClusterCondition{promql("up")}); err == nil || !strings.Contains(err.Error(), "no Prometheus to ask (--prometheus-url)") {
		t.Errorf("PromQL without a Prometheus: %v", err)
	}
}
