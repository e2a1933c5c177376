//go:build e2e

package clustercondition

import (
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	testprom "github.com/payload-apply/payload-apply/test/prometheus"
)

func TestMain(m *testing.M) {
	os.Exit(testprom.Run(m, testprom.Options{ScrapeInterval: 500 * time.Millisecond}))
}

// TestRealPrometheus evaluates rules against Debian's Prometheus scraping
// a /metrics endpoint: a rule whose query returns 1 matches, 0 does not,
// and queries that return no sample, several, or do not parse fail; a
// repeated evaluation is answered from the cache.
func TestRealPrometheus(t *testing.T) {
	p := testprom.Shared(t)
	reg := prometheus.NewRegistry()
	up := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "risky_component_up"}, []string{"component"})
	reg.MustRegister(up)
	up.WithLabelValues("a").Set(0)
	up.WithLabelValues("b").Set(1)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	if err := p.SetTargets(strings.TrimPrefix(srv.URL, "http://")); err != nil {
		t.Fatal(err)
	}
	if err := p.WaitFor(t.Context(), `risky_component_up{component="b"}`, 30*time.Second); err != nil {
		t.Fatalf("%v\n%s", err, p.Log())
	}
	e, err := New(Options{PrometheusURL: p.URL})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, query string
		want        bool
		err         string
	}{
		{name: "a is down: matches", query: `max(risky_component_up{component="a"} == bool 0)`, want: true},
		{name: "b is up: does not", query: `max(risky_component_up{component="b"} == bool 0)`},
		{name: "no such series", query: `risky_component_up{component="z"}`, err: "0 samples, want one"},
		{name: "two series", query: `risky_component_up`, err: "2 samples, want one"},
		{name: "not PromQL", query: `max(`, err: "bad_data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := e.Match(t.Context(), []configv1.ClusterCondition{promql(tc.query)})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || m != tc.want {
				t.Fatalf("Match: %v, %v; want %v", m, err, tc.want)
			}
		})
	}
	sent := e.Queries()
	if _, err := e.Match(t.Context(), []configv1.ClusterCondition{promql(`max(risky_component_up{component="a"} == bool 0)`)}); err != nil {
		t.Fatal(err)
	}
	if e.Queries() != sent {
		t.Errorf("a repeated evaluation asked Prometheus again (%d queries, then %d)", sent, e.Queries())
	}
}
