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
	// The walk by type must answer for nearly every object as the payload
	// has it (not fall back to decoding), and the mutations must reach
	// both outcomes, or the comparison proves little.
	byType := 0
	for _, o := range objs {
		var dropped []string
		if _, err := keepByType(o.Object, m.scheme.AllKnownTypes()[o.GroupVersionKind()], &fieldPath{}, &dropped); err == nil {
			byType++
		}
	}
	if byType < len(objs)*95/100 {
		t.Errorf("%d of %d objects walked by type alone, want 95%% or more", byType, len(objs))
	}
	t.Logf("%d of %d objects walked by type alone", byType, len(objs))
	if droppedSeen < len(objs) || errs == 0 {
		t.Errorf("compared %d objects: %d with dropped fields, %d decode errors; want at least %d and 1", compared, droppedSeen, errs, len(objs))
	}
	t.Logf("compared %d objects (%d with dropped fields), %d decode errors", compared, droppedSeen, errs)
}

// TestKeepTypedEdges: values at the edges of the decoding give what the
// round trip gives, dropped paths and errors included.
func TestKeepTypedEdges(t *testing.T) {
	m := typedManager(t)
	for _, doc := range []string{
		// An int32 field given more than an int32, an integral float, a
		// fraction, a string.
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 4294967297}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 3.0}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 2.5}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: \"3\"}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: -1, revisionHistoryLimit: null, paused: false}\n",
		// Int-or-string and quantities, good and bad, through pointers.
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {strategy: {rollingUpdate: {maxSurge: 25%, maxUnavailable: 0}}}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {strategy: {rollingUpdate: {maxSurge: null, maxUnavailable: {x: 1}}}}\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {volumes: [{name: v, emptyDir: {sizeLimit: 1Gi}}], containers: [{name: c, resources: {limits: {cpu: 100m, memory: nonsense}}}]}\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {volumes: [{name: v, emptyDir: {sizeLimit: 1Gi, medium: \"\"}}], containers: [{name: c, resources: {limits: {cpu: 100m}}, bogus: 1}]}\n",
		// Bytes, times, omitempty pointers given {} and null.
		"apiVersion: v1\nkind: Secret\nmetadata: {name: s, creationTimestamp: null}\ndata: {k: aGVsbG8=}\nstringData: {x: why}\n",
		"apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {k: \"not base64!\"}\n",
		"apiVersion: v1\nkind: Service\nmetadata: {name: s, creationTimestamp: \"2024-01-02T03:04:05Z\"}\nspec: {sessionAffinityConfig: {}, ipFamilyPolicy: null, ports: [{port: 80, targetPort: http}, {port: 81, targetPort: 8081}]}\n",
		"apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: np}\nspec: {podSelector: {}, ingress: [{ports: [{port: null, protocol: TCP}, {}]}], egress: [], policyTypes: [Ingress]}\n",
		// An embedded raw object.
		"apiVersion: apps/v1\nkind: ControllerRevision\nmetadata: {name: r}\nrevision: 1\ndata: {spec: {a: [1, null]}, x: null}\n",
	} {
		obj := parse(t, doc)
		want, wantDropped, wantErr := m.knownByRoundTrip(obj)
		got, gotDropped, gotErr := m.known(obj)
		if (wantErr != nil) != (gotErr != nil) {
			t.Errorf("%s: error %v, round trip's %v", doc, gotErr, wantErr)
			continue
		}
		if wantErr != nil {
			continue
		}
		if diff := cmp.Diff(wantDropped, gotDropped); diff != "" {
			t.Errorf("%s: dropped (-round trip +known):\n%s", doc, diff)
		}
		if diff := cmp.Diff(want.Object, got.Object); diff != "" {
			t.Errorf("%s: object (-round trip +known):\n%s", doc, diff)
		}
	}
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
