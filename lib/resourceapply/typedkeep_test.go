package resourceapply

import (
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/lib/manifest"
)

// typedObjects returns the real payload's objects of the kinds the typed
// scheme knows, CustomResourceDefinitions aside (known prunes those by
// their schema fields), or with crds its CustomResourceDefinitions only.
func typedObjects(tb testing.TB, m *Manager, crds bool) []*unstructured.Unstructured {
	tb.Helper()
	dir := filepath.Join(realpayload.Dir(tb), "release-manifests")
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, e := range entries {
		if e.IsDir() || (path.Ext(e.Name()) != ".yaml" && path.Ext(e.Name()) != ".yml") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		ms, _ := manifest.Parse(e.Name(), data, manifest.ParseOptions{})
		for _, mf := range ms {
			if mf.Obj == nil || (mf.Obj.GroupVersionKind().GroupKind() == crdGK) != crds ||
				!crds && !m.scheme.Recognizes(mf.Obj.GroupVersionKind()) {
				continue
			}
			objs = append(objs, mf.Obj)
		}
	}
	if len(objs) < 100 {
		tb.Fatalf("%d objects in the real payload (crds %v), want 100 or more", len(objs), crds)
	}
	return objs
}

func typedManager(tb testing.TB) *Manager {
	tb.Helper()
	s, err := newTypedScheme()
	if err != nil {
		tb.Fatal(err)
	}
	return &Manager{scheme: s}
}

// mutate returns a copy of obj with fields put where its Go type has
// none, and nulls where it has some, and with retype also empty maps,
// lists and false (most of which the decoding refuses): at every map of
// the object, one change drawn from r.
func mutate(obj *unstructured.Unstructured, r *rand.Rand, retype bool) *unstructured.Unstructured {
	out := obj.DeepCopy()
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(x[k])
			}
			var some string
			if len(keys) > 0 {
				some = keys[r.IntN(len(keys))]
			}
			n := 6
			if retype {
				n = 9
			}
			switch r.IntN(n) {
			case 0:
				x["notAField"] = "value"
			case 1:
				x["notAField"] = nil
			case 2:
				x["notAField"] = map[string]any{"deeper": []any{int64(1)}}
			case 3:
				x["notAField"] = map[string]any{}
			case 4:
				if some != "" && some != "apiVersion" && some != "kind" {
					x[some] = nil
				}
			case 5:
				if some != "" && some != "apiVersion" && some != "kind" {
					x[some] = map[string]any{}
				}
			case 6:
				if some != "" && some != "apiVersion" && some != "kind" {
					x[some] = []any{}
				}
			case 7:
				if some != "" && some != "apiVersion" && some != "kind" {
					x[some] = false
				}
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(out.Object)
	return out
}

// TestKeepTypedMatchesRoundTrip: known's walk keeps exactly what encoding
// the decoded object and pruning by it keeps, and drops the same paths,
// for every typed object of the real payload and for 20 mutations of each
// (unknown fields, nulls, and in one of four empty maps and lists and false
// where a field was).
func TestKeepTypedMatchesRoundTrip(t *testing.T) {
	m := typedManager(t)
	objs := typedObjects(t, m, false)
	r := rand.New(rand.NewPCG(1, 2))
	compared, droppedSeen, errs := 0, 0, 0
	for _, obj := range objs {
		variants := []*unstructured.Unstructured{obj}
		for i := range 20 {
			variants = append(variants, mutate(obj, r, i%4 == 3))
		}
		for i, o := range variants {
			want, wantDropped, wantErr := m.knownByRoundTrip(o)
			got, gotDropped, gotErr := m.known(o)
			id := IDOf(obj).String()
			if (wantErr != nil) != (gotErr != nil) {
				t.Fatalf("%s variant %d: error %v, round trip's %v", id, i, gotErr, wantErr)
			}
			if wantErr != nil {
				errs++
				continue
			}
			compared++
			if len(wantDropped) > 0 {
				droppedSeen++
			}
			if diff := cmp.Diff(wantDropped, gotDropped); diff != "" {
				t.Fatalf("%s variant %d: dropped (-round trip +known):\n%s", id, i, diff)
			}
			if diff := cmp.Diff(want.Object, got.Object); diff != "" {
				t.Fatalf("%s variant %d: object (-round trip +known):\n%s", id, i, diff)
			}
		}
	}
	// The mutations must reach both outcomes, or the comparison proves
	// little.
	if droppedSeen < len(objs) || errs == 0 {
		t.Errorf("compared %d objects: %d with dropped fields, %d decode errors; want at least %d and 1", compared, droppedSeen, errs, len(objs))
	}
	t.Logf("compared %d objects (%d with dropped fields), %d decode errors", compared, droppedSeen, errs)
}

// BenchmarkKnown: known over every typed object of the real payload (one
// no-op apply's worth), against encoding each and pruning by it.
func BenchmarkKnown(b *testing.B) {
	m := typedManager(b)
	objs := typedObjects(b, m, false)
	for _, bc := range []struct {
		name  string
		known func(*unstructured.Unstructured) (*unstructured.Unstructured, []string, error)
	}{{"walk", m.known}, {"roundtrip", m.knownByRoundTrip}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, o := range objs {
					if _, _, err := bc.known(o); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkKnownCRDs: known over the real payload's
// CustomResourceDefinitions (one of which has a schema field to drop).
func BenchmarkKnownCRDs(b *testing.B) {
	m := typedManager(b)
	crds := typedObjects(b, m, true)
	b.ReportAllocs()
	for b.Loop() {
		for _, o := range crds {
			if _, _, err := m.known(o); err != nil {
				b.Fatal(err)
			}
		}
	}
}
