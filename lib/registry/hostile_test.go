package registry_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/payload-apply/payload-apply/internal/race"
	"github.com/payload-apply/payload-apply/lib/image"
	"github.com/payload-apply/payload-apply/lib/registry"
)

// fakeImage is a small payload image as a registry serves it.
type fakeImage struct {
	manifest []byte
	digest   v1.Hash
	blobs    map[string][]byte // by digest
	m        v1.Manifest
}

func newFakeImage(t *testing.T) *fakeImage {
	t.Helper()
	img, err := image.Build(fstest.MapFS{
		"release-manifests/0000_50_x_cm.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")},
		"release-manifests/release-metadata":  {Data: []byte(`{"kind":"cincinnati-metadata-v0","version":"4.22.0"}`)},
		"release-manifests/image-references":  {Data: []byte(`{"kind":"ImageStream","apiVersion":"image.openshift.io/v1","metadata":{"name":"4.22.0"}}`)},
	}, image.BuildOptions{Version: "4.22.0"})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeImage{blobs: map[string][]byte{}}
	if f.manifest, err = img.RawManifest(); err != nil {
		t.Fatal(err)
	}
	f.digest, _ = img.Digest()
	cfg, _ := img.RawConfigFile()
	m, _ := img.Manifest()
	f.m = *m
	f.blobs[m.Config.Digest.String()] = cfg
	layers, _ := img.Layers()
	for _, l := range layers {
		d, _ := l.Digest()
		rc, _ := l.Compressed()
		f.blobs[d.String()], _ = io.ReadAll(rc)
		rc.Close()
	}
	return f
}

// withManifest replaces the manifest (after edit) and returns its digest.
func (f *fakeImage) withManifest(t *testing.T, edit func(*v1.Manifest)) {
	t.Helper()
	m := f.m
	m.Layers = append([]v1.Descriptor{}, f.m.Layers...)
	edit(&m)
	var err error
	if f.manifest, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	f.digest, _, _ = v1.SHA256(bytes.NewReader(f.manifest))
	f.m = m
}

// server serves f under repo "r", with hook deciding first (return true
// when it answered).
func serve(t *testing.T, f *fakeImage, hook func(w http.ResponseWriter, r *http.Request) bool) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var blobReads atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hook != nil && hook(w, r) {
			return
		}
		switch {
		case r.URL.Path == "/v2/":
			w.WriteHeader(http.StatusOK)
		case strings.HasPrefix(r.URL.Path, "/v2/r/manifests/"):
			w.Header().Set("Content-Type", string(f.m.MediaType))
			w.Header().Set("Docker-Content-Digest", f.digest.String())
			w.Header().Set("Content-Length", fmt.Sprint(len(f.manifest)))
			if r.Method != http.MethodHead {
				w.Write(f.manifest)
			}
		case strings.HasPrefix(r.URL.Path, "/v2/r/blobs/"):
			blobReads.Add(1)
			b, ok := f.blobs[strings.TrimPrefix(r.URL.Path, "/v2/r/blobs/")]
			if !ok {
				http.NotFound(w, r)
				return
			}
			w.Write(b)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &blobReads
}

func hostileClient(srv *httptest.Server) *registry.Client {
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return registry.New(registry.Options{RootCAs: pool, Limits: registry.Limits{
		MaxManifestSize: 1 << 20, MinRate: 1 << 10, RateWindow: 300 * time.Millisecond, ReadBudget: time.Second, ResponseTimeout: time.Second,
		Retries: 2, RetryDelay: 10 * time.Millisecond,
	}})
}

