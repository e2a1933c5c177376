package imagecache_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/payload-apply/payload-apply/lib/image"
	"github.com/payload-apply/payload-apply/lib/imagecache"
)

func hash(n int) v1.Hash {
	return v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%064x", n)}
}

func payload(n int) *image.FS {
	return image.NewFS(fstest.MapFS{
		"manifests":                          {Mode: fs.ModeDir | 0o555},
		"release-manifests":                  {Mode: fs.ModeDir | 0o555},
		"release-manifests/empty":            {Mode: fs.ModeDir | 0o555},
		"release-manifests/0000_50_x_a.yaml": {Data: []byte(fmt.Sprintf("kind: ConfigMap # %d\n", n)), Mode: 0o444},
		"release-manifests/release-metadata": {Data: []byte(`{"version":"4.22.0"}`), Mode: 0o444},
	}, hash(1000+n), &v1.ConfigFile{OS: "linux", Architecture: "amd64", Config: v1.Config{Labels: map[string]string{"io.openshift.release": "4.22.0"}}})
}

// tree returns every path of fsys with its mode and content.
func tree(t *testing.T, fsys fs.FS) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			out[p] = "dir"
			return nil
		}
		data, err := fs.ReadFile(fsys, p)
		out[p] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPutGet(t *testing.T) {
	c := &imagecache.Cache{Dir: filepath.Join(t.TempDir(), "payloads")}
	if got, _, err := c.Get(hash(1)); got != nil || err != nil {
		t.Fatalf("empty cache: Get = %v, %v", got, err)
	}
	in := payload(1)
	if err := c.Put(hash(1), "registry.example/ocp@"+hash(1).String(), in); err != nil {
		t.Fatal(err)
	}
	got, meta, err := c.Get(hash(1))
	if err != nil || got == nil {
		t.Fatalf("Get = %v, %v", got, err)
	}
	if diff := cmp.Diff(tree(t, in), tree(t, got)); diff != "" {
		t.Errorf("cached payload differs (-put +got):\n%s", diff)
	}
	if got.Digest() != in.Digest() || meta.Digest != hash(1).String() || meta.Reference != "registry.example/ocp@"+hash(1).String() {
		t.Errorf("digest %s meta %+v", got.Digest(), meta)
	}
	if got.Labels()["io.openshift.release"] != "4.22.0" || got.Config().OS != "linux" {
		t.Errorf("config not kept: %+v", got.Config())
	}
	st, err := os.Stat(c.Dir)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("cache dir mode %v, %v; want 0700", st.Mode(), err)
	}
}

// TestHostileCache: what the cache reads is refused without blocking and
// without reading it whole unless it is the cache's own, in a directory
// only its user can change; eviction removes only the cache's files.
func TestHostileCache(t *testing.T) {
	entry := func(c *imagecache.Cache) string { return filepath.Join(c.Dir, "sha256-"+hash(1).Hex+".tar") }
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T, c *imagecache.Cache)
		want    string
		removed bool // the entry file is gone afterwards
	}{
		{"not the cache's (no tar of meta.json first): left alone", func(t *testing.T, c *imagecache.Cache) {
			writeFile(t, entry(c), "not a tar")
		}, "not a cache entry (its first bytes are not the cache's format): left alone", false},
		{"the cache's, damaged: removed", func(t *testing.T, c *imagecache.Cache) {
			data, _ := os.ReadFile(entry(c))
			writeFile(t, entry(c), string(data[:1024]))
		}, "(removed)", true},
		{"a named pipe: refused without blocking", func(t *testing.T, c *imagecache.Cache) {
			os.Remove(entry(c))
			if err := syscall.Mkfifo(entry(c), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file: a named pipe (FIFO)", false},
		{"2 GiB of holes: refused after one block", func(t *testing.T, c *imagecache.Cache) {
			if err := os.Truncate(entry(c), 0); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(entry(c), 2<<30); err != nil {
				t.Fatal(err)
			}
		}, "not a cache entry", false},
		{"a directory others may write: not read", func(t *testing.T, c *imagecache.Cache) {
			if err := os.Chmod(c.Dir, 0o777); err != nil {
				t.Fatal(err)
			}
		}, "is writable by others (mode 0777)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &imagecache.Cache{Dir: filepath.Join(t.TempDir(), "payloads")}
			if err := c.Put(hash(1), "r", payload(1)); err != nil {
				t.Fatal(err)
			}
			tc.setup(t, c)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			done := make(chan struct{})
			var got *image.FS
			var err error
			go func() {
				defer close(done)
				got, _, err = c.Get(hash(1))
				if got == nil && err == nil {
					// A .parsed file beside it is read the same way.
					c.Parsed(hash(1), nil, "b").Ready()
				}
			}()
			select {
			case <-done:
			case <-time.After(2 * time.Second):
				t.Fatal("Get blocked")
			}
			runtime.ReadMemStats(&after)
			if got != nil || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Get = %v, %v; want a miss with %q", got, err, tc.want)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 || time.Since(start) > time.Second {
				t.Errorf("took %s and %d MiB", time.Since(start), grew>>20)
			}
			if _, err := os.Lstat(entry(c)); os.IsNotExist(err) != tc.removed {
				t.Errorf("entry removed: %v, want %v", os.IsNotExist(err), tc.removed)
			}
		})
	}
}

