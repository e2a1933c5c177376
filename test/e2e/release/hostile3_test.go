//go:build e2e

package release

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/payload-apply/payload-apply/lib/image"
	"github.com/payload-apply/payload-apply/test/clitest"
)

// fakeRegistry is a registry of our own on 127.0.0.1 (plain HTTP: the
// commands reach it with --insecure-registry) serving one image as
// repository "r", tag "t", whose every answer a hook may replace: a
// registry that sends a byte at a time, nests indexes, or names a child it
// does not have. The real one (Debian's docker-registry) cannot be made to
// misbehave so.
type fakeRegistry struct {
	*httptest.Server
	Host     string
	Image    v1.Image
	Digest   v1.Hash
	manifest []byte
	mt       string
	blobs    map[string][]byte
	// manifests are served by digest (or for tag "t" when top is set),
	// with their Content-Type.
	mu        sync.Mutex
	manifests map[string][]byte
	types     map[string]string
	top       string
	// Hook, when it returns true, has answered.
	Hook func(w http.ResponseWriter, r *http.Request) bool
	// Requests counts the requests by path.
	Requests sync.Map
}

func newFakeRegistry(t *testing.T, payloadDir, version string) *fakeRegistry {
	t.Helper()
	img, err := image.Build(os.DirFS(payloadDir), image.BuildOptions{Version: version})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeRegistry{Image: img, blobs: map[string][]byte{}, manifests: map[string][]byte{}, types: map[string]string{}}
	f.manifest, _ = img.RawManifest()
	f.Digest, _ = img.Digest()
	mt, _ := img.MediaType()
	f.mt = string(mt)
	cfg, _ := img.RawConfigFile()
	m, _ := img.Manifest()
	f.blobs[m.Config.Digest.String()] = cfg
	layers, _ := img.Layers()
	for _, l := range layers {
		d, _ := l.Digest()
		rc, _ := l.Compressed()
		f.blobs[d.String()], _ = io.ReadAll(rc)
		rc.Close()
	}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Server.Close)
	f.Host = strings.TrimPrefix(f.Server.URL, "http://")
	return f
}

// Ref is the image's reference by tag, Pinned by digest.
func (f *fakeRegistry) Ref() string    { return f.Host + "/r:t" }
func (f *fakeRegistry) Pinned() string { return f.Host + "/r@" + f.Digest.String() }

// Count is how many requests a path had.
func (f *fakeRegistry) Count(path string) int64 {
	n, _ := f.Requests.LoadOrStore(path, new(atomic.Int64))
	return n.(*atomic.Int64).Load()
}

// Add serves data as a manifest of media type mt by its digest, and as
// tag "t" when top; it returns the digest.
func (f *fakeRegistry) Add(data []byte, mt string, top bool) v1.Hash {
	d, _, _ := v1.SHA256(bytes.NewReader(data))
	f.mu.Lock()
	defer f.mu.Unlock()
	f.manifests[d.String()], f.types[d.String()] = data, mt
	if top {
		f.top = d.String()
	}
	return d
}

func (f *fakeRegistry) serve(w http.ResponseWriter, r *http.Request) {
	n, _ := f.Requests.LoadOrStore(r.URL.Path, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
	if f.Hook != nil && f.Hook(w, r) {
		return
	}
	switch {
	case r.URL.Path == "/v2/":
		w.WriteHeader(http.StatusOK)
	case strings.HasPrefix(r.URL.Path, "/v2/r/manifests/"):
		ref := strings.TrimPrefix(r.URL.Path, "/v2/r/manifests/")
		f.mu.Lock()
		data, mt := f.manifest, f.mt
		if ref == "t" && f.top != "" {
			ref = f.top
		}
		if m, ok := f.manifests[ref]; ok {
			data, mt = m, f.types[ref]
		} else if ref != "t" && ref != f.Digest.String() {
			data = nil
		}
		f.mu.Unlock()
		if data == nil {
			http.NotFound(w, r)
			return
		}
		d, _, _ := v1.SHA256(bytes.NewReader(data))
		w.Header().Set("Content-Type", mt)
		w.Header().Set("Docker-Content-Digest", d.String())
		w.Header().Set("Content-Length", fmt.Sprint(len(data)))
		if r.Method != http.MethodHead {
			w.Write(data)
		}
	case strings.HasPrefix(r.URL.Path, "/v2/r/blobs/"):
		b, ok := f.blobs[strings.TrimPrefix(r.URL.Path, "/v2/r/blobs/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		w.Write(b)
	default:
		http.NotFound(w, r)
	}
}

// drip answers with data (its length declared), chunk bytes every every,
// until the client goes.
func drip(w http.ResponseWriter, r *http.Request, data []byte, chunk int, every time.Duration) {
	w.Header().Set("Content-Length", fmt.Sprint(len(data)))
	for i := 0; i < len(data); i += chunk {
		if _, err := w.Write(data[i:min(i+chunk, len(data))]); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			return
		case <-time.After(every):
		}
	}
}

// hostileCase is one hostile input of a class and what the command must
// do with it, each run under a deadline of its own through the peak
// helper (clitest.RunBounded).
type hostileCase struct {
	name string
	// setup prepares the case in dir and returns the command's arguments
	// and extra environment.
	setup func(t *testing.T, dir string) (args, env []string)
	code  int
	want  []string // each in stdout or stderr
	// maxTime and maxMB bound the run (zero: 10 s, 300 MB).
	maxTime time.Duration
	maxMB   int64
	// signal is sent after after, when set.
	signal os.Signal
	after  time.Duration
	// parallel: the case mostly waits (a drip, a helper that hangs).
	parallel bool
	check    func(t *testing.T, dir string, b clitest.Bounded)
}

// runHostile runs each case in a fresh directory with e's environment.
func runHostile(t *testing.T, e *env, cases []hostileCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.parallel {
				t.Parallel()
			}
			dir := t.TempDir()
			args, extra := c.setup(t, dir)
			maxTime, maxMB := c.maxTime, c.maxMB
			if maxTime == 0 {
				maxTime = 10 * time.Second
			}
			if maxMB == 0 {
				maxMB = 300
			}
			b := clitest.RunBounded(t, 3*maxTime, clitest.RunOptions{Env: append(append([]string{}, e.vars...), extra...), Signal: c.signal, After: c.after}, binary, args...)
			t.Logf("exit %d in %s, peak %d MB", b.Code, b.Took.Round(time.Millisecond), b.PeakMB)
			if b.Code != c.code {
				t.Errorf("exit %d, want %d; stdout:\n%.2000s\nstderr:\n%.3000s", b.Code, c.code, b.Stdout, b.Stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(b.Stdout+b.Stderr, w) {
					t.Errorf("output lacks %q; stdout:\n%.2000s\nstderr:\n%.3000s", w, b.Stdout, b.Stderr)
				}
			}
			if b.Took > maxTime {
				t.Errorf("took %s, want at most %s", b.Took, maxTime)
			}
			if b.PeakMB > maxMB {
				t.Errorf("peak memory %d MB, want at most %d MB", b.PeakMB, maxMB)
			}
			if strings.Contains(b.Stderr, "panic:") {
				t.Errorf("panic:\n%.4000s", b.Stderr)
			}
			if c.check != nil {
				c.check(t, dir, b)
			}
		})
	}
}
