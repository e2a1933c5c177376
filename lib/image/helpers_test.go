package image_test

import (
	"archive/tar"
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// entry is one crafted tar entry. Typeflag 0 means a regular file.
type entry struct {
	name     string
	typeflag byte
	body     string
	link     string
}

func file(name, body string) entry   { return entry{name: name, typeflag: tar.TypeReg, body: body} }
func dirEntry(name string) entry     { return entry{name: name, typeflag: tar.TypeDir} }
func symlink(name, to string) entry  { return entry{name: name, typeflag: tar.TypeSymlink, link: to} }
func hardlink(name, to string) entry { return entry{name: name, typeflag: tar.TypeLink, link: to} }

// tarOf writes entries as a tar, names exactly as given (hostile ones too).
func tarOf(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Typeflag: e.typeflag, Linkname: e.link, Mode: 0o644, Format: tar.FormatPAX}
		if e.typeflag == tar.TypeReg {
			hdr.Size = int64(len(e.body))
		}
		if e.typeflag == tar.TypeDir {
			hdr.Mode = 0o755
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatalf("tar header %q: %v", e.name, err)
		}
		if e.typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// layerOf returns a gzipped layer holding entries.
func layerOf(t testing.TB, entries ...entry) v1.Layer {
	t.Helper()
	data := tarOf(t, entries...)
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// imageOf returns an image with one layer per entry list, bottom first.
func imageOf(t testing.TB, layers ...[]entry) v1.Image {
	t.Helper()
	var ls []v1.Layer
	for _, es := range layers {
		ls = append(ls, layerOf(t, es...))
	}
	img, err := mutate.AppendLayers(empty.Image, ls...)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// contents returns every regular file of fsys with its content.
func contents(t testing.TB, fsys fs.FS) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
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

// payloadFS is a small payload.
func payloadFS() fstest.MapFS {
	return fstest.MapFS{
		"manifests/0000_00_cvo_ns.yaml":                 {Data: []byte("kind: Namespace\n")},
		"release-manifests/0000_50_x_b.yaml":            {Data: []byte("b\n")},
		"release-manifests/0000_50_x_a.yaml":            {Data: []byte("a\n")},
		"release-manifests/release-metadata":            {Data: []byte("{}\n")},
		"release-manifests/sub/nested.yaml":             {Data: []byte("nested\n")},
		"SOURCES.tsv":                                   {Data: []byte("not part of the image\n")},
		"release-manifests/0000_90_x_zz-last-file.yaml": {Data: []byte("z\n")},
	}
}

// writeFile writes data to a new file under t's temp dir.
func writeFile(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// layerOfOpener returns a layer over ready-made (compressed or not) bytes.
func layerOfOpener(t testing.TB, data []byte) v1.Layer {
	t.Helper()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// imageWithLayers returns an image of the given layers, bottom first.
func imageWithLayers(t testing.TB, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	return img
}
