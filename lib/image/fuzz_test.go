package image_test

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/payload-apply/payload-apply/internal/realpayload"
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
	// A layer of some real payload files.
	var real []entry
	for _, rf := range realpayload.Sample(f, 6, 8<<10) {
		real = append(real, file(rf.Path, string(rf.Data)))
	}
	f.Add(tarOf(f, real...))
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

// FuzzLoadArchive loads fuzzed image archives (an OCI archive and a
// docker-archive of part of the real payload as seeds) from a file. It must
// not panic; errors start with the archive's path; what it accepts is
// within the payload directories and the limits.
func FuzzLoadArchive(f *testing.F) {
	payload := fstest.MapFS{"release-manifests/0000_50_x_a.yaml": {Data: []byte("kind: ConfigMap\n")}}
	for _, file := range realpayload.Sample(f, 6, 8<<10) {
		payload[file.Path] = &fstest.MapFile{Data: file.Data}
	}
	opts := image.LoadOptions{MaxFiles: 1000, MaxTotalSize: 4 << 20, MaxFileSize: 64 << 10, MaxPayloadSize: 1 << 20}
	for _, format := range image.Formats() {
		img, err := image.Build(payload, image.BuildOptions{Version: "4.22.0", Format: format})
		if err != nil {
			f.Fatal(err)
		}
		dst := filepath.Join(f.TempDir(), "image")
		if err := image.Write(img, dst, image.WriteOptions{Format: format}); err != nil {
			f.Fatal(err)
		}
		if format == image.FormatOCI {
			dst = tarDir(f, dst) // an OCI archive, as skopeo's oci-archive: writes
		}
		if _, err := image.Load(dst, opts); err != nil {
			f.Fatalf("the %s seed does not load: %v", format, err)
		}
		data, err := os.ReadFile(dst)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add(tarOf(f, file("manifest.json", `[{"Config":"c.json","Layers":["../../etc/passwd"]}]`), file("c.json", "{}")))
	f.Add(tarOf(f, file("oci-layout", `{"imageLayoutVersion":"1.0.0"}`), file("index.json", `{"schemaVersion":2,"manifests":[]}`)))

	archive := filepath.Join(f.TempDir(), "fuzz.tar")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(archive, data, 0o644); err != nil {
			t.Fatal(err)
		}
		fsys, err := image.Load(archive, opts)
		if err != nil {
			if !strings.HasPrefix(err.Error(), archive+": ") {
				t.Fatalf("error does not start with the archive's path: %v", err)
			}
			return
		}
		checkLoaded(t, fsys, opts)
	})
}

// FuzzOpenLayout loads an OCI image layout directory whose index.json and
// image manifest are fuzzed (those of a layout of part of the real payload
// as seeds; its config and layer blobs stay in place). In index.json,
// "sha256:MANIFEST" and the size -7 stand for the fuzzed manifest's digest
// and size, so that mutations reach the manifest too. It must not panic;
// errors start with the layout's path; what loads is within the payload
// directories and the limits.
func FuzzOpenLayout(f *testing.F) {
	payload := fstest.MapFS{"release-manifests/0000_50_x_a.yaml": {Data: []byte("kind: ConfigMap\n")}}
	for _, file := range realpayload.Sample(f, 6, 8<<10) {
		payload[file.Path] = &fstest.MapFile{Data: file.Data}
	}
	img, err := image.Build(payload, image.BuildOptions{Version: "4.22.0"})
	if err != nil {
		f.Fatal(err)
	}
	dir := filepath.Join(f.TempDir(), "layout")
	if err := image.Write(img, dir, image.WriteOptions{}); err != nil {
		f.Fatal(err)
	}
	indexData, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		f.Fatal(err)
	}
	var index map[string]any
	if err := json.Unmarshal(indexData, &index); err != nil {
		f.Fatal(err)
	}
	desc := index["manifests"].([]any)[0].(map[string]any)
	digest := desc["digest"].(string)
	manifest, err := os.ReadFile(filepath.Join(dir, "blobs", "sha256", strings.TrimPrefix(digest, "sha256:")))
	if err != nil {
		f.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "blobs", "sha256", strings.TrimPrefix(digest, "sha256:"))); err != nil {
		f.Fatal(err)
	}
	desc["digest"], desc["size"] = "sha256:MANIFEST", -7
	template, err := json.Marshal(index)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(template, manifest)
	f.Add([]byte(`{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.index.v1+json","digest":"sha256:MANIFEST","size":-7}]}`), template)

	opts := image.LoadOptions{MaxFiles: 1000, MaxTotalSize: 4 << 20, MaxFileSize: 64 << 10, MaxPayloadSize: 1 << 20}
	// load writes index.json and the manifest blob, loads the layout and
	// removes the blob again.
	load := func(tb testing.TB, index, manifest []byte) (*image.FS, error) {
		sum := sha256.Sum256(manifest)
		hexSum := hex.EncodeToString(sum[:])
		index = bytes.ReplaceAll(index, []byte(`"sha256:MANIFEST"`), []byte(`"sha256:`+hexSum+`"`))
		index = bytes.ReplaceAll(index, []byte(`-7`), []byte(strconv.Itoa(len(manifest))))
		blob := filepath.Join(dir, "blobs", "sha256", hexSum)
		if err := os.WriteFile(filepath.Join(dir, "index.json"), index, 0o644); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(blob, manifest, 0o644); err != nil {
			tb.Fatal(err)
		}
		defer os.Remove(blob)
		return image.Load(dir, opts)
	}
	if _, err := load(f, template, manifest); err != nil {
		f.Fatalf("the seed layout does not load: %v", err)
	}
	f.Fuzz(func(t *testing.T, index, manifest []byte) {
		fsys, err := load(t, index, manifest)
		if err != nil {
			if !strings.HasPrefix(err.Error(), dir+": ") {
				t.Fatalf("error does not start with the layout's path: %v", err)
			}
			return
		}
		checkLoaded(t, fsys, opts)
	})
}

// checkLoaded checks a loaded payload: paths within the payload
// directories, files and the whole within opts' limits.
func checkLoaded(t *testing.T, fsys fs.FS, opts image.LoadOptions) {
	t.Helper()
	var total int64
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != "." && p != "manifests" && p != "release-manifests" &&
			!strings.HasPrefix(p, "manifests/") && !strings.HasPrefix(p, "release-manifests/") {
			t.Errorf("path %q outside the payload directories", p)
		}
		if d.Type().IsRegular() {
			data, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			if int64(len(data)) > opts.MaxFileSize {
				t.Errorf("%s: %d bytes, above the file limit", p, len(data))
			}
			total += int64(len(data))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if total > opts.MaxPayloadSize {
		t.Fatalf("%d bytes of payload, above the limit", total)
	}
}
