package payload

import (
	"context"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
)

// mapMemo is a DigestMemo in memory that counts what it is asked.
type mapMemo struct {
	m             map[[32]byte]string
	loads, stores int
}

func (m *mapMemo) Load(key [32]byte) (string, bool) {
	m.loads++
	d, ok := m.m[key]
	return d, ok
}

func (m *mapMemo) Store(key [32]byte, d string) {
	m.stores++
	m.m[key] = d
}

// countingFS counts the files opened (by the fingerprint's workers at
// once, too).
type countingFS struct {
	fstest.MapFS
	mu     sync.Mutex
	opened map[string]int
}

func (c *countingFS) Open(name string) (fs.File, error) {
	c.mu.Lock()
	c.opened[name]++
	c.mu.Unlock()
	return c.MapFS.Open(name)
}

// TestDigestOf: the digest of DigestOf is Digest's; the second time it
// comes from the memo without reading a payload file; a digest is stored
// only under the key of the bytes it was made from.
func TestDigestOf(t *testing.T) {
	ctx := context.Background()
	files := fstest.MapFS{
		"manifests/0000_00_a_1.yaml":         {Data: []byte(strings.Repeat("a: 1\n", 100))},
		"release-manifests/0000_50_b_x.yaml": {Data: []byte("b: 1\n")},
		"release-manifests/release-metadata": {Data: []byte("{}")},
		"release-manifests/README":           {Data: []byte("not a manifest")},
	}
	fsys := &countingFS{MapFS: files, opened: map[string]int{}}
	fp, err := FingerprintOf(ctx, fsys, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := fp.Files["release-manifests/README"]; ok {
		t.Fatal("the README is fingerprinted: the test would not see it hashed by DigestOf")
	}
	want, err := Digest(ctx, files)
	if err != nil {
		t.Fatal(err)
	}
	memo := &mapMemo{m: map[[32]byte]string{}}
	if d, err := DigestOf(ctx, fsys, fp, memo); err != nil || d != want || memo.stores != 1 {
		t.Fatalf("first: %q, %v, %d stores; want %q stored", d, err, memo.stores, want)
	}
	clear(fsys.opened)
	if d, err := DigestOf(ctx, fsys, fp, memo); err != nil || d != want || memo.stores != 1 {
		t.Fatalf("second: %q, %v, %d stores; want %q from the memo", d, err, memo.stores, want)
	}
	for name, n := range fsys.opened {
		if name != "release-manifests/README" {
			t.Errorf("second: %s opened %d times, want only the file the fingerprint lacks", name, n)
		}
	}

	// A file the fingerprint lacks changed: another key, another digest.
	files["release-manifests/README"] = &fstest.MapFile{Data: []byte("changed")}
	want2, _ := Digest(ctx, files)
	if d, err := DigestOf(ctx, fsys, fp, memo); err != nil || d != want2 || d == want || memo.stores != 2 {
		t.Fatalf("README changed: %q, %v, %d stores; want %q stored", d, err, memo.stores, want2)
	}

	// A manifest changed since the fingerprint: with nothing in the memo,
	// the digest of the bytes now, not stored under the fingerprint's key.
	files["release-manifests/0000_50_b_x.yaml"] = &fstest.MapFile{Data: []byte("b: 2\n")}
	want3, _ := Digest(ctx, files)
	empty := &mapMemo{m: map[[32]byte]string{}}
	if d, err := DigestOf(ctx, fsys, fp, empty); err != nil || d != want3 || empty.stores != 0 {
		t.Fatalf("changed since the fingerprint: %q, %v, %d stores; want %q, none stored", d, err, empty.stores, want3)
	}
	// A file removed since: the key is of the files there are (each as
	// the fingerprint hashed it), and so is the digest stored.
	delete(files, "release-manifests/0000_50_b_x.yaml")
	want4, _ := Digest(ctx, files)
	for range 2 {
		if d, err := DigestOf(ctx, fsys, fp, empty); err != nil || d != want4 || empty.stores != 1 {
			t.Fatalf("removed since the fingerprint: %q, %v, %d stores; want %q stored once", d, err, empty.stores, want4)
		}
	}

	// No fingerprint or no memo: Digest.
	if d, err := DigestOf(ctx, files, nil, memo); err != nil || d != want4 {
		t.Fatalf("no fingerprint: %q, %v", d, err)
	}
	ctx2, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := DigestOf(ctx2, fsys, fp, &mapMemo{m: map[[32]byte]string{}}); err == nil {
		t.Fatal("after Ctrl-C: no error")
	}
}
