package manifest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/payload"
)

// sameDecode fails t unless the direct decoder's manifest is exactly what
// the reference path gives: the same object tree (types included), which
// encodes to the reference path's Raw byte for byte, the same GVK and
// library-go resource id.
func sameDecode(t *testing.T, where string, fast, slow *manifest.Manifest) {
	t.Helper()
	if diff := cmp.Diff(slow.Obj.Object, fast.Obj.Object); diff != "" {
		t.Fatalf("%s: objects differ (-reference +direct):\n%s", where, diff)
	}
	// cmp compares dynamic types too, but be explicit about int64 vs int.
	if !reflect.DeepEqual(slow.Obj.Object, fast.Obj.Object) {
		t.Fatalf("%s: objects are not deeply equal", where)
	}
	if fast.Raw != nil {
		t.Fatalf("%s: the direct path kept Raw", where)
	}
	text, err := json.Marshal(fast.Obj.Object)
	if err != nil || !bytes.Equal(slow.Raw, text) {
		t.Fatalf("%s: the object encodes differently (%v):\nreference %s\ndirect    %s", where, err, slow.Raw, text)
	}
	if slow.GVK != fast.GVK {
		t.Fatalf("%s: GVK %v, reference %v", where, fast.GVK, slow.GVK)
	}
	// library-go's String prints its unexported resource id.
	if !slow.Manifest.SameResourceID(fast.Manifest) || slow.Manifest.String() != fast.Manifest.String() {
		t.Fatalf("%s: resource id %q, reference %q", where, fast.Manifest.String(), slow.Manifest.String())
	}
}

// TestFastDecodeMatchesReference decodes every document of the real payload
// both ways and compares the results byte for byte; every object of the
// real payload must take the direct path.
func TestFastDecodeMatchesReference(t *testing.T) {
	p, err := payload.Load(context.Background(), os.DirFS(realpayload.Dir(t)), payload.LoadOptions{KeepData: true})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range p.Files {
		docs, err := manifest.SplitDocuments(f.Data)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			if d.JSON || len(bytes.TrimSpace(d.Data)) == 0 {
				continue
			}
			slow, err := manifest.DecodeSlow(d)
			if err != nil || slow == nil {
				continue
			}
			fast, ok := manifest.DecodeYAMLFast(d.Data)
			if !ok {
				t.Errorf("%s#%d: the direct path refused a document the reference path decodes", f.Path, d.Index)
				continue
			}
			sameDecode(t, f.Path, fast, slow)
			n++
		}
	}
	if n < 700 {
		t.Fatalf("compared only %d documents", n)
	}
	t.Logf("%d documents decode identically", n)
}

