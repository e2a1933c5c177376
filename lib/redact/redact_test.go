package redact

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestValuesString(t *testing.T) {
	var v Values
	v.Add("hunter2-password", "short", "-----BEGIN KEY-----\nAAAABBBBCCCCDDDD\nEEEEFFFF\n-----END KEY-----\n")
	v.AddBase64(base64.StdEncoding.EncodeToString([]byte("decoded-secret")))
	v.AddSecret(map[string]any{"apiVersion": "v1", "kind": "Secret",
		"data":       map[string]any{"a": base64.StdEncoding.EncodeToString([]byte("data-value-1"))},
		"stringData": map[string]any{"b": "string-value-2", "c": map[string]any{"nested": "nested-value-3"}}})
	v.AddSecret(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"a": "not-a-secret"}})
	cases := []struct{ in, want string }{
		{"token hunter2-password here", "token <redacted> here"},
		{"b64 " + base64.StdEncoding.EncodeToString([]byte("hunter2-password")), "b64 <redacted>"},
		{"raw " + base64.RawStdEncoding.EncodeToString([]byte("hunter2-password")) + "!", "raw <redacted>!"},
		{"short stays", "short stays"},
		{"line AAAABBBBCCCCDDDD of a key", "line <redacted> of a key"},
		{"decoded-secret and data-value-1 and string-value-2 and nested-value-3", "<redacted> and <redacted> and <redacted> and <redacted>"},
		{"not-a-secret", "not-a-secret"},
		{"nothing", "nothing"},
	}
	for _, tc := range cases {
		if got := v.String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	var nilValues *Values
	if got := nilValues.String("x"); got != "x" || nilValues.Len() != 0 {
		t.Errorf("nil Values: %q", got)
	}
}

func TestBody(t *testing.T) {
	var v Values
	v.Add("known-token-value")
	secret := `{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s"},"data":{"p":"bGl2ZS1kYXRh"},"stringData":{"q":"plain-value"},"type":"Opaque"}`
	cases := []struct {
		name, in  string
		want      []string
		forbidden []string
	}{
		{"secret masked in place", secret, []string{`"p":"<redacted>"`, `"q":"<redacted>"`, `"name":"s"`}, []string{"bGl2ZS1kYXRh", "plain-value"}},
		{"secret list", `{"kind":"SecretList","apiVersion":"v1","items":[` + secret + `]}`, []string{`"p":"<redacted>"`}, []string{"bGl2ZS1kYXRh"}},
		{"watch event", `{"type":"ADDED","object":` + secret + `}`, []string{`"p":"<redacted>"`}, []string{"bGl2ZS1kYXRh"}},
		{"truncated secret withheld", secret[:60] + " [truncated 80 chars]", []string{"bytes concerning a Secret, not shown"}, []string{"Secret\",\"apiVersion"}},
		{"configmap untouched", `{"kind":"ConfigMap","apiVersion":"v1","data":{"k":"visible-value"}}`, []string{"visible-value"}, nil},
		{"known value in a status", `{"kind":"Status","message":"denied: known-token-value"}`, []string{"denied: <redacted>"}, []string{"known-token-value"}},
		{"protobuf-ish text", "k8s\x00\x0a\x02v1\x12\x06Secret", []string{"not shown"}, []string{"k8s"}},
	}
	for _, tc := range cases {
		got := Body(tc.in, &v)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", tc.name, got, w)
			}
		}
		for _, f := range tc.forbidden {
			if strings.Contains(got, f) {
				t.Errorf("%s: %q shows %q", tc.name, got, f)
			}
		}
	}
}

func TestLoggerAndWriter(t *testing.T) {
	var v Values
	v.Add("bearer-token-123")
	var out bytes.Buffer
	base := funcr.New(func(prefix, args string) { out.WriteString(prefix + " " + args + "\n") }, funcr.Options{Verbosity: 10})
	log := Logger(base, &v)
	log.V(8).Info("Response Body", "body", `{"kind":"Secret","apiVersion":"v1","data":{"k":"c2VjcmV0LWRhdGE="}}`)
	log.Info("Request", "headers", map[string]string{"Authorization": "Bearer bearer-token-123"}, "n", 3)
	log.Error(errors.New("failed with bearer-token-123"), "oops bearer-token-123")
	log.WithValues("token", "bearer-token-123").WithName("x").Info("with values")
	if s := out.String(); strings.Contains(s, "bearer-token-123") || strings.Contains(s, "c2VjcmV0LWRhdGE=") || !strings.Contains(s, "<redacted>") {
		t.Errorf("log output leaks:\n%s", s)
	}
	if !Logger(base, &v).V(10).Enabled() || Logger(base, &v).V(11).Enabled() {
		t.Error("verbosity is not the inner logger's")
	}
	if l := Logger(logr.Discard(), &v); l.GetSink() != nil {
		t.Error("a discarding logger should stay one")
	}

	var buf bytes.Buffer
	w := Writer(&buf, &v)
	if _, err := w.Write([]byte("error: bearer-token-123 refused\n")); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "error: <redacted> refused\n" {
		t.Errorf("Writer wrote %q", buf.String())
	}
}

