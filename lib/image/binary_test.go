package image_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/v1/validate"

	"github.com/payload-apply/payload-apply/lib/image"
)

// staticBinary builds a small static Go program.
func staticBinary(t *testing.T) []byte {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() { println(\"hello\") }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "hello")
	cmd := exec.Command("go", "build", "-o", out, src)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=", "GO111MODULE=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBinaryImage(t *testing.T) {
	bin := staticBinary(t)
	opts := image.BinaryOptions{Path: "/usr/bin/hello", Cmd: []string{"operator"}, Labels: map[string]string{"a": "b"}}
	img, err := image.BinaryImage(bin, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(img); err != nil {
		t.Fatalf("validate.Image: %v", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH || cf.Config.User != "65532:65532" ||
		!cmp.Equal(cf.Config.Entrypoint, []string{"/usr/bin/hello"}) || !cmp.Equal(cf.Config.Cmd, []string{"operator"}) ||
		!cmp.Equal(cf.Config.Labels, map[string]string{"a": "b"}) {
		t.Errorf("config: %s/%s user %q entrypoint %q cmd %q labels %v", cf.OS, cf.Architecture, cf.Config.User, cf.Config.Entrypoint, cf.Config.Cmd, cf.Config.Labels)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers %d, %v; want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var entries []string
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, hdr.Name)
		if hdr.Name == "usr/bin/hello" {
			data, _ := io.ReadAll(tr)
			if !bytes.Equal(data, bin) || hdr.Mode != 0o555 || hdr.ModTime.Unix() != 0 {
				t.Errorf("the binary: %d bytes, mode %o, time %d", len(data), hdr.Mode, hdr.ModTime.Unix())
			}
		}
	}
	if diff := cmp.Diff([]string{"usr/", "usr/bin/", "usr/bin/hello"}, entries); diff != "" {
		t.Errorf("layer entries (-want +got):\n%s", diff)
	}
	again, err := image.BinaryImage(bin, opts)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := img.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("digests %s and %s: the same binary and options must give the same image", d1, d2)
	}
}

func TestBinaryImageRefuses(t *testing.T) {
	dynamic, err := os.ReadFile("/bin/ls")
	if err != nil {
		t.Skip("no /bin/ls to try a dynamic executable with")
	}
	for _, tc := range []struct {
		name string
		bin  []byte
		path string
		want string
	}{
		{"a dynamic executable", dynamic, "/usr/bin/x", "not a static executable: it names a program interpreter"},
		{"not an executable", []byte("#!/bin/sh\necho\n"), "/usr/bin/x", "not a static executable: not an ELF file"},
		{"a relative path", dynamic, "usr/bin/x", `path "usr/bin/x": want a clean absolute file path`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := image.BinaryImage(tc.bin, image.BinaryOptions{Path: tc.path})
			if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
				t.Errorf("BinaryImage: %v, want %q", err, tc.want)
			}
			var se *image.StaticError
			if tc.path[0] == '/' && !errors.As(err, &se) {
				t.Errorf("BinaryImage: %T, want a *StaticError", err)
			}
		})
	}
}
