package updateservice

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/payload-apply/payload-apply/lib/cincinnati"
)

const graph = `{"nodes":[{"version":"4.1.0","payload":"r@sha256:a"}],"edges":[],"conditionalEdges":[]}`

func TestFetch(t *testing.T) {
	fast := wait.Backoff{Steps: 3, Duration: time.Millisecond, Factor: 1}
	for _, tc := range []struct {
		name string
		// answers are the statuses and bodies of successive requests (the
		// last repeats).
		answers []string
		timeout time.Duration
		limits  cincinnati.Limits
		reason  string
		message string
		calls   int64
	}{
		{name: "a graph", answers: []string{"200 " + graph}, calls: 1},
		{name: "a 503 is retried", answers: []string{"503 busy", "200 " + graph}, calls: 2},
		{name: "503 three times", answers: []string{"503 busy"}, reason: cincinnati.ReasonResponseFailed, message: "unexpected HTTP status: 503 Service Unavailable: busy", calls: 3},
		{name: "the service's error answer, not retried", answers: []string{`400 {"kind":"invalid_params","value":"invalid client parameters: channel 'X' does not match regex"}`},
			reason: cincinnati.ReasonResponseFailed, message: "unexpected HTTP status: 400 Bad Request: invalid_params: invalid client parameters: channel 'X'", calls: 1},
		{name: "not a graph, not retried", answers: []string{"200 <html>"}, reason: cincinnati.ReasonResponseInvalid, message: "the graph is not valid JSON", calls: 1},
		{name: "too large", answers: []string{"200 " + graph}, limits: cincinnati.Limits{MaxBytes: 10}, reason: cincinnati.ReasonResponseInvalid, message: "the graph is larger than 10 bytes", calls: 1},
		{name: "a body too slow is cut and retried", answers: []string{"slow"}, timeout: 100 * time.Millisecond, reason: cincinnati.ReasonResponseFailed, message: "reading the graph", calls: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := calls.Add(1)
				if r.Header.Get("Accept") != "application/json" || r.URL.Query().Get("channel") != "stable-4.1" {
					t.Errorf("request %s with Accept %q", r.URL, r.Header.Get("Accept"))
				}
				a := tc.answers[min(int(n), len(tc.answers))-1]
				if a == "slow" {
					w.WriteHeader(200)
					fmt.Fprint(w, `{"nodes":[`)
					w.(http.Flusher).Flush()
					<-r.Context().Done()
					return
				}
				var code int
				fmt.Sscan(a, &code)
				w.WriteHeader(code)
				fmt.Fprint(w, a[4:])
			}))
			defer srv.Close()
			c := &Client{Backoff: fast, Timeout: tc.timeout, Limits: tc.limits}
			u, _ := url.Parse(srv.URL + "/graph?channel=stable-4.1&id=secret")
			g, err := c.Fetch(t.Context(), u)
			if calls.Load() != tc.calls {
				t.Errorf("%d requests, want %d", calls.Load(), tc.calls)
			}
			if tc.reason == "" {
				if err != nil || len(g.Nodes) != 1 {
					t.Fatalf("Fetch: %v, %v", g, err)
				}
				return
			}
			var e *cincinnati.Error
			if !errors.As(err, &e) || e.Reason != tc.reason || !strings.Contains(e.Message, tc.message) {
				t.Fatalf("error %v, want %s containing %q", err, tc.reason, tc.message)
			}
			if strings.Contains(e.Message, "secret") {
				t.Errorf("the message shows the query (the cluster's id): %s", e.Message)
			}
		})
	}
}

func TestFetchUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	u, _ := url.Parse("http://" + addr + "/graph?id=secret")
	start := time.Now()
	_, err = (&Client{Backoff: wait.Backoff{Steps: 2, Duration: 10 * time.Millisecond, Factor: 1}}).Fetch(t.Context(), u)
	var e *cincinnati.Error
	if !errors.As(err, &e) || e.Reason != cincinnati.ReasonRemoteFailed || !strings.Contains(e.Message, "connection refused") || strings.Contains(e.Message, "secret") {
		t.Fatalf("error %v, want RemoteFailed, connection refused, without the query", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %s", time.Since(start))
	}
}