func TestWrap(t *testing.T) {
	var v Values
	v.Add("echoed-secret")
	inner := apierrors.NewInvalid(schema.GroupKind{Kind: "Secret"}, "s", nil)
	inner.ErrStatus.Message = "denied: echoed-secret"
	err := Wrap(inner, &v)
	if err.Error() != "denied: <redacted>" || !apierrors.IsInvalid(err) {
		t.Errorf("Wrap: %q, IsInvalid %v", err, apierrors.IsInvalid(err))
	}
	if Wrap(nil, &v) != nil || Wrap(inner, &Values{}) != error(inner) {
		t.Error("Wrap of nil or with no values should return its input")
	}
}

func TestLogFilter(t *testing.T) {
	var v Values
	v.Add("client-key-line")
	f := LogFilter{Values: func() *Values { return &v }}
	args := f.Filter([]any{"a client-key-line", 3, errors.New("client-key-line failed")})
	if args[0] != "a <redacted>" || args[1] != 3 || args[2] != "<redacted> failed" {
		t.Errorf("Filter: %v", args)
	}
	format, fargs := f.FilterF("key %s client-key-line", []any{"client-key-line"})
	if format != "key %s <redacted>" || fargs[0] != "<redacted>" {
		t.Errorf("FilterF: %q %v", format, fargs)
	}
	msg, kv := f.FilterS("Response Body", []any{"body", `{"kind":"Secret","apiVersion":"v1","stringData":{"k":"anything"}}`, "url", "https://x/client-key-line"})
	if msg != "Response Body" || strings.Contains(kv[1].(string), "anything") || kv[3] != "https://x/<redacted>" {
		t.Errorf("FilterS: %q %v", msg, kv)
	}
	// Without values, Secret bodies are still masked.
	_, kv = LogFilter{}.FilterS("Response Body", []any{"body", `{"kind":"Secret","apiVersion":"v1","data":{"k":"c2VjcmV0"}}`})
	if strings.Contains(kv[1].(string), "c2VjcmV0") {
		t.Errorf("FilterS without values: %v", kv)
	}
}

func TestValuesConcurrent(t *testing.T) {
	var v Values
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			v.Add("secret-value-" + strings.Repeat("x", i))
		}
	}()
	for range 200 {
		_ = v.String("has secret-value-x in it")
	}
	<-done
	if got := v.String("secret-value-xx"); got != Mask {
		t.Errorf("String = %q", got)
	}
}

// TestSecretValuesInLists: the values of Secrets inside lists are known
// secrets too, whatever the list form.
func TestSecretValuesInLists(t *testing.T) {
	secret := map[string]any{"apiVersion": "v1", "kind": "Secret", "data": map[string]any{"k": "UGxhbnRlZA=="}, "stringData": map[string]any{"s": "planted-string"}}
	tests := []struct {
		name string
		obj  map[string]any
		want int // Secrets found
	}{
		{"Secret", secret, 1},
		{"List", map[string]any{"kind": "List", "items": []any{secret, map[string]any{"kind": "ConfigMap"}}}, 1},
		{"SecretList", map[string]any{"kind": "SecretList", "items": []any{secret, secret}}, 2},
		{"List in a List", map[string]any{"kind": "List", "items": []any{map[string]any{"kind": "List", "items": []any{secret}}}}, 1},
		{"Template", map[string]any{"kind": "Template", "objects": []any{secret}}, 1},
		{"ConfigMap holding a Secret-shaped value", map[string]any{"kind": "ConfigMap", "data": map[string]any{"x": secret}}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := len(Secrets(tc.obj)); got != tc.want {
				t.Fatalf("Secrets: %d, want %d", got, tc.want)
			}
			var v Values
			v.AddSecret(tc.obj)
			masked := v.String("a UGxhbnRlZA== b planted-string c")
			if tc.want > 0 && (strings.Contains(masked, "UGxhbnRlZA==") || strings.Contains(masked, "planted-string")) {
				t.Errorf("not masked: %s", masked)
			}
		})
	}
}