func TestHostileRegistries(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 3<<20)
	tests := []struct {
		name string
		// setup edits the image and returns the hook and the reference
		// suffix (":tag" or "@digest").
		setup   func(t *testing.T, f *fakeImage) (func(http.ResponseWriter, *http.Request) bool, string)
		want    string
		noBlobs bool // nothing may be downloaded
	}{
		{"wrong manifest for a digest", func(t *testing.T, f *fakeImage) (func(http.ResponseWriter, *http.Request) bool, string) {
			want := "@sha256:" + strings.Repeat("0", 64)
			return nil, want
		}, "does not match requested digest", true},
		{"layer content not its digest", func(t *testing.T, f *fakeImage) (func(http.ResponseWriter, *http.Request) bool, string) {
			for d := range f.blobs {
				if d == f.m.Layers[0].Digest.String() {
					f.blobs[d] = append([]byte{}, f.blobs[d]...)
					f.blobs[d][len(f.blobs[d])-5] ^= 0xff
				}
			}
			return nil, ":t"
		}, "checksum", false},
		{"manifest above the limit", func(t *testing.T, f *fakeImage) (func(http.ResponseWriter, *http.Request) bool, string) {
			return func(w http.ResponseWriter, r *http.Request) bool {
				if strings.Contains(r.URL.Path, "/manifests/") {
					w.Write(big) // chunked: no Content-Length
					return true
				}
				return false
			}, ":t"
		}, "response above 1048576 bytes", true},
		{"manifest declared above the limit", func(t *testing.T, f *fakeImage) (func(http.ResponseWriter, *http.Request) bool, string) {
			return func(w http.ResponseWriter, r *http.Request) bool {
				if strings.Contains(r.URL.Path, "/manifests/") {
					w.Header().Set("Content-Length", fmt.Sprint(len(big)))
					w.Write(big)
					return true
				}
				return false
			}, ":t"
		}, "response of 3145728 bytes, limit 1048576", true},
		{"layer declared above the limits", func(t *testing.T, f *fakeImage) (func(http.ResponseWriter, *http.Request) bool, string) {
			f.withManifest(t, func(m *v1.Manifest) { m.Layers[0].Size = 64 << 30 })
			return nil, ":t"
		}, "size limit exceeded", true},
		{"config declared above the limit", func(t *testing.T, f *fakeImage) (func(http.ResponseWriter, *http.Request) bool, string) {
			f.withManifest(t, func(m *v1.Manifest) { m.Config.Size = 100 << 20 })
			return nil, ":t"
		}, "image config of 104857600 bytes", true},
		{"redirect loop", func(t *testing.T, f *fakeImage) (func(http.ResponseWriter, *http.Request) bool, string) {
			return func(w http.ResponseWriter, r *http.Request) bool {
				if strings.Contains(r.URL.Path, "/manifests/") {
					http.Redirect(w, r, r.URL.Path, http.StatusFound)
					return true
				}
				return false
			}, ":t"
		}, "more than 5 redirects", true},
		{"401", status(http.StatusUnauthorized), "unauthorized (401", true},
		{"403", status(http.StatusForbidden), "forbidden (403", true},
		{"429", status(http.StatusTooManyRequests), "rate limiting (429", true},
		{"500", status(http.StatusInternalServerError), "failed (HTTP 500)", true},
		{"stalled body", func(t *testing.T, f *fakeImage) (func(http.ResponseWriter, *http.Request) bool, string) {
			return func(w http.ResponseWriter, r *http.Request) bool {
				if strings.Contains(r.URL.Path, "/manifests/") {
					w.Header().Set("Content-Length", "1000")
					w.Write([]byte("{"))
					w.(http.Flusher).Flush()
					<-r.Context().Done()
					return true
				}
				return false
			}, ":t"
		}, "1 bytes in the last 300ms, below the minimum rate of 1024 bytes/s", true},
		{"manifest one byte at a time", drip("/manifests/", 20*time.Millisecond, 1, nil), "bytes in the last 300ms, below the minimum rate of 1024 bytes/s", true},
		{"layer one byte at a time", drip("/blobs/", 20*time.Millisecond, 1, func(f *fakeImage) []byte { return f.blobs[f.m.Layers[0].Digest.String()] }),
			"bytes in the last 300ms, below the minimum rate of 1024 bytes/s", false},
		{"manifest above the rate, beyond the budget", drip("/manifests/", 20*time.Millisecond, 64, func(*fakeImage) []byte { return bytes.Repeat([]byte(" "), 4000) }),
			"not done after 1s (", true},
		{"no response headers", func(t *testing.T, f *fakeImage) (func(http.ResponseWriter, *http.Request) bool, string) {
			return func(w http.ResponseWriter, r *http.Request) bool {
				if strings.Contains(r.URL.Path, "/manifests/") {
					select {
					case <-r.Context().Done():
					case <-time.After(10 * time.Second):
					}
					return true
				}
				return false
			}, ":t"
		}, "timeout awaiting response headers", true},
		{"gzip bomb layer", func(t *testing.T, f *fakeImage) (func(http.ResponseWriter, *http.Request) bool, string) {
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			zeros := make([]byte, 1<<20)
			for i := 0; i < 256; i++ { // 256 MiB of zeros, 250 KiB gzipped
				zw.Write(zeros)
			}
			zw.Close()
			d, _, _ := v1.SHA256(bytes.NewReader(b.Bytes()))
			f.blobs[d.String()] = b.Bytes()
			f.withManifest(t, func(m *v1.Manifest) { m.Layers[0].Digest, m.Layers[0].Size = d, int64(b.Len()) })
			return nil, ":t"
		}, "size limit exceeded", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if race.Enabled && tt.name == "gzip bomb layer" {
				// 40 s of decompression under -race; the bound itself is
				// lib/image's (TestFlattenStopsGzipBombs) and runs without.
				t.Skip("slow under -race")
			}
			f := newFakeImage(t)
			hook, suffix := tt.setup(t, f)
			srv, blobs := serve(t, f, hook)
			c := hostileClient(srv)
			ref, err := c.ParseReference(strings.TrimPrefix(srv.URL, "https://") + "/r" + suffix)
			if err != nil {
				t.Fatal(err)
			}
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			_, err = c.Pull(context.Background(), ref, image.LoadOptions{MaxTotalSize: 64 << 20, MaxFiles: 1000}, t.TempDir())
			elapsed := time.Since(start)
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if !strings.Contains(err.Error(), ref.String()) && !errors.Is(err, image.ErrTooLarge) {
				t.Errorf("error %q does not name %s", err, ref)
			}
			if elapsed > 5*time.Second {
				t.Errorf("took %s", elapsed)
			}
			if grew := int64(after.TotalAlloc - before.TotalAlloc); grew > 64<<20 {
				t.Errorf("allocated %d MiB", grew>>20)
			}
			if tt.noBlobs && blobs.Load() > 0 {
				t.Errorf("%d blobs downloaded, want none", blobs.Load())
			}
			t.Logf("%s: %v", elapsed.Round(time.Millisecond), err)
		})
	}
}