// decodeCases are YAML documents where YAML 1.1 (go-yaml v2), the JSON
// round trip or the universal decoder have something to say.
var decodeCases = []struct {
	name string
	in   string
	fast bool // the direct path takes it
}{
	{"plain", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n", true},
	{"yaml 1.1 booleans", "apiVersion: v1\nkind: A\nmetadata: {name: a}\nd: [y, n, yes, no, on, off, Y, NO, True, FALSE, 'y']\n", true},
	{"bare equals", "apiVersion: v1\nkind: A\nmetadata: {name: a}\nd: {op: =, l: [=, a]}\n", true},
	{"ints", "apiVersion: v1\nkind: A\nmetadata: {name: a}\nd: [0, -1, 0x1F, 0o17, 017, 0b101, 1_000, +5, 9223372036854775807, -9223372036854775808]\n", true},
	{"int beyond int64", "apiVersion: v1\nkind: A\nmetadata: {name: a}\nd: 18446744073709551615\n", false},
	{"floats", "apiVersion: v1\nkind: A\nmetadata: {name: a}\nd: [1.5, 1.0, 2e3, 1e21, 1e-7, 0.1, 3.]\n", true},
	{"negative zero", "apiVersion: v1\nkind: A\nmetadata: {name: a}\nd: -0.0\n", false},
	{"nan and inf", "apiVersion: v1\nkind: A\nmetadata: {name: a}\nd: .nan\n", false},
	{"nulls", "apiVersion: v1\nkind: A\nmetadata: {name: a}\nd: [~, null, Null, ]\ne:\n", true},
	{"empty collections", "apiVersion: v1\nkind: A\nmetadata: {name: a, annotations: {}}\nd: []\n", true},
	{"repeated keys", "apiVersion: v1\nkind: A\nmetadata:\n  name: first\n  name: last\n", true},
	{"int key", "apiVersion: v1\nkind: A\nmetadata: {name: a}\nd: {1: a}\n", false},
	{"bool key", "apiVersion: v1\nkind: A\nmetadata: {name: a}\nd: {yes: a}\n", false},
	{"y is a bool key", "apiVersion: v1\nkind: A\nmetadata: {name: a}\nd: {y: 1}\n", false},
	{"null key", "apiVersion: v1\nkind: A\nmetadata: {name: a}\nd: {~: a}\n", false},
	{"binary", "apiVersion: v1\nkind: A\nmetadata: {name: a}\nd: !!binary /w==\n", false},
	{"binary utf-8", "apiVersion: v1\nkind: A\nmetadata: {name: a}\nd: !!binary YWJj\n", true},
	{"timestamp", "apiVersion: v1\nkind: A\nmetadata: {name: a}\nd: 2001-12-14t21:59:43.10-05:00\ne: !!timestamp 2001-12-14\n", true},
	{"anchors and merge", "apiVersion: v1\nkind: A\nmetadata: {name: a}\nb: &b {x: 1, z: [1]}\nc: *b\nd: {<<: *b, x: 2}\n", true},
	{"html in strings", "apiVersion: v1\nkind: A\nmetadata: {name: a}\nd: \"<a&b>\\u2028\"\n", true},
	{"escapes", "apiVersion: v1\nkind: A\nmetadata: {name: a}\nd: \"\\x41\\u00e9\\U0001F600\\t\"\n", true},
	{"number-like strings", "apiVersion: v1\nkind: A\nmetadata: {name: a}\nd: ['1', \"2.0\", 1e3x, 0.1.2]\n", true},
	{"case-folded kind key", "apiVersion: v1\nkind: A\nKind: 5\nmetadata: {name: a}\n", false},
	{"case-folded apiVersion key", "apiVersion: v1\nkind: A\nAPIVERSION: v2\nmetadata: {name: a}\n", false},
	{"kelvin sign", "apiVersion: v1\nkind: A\n\u212aind: 5\nmetadata: {name: a}\n", false},
	{"bad group version", "apiVersion: a/b/c\nkind: A\nmetadata: {name: a}\n", false},
	{"kind not a string", "apiVersion: v1\nkind: 5\nmetadata: {name: a}\n", false},
	{"name not a string", "apiVersion: v1\nkind: A\nmetadata: {name: 5}\n", false},
	{"namespace not a string", "apiVersion: v1\nkind: A\nmetadata: {name: a, namespace: 5}\n", true},
	{"no metadata", "apiVersion: v1\nkind: A\n", false},
	{"not a map", "- a\n", false},
	{"scalar", "a\n", false},
	{"list kind", "apiVersion: v1\nkind: List\nmetadata: {name: a}\nitems: [{apiVersion: v1, kind: A, metadata: {name: b}}]\n", true},
	{"document end", "apiVersion: v1\nkind: A\nmetadata: {name: a}\n...\n", true},
	{"bad yaml", "apiVersion: v1\nkind: [\n", false},
}

func TestFastDecodeCases(t *testing.T) {
	for _, tc := range decodeCases {
		t.Run(tc.name, func(t *testing.T) {
			d := manifest.Document{Data: []byte(tc.in)}
			fast, ok := manifest.DecodeYAMLFast(d.Data)
			if ok != tc.fast {
				t.Fatalf("direct path taken: %v, want %v", ok, tc.fast)
			}
			if !ok {
				return
			}
			slow, err := manifest.DecodeSlow(d)
			if err != nil {
				t.Fatalf("the reference path fails where the direct one did not: %v", err)
			}
			sameDecode(t, tc.name, fast, slow)
		})
	}
}

// FuzzFastDecode: whenever the direct path decodes a document, the
// reference path decodes it too, to exactly the same manifest.
func FuzzFastDecode(f *testing.F) {
	for _, tc := range decodeCases {
		f.Add([]byte(tc.in))
	}
	// The first document of some real payload files.
	for _, file := range realpayload.Sample(f, 40, 32<<10) {
		if docs, err := manifest.SplitDocuments(file.Data); err == nil && len(docs) > 0 {
			f.Add(docs[0].Data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := manifest.DecodeYAMLFast(data)
		if !ok {
			return
		}
		slow, err := manifest.DecodeSlow(manifest.Document{Data: data})
		if err != nil || slow == nil {
			t.Fatalf("direct path decoded %q, the reference path did not: %v", data, err)
		}
		sameDecode(t, "fuzz", fast, slow)
	})
}
