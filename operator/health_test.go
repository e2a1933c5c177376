package operator

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// newTestOperator makes an Operator of the embedded payload for a
// cluster nothing listens at.
func newTestOperator(t *testing.T) *Operator {
	t.Helper()
	opts := DefaultOptions()
	opts.Cluster, opts.LeaseNamespace, opts.Identity = &rest.Config{Host: "https://127.0.0.1:1"}, "ns", "a"
	opts.Image = "embedded://payload-apply"
	o, err := New(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestProbes(t *testing.T) {
	o := newTestOperator(t)
	srv := httptest.NewServer(o.Handler())
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/healthz"); code != 200 || body != "ok" {
		t.Errorf("/healthz: %d %q, want 200 ok", code, body)
	}
	code, body := get("/readyz")
	if code != 500 || !strings.Contains(body, "[-]lease failed: the lease's API server has not answered yet") || !strings.Contains(body, "[+]payload ok") {
		t.Errorf("/readyz before the Lease answered: %d %q", code, body)
	}
	o.lease.note(errors.New("connection refused"))
	if _, body := get("/readyz"); !strings.Contains(body, "connection refused") {
		t.Errorf("/readyz after a failure: %q, want the failure", body)
	}
	o.lease.note(nil)
	if code, body := get("/readyz"); code != 200 || body != "ok" {
		t.Errorf("/readyz after the Lease answered: %d %q", code, body)
	}
	if code, body := get("/readyz?verbose"); code != 200 || body != "[+]payload ok\n[+]lease ok\nreadyz check passed\n" {
		t.Errorf("/readyz?verbose: %d %q", code, body)
	}
	code, body = get("/metrics")
	for _, want := range []string{"payload_apply_operator_leader 0", "go_goroutines", "process_resident_memory_bytes"} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("/metrics (%d) lacks %q", code, want)
		}
	}
	if rel := o.Release(); rel.Version == "" || rel.Image != "embedded://payload-apply" {
		t.Errorf("Release %+v: want the embedded payload's version and Options.Image", rel)
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	_, err := New(t.Context(), Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "operator: ") {
		t.Errorf("New with no options: %v", err)
	}
}
