package imagecache_test

import (
	"reflect"
	"testing"

	"github.com/payload-apply/payload-apply/lib/imagecache"
	"github.com/payload-apply/payload-apply/lib/manifest"
)

func parse(t *testing.T, file, text string) []manifest.Manifest {
	t.Helper()
	ms, err := manifest.Parse(file, []byte(text), manifest.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func TestParsed(t *testing.T) {
	c := &imagecache.Cache{Dir: t.TempDir()}
	if err := c.Put(hash(1), "r", payload(1)); err != nil {
		t.Fatal(err)
	}
	files := []string{"release-manifests/a.yaml", "release-manifests/b.yaml"}
	a := parse(t, files[0], "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n")
	b := parse(t, files[1], "apiVersion: v1\nkind: Secret\nmetadata:\n  name: b\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")

	p := c.Parsed(hash(1), files, "build-1")
	if _, ok := p.Get(files[0], nil); ok {
		t.Fatal("hit in an empty cache")
	}
	p.Put(files[0], a)
	// Not every file seen yet: nothing written, a new reader finds nothing.
	if _, ok := c.Parsed(hash(1), files, "build-1").Get(files[0], nil); ok {
		t.Fatal("written before every file was seen")
	}
	p.Put(files[1], b)
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}

	q := c.Parsed(hash(1), files, "build-1")
	for _, tc := range []struct {
		file string
		want []manifest.Manifest
	}{{files[0], a}, {files[1], b}} {
		got, ok := q.Get(tc.file, nil)
		if !ok || len(got) != len(tc.want) {
			t.Fatalf("%s: %d manifests, %v", tc.file, len(got), ok)
		}
		for i := range got {
			if !reflect.DeepEqual(got[i].Obj.Object, tc.want[i].Obj.Object) || got[i].Position() != tc.want[i].Position() {
				t.Errorf("%s: manifest %d differs", tc.file, i)
			}
		}
	}
	if _, ok := c.Parsed(hash(1), files, "build-2").Get(files[0], nil); ok {
		t.Error("another build's parse was used")
	}
	if _, ok := c.Parsed(hash(2), files, "build-1").Get(files[0], nil); ok {
		t.Error("another digest's parse was used")
	}
}
