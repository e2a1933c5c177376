package image_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/payload-apply/payload-apply/lib/image"
)

func TestFlattenLayers(t *testing.T) {
	tests := []struct {
		name   string
		layers [][]entry
		want   map[string]string
	}{
		{
			name: "upper layers replace files",
			layers: [][]entry{
				{file("release-manifests/a.yaml", "old"), file("release-manifests/b.yaml", "b")},
				{file("release-manifests/a.yaml", "new")},
			},
			want: map[string]string{"release-manifests/a.yaml": "new", "release-manifests/b.yaml": "b"},
		},
		{
			name: "a whiteout deletes a file of the layers below",
			layers: [][]entry{
				{file("release-manifests/a.yaml", "a"), file("release-manifests/b.yaml", "b")},
				{file("release-manifests/.wh.a.yaml", "")},
			},
			want: map[string]string{"release-manifests/b.yaml": "b"},
		},
		{
			name: "a whiteout deletes a directory and what is below it",
			layers: [][]entry{
				{file("manifests/a.yaml", "a"), file("release-manifests/b.yaml", "b")},
				{file(".wh.manifests", "")},
			},
			want: map[string]string{"release-manifests/b.yaml": "b"},
		},
		{
			name: "an opaque directory hides the layers below, not its own layer",
			layers: [][]entry{
				{file("release-manifests/stale.yaml", "stale"), file("manifests/kept.yaml", "kept")},
				{dirEntry("release-manifests/"), file("release-manifests/.wh..wh..opq", ""), file("release-manifests/fresh.yaml", "fresh")},
			},
			want: map[string]string{"release-manifests/fresh.yaml": "fresh", "manifests/kept.yaml": "kept"},
		},
		{
			name: "the opaque marker may follow the layer's own files",
			layers: [][]entry{
				{file("release-manifests/stale.yaml", "stale")},
				{file("release-manifests/fresh.yaml", "fresh"), file("release-manifests/.wh..wh..opq", "")},
			},
			want: map[string]string{"release-manifests/fresh.yaml": "fresh"},
		},
		{
			name: "a file replaces a directory",
			layers: [][]entry{
				{file("release-manifests/x/a.yaml", "a")},
				{file("release-manifests/x", "now a file")},
			},
			want: map[string]string{"release-manifests/x": "now a file"},
		},
		{
			name: "links resolve to their targets, also from outside the payload",
			layers: [][]entry{
				{file("opt/shared/crd.yaml", "crd"), dirEntry("opt/dir/"), file("opt/dir/in-dir.yaml", "in dir")},
				{
					symlink("release-manifests/relative.yaml", "../opt/shared/crd.yaml"),
					symlink("release-manifests/absolute.yaml", "/opt/shared/crd.yaml"),
					hardlink("release-manifests/hard.yaml", "opt/shared/crd.yaml"),
					symlink("release-manifests/linked-dir", "/opt/dir"),
					file("release-manifests/plain.yaml", "plain"),
				},
			},
			want: map[string]string{
				"release-manifests/absolute.yaml":          "crd",
				"release-manifests/hard.yaml":              "crd",
				"release-manifests/linked-dir/in-dir.yaml": "in dir",
				"release-manifests/plain.yaml":             "plain",
				"release-manifests/relative.yaml":          "crd",
			},
		},
		{
			name: "the payload directory itself may be a link",
			layers: [][]entry{
				{file("payload/release-manifests/a.yaml", "a"), symlink("release-manifests", "payload/release-manifests")},
			},
			want: map[string]string{"release-manifests/a.yaml": "a"},
		},
		{
			name: "./ prefixes and a root entry are fine",
			layers: [][]entry{
				{dirEntry("./"), dirEntry("./release-manifests/"), file("./release-manifests/a.yaml", "a")},
			},
			want: map[string]string{"release-manifests/a.yaml": "a"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys, err := image.Flatten(imageOf(t, tc.layers...), image.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, contents(t, fsys)); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFlattenRefuses(t *testing.T) {
	big := strings.Repeat("x", 100)
	tests := []struct {
		name   string
		layers [][]entry
		opts   image.LoadOptions
		reason error
		want   string // the error message
	}{
		{
			name:   "dot-dot path",
			layers: [][]entry{{file("../../etc/cron.d/evil", "x")}},
			reason: image.ErrUnsafePath,
			want:   `layer 0: entry "../../etc/cron.d/evil": refused: path leaves the image root: ".." in path`,
		},
		{
			name:   "dot-dot inside a path",
			layers: [][]entry{{file("release-manifests/../../evil.yaml", "x")}},
			reason: image.ErrUnsafePath,
			want:   `layer 0: entry "release-manifests/../../evil.yaml": refused: path leaves the image root: ".." in path`,
		},
		{
			name:   "absolute path",
			layers: [][]entry{{file("/etc/passwd", "x")}},
			reason: image.ErrUnsafePath,
			want:   `layer 0: entry "/etc/passwd": refused: path leaves the image root: absolute path`,
		},
		{
			name:   "whiteout of dot-dot",
			layers: [][]entry{{file("release-manifests/.wh...", "")}},
			reason: image.ErrUnsafePath,
			want:   `layer 0: entry "release-manifests/.wh...": refused: path leaves the image root: whiteout of ".."`,
		},
		{
			name:   "symlink climbing out of the root",
			layers: [][]entry{{file("release-manifests/a.yaml", "a")}, {symlink("release-manifests/evil.yaml", "../../../etc/shadow")}},
			reason: image.ErrUnsafeLink,
			want:   `layer 1: entry "release-manifests/evil.yaml": refused: link leaves the image root: symbolic link to "../../../etc/shadow"`,
		},
		{
			name:   "hard link climbing out of the root",
			layers: [][]entry{{hardlink("release-manifests/evil.yaml", "../etc/shadow")}},
			reason: image.ErrUnsafeLink,
			want:   `layer 0: entry "release-manifests/evil.yaml": refused: link leaves the image root: hard link to "../etc/shadow"`,
		},
		{
			name:   "hard link to nothing",
			layers: [][]entry{{hardlink("release-manifests/evil.yaml", "etc/shadow")}},
			reason: image.ErrUnsafeLink,
			want:   `layer 0: entry "release-manifests/evil.yaml": refused: link leaves the image root: hard link to "etc/shadow", which is not an earlier regular file`,
		},
		{
			name:   "entry written through a symlink",
			layers: [][]entry{{symlink("release-manifests", "/etc"), file("release-manifests/passwd", "x")}},
			reason: image.ErrUnsafeLink,
			want:   `layer 0: entry "release-manifests/passwd": refused: link leaves the image root: below symbolic link "release-manifests"`,
		},
		{
			name:   "payload link to a host path that is not in the image",
			layers: [][]entry{{symlink("release-manifests/passwd.yaml", "/etc/passwd")}},
			reason: image.ErrUnsafeLink,
			want:   `entry "release-manifests/passwd.yaml": refused: link leaves the image root: does not resolve inside the image`,
		},
		{
			name:   "symlink loop",
			layers: [][]entry{{symlink("release-manifests/a.yaml", "b.yaml"), symlink("release-manifests/b.yaml", "a.yaml")}},
			reason: image.ErrUnsafeLink,
			want:   `entry "release-manifests/a.yaml": refused: link leaves the image root: more than 40 links on the way to "release-manifests/a.yaml" (a loop?)`,
		},
		{
			name:   "directory loop",
			layers: [][]entry{{file("release-manifests/a.yaml", "a"), symlink("release-manifests/again", ".")}},
			reason: image.ErrUnsafeLink,
			want:   `entry "release-manifests/again": refused: link leaves the image root: directory loop through "release-manifests"`,
		},
		{
			name:   "character device",
			layers: [][]entry{{{name: "dev/mem", typeflag: tar.TypeChar}}},
			reason: image.ErrSpecialFile,
			want:   `layer 0: entry "dev/mem": refused: special file: character device`,
		},
		{
			name:   "block device",
			layers: [][]entry{{{name: "release-manifests/sda", typeflag: tar.TypeBlock}}},
			reason: image.ErrSpecialFile,
			want:   `layer 0: entry "release-manifests/sda": refused: special file: block device`,
		},
		{
			name:   "FIFO",
			layers: [][]entry{{{name: "release-manifests/pipe", typeflag: tar.TypeFifo}}},
			reason: image.ErrSpecialFile,
			want:   `layer 0: entry "release-manifests/pipe": refused: special file: FIFO`,
		},
		{
			name:   "entry above the entry limit",
			layers: [][]entry{{file("usr/bin/huge", big)}},
			opts:   image.LoadOptions{MaxEntrySize: 99},
			reason: image.ErrTooLarge,
			want:   `layer 0: entry "usr/bin/huge": refused: size limit exceeded: 100 bytes, limit 99 per entry`,
		},
		{
			name:   "layers above the total limit",
			layers: [][]entry{{file("a", big)}, {file("b", big)}},
			opts:   image.LoadOptions{MaxTotalSize: 150},
			reason: image.ErrTooLarge,
			want:   `layer 1: entry "b": refused: size limit exceeded: layers hold more than 150 bytes in all`,
		},
		{
			name:   "payload file above the file limit",
			layers: [][]entry{{file("release-manifests/huge.yaml", big)}},
			opts:   image.LoadOptions{MaxFileSize: 99},
			reason: image.ErrTooLarge,
			want:   `layer 0: entry "release-manifests/huge.yaml": refused: size limit exceeded: payload file of 100 bytes, limit 99`,
		},
		{
			name:   "payload above the payload limit",
			layers: [][]entry{{file("release-manifests/a.yaml", big), file("manifests/b.yaml", big)}},
			opts:   image.LoadOptions{MaxPayloadSize: 150},
			reason: image.ErrTooLarge,
			want:   `layer 0: entry "manifests/b.yaml": refused: size limit exceeded: payload files above 150 bytes in all`,
		},
		{
			name:   "too many files",
			layers: [][]entry{{file("a", ""), file("b", "")}, {file("c", ""), file("d", "")}},
			opts:   image.LoadOptions{MaxFiles: 3},
			reason: image.ErrTooManyFiles,
			want:   `layer 1: entry "d": refused: too many files: more than 3 entries`,
		},
		{
			name:   "too many layers",
			layers: [][]entry{{file("a", "")}, {file("b", "")}, {file("c", "")}},
			opts:   image.LoadOptions{MaxLayers: 2},
			reason: image.ErrTooManyFiles,
			want:   `refused: too many files: 3 layers, limit 2`,
		},
		{
			name: "links multiplying a directory past the file limit",
			layers: [][]entry{{
				file("opt/d/1", ""), file("opt/d/2", ""),
				symlink("release-manifests/a", "/opt/d"), symlink("release-manifests/b", "/opt/d"), symlink("release-manifests/c", "/opt/d"),
			}},
			opts:   image.LoadOptions{MaxFiles: 8},
			reason: image.ErrTooManyFiles,
			want:   `entry "release-manifests/c/1": refused: too many files: payload directories expand to more than 8 files`,
		},
		{
			name: "links multiplying directories without files",
			layers: [][]entry{{
				dirEntry("opt/d0/"),
				symlink("opt/d1/a", "/opt/d0"), symlink("opt/d1/b", "/opt/d0"),
				symlink("opt/d2/a", "/opt/d1"), symlink("opt/d2/b", "/opt/d1"),
				symlink("opt/d3/a", "/opt/d2"), symlink("opt/d3/b", "/opt/d2"),
				symlink("release-manifests", "/opt/d3"),
			}},
			opts:   image.LoadOptions{MaxFiles: 10},
			reason: image.ErrTooManyFiles,
			want:   `entry "release-manifests/b/a/a": refused: too many files: payload directories expand to more than 10 files`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := image.Flatten(imageOf(t, tc.layers...), tc.opts)
			if err == nil {
				t.Fatal("no error: the archive was accepted")
			}
			if !errors.Is(err, tc.reason) {
				t.Errorf("error %v is not %v", err, tc.reason)
			}
			var re *image.RefusedError
			if !errors.As(err, &re) {
				t.Errorf("error %v is not a *RefusedError", err)
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFlattenStopsGzipBombs(t *testing.T) {
	// One declared 64 MiB entry of zeros compresses to ~64 KiB; with the
	// total limit at 1 MiB it is refused by its header, before it is read.
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	const size = 64 << 20
	if err := tw.WriteHeader(&tar.Header{Name: "zeros", Typeflag: tar.TypeReg, Size: size, Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	tw.Close()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(raw.Bytes())
	zw.Close()
	l := layerFromBytes(t, gz.Bytes())
	img := imageWithLayers(t, l)
	_, err := image.Flatten(img, image.LoadOptions{MaxTotalSize: 1 << 20})
	if !errors.Is(err, image.ErrTooLarge) {
		t.Fatalf("error %v, want ErrTooLarge", err)
	}
}

func TestOpenRefuses(t *testing.T) {
	tests := []struct {
		name   string
		data   func(t *testing.T) []byte
		reason error // nil: a plain error
		want   string
	}{
		{
			name:   "dot-dot entry in the outer tarball",
			data:   func(t *testing.T) []byte { return tarOf(t, file("manifest.json", "[]"), file("../evil", "x")) },
			reason: image.ErrUnsafePath,
			want:   `refused: path leaves the image root: ".." in path`,
		},
		{
			name:   "absolute entry in the outer tarball",
			data:   func(t *testing.T) []byte { return tarOf(t, file("/manifest.json", "[]")) },
			reason: image.ErrUnsafePath,
			want:   `entry "/manifest.json": refused: path leaves the image root: absolute path`,
		},
		{
			name: "escaping link in the outer tarball",
			data: func(t *testing.T) []byte {
				return tarOf(t, file("manifest.json", "[]"), symlink("layer.tar", "../../etc/shadow"))
			},
			reason: image.ErrUnsafeLink,
			want:   `entry "layer.tar": refused: link leaves the image root: link to "../../etc/shadow"`,
		},
		{
			name: "device in the outer tarball",
			data: func(t *testing.T) []byte {
				return tarOf(t, file("manifest.json", "[]"), entry{name: "null", typeflag: tar.TypeChar})
			},
			reason: image.ErrSpecialFile,
			want:   `entry "null": refused: special file: entry type "3"`,
		},
		{
			name: "oversized manifest.json",
			data: func(t *testing.T) []byte {
				return tarOf(t, file("manifest.json", strings.Repeat(" ", 9<<20)))
			},
			reason: image.ErrTooLarge,
			want:   `entry "manifest.json": refused: size limit exceeded: 9437184 bytes, limit 8388608 for metadata`,
		},
		{
			name: "gzip-compressed tarball",
			data: func(t *testing.T) []byte {
				var b bytes.Buffer
				zw := gzip.NewWriter(&b)
				zw.Write(tarOf(t, file("manifest.json", "[]")))
				zw.Close()
				return b.Bytes()
			},
			want: "a gzip-compressed file: decompress it first (gunzip), then give the tarball",
		},
		{
			name: "a tar that is no image",
			data: func(t *testing.T) []byte { return tarOf(t, file("hello.txt", "hi")) },
			want: "not an image tarball: it has neither manifest.json (docker-archive) nor oci-layout and index.json (OCI archive)",
		},
		{
			name: "not a tar at all",
			data: func(t *testing.T) []byte {
				return []byte("just some text, long enough to be read as a tar header block? no.")
			},
			want: "not an image tarball",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, "image.tar", tc.data(t))
			_, err := image.Load(p, image.LoadOptions{})
			if err == nil {
				t.Fatal("no error: the tarball was accepted")
			}
			if tc.reason != nil && !errors.Is(err, tc.reason) {
				t.Errorf("error %v is not %v", err, tc.reason)
			}
			if !strings.HasPrefix(err.Error(), p+": ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q: want %q after the path", err, tc.want)
			}
		})
	}
}

func TestOpenLayoutChecksDigests(t *testing.T) {
	img, err := image.Build(payloadFS(), image.BuildOptions{Version: "4.22.0"})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "layout")
	if err := image.Write(img, out, image.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	layers, _ := img.Layers()
	d, _ := layers[0].Digest()
	blob := filepath.Join(out, "blobs", d.Algorithm, d.Hex)
	// Swap the layer for another, hostile one of the same name.
	evil := layerBytes(t, file("release-manifests/evil.yaml", "tampered"))
	if err := os.WriteFile(blob, evil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = image.Load(out, image.LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "content has digest") {
		t.Errorf("error %v, want a digest mismatch", err)
	}
}

func TestOpenLayoutPicksOneImage(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "oci-layout"), []byte(`{"imageLayoutVersion":"1.0.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	index := `{"schemaVersion":2,"manifests":[
	 {"mediaType":"application/vnd.oci.image.manifest.v1+json","size":1,"digest":"sha256:` + strings.Repeat("a", 64) + `","annotations":{"org.opencontainers.image.ref.name":"one"}},
	 {"mediaType":"application/vnd.oci.image.manifest.v1+json","size":1,"digest":"sha256:` + strings.Repeat("b", 64) + `","annotations":{"org.opencontainers.image.ref.name":"two"}}]}`
	if err := os.WriteFile(filepath.Join(dir, "index.json"), []byte(index), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := image.Open(dir, image.LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "index.json: names 2 images (one, two): want one") {
		t.Errorf("error %v, want a refusal naming both images", err)
	}
}

func TestDefaultLoadOptions(t *testing.T) {
	got := image.DefaultLoadOptions()
	want := image.LoadOptions{
		MaxLayers:      128,
		MaxFiles:       200_000,
		MaxEntrySize:   4 << 30,
		MaxTotalSize:   16 << 30,
		MaxFileSize:    32 << 20,
		MaxPayloadSize: 512 << 20,
		Keep:           []string{"manifests", "release-manifests"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DefaultLoadOptions (-want +got):\n%s", diff)
	}
}

func layerBytes(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(tarOf(t, entries...))
	zw.Close()
	return gz.Bytes()
}

func layerFromBytes(t *testing.T, gz []byte) v1.Layer {
	t.Helper()
	return layerOfOpener(t, gz)
}

// TestOpenLayoutHostileMetadata: digests of every algorithm are verified
// or refused, indexes nest no deeper than MaxIndexDepth, and an index
// where a manifest belongs (or the reverse) is named as such.
func TestOpenLayoutHostileMetadata(t *testing.T) {
	img, err := image.Build(payloadFS(), image.BuildOptions{Version: "4.22.0"})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := img.RawManifest()
	digest, _ := img.Digest()
	const ociManifest, ociIndex = "application/vnd.oci.image.manifest.v1+json", "application/vnd.oci.image.index.v1+json"
	// blob writes data as a blob of the layout named by alg.
	blob := func(t *testing.T, dir, alg string, data []byte) v1.Hash {
		d := v1.Hash{Algorithm: alg, Hex: strings.Repeat("0", 96)} // sha384: nothing hashes it
		if h, err := v1.Hasher(alg); err == nil {
			h.Write(data)
			d.Hex = fmt.Sprintf("%x", h.Sum(nil))
		}
		p := filepath.Join(dir, "blobs", alg, d.Hex)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return d
	}
	desc := func(mt string, d v1.Hash, n int) string {
		return fmt.Sprintf(`{"mediaType":%q,"digest":%q,"size":%d}`, mt, d, n)
	}
	index := func(t *testing.T, dir string, descs ...string) {
		if err := os.WriteFile(filepath.Join(dir, "index.json"), []byte(`{"schemaVersion":2,"manifests":[`+strings.Join(descs, ",")+`]}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// withConfig writes a manifest whose config is forged under alg and
	// returns its descriptor.
	withConfig := func(t *testing.T, dir, alg string) string {
		var m map[string]any
		json.Unmarshal(raw, &m)
		forged := []byte(`{"architecture":"amd64","os":"linux","config":{"Labels":{"io.openshift.release":"6.6.6"}}}`)
		d := blob(t, dir, alg, forged)
		if alg == "sha512" {
			os.Rename(filepath.Join(dir, "blobs", alg, d.Hex), filepath.Join(dir, "blobs", alg, strings.Repeat("e", 128)))
			d.Hex = strings.Repeat("e", 128)
		}
		m["config"] = map[string]any{"mediaType": "application/vnd.oci.image.config.v1+json", "digest": d.String(), "size": len(forged)}
		data, _ := json.Marshal(m)
		return desc(ociManifest, blob(t, dir, "sha256", data), len(data))
	}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string
	}{
		{"config named by sha512, content another", func(t *testing.T, dir string) { index(t, dir, withConfig(t, dir, "sha512")) }, "content has digest sha512:"},
		{"config named by an algorithm nothing verifies", func(t *testing.T, dir string) { index(t, dir, withConfig(t, dir, "sha384")) }, `unsupported hash: "sha384"`},
		{"an image manifest named as an index", func(t *testing.T, dir string) { index(t, dir, desc(ociIndex, digest, len(raw))) },
			"an image manifest (it has a config and layers) where an image index was expected (named " + ociIndex + ")"},
		{"an index named as an image manifest", func(t *testing.T, dir string) {
			inner := []byte(`{"schemaVersion":2,"mediaType":"` + ociIndex + `","manifests":[` + desc(ociManifest, digest, len(raw)) + `]}`)
			index(t, dir, desc(ociManifest, blob(t, dir, "sha256", inner), len(inner)))
		}, "an image index (it lists manifests) where an image manifest was expected (named " + ociManifest + ")"},
		{"indexes nested beyond the limit", func(t *testing.T, dir string) {
			d := desc(ociManifest, digest, len(raw))
			for range image.MaxIndexDepth + 2 {
				inner := []byte(`{"schemaVersion":2,"manifests":[` + d + `]}`)
				d = desc(ociIndex, blob(t, dir, "sha256", inner), len(inner))
			}
			index(t, dir, d)
		}, "image indexes nested more than 4 deep (the index depth limit)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "layout")
			if err := image.Write(img, dir, image.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			tc.setup(t, dir)
			got, err := image.Open(dir, image.LoadOptions{})
			if err == nil {
				_, err = got.ConfigFile()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
