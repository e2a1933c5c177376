package resourceapply

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/payload-apply/payload-apply/internal/realpayload"
)

// realCRD returns the real payload's largest CustomResourceDefinition as
// JSON, with the status conditions given.
func realCRD(tb testing.TB, conds ...map[string]any) map[string]any {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(realpayload.Dir(tb), "release-manifests", "0000_50_olm_00-clusterserviceversions.crd.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		tb.Fatal(err)
	}
	md := obj["metadata"].(map[string]any)
	md["resourceVersion"] = "42"
	list := make([]any, len(conds))
	for i, c := range conds {
		list[i] = c
	}
	obj["status"] = map[string]any{"conditions": list, "acceptedNames": map[string]any{"kind": "ClusterServiceVersion"}}
	return obj
}

// watchStream encodes events as a watch response body.
func watchStream(tb testing.TB, events ...map[string]any) []byte {
	tb.Helper()
	var buf bytes.Buffer
	for _, e := range events {
		if err := json.NewEncoder(&buf).Encode(e); err != nil {
			tb.Fatal(err)
		}
	}
	return buf.Bytes()
}

func TestSlimCRDWatch(t *testing.T) {
	established := map[string]any{"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"}
	accepted := map[string]any{"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found"}
	deleting := realCRD(t, accepted)
	deleting["metadata"].(map[string]any)["deletionTimestamp"] = "2026-11-24T10:00:00Z"
	body := watchStream(t,
		map[string]any{"type": "ADDED", "object": realCRD(t)},
		map[string]any{"type": "ERROR", "object": map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 500}},
		map[string]any{"type": "MODIFIED", "object": realCRD(t, accepted)},
		map[string]any{"type": "MODIFIED", "object": deleting},
		map[string]any{"type": "MODIFIED", "object": realCRD(t, accepted, established)},
	)
	var query string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		query = r.URL.Path + "?" + r.URL.RawQuery
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer srv.Close()
	cfg := dynamic.ConfigFor(&rest.Config{Host: srv.URL})
	cfg.GroupVersion, cfg.APIPath = nil, ""
	rc, err := rest.UnversionedRESTClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w, err := slimCRDWatcher(rc)(t.Context(), "clusterserviceversions.operators.coreos.com")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if want := "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?fieldSelector=metadata.name%3Dclusterserviceversions.operators.coreos.com&watch=true"; query != want {
		t.Errorf("request %s, want %s", query, want)
	}
	var got []string
	for ev := range w.ResultChan() {
		line := string(ev.Type)
		if u, ok := ev.Object.(*unstructured.Unstructured); ok {
			if u.GroupVersionKind().GroupKind() != (schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}) || u.GetName() == "" || u.GetResourceVersion() != "42" {
				t.Errorf("event %s: object %v", ev.Type, u.Object)
			}
			r := Check(nil, u)
			line += " ready=" + boolString(r.Ready) + " " + r.Reason
		}
		got = append(got, line)
	}
	want := []string{
		"ADDED ready=false NotEstablished",
		"ERROR",
		"MODIFIED ready=false NotEstablished",
		"MODIFIED ready=false Deleting",
		"MODIFIED ready=true ",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// A stream cut inside an event ends the watch; bytes that are not JSON
// end it with an error event; an event of the wrong shape is an error
// event, and the watch goes on.
func TestSlimWatchBrokenStream(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []watch.EventType
	}{
		{"cut", `{"type":"ADDED","object":{"metadata":{"name":"a"}}}` + "\n" + `{"type":"MODIFIED","obj`, []watch.EventType{watch.Added}},
		{"garbage", `{"type":"ADDED","object":{"metadata":{"name":"a"}}}` + "\n<html>", []watch.EventType{watch.Added, watch.Error}},
		{"empty", "", nil},
		{"wrong types", `{"type":"MODIFIED","object":{"status":{"conditions":"x"}}}` + "\n" + `{"type":"MODIFIED","object":{"metadata":{"name":"a"}}}`, []watch.EventType{watch.Error, watch.Modified}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newSlimWatch(io.NopCloser(strings.NewReader(tc.body)))
			var got []watch.EventType
			for ev := range w.ResultChan() {
				got = append(got, ev.Type)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
		})
	}
}

// Stop ends a watch blocked reading a body that sends nothing.
func TestSlimWatchStop(t *testing.T) {
	r, pw := io.Pipe()
	defer pw.Close()
	w := newSlimWatch(r)
	done := make(chan struct{})
	go func() {
		for range w.ResultChan() {
		}
		close(done)
	}()
	w.Stop()
	w.Stop()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the result channel is still open 5 s after Stop")
	}
}

// BenchmarkCRDWatchDecode decodes a watch event of the real payload's
// largest CRD as the dynamic client does (JSON into an unstructured
// object) and as slimWatch does.
func BenchmarkCRDWatchDecode(b *testing.B) {
	ev := watchStream(b, map[string]any{"type": "MODIFIED", "object": realCRD(b, map[string]any{"type": "Established", "status": "True"})})
	b.Run("unstructured", func(b *testing.B) {
		b.SetBytes(int64(len(ev)))
		for b.Loop() {
			var e struct {
				Type   string          `json:"type"`
				Object json.RawMessage `json:"object"`
			}
			if err := json.Unmarshal(ev, &e); err != nil {
				b.Fatal(err)
			}
			if _, _, err := unstructured.UnstructuredJSONScheme.Decode(e.Object, nil, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("slim", func(b *testing.B) {
		b.SetBytes(int64(len(ev)))
		for b.Loop() {
			w := newSlimWatch(io.NopCloser(bytes.NewReader(ev)))
			for range w.ResultChan() {
			}
		}
	})
}