// TestEvictionLeavesTheUsersFiles: a cache directory that is in fact the
// user's loses none of the user's files, whatever their names.
func TestEvictionLeavesTheUsersFiles(t *testing.T) {
	c := &imagecache.Cache{Dir: filepath.Join(t.TempDir(), "payloads"), MaxEntries: 1}
	users := map[string]string{"sha256-" + hash(7).Hex + ".tar": "my backup", "notes.parsed": "PAP? no", ".tmp-mine": "draft", "a.entry": "x"}
	for name, body := range users {
		writeFile(t, filepath.Join(c.Dir, name), body)
		old := time.Now().Add(-48 * time.Hour)
		os.Chtimes(filepath.Join(c.Dir, name), old, old)
	}
	for i := 1; i <= 3; i++ {
		if err := c.Put(hash(i), "r", payload(i)); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range users {
		if data, err := os.ReadFile(filepath.Join(c.Dir, name)); err != nil || string(data) != body {
			t.Errorf("%s: %q, %v: the user's file was changed", name, data, err)
		}
	}
	if got, _, _ := c.Get(hash(1)); got != nil {
		t.Error("the cache's own entry 1 kept beyond MaxEntries")
	}
}

func writeFile(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestEviction(t *testing.T) {
	c := &imagecache.Cache{Dir: t.TempDir(), MaxEntries: 3}
	for i := 1; i <= 5; i++ {
		if err := c.Put(hash(i), "r", payload(i)); err != nil {
			t.Fatal(err)
		}
		// Entries are ordered by modification time; make it distinct.
		p := filepath.Join(c.Dir, "sha256-"+hash(i).Hex+".tar")
		at := time.Now().Add(time.Duration(i-10) * time.Minute)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			// Used again: entry 1 is now the most recently used.
			if _, _, err := c.Get(hash(1)); err != nil {
				t.Fatal(err)
			}
		}
	}
	var kept []int
	for i := 1; i <= 5; i++ {
		if got, _, _ := c.Get(hash(i)); got != nil {
			kept = append(kept, i)
		}
	}
	if diff := cmp.Diff([]int{1, 4, 5}, kept); diff != "" {
		t.Errorf("kept entries (-want +got):\n%s", diff)
	}

	small := &imagecache.Cache{Dir: t.TempDir(), MaxBytes: 1}
	for i := 1; i <= 3; i++ {
		if err := small.Put(hash(i), "r", payload(i)); err != nil {
			t.Fatal(err)
		}
	}
	if got, _, _ := small.Get(hash(3)); got == nil {
		t.Error("the newest entry must stay even above MaxBytes")
	}
	if got, _, _ := small.Get(hash(1)); got != nil {
		t.Error("entry 1 kept above MaxBytes")
	}
}

func TestConcurrentPut(t *testing.T) {
	c := &imagecache.Cache{Dir: t.TempDir(), MaxEntries: 4}
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Go(func() {
			if i%2 == 0 {
				errs[i] = c.Put(hash(i%5), "r", payload(i%5))
				return
			}
			if got, _, err := c.Get(hash(i % 5)); err != nil || (got != nil && got.Digest() != hash(1000+i%5)) {
				errs[i] = fmt.Errorf("Get %d = %v, %v", i%5, got, err)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	entries, _ := os.ReadDir(c.Dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}
