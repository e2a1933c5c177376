package jsonenc

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/lib/manifest"
)

// same fails t unless Append writes what json.Marshal writes for v, or
// both refuse it.
func same(t *testing.T, v any) {
	t.Helper()
	want, werr := json.Marshal(v)
	var e Encoder
	got, err := e.Append([]byte("prefix"), v)
	switch {
	case errors.Is(err, ErrUnsupported):
		t.Fatalf("%#v: unsupported", v)
	case (err == nil) != (werr == nil):
		t.Fatalf("%#v: error %v, json.Marshal's %v", v, err, werr)
	case err != nil:
		if string(got) != "prefix" {
			t.Fatalf("%#v: on an error Append returned %q, want the prefix alone", v, got)
		}
	case !bytes.Equal(got, append([]byte("prefix"), want...)):
		t.Fatalf("%#v:\n got %s\nwant prefix%s", v, got, want)
	}
}

func TestAppendLikeMarshal(t *testing.T) {
	long := strings.Repeat("ab<c>&\u2028\"\\\x01", 50)
	for _, v := range []any{
		nil, true, false, "", "plain", "<a href=\"x\">&amp;</a>", "\x00\x01\x1f\x7f\b\f\n\r\t",
		"\u2028\u2029", "bad \xff utf8 \xc3", "é日本\U0001F600", long,
		int64(0), int64(-1), int64(math.MaxInt64), int64(math.MinInt64), 7, int32(-9),
		0.0, math.Copysign(0, -1), 1.5, -2.25, 1e20, 1e21, 123456789e13, 1e-6, 9.99e-7, 1e-7, 5e-324,
		math.MaxFloat64, -math.SmallestNonzeroFloat64, 0.1, 1.0 / 3, 100.0, 1e100, -1e-100,
		math.NaN(), math.Inf(1), math.Inf(-1),
		map[string]any(nil), map[string]any{}, []any(nil), []any{},
		map[string]any{"b": int64(1), "a": []any{"x", nil, 2.5, map[string]any{"z": true, "y": false}}, "": "empty key", "<k>": "html key", "\xff": 1},
		[]any{map[string]any{"nan": math.NaN()}},
		map[string]any{"a": map[string]any{"b": map[string]any{"c": []any{[]any{[]any{int64(3)}}}}}},
	} {
		same(t, v)
	}
}

func TestAppendUnsupported(t *testing.T) {
	for _, v := range []any{
		map[string]string{"a": "b"}, []string{"a"}, struct{}{}, uint(1), float32(1), json.Number("1"),
		map[string]any{"deep": []any{1, []string{"x"}}},
	} {
		var e Encoder
		e.RecordKinds = true
		got, err := e.Append([]byte("p"), v)
		if !errors.Is(err, ErrUnsupported) || string(got) != "p" || len(e.Kinds) != 0 || len(e.keys) != 0 {
			t.Errorf("%#v: got %q, %v, kinds %q, keys %q; want ErrUnsupported and nothing appended", v, got, err, e.Kinds, e.keys)
		}
	}
}

func TestAppendDepth(t *testing.T) {
	var v any = "leaf"
	for range maxDepth + 1 {
		v = []any{v}
	}
	if _, err := Append(nil, v); err == nil || errors.Is(err, ErrUnsupported) {
		t.Fatalf("nesting of %d: %v, want a depth error", maxDepth+1, err)
	}
}

func TestKinds(t *testing.T) {
	e := Encoder{RecordKinds: true}
	v := map[string]any{"b": 1.0, "a": []any{int64(1), 1, int32(1)}}
	out, err := e.Append(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"a":[1,1,1],"b":1}` || string(e.Kinds) != "inmf" {
		t.Fatalf("got %s with kinds %q, want {\"a\":[1,1,1],\"b\":1} with kinds \"inmf\"", out, e.Kinds)
	}
	e.Reset()
	if len(e.Kinds) != 0 {
		t.Fatalf("Reset kept %q", e.Kinds)
	}
}

// realObjects returns the objects of the real payload, as parsed.
func realObjects(tb testing.TB) []map[string]any {
	tb.Helper()
	var objs []map[string]any
	for _, sub := range []string{"manifests", "release-manifests"} {
		dir := filepath.Join(realpayload.Dir(tb), sub)
		entries, err := os.ReadDir(dir)
		if err != nil {
			tb.Fatal(err)
		}
		for _, e := range entries {
			if ext := path.Ext(e.Name()); e.IsDir() || ext != ".yaml" && ext != ".yml" && ext != ".json" {
				continue
			}
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				tb.Fatal(err)
			}
			ms, _ := manifest.Parse(e.Name(), data, manifest.ParseOptions{})
			for _, m := range ms {
				if m.Obj != nil {
					objs = append(objs, m.Obj.Object)
				}
			}
		}
	}
	if len(objs) < 500 {
		tb.Fatalf("%d objects in the real payload, want 500 or more", len(objs))
	}
	return objs
}

func TestAppendRealPayload(t *testing.T) {
	for _, obj := range realObjects(t) {
		same(t, obj)
	}
}

func BenchmarkAppend(b *testing.B) {
	objs := realObjects(b)
	b.Run("jsonenc", func(b *testing.B) {
		var e Encoder
		var buf []byte
		for b.Loop() {
			for _, o := range objs {
				buf, _ = e.Append(buf[:0], o)
			}
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		for b.Loop() {
			for _, o := range objs {
				_, _ = json.Marshal(o)
			}
		}
	})
}

// FuzzAppend: for any JSON the decoder accepts, and for any string and
// number put in an object as they are (invalid UTF-8 and all), Append
// writes what json.Marshal writes.
func FuzzAppend(f *testing.F) {
	f.Add([]byte(`{"a":[1,2.5,"x<>&\u2028",null,true,{"b":{}}],"":-0.0}`), "k\xff", 1e21)
	f.Add([]byte(`[1e-7, 123456789012345678901234567890, -9223372036854775808]`), "\u2029", 5e-324)
	f.Fuzz(func(t *testing.T, data []byte, s string, x float64) {
		var v any
		if utiljson.Unmarshal(data, &v) == nil {
			same(t, v)
		}
		same(t, map[string]any{s: s, "x": x, "v": v, "l": []any{s, x, int64(len(s))}})
	})
}
