package store_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	lgstore "github.com/openshift/library-go/pkg/verify/store"

	"github.com/payload-apply/payload-apply/lib/signature/store"
)

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// collect reads every signature a store gives for digest.
func collect(t *testing.T, s lgstore.Store) ([]string, []error) {
	t.Helper()
	var sigs []string
	var errs []error
	err := s.Signatures(context.Background(), "", digest, func(_ context.Context, sig []byte, err error) (bool, error) {
		if err != nil {
			errs = append(errs, err)
			return false, nil
		}
		sigs = append(sigs, string(sig))
		return false, nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	return sigs, errs
}

func TestDir(t *testing.T) {
	d := store.Dir(t.TempDir())
	if sigs, errs := collect(t, d); len(sigs) != 0 || len(errs) != 1 || !errors.Is(errs[0], lgstore.ErrNotFound) {
		t.Fatalf("empty store: %v %v", sigs, errs)
	}
	for _, sig := range []string{"one", "two", "one"} {
		if _, err := d.Add(digest, []byte(sig)); err != nil {
			t.Fatal(err)
		}
	}
	sigs, errs := collect(t, d)
	if diff := cmp.Diff([]string{"one", "two"}, sigs); diff != "" || len(errs) > 0 {
		t.Errorf("signatures (-want +got):\n%s%v", diff, errs)
	}
	if _, err := os.Stat(filepath.Join(string(d), "sha256="+strings.TrimPrefix(digest, "sha256:"), "signature-2")); err != nil {
		t.Errorf("layout: %v", err)
	}
	// A link out of the store is not followed; a big file is refused.
	dir := filepath.Join(string(d), "sha256="+strings.TrimPrefix(digest, "sha256:"))
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "signature-3")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "signature-4"), make([]byte, 60*1024), 0o644); err != nil {
		t.Fatal(err)
	}
	sigs, errs = collect(t, d)
	if len(sigs) != 2 || len(errs) != 2 {
		t.Errorf("with a link out and a big file: %d signatures, errors %v", len(sigs), errs)
	}
	for i := 5; i <= 9; i++ {
		os.WriteFile(filepath.Join(dir, "signature-"+string(rune('0'+i))), []byte("x"), 0o644)
	}
	if _, err := d.Add(digest, []byte("ten")); err == nil {
		t.Error("added a tenth signature, which no store reads")
	}
}

func TestHTTP(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/sigs/sha256=" + strings.TrimPrefix(digest, "sha256:") + "/signature-1":
			w.Write([]byte("first"))
		case "/sigs/sha256=" + strings.TrimPrefix(digest, "sha256:") + "/signature-2":
			w.Write([]byte("second"))
		case "/big/sha256=" + strings.TrimPrefix(digest, "sha256:") + "/signature-1":
			w.Write(make([]byte, 8<<20))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	s, err := store.Parse(srv.URL+"/sigs", srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	sigs, _ := collect(t, s)
	if diff := cmp.Diff([]string{"first", "second"}, sigs); diff != "" {
		t.Errorf("signatures (-want +got):\n%s", diff)
	}
	// A response larger than a signature is cut there.
	big, _ := store.Parse(srv.URL+"/big", srv.Client())
	if _, errs := collect(t, big); len(errs) == 0 || !strings.Contains(errs[0].Error(), "response larger than 51200 bytes, more than a signature") {
		t.Errorf("errors %q, want the size refused", errs)
	}
	for _, bad := range []string{"ftp://x/y", filepath.Join(t.TempDir(), "missing")} {
		if _, err := store.Parse(bad, nil); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
}

// TestDirNamedPipe: a named pipe in the store is refused at once (an open
// would block for good), and the signatures after it are still read.
func TestDirNamedPipe(t *testing.T) {
	d := store.Dir(t.TempDir())
	if _, err := d.Add(digest, []byte("one")); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(string(d), "sha256="+strings.TrimPrefix(digest, "sha256:"))
	if err := syscall.Mkfifo(filepath.Join(dir, "signature-2"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "signature-3"), []byte("three"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var sigs []string
	var errs []error
	go func() { defer close(done); sigs, errs = collect(t, d) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("reading the store blocked on a named pipe")
	}
	if diff := cmp.Diff([]string{"one", "three"}, sigs); diff != "" || len(errs) != 1 || !strings.Contains(errs[0].Error(), "not a regular file: a named pipe (FIFO)") {
		t.Errorf("signatures (-want +got):\n%s, errors %v", diff, errs)
	}
}

// TestDirAddConfined: Add passes over a named pipe at a signature's place
// without blocking, and a symbolic link inside the store that leads out
// of it is refused: nothing is written outside.
func TestDirAddConfined(t *testing.T) {
	d := store.Dir(t.TempDir())
	dir := filepath.Join(string(d), "sha256="+strings.TrimPrefix(digest, "sha256:"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "signature-1"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var p string
	var err error
	go func() { defer close(done); p, err = d.Add(digest, []byte("two")) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Add blocked on a named pipe")
	}
	if err != nil || p != filepath.Join(dir, "signature-2") {
		t.Errorf("Add: %q, %v; want signature-2", p, err)
	}

	outside := t.TempDir()
	linked := store.Dir(t.TempDir())
	if err := os.Symlink(outside, filepath.Join(string(linked), "sha256="+strings.TrimPrefix(digest, "sha256:"))); err != nil {
		t.Fatal(err)
	}
	if p, err := linked.Add(digest, []byte("sig")); err == nil || !strings.Contains(err.Error(), "escapes") {
		t.Errorf("Add through a link out of the store: %q, %v; want a path that escapes", p, err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written outside the store: %v", entries)
	}
}
