package manifest_test

import (
	"context"
	"os"
	"reflect"
	"testing"

	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/payload"
)

// sameManifest fails t unless got is what parsing gave: the same tree
// (types included), GVK, resource id, file, document, line.
func sameManifest(t *testing.T, want, got *manifest.Manifest) {
	t.Helper()
	if !reflect.DeepEqual(want.Obj.Object, got.Obj.Object) {
		t.Fatalf("%s: objects differ", want.Position())
	}
	if want.GVK != got.GVK || !want.Manifest.SameResourceID(got.Manifest) || want.Manifest.String() != got.Manifest.String() {
		t.Fatalf("%s: GVK %v id %q, want %v %q", want.Position(), got.GVK, got.Manifest.String(), want.GVK, want.Manifest.String())
	}
	if want.File != got.File || want.Doc != got.Doc || want.Line != got.Line || want.OriginalFilename != got.OriginalFilename || got.Raw != nil {
		t.Fatalf("%s: position %s:%d (%s), want %s:%d (%s)", want.Position(), got.File, got.Line, got.OriginalFilename, want.File, want.Line, want.OriginalFilename)
	}
}

// TestParsedFormRoundTrip encodes every file of the real payload and
// decodes it back to exactly what parsing gave.
func TestParsedFormRoundTrip(t *testing.T) {
	p, err := payload.Load(context.Background(), os.DirFS(realpayload.Dir(t)), payload.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range p.Files {
		data, err := manifest.EncodeParsed(f.Manifests)
		if err != nil {
			t.Fatal(err)
		}
		got, err := manifest.DecodeParsed(string(data), manifest.Limits{}, nil)
		if err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		if len(got) != len(f.Manifests) {
			t.Fatalf("%s: %d manifests, want %d", f.Path, len(got), len(f.Manifests))
		}
		for i := range got {
			sameManifest(t, &f.Manifests[i], &got[i])
			n++
		}
		// Objects keep refuses keep their head alone, as Load strips them.
		odd, err := manifest.DecodeParsed(string(data), manifest.Limits{}, func(m *manifest.Manifest) bool { return m.Doc%2 == 0 })
		if err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		for i := range odd {
			want := f.Manifests[i]
			if want.Doc%2 == 1 {
				head := map[string]any{}
				for _, k := range []string{"apiVersion", "kind", "metadata"} {
					if v, ok := want.Obj.Object[k]; ok {
						head[k] = v
					}
				}
				want.Obj = want.Obj.DeepCopy()
				want.Obj.Object = head
			}
			sameManifest(t, &want, &odd[i])
		}
	}
	if n < 700 {
		t.Errorf("checked %d manifests", n)
	}
}

func TestParsedFormRefuses(t *testing.T) {
	ms, err := manifest.Parse("release-manifests/a.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n  n: 1\n  f: 1.5\n  l: [true, null]\n"), manifest.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	good, err := manifest.EncodeParsed(ms)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(good); i++ {
		if _, err := manifest.DecodeParsed(string(good[:i]), manifest.Limits{}, nil); err == nil {
			t.Errorf("truncated to %d bytes: decoded", i)
		}
	}
	if _, err := manifest.DecodeParsed(string(good)+"\x00", manifest.Limits{}, nil); err == nil {
		t.Error("trailing byte: decoded")
	}
	if _, err := manifest.DecodeParsed(string(good), manifest.Limits{MaxDepth: 2}, nil); err == nil {
		t.Error("deeper than MaxDepth: decoded")
	}
	ms[0].Obj.Object["bad"] = 1 // an int: not what JSON decoding makes
	if _, err := manifest.EncodeParsed(ms); err == nil {
		t.Error("encoded a value of type int")
	}
}

// FuzzDecodeParsed: any input decodes or fails, never panics, and what
// decodes encodes back to an input that decodes to the same.
func FuzzDecodeParsed(f *testing.F) {
	for _, file := range realpayload.Sample(f, 10, 16<<10) {
		if ms, err := manifest.Parse(file.Path, file.Data, manifest.ParseOptions{}); err == nil {
			if data, err := manifest.EncodeParsed(ms); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte("PAM\x01\x01\x00\x00\x00\x06\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := manifest.DecodeParsed(string(data), manifest.Limits{}, nil)
		if err != nil {
			return
		}
		again, err := manifest.EncodeParsed(ms)
		if err != nil {
			t.Fatalf("decoded, then did not encode: %v", err)
		}
		ms2, err := manifest.DecodeParsed(string(again), manifest.Limits{}, nil)
		if err != nil || len(ms2) != len(ms) {
			t.Fatalf("re-encoded form does not decode: %v", err)
		}
		for i := range ms {
			sameManifest(t, &ms[i], &ms2[i])
		}
	})
}