// drip answers requests whose path contains part with body(f) (nil: the
// manifest), chunk bytes every every, its length declared.
func drip(part string, every time.Duration, chunk int, body func(*fakeImage) []byte) func(*testing.T, *fakeImage) (func(http.ResponseWriter, *http.Request) bool, string) {
	return func(t *testing.T, f *fakeImage) (func(http.ResponseWriter, *http.Request) bool, string) {
		return func(w http.ResponseWriter, r *http.Request) bool {
			if !strings.Contains(r.URL.Path, part) {
				return false
			}
			data := f.manifest
			if body != nil {
				data = body(f)
			}
			w.Header().Set("Content-Length", fmt.Sprint(len(data)))
			if part == "/manifests/" {
				w.Header().Set("Content-Type", string(f.m.MediaType))
			}
			for i := 0; i < len(data); i += chunk {
				if _, err := w.Write(data[i:min(i+chunk, len(data))]); err != nil {
					return true
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return true
				case <-time.After(every):
				}
			}
			return true
		}, ":t"
	}
}

func status(code int) func(*testing.T, *fakeImage) (func(http.ResponseWriter, *http.Request) bool, string) {
	return func(t *testing.T, f *fakeImage) (func(http.ResponseWriter, *http.Request) bool, string) {
		return func(w http.ResponseWriter, r *http.Request) bool {
			if code == http.StatusUnauthorized && r.URL.Path == "/v2/" {
				w.Header().Set("WWW-Authenticate", `Basic realm="x"`)
			}
			if r.URL.Path != "/v2/" || code == http.StatusUnauthorized {
				w.WriteHeader(code)
				fmt.Fprintf(w, `{"errors":[{"code":"X","message":"%s"}]}`, http.StatusText(code))
				return true
			}
			return false
		}, ":t"
	}
}

func TestPullGood(t *testing.T) {
	f := newFakeImage(t)
	srv, _ := serve(t, f, nil)
	c := hostileClient(srv)
	ref, _ := c.ParseReference(strings.TrimPrefix(srv.URL, "https://") + "/r:t")
	p, err := c.Pull(context.Background(), ref, image.LoadOptions{}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if p.Digest != f.digest || p.LayersRead != 1 {
		t.Errorf("pulled %s (%d layers read), want %s", p.Digest, p.LayersRead, f.digest)
	}
	// Plain HTTP to a host not marked insecure is refused.
	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()
	ref, _ = c.ParseReference(strings.TrimPrefix(plain.URL, "http://") + "/r:t")
	if _, err := c.Pull(context.Background(), ref, image.LoadOptions{}, t.TempDir()); err == nil || !strings.Contains(err.Error(), "plain HTTP refused") {
		t.Errorf("plain HTTP: err = %v", err)
	}
}

// TestPullInterruptedDuringDrip: a cancel ends a pull whose manifest comes
// one byte at a time within a tenth of a second, as interrupted.
func TestPullInterruptedDuringDrip(t *testing.T) {
	f := newFakeImage(t)
	hook, _ := drip("/manifests/", 100*time.Millisecond, 1, nil)(t, f)
	srv, _ := serve(t, f, hook)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	c := registry.New(registry.Options{RootCAs: pool}) // the default limits
	ref, _ := c.ParseReference(strings.TrimPrefix(srv.URL, "https://") + "/r:t")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err := c.Pull(ctx, ref, image.LoadOptions{}, t.TempDir())
	if took := time.Since(start); took > 400*time.Millisecond {
		t.Errorf("took %s after a cancel at 300ms", took)
	}
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("err = %v, want interrupted", err)
	}
}

