package plan

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"math"
	"os"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/plancache"
	"github.com/payload-apply/payload-apply/payload"
)

// realPlan plans the real payload's default selection.
func realPlan(t *testing.T, store *plancache.Store) *Plan {
	t.Helper()
	p, err := Build(context.Background(), Options{Payload: os.DirFS(realpayload.Dir(t)), Lean: true, PlanCache: store})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDigestsVersionHash: FNV64 is the hash versionHash always had, FNV-64
// of each object's json.Marshal, so records made before keep their hash.
func TestDigestsVersionHash(t *testing.T) {
	p := realPlan(t, nil)
	h := fnv.New64()
	for _, m := range p.Objects {
		b, err := json.Marshal(m.Obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		h.Write(b)
	}
	d := p.Digests()
	if got, want := d.FNV64[:], h.Sum(nil); !reflect.DeepEqual(got, want) || !d.ContentOK {
		t.Fatalf("FNV64 %x, want %x (json.Marshal's); ContentOK %v", got, want, d.ContentOK)
	}
}

// TestDigestsContent: Content tells apart what a check could tell apart
// (the number's Go type, the file, the document, the order); FNV64 only
// what the JSON does.
func TestDigestsContent(t *testing.T) {
	obj := func(v any) *manifest.Manifest {
		m := &manifest.Manifest{File: "a.yaml", Doc: 0}
		m.Obj = &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x"}, "data": map[string]any{"n": v}}}
		return m
	}
	digests := func(ms ...*manifest.Manifest) ObjectDigests { return (&Plan{Objects: ms}).Digests() }
	base := digests(obj(int64(3)), obj("y"))
	if !base.ContentOK {
		t.Fatal("ContentOK false for plain objects")
	}
	if again := digests(obj(int64(3)), obj("y")); again != base {
		t.Fatal("the same objects gave other digests")
	}
	moved := obj(int64(3))
	moved.File = "b.yaml"
	doc := obj(int64(3))
	doc.Doc = 1
	for name, tc := range map[string]struct {
		d       ObjectDigests
		sameFNV bool
	}{
		"float for int": {digests(obj(3.0), obj("y")), true},
		"int for int64": {digests(obj(3), obj("y")), true},
		"another file":  {digests(moved, obj("y")), true},
		"another doc":   {digests(doc, obj("y")), true},
		"another order": {digests(obj("y"), obj(int64(3))), false},
		"another value": {digests(obj(int64(4)), obj("y")), false},
	} {
		if !tc.d.ContentOK || tc.d.Content == base.Content {
			t.Errorf("%s: same Content (ContentOK %v)", name, tc.d.ContentOK)
		}
		if (tc.d.FNV64 == base.FNV64) != tc.sameFNV {
			t.Errorf("%s: FNV64 the same: %v, want %v", name, tc.d.FNV64 == base.FNV64, tc.sameFNV)
		}
	}
	// What does not encode: no Content; FNV64 leaves out what JSON cannot
	// write, as versionHash always did.
	if d := digests(obj([]string{"typed"}), obj("y")); d.ContentOK {
		t.Error("a typed slice: ContentOK, want false")
	}
	nan := digests(obj(math.NaN()), obj("y"))
	if only := digests(obj("y")); nan.ContentOK || nan.FNV64 != only.FNV64 {
		t.Errorf("NaN: ContentOK %v, FNV64 %x, want false and %x", nan.ContentOK, nan.FNV64, only.FNV64)
	}
}

// TestCheckFindingsCache: the findings of a plan are stored with the
// plan cache and read back by the next plan of the same objects, the same
// findings; other objects, or a damaged entry, are checked again.
func TestCheckFindingsCache(t *testing.T) {
	ctx := context.Background()
	store := &plancache.Store{Dir: t.TempDir()}
	want, err := realPlan(t, nil).Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatal("the real payload's plan has no findings: the test would not see them stored")
	}

	check := func(p *Plan) []manifest.Finding {
		t.Helper()
		got, err := p.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	first := realPlan(t, store)
	if got := check(first); first.checkHit || !reflect.DeepEqual(got, want) {
		t.Fatalf("first check: hit %v, same findings %v", first.checkHit, reflect.DeepEqual(got, want))
	}
	second := realPlan(t, store)
	if got := check(second); !second.checkHit || !reflect.DeepEqual(got, want) {
		t.Fatalf("second check: hit %v, same findings %v", second.checkHit, reflect.DeepEqual(got, want))
	}

	// Another object's content: checked, and its error found.
	changed := realPlan(t, store)
	var bad *manifest.Manifest
	for _, m := range changed.Objects {
		if m.Obj.GetKind() == "Deployment" {
			bad = m
			break
		}
	}
	if err := unstructured.SetNestedField(bad.Obj.Object, "three", "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	got := check(changed)
	if changed.checkHit || len(got) != len(want)+1 {
		t.Fatalf("a changed Deployment: hit %v, %d findings, want a check and %d", changed.checkHit, len(got), len(want)+1)
	}

	// A damaged entry is a miss, and the check stores it again.
	key, ok := second.checkKey()
	if !ok {
		t.Fatal("no key")
	}
	for _, body := range []string{"not json", `[{"File":"x","Severity":"fatal"}]`} {
		if err := store.Put(key, []byte(body)); err != nil {
			t.Fatal(err)
		}
		p := realPlan(t, store)
		if got := check(p); p.checkHit || !reflect.DeepEqual(got, want) {
			t.Fatalf("entry %q: hit %v, same findings %v", body, p.checkHit, reflect.DeepEqual(got, want))
		}
		if p := realPlan(t, store); !reflect.DeepEqual(check(p), want) || !p.checkHit {
			t.Fatalf("entry %q: not stored again", body)
		}
	}
}

// BenchmarkCheckObjects: checking the real payload's default plan with
// nothing compiled yet (a first apply's preflight); -cpu 1,2 compares one
// core with two.
func BenchmarkCheckObjects(b *testing.B) {
	p, err := Build(context.Background(), Options{Payload: os.DirFS(realpayload.Dir(b)), Lean: true})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := CheckObjects(context.Background(), p.Objects, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDigests: hashing the real payload's default plan's objects
// (versionHash and the findings' key).
func BenchmarkDigests(b *testing.B) {
	p, err := Build(context.Background(), Options{Payload: os.DirFS(realpayload.Dir(b)), Lean: true})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		_ = objectDigests(p)
	}
}

// TestPayloadDigest: the payload's digest through the plan is
// payload.Digest's, with the plan cache or without; with it, stored once.
func TestPayloadDigest(t *testing.T) {
	ctx := context.Background()
	fsys := os.DirFS(realpayload.Dir(t))
	want, err := payload.Digest(ctx, fsys)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := realPlan(t, nil).PayloadDigest(ctx, fsys); err != nil || got != want {
		t.Fatalf("without a plan cache: %q, %v; want %q", got, err, want)
	}
	dir := t.TempDir()
	store := &plancache.Store{Dir: dir}
	entries := func() int {
		es, _ := os.ReadDir(dir)
		return len(es)
	}
	var counts []int
	for range 2 {
		p := realPlan(t, store)
		before := entries()
		if got, err := p.PayloadDigest(ctx, fsys); err != nil || got != want {
			t.Fatalf("with the plan cache: %q, %v; want %q", got, err, want)
		}
		counts = append(counts, entries()-before)
	}
	if counts[0] != 1 || counts[1] != 0 {
		t.Fatalf("entries added by the digest: %v, want [1 0] (stored once, then read)", counts)
	}
}
