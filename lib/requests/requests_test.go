package requests

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
)

func TestVerbOf(t *testing.T) {
	for _, tc := range []struct {
		method, url, want string
	}{
		{"GET", "/api", Discovery},
		{"GET", "/apis", Discovery},
		{"GET", "/api/v1", Discovery},
		{"GET", "/apis/apps/v1", Discovery},
		{"GET", "/apis/apps", Discovery},
		{"GET", "/openapi/v3", Discovery},
		{"GET", "/version", Discovery},
		{"GET", "/api/v1/namespaces", List},
		{"GET", "/api/v1/namespaces?watch=true", Watch},
		{"GET", "/api/v1/namespaces/ns", Get},
		{"GET", "/api/v1/namespaces/ns/status", Get},
		{"GET", "/api/v1/namespaces/ns/configmaps?limit=500", List},
		{"GET", "/api/v1/configmaps", List},
		{"GET", "/api/v1/namespaces/ns/configmaps/c", Get},
		{"GET", "/apis/apps/v1/namespaces/ns/deployments/d/scale", Get},
		{"GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?fieldSelector=metadata.name%3Dx&watch=true", Watch},
		{"GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x", Get},
		{"HEAD", "/apis/config.openshift.io/v1/clusteroperators/x", Get},
		{"POST", "/api/v1/namespaces/ns/configmaps", Post},
		{"PATCH", "/api/v1/namespaces/ns/configmaps/c", Patch},
		{"PUT", "/api/v1/namespaces/ns/configmaps/c", Put},
		{"DELETE", "/api/v1/namespaces/ns/configmaps/c", Delete},
		{"OPTIONS", "/api", Other},
	} {
		req := httptest.NewRequest(tc.method, tc.url, nil)
		if got := VerbOf(req); got != tc.want {
			t.Errorf("%s %s: %s, want %s", tc.method, tc.url, got, tc.want)
		}
	}
}

// TestCounterWrap counts what a client built from a wrapped config sends,
// after the wrapper the config had.
func TestCounterWrap(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL}
	var inner int
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			inner++
			return rt.RoundTrip(r)
		})
	}
	var c Counter
	c.Wrap(cfg)
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct{ method, path string }{
		{"GET", "/api/v1/namespaces/ns/configmaps"}, {"GET", "/api/v1/namespaces/ns/configmaps/a"},
		{"GET", "/api/v1/namespaces/ns/configmaps/b"}, {"PATCH", "/api/v1/namespaces/ns/configmaps/a"}, {"GET", "/apis"},
	} {
		req, _ := http.NewRequest(r.method, srv.URL+r.path, nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	want := map[string]int64{List: 1, Get: 2, Patch: 1, Discovery: 1}
	if diff := cmp.Diff(want, c.Counts()); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if c.Reads() != 4 || c.Writes() != 1 || inner != 5 {
		t.Errorf("reads %d, writes %d, inner wrapper saw %d", c.Reads(), c.Writes(), inner)
	}
}
