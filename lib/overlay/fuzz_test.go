package overlay_test

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/overlay"
	"github.com/payload-apply/payload-apply/overlays"
)

// recordFS is a file system that remembers every name it is asked for.
type recordFS struct {
	fs.FS
	mu    sync.Mutex
	names []string
}

func (r *recordFS) note(name string) {
	r.mu.Lock()
	r.names = append(r.names, name)
	r.mu.Unlock()
}

func (r *recordFS) Open(name string) (fs.File, error) { r.note(name); return r.FS.Open(name) }
func (r *recordFS) Stat(name string) (fs.FileInfo, error) {
	r.note(name)
	return fs.Stat(r.FS, name)
}
func (r *recordFS) ReadFile(name string) ([]byte, error) {
	r.note(name)
	return fs.ReadFile(r.FS, name)
}
func (r *recordFS) ReadDir(name string) ([]fs.DirEntry, error) {
	r.note(name)
	return fs.ReadDir(r.FS, name)
}

// noNetwork points the HTTP proxy variables at a listener that counts
// connections and empties PATH (kustomize runs git for git resources), for
// the rest of the test binary's fuzzing.
func noNetwork(f *testing.F) *atomic.Int64 {
	var dials atomic.Int64
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			dials.Add(1)
			c.Close()
		}
	}()
	f.Cleanup(func() { l.Close() })
	for k, v := range map[string]string{"HTTP_PROXY": "http://" + l.Addr().String(), "HTTPS_PROXY": "http://" + l.Addr().String(), "NO_PROXY": "", "PATH": ""} {
		old, had := os.LookupEnv(k)
		os.Setenv(k, v)
		f.Cleanup(func() {
			if had {
				os.Setenv(k, old)
			} else {
				os.Unsetenv(k)
			}
		})
	}
	return &dials
}

// FuzzOverlay builds an overlay of a fuzzed kustomization and patch file
// (the built-in overlays as seeds) over objects of the real payload. It
// must not panic, read anything outside the overlay's directory (a file
// beside it and one at the root are there to be reached for), reach the
// network or run a program; its errors are *overlay.Error naming the
// overlay's kustomization file.
func FuzzOverlay(f *testing.F) {
	dials := noNetwork(f)
	builtin := overlays.FS()
	dirs, err := fs.ReadDir(builtin, ".")
	if err != nil {
		f.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		k, err := fs.ReadFile(builtin, d.Name()+"/kustomization.yaml")
		if err != nil {
			f.Fatal(err)
		}
		files, _ := fs.ReadDir(builtin, d.Name())
		for _, e := range files {
			if e.Name() == "kustomization.yaml" {
				continue
			}
			patch, err := fs.ReadFile(builtin, d.Name()+"/"+e.Name())
			if err != nil {
				f.Fatal(err)
			}
			f.Add([]byte(strings.ReplaceAll(string(k), e.Name(), "patch.yaml")), patch)
		}
	}
	for _, k := range []string{
		"resources: [../secret.yaml]", "resources: [/etc/passwd]", "resources: [https://example.com/x.yaml]",
		"resources: [github.com/example/repo//x?ref=main]", "patches: [{path: ../../outside.yaml}]",
		"resources: [patch.yaml]\nnamePrefix: x-", "configMapGenerator: [{name: c, files: [../secret.yaml]}]",
		"components: [..]", "openapi: {path: ../secret.yaml}", "generators: [patch.yaml]",
	} {
		f.Add([]byte(k), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: added, namespace: demo}\n"))
	}

	var objs []*manifest.Manifest
	for _, file := range realpayload.Sample(f, 8, 16<<10) {
		ms, err := manifest.Parse(file.Path, file.Data, manifest.ParseOptions{})
		if err != nil {
			continue
		}
		for i := range ms {
			objs = append(objs, &ms[i])
		}
	}
	objs = append(objs, inputs(f)...)

	f.Fuzz(func(t *testing.T, kustomization, patch []byte) {
		rec := &recordFS{FS: fstest.MapFS{
			"overlays/o/kustomization.yaml": {Data: kustomization},
			"overlays/o/patch.yaml":         {Data: patch},
			"overlays/secret.yaml":          {Data: []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: beside}\n")},
			"outside.yaml":                  {Data: []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: root}\n")},
		}}
		src := overlay.Source{FS: rec, Label: "fuzz/"}
		o, err := overlay.Find([]overlay.Source{src}, "o", "overlays/o")
		if err != nil {
			t.Fatal(err)
		}
		res, err := overlay.Apply(context.Background(), objs, []*overlay.Overlay{o})
		for _, name := range rec.names {
			if name != "overlays/o" && !strings.HasPrefix(name, "overlays/o/") {
				t.Fatalf("the overlay read %q, outside its directory", name)
			}
		}
		if n := dials.Load(); n > 0 {
			t.Fatalf("the overlay reached for the network (%d connections)", n)
		}
		if err != nil {
			if strings.Contains(err.Error(), "executable file not found") {
				t.Fatalf("the overlay tried to run a program: %v", err)
			}
			var oe *overlay.Error
			if !errors.As(err, &oe) || !strings.HasPrefix(oe.File, "fuzz/overlays/o/") {
				t.Fatalf("error does not name the overlay's kustomization file: %v", err)
			}
			return
		}
		for _, m := range res.Objects {
			if m.GVK.Kind == "" || m.Obj.GetName() == "" {
				t.Fatalf("object without kind or name: %s", m)
			}
			if m.Obj.GetName() == "root" || m.Obj.GetName() == "beside" {
				t.Fatalf("an object from outside the overlay came through: %s", m)
			}
		}
	})
}
