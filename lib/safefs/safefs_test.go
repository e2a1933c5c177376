package safefs_test

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/payload-apply/payload-apply/lib/safefs"
)

// within fails the test when f takes longer than d: a blocking open would
// hang it for good, so it runs in a goroutine the test gives up on.
func within(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("did not return within %s (blocked?)", d)
	}
}

// specials makes one of each special file a user may name by mistake or
// malice in dir, and returns their names.
func specials(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	out["named pipe"] = "fifo.yaml"
	sock := filepath.Join(dir, "sock.yaml")
	if l, err := net.Listen("unix", sock); err == nil {
		t.Cleanup(func() { l.Close() })
		out["socket"] = "sock.yaml"
	}
	if err := os.Symlink("fifo.yaml", filepath.Join(dir, "link-to-fifo.yaml")); err != nil {
		t.Fatal(err)
	}
	out["link to a named pipe"] = "link-to-fifo.yaml"
	return out
}

func TestSpecialFilesAreRefused(t *testing.T) {
	dir := t.TempDir()
	for what, name := range specials(t, dir) {
		t.Run(what, func(t *testing.T) {
			within(t, 2*time.Second, func() {
				_, err := safefs.ReadFile(filepath.Join(dir, name), 1<<20)
				if !errors.Is(err, safefs.ErrSpecialFile) || !strings.Contains(err.Error(), name) {
					t.Errorf("ReadFile: %v, want a special file error naming %s", err, name)
				}
				_, err = safefs.Dir(dir).Open(name)
				if !errors.Is(err, safefs.ErrSpecialFile) {
					t.Errorf("Dir.Open: %v, want a special file error", err)
				}
				_, err = fs.ReadFile(safefs.Dir(dir), name)
				if !errors.Is(err, safefs.ErrSpecialFile) {
					t.Errorf("fs.ReadFile: %v, want a special file error", err)
				}
				_, err = fs.ReadDir(safefs.Dir(dir), name)
				if !errors.Is(err, safefs.ErrSpecialFile) {
					t.Errorf("fs.ReadDir: %v, want a special file error", err)
				}
			})
		})
	}
	t.Run("character device", func(t *testing.T) {
		within(t, 2*time.Second, func() {
			_, err := safefs.ReadFile("/dev/zero", 1<<20)
			if !errors.Is(err, safefs.ErrSpecialFile) || !strings.Contains(err.Error(), "character device") {
				t.Errorf("ReadFile(/dev/zero): %v", err)
			}
		})
	})
	t.Run("directory as a file", func(t *testing.T) {
		_, err := safefs.ReadFile(dir, 1<<20)
		if err == nil || !strings.Contains(err.Error(), "is a directory") {
			t.Errorf("ReadFile(dir): %v", err)
		}
	})
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "a.yaml")
	if err := os.WriteFile(f, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := safefs.ReadFile(f, 10); err != nil || string(got) != "0123456789" {
		t.Errorf("ReadFile at the limit: %q, %v", got, err)
	}
	var tl *safefs.TooLargeError
	if _, err := safefs.ReadFile(f, 9); !errors.As(err, &tl) || tl.Size != 10 || tl.Limit != 9 {
		t.Errorf("ReadFile above the limit: %v", err)
	}
}

func TestDirConfines(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.yaml"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(outside, "secret.yaml"), filepath.Join(dir, "abs.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../"+filepath.Base(outside)+"/secret.yaml", filepath.Join(dir, "rel.yaml")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"abs.yaml", "rel.yaml", "../x", "/etc/passwd"} {
		if _, err := safefs.Dir(dir).ReadFile(name); err == nil {
			t.Errorf("ReadFile(%s) read outside the directory", name)
		}
	}
}

func TestOutputConfines(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir, outside string)
		write string
		err   string // "" when the write succeeds
	}{
		{name: "plain", write: "manifests/a.yaml"},
		{name: "absolute name", write: "/tmp/x.yaml", err: "refusing to write outside"},
		{name: "dot-dot name", write: "../x.yaml", err: "refusing to write outside"},
		{name: "directory linked out", write: "manifests/a.yaml", err: "refusing to write outside",
			setup: func(t *testing.T, dir, outside string) { symlink(t, outside, filepath.Join(dir, "manifests")) }},
		{name: "file linked out", write: "a.yaml",
			setup: func(t *testing.T, dir, outside string) {
				symlink(t, filepath.Join(outside, "victim.yaml"), filepath.Join(dir, "a.yaml"))
			}},
		{name: "directory linked out relatively", write: "m/a.yaml", err: "refusing to write outside",
			setup: func(t *testing.T, dir, outside string) {
				symlink(t, "../"+filepath.Base(outside), filepath.Join(dir, "m"))
			}},
		{name: "directory linked inside", write: "m/a.yaml",
			setup: func(t *testing.T, dir, outside string) {
				if err := os.Mkdir(filepath.Join(dir, "real"), 0o755); err != nil {
					t.Fatal(err)
				}
				symlink(t, "real", filepath.Join(dir, "m"))
			}},
		{name: "named pipe at the file's place", write: "a.yaml",
			setup: func(t *testing.T, dir, outside string) {
				if err := syscall.Mkfifo(filepath.Join(dir, "a.yaml"), 0o644); err != nil {
					t.Fatal(err)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			dir, outside := filepath.Join(base, "out"), filepath.Join(base, "outside")
			for _, d := range []string{dir, outside} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			victim := filepath.Join(outside, "victim.yaml")
			if err := os.WriteFile(victim, []byte("untouched"), 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.setup != nil {
				tt.setup(t, dir, outside)
			}
			o, err := safefs.CreateOutput(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			within(t, 2*time.Second, func() {
				err = o.WriteFile(tt.write, []byte("written"), 0o644)
			})
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("WriteFile: %v", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, safefs.ErrEscapes)):
				t.Fatalf("WriteFile: %v, want %q", err, tt.err)
			}
			if b, _ := os.ReadFile(victim); string(b) != "untouched" {
				t.Errorf("the file outside was changed: %q", b)
			}
			entries, _ := os.ReadDir(outside)
			if len(entries) != 1 {
				t.Errorf("files appeared outside: %v", entries)
			}
			if tt.err == "" {
				if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(tt.write))); err != nil || string(b) != "written" {
					t.Errorf("the file: %q, %v", b, err)
				}
			}
		})
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
