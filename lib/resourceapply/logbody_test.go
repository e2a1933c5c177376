package resourceapply

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
)

func TestWithoutBodyLogs(t *testing.T) {
	var lines []string
	base := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 10})
	ctx := klog.NewContext(context.Background(), base)
	obj := func(kind string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind(kind)
		return u
	}
	tests := []struct {
		name     string
		kind     string
		wantBody bool
	}{
		{name: "a Secret's bodies are not logged", kind: "Secret", wantBody: false},
		{name: "other kinds keep the logger", kind: "ConfigMap", wantBody: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines = nil
			l := klog.FromContext(withoutBodyLogs(ctx, obj(tt.kind)))
			l.V(6).Info("request", "url", "/api/v1/x")
			l.WithValues("k", "v").WithName("n").V(bodyLogLevel).Info("Response Body", "body", "secret")
			l.V(10).Info("Request Body", "body", "secret")
			want := 1
			if tt.wantBody {
				want = 3
			}
			if len(lines) != want {
				t.Errorf("%d lines logged, want %d: %q", len(lines), want, lines)
			}
		})
	}
	t.Run("a logger without sink is left alone", func(t *testing.T) {
		ctx := klog.NewContext(context.Background(), logr.Discard())
		if got := withoutBodyLogs(ctx, obj("Secret")); got != ctx {
			t.Error("context replaced")
		}
	})
}
