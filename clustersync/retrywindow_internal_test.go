package clustersync

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/payload-apply/payload-apply/lib/resourceapply"
)

// unavailableServer serves discovery of core v1 ConfigMaps and answers
// every other request 503, counting those.
func unavailableServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var failed atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/version":
			_, _ = w.Write([]byte(`{"major":"1","minor":"35","gitVersion":"v1.35.0"}`))
		case "/api":
			_, _ = w.Write([]byte(`{"kind":"APIVersions","versions":["v1"]}`))
		case "/apis":
			_, _ = w.Write([]byte(`{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`))
		case "/api/v1":
			_, _ = w.Write([]byte(`{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"configmaps","singularName":"configmap","namespaced":true,"kind":"ConfigMap","verbs":["get","list","patch"]}]}`))
		default:
			failed.Add(1)
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"the server is down","reason":"ServiceUnavailable","code":503}`))
		}
	}))
	t.Cleanup(s.Close)
	return s, &failed
}

// TestClusterRetryWindow: the Cluster's own requests (here reading the
// cluster's profile) retry a server that keeps failing within the run's
// retry window (ConnectOptions.RetryTimeout), not the two-minute default.
func TestClusterRetryWindow(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		want    time.Duration
	}{
		{name: "the run's window", timeout: time.Second, want: time.Second},
		{name: "default", want: resourceapply.DefaultRetryOptions().Timeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, failed := unavailableServer(t)
			c, err := Connect(t.Context(), &rest.Config{Host: s.URL}, ConnectOptions{RetryTimeout: tc.timeout})
			if err != nil {
				t.Fatal(err)
			}
			if got := c.RetryOptions().Timeout; got != tc.want {
				t.Errorf("RetryOptions().Timeout = %s, want %s", got, tc.want)
			}
			if tc.timeout == 0 {
				return // two minutes of retries prove nothing more
			}
			start := time.Now()
			_, err = c.ClusterProfile(t.Context())
			took := time.Since(start)
			if err == nil || !strings.Contains(err.Error(), "the server is down") {
				t.Fatalf("ClusterProfile: %v, want the server's 503", err)
			}
			if n := failed.Load(); n < 2 {
				t.Errorf("%d requests: a 503 is retried", n)
			}
			if took > 10*tc.timeout {
				t.Errorf("gave up after %s, want about the retry window of %s", took.Round(time.Millisecond), tc.timeout)
			}
		})
	}
}