// TestHostileIndexes: image indexes from the network nest no deeper than
// a local layout's, whatever the chain's length, and a manifest that is
// not what its media type says, a missing child and a .sig tag that is an
// index are errors saying so.
func TestHostileIndexes(t *testing.T) {
	const ociIndex = "application/vnd.oci.image.index.v1+json"
	amd64 := `"platform":{"os":"linux","architecture":"amd64"}`
	indexOf := func(child v1.Hash, mt string, size int) []byte {
		return []byte(fmt.Sprintf(`{"schemaVersion":2,"mediaType":%q,"manifests":[{"mediaType":%q,"digest":%q,"size":%d,%s}]}`, ociIndex, mt, child, size, amd64))
	}
	tests := []struct {
		name string
		// chain returns the manifests by digest and the one the tag names,
		// with the Content-Type of each.
		chain        func(f *fakeImage) (map[string][]byte, map[string]string, string)
		want         string
		maxManifests int64
		cosign       bool
	}{
		{"a chain of 100,000 indexes", func(f *fakeImage) (map[string][]byte, map[string]string, string) {
			by, types := map[string][]byte{f.digest.String(): f.manifest}, map[string]string{}
			d, mt, size := f.digest, string(f.m.MediaType), len(f.manifest)
			for range 100_000 {
				data := indexOf(d, mt, size)
				d, _, _ = v1.SHA256(bytes.NewReader(data))
				by[d.String()], types[d.String()], mt, size = data, ociIndex, ociIndex, len(data)
			}
			return by, types, d.String()
		}, "image indexes nested more than 4 deep (the index depth limit)", 6, false},
		{"an index served as an image manifest", func(f *fakeImage) (map[string][]byte, map[string]string, string) {
			data := indexOf(f.digest, string(f.m.MediaType), len(f.manifest))
			d, _, _ := v1.SHA256(bytes.NewReader(data))
			return map[string][]byte{d.String(): data, f.digest.String(): f.manifest}, map[string]string{d.String(): string(f.m.MediaType)}, d.String()
		}, "an image index (it lists manifests) where an image manifest was expected", 1, false},
		{"an image manifest an index names as an index", func(f *fakeImage) (map[string][]byte, map[string]string, string) {
			data := indexOf(f.digest, ociIndex, len(f.manifest))
			d, _, _ := v1.SHA256(bytes.NewReader(data))
			return map[string][]byte{d.String(): data, f.digest.String(): f.manifest}, map[string]string{d.String(): ociIndex}, d.String()
		}, "child " + "sha256:", 2, false},
		{"an index whose child is missing", func(f *fakeImage) (map[string][]byte, map[string]string, string) {
			data := indexOf(f.digest, string(f.m.MediaType), len(f.manifest))
			d, _, _ := v1.SHA256(bytes.NewReader(data))
			return map[string][]byte{d.String(): data}, map[string]string{d.String(): ociIndex}, d.String()
		}, "which the registry does not have (404)", 2, false},
		{"a .sig tag that is an index with a missing child", func(f *fakeImage) (map[string][]byte, map[string]string, string) {
			data := indexOf(f.digest, string(f.m.MediaType), len(f.manifest))
			d, _, _ := v1.SHA256(bytes.NewReader(data))
			return map[string][]byte{d.String(): data}, map[string]string{d.String(): ociIndex}, d.String()
		}, "an image index (it lists manifests), where cosign stores signatures as one image manifest", 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeImage(t)
			by, types, top := tt.chain(f)
			var manifests atomic.Int64
			srv, _ := serve(t, f, func(w http.ResponseWriter, r *http.Request) bool {
				rest, ok := strings.CutPrefix(r.URL.Path, "/v2/r/manifests/")
				if !ok {
					return false
				}
				manifests.Add(1)
				if !strings.HasPrefix(rest, "sha256:") {
					rest = top
				}
				data, ok := by[rest]
				if !ok {
					http.NotFound(w, r)
					return true
				}
				mt := types[rest]
				if mt == "" {
					mt = string(f.m.MediaType)
				}
				w.Header().Set("Content-Type", mt)
				w.Write(data)
				return true
			})
			c := hostileClient(srv)
			start := time.Now()
			var err error
			if tt.cosign {
				_, err = c.CosignSignatures(context.Background(), strings.TrimPrefix(srv.URL, "https://")+"/r", f.digest)
			} else {
				ref, _ := c.ParseReference(strings.TrimPrefix(srv.URL, "https://") + "/r:t")
				_, err = c.Pull(context.Background(), ref, image.LoadOptions{}, t.TempDir())
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if n := manifests.Load(); n > tt.maxManifests {
				t.Errorf("%d manifest requests, want at most %d", n, tt.maxManifests)
			}
			t.Logf("%s, %d manifest requests: %v", time.Since(start).Round(time.Millisecond), manifests.Load(), err)
		})
	}
}
