package image_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/payload-apply/payload-apply/lib/image"
)

// FuzzFlatten feeds arbitrary bytes to the layer reader as one layer: it
// must never panic, and whatever it accepts must stay inside the payload
// directories, with valid paths.
func FuzzFlatten(f *testing.F) {
	seeds := [][]entry{
		{file("release-manifests/a.yaml", "a"), symlink("release-manifests/b.yaml", "a.yaml")},
		{file("../evil", "x")},
		{symlink("release-manifests", "/etc"), file("release-manifests/passwd", "x")},
		{file("release-manifests/.wh..wh..opq", ""), file("manifests/.wh.x", "")},
		{hardlink("release-manifests/h", "release-manifests/a.yaml")},
		{{name: "release-manifests/dev", typeflag: tar.TypeChar}},
		{symlink("release-manifests/a", "b"), symlink("release-manifests/b", "a")},
	}
	for _, s := range seeds {
		f.Add(tarOf(f, s...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		img := imageWithLayers(t, rawLayer(t, data))
		fsys, err := image.Flatten(img, image.LoadOptions{MaxFiles: 1000, MaxTotalSize: 1 << 20})
		if err != nil {
			var re *image.RefusedError
			if errors.As(err, &re) && re.Reason == nil {
				t.Fatalf("refusal without a reason: %v", err)
			}
			return
		}
		err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !fs.ValidPath(p) {
				t.Errorf("invalid path %q", p)
			}
			if p != "." && p != "manifests" && p != "release-manifests" &&
				!strings.HasPrefix(p, "manifests/") && !strings.HasPrefix(p, "release-manifests/") {
				t.Errorf("path %q outside the payload directories", p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// rawLayer is a layer whose uncompressed stream is data as it is, so the
// fuzzer reaches the layer reader rather than a decompressor.
func rawLayer(t *testing.T, data []byte) v1.Layer {
	t.Helper()
	l, err := partial.UncompressedToLayer(&uncompressed{data: data})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

type uncompressed struct{ data []byte }

func (u *uncompressed) DiffID() (v1.Hash, error) {
	h, _, err := v1.SHA256(bytes.NewReader(u.data))
	return h, err
}
func (u *uncompressed) Uncompressed() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(u.data)), nil
}
func (u *uncompressed) MediaType() (types.MediaType, error) { return types.OCIUncompressedLayer, nil }
