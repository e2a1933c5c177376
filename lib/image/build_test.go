package image_test

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"

	"github.com/payload-apply/payload-apply/lib/image"
)

func TestBuildLayer(t *testing.T) {
	img, err := image.Build(payloadFS(), image.BuildOptions{Version: "4.22.0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(img); err != nil {
		t.Fatalf("validate.Image: %v", err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%d layers, want 1", len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var got []string
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %o %d %d/%d %s", hdr.Name, hdr.Mode, hdr.ModTime.Unix(), hdr.Uid, hdr.Gid, hdr.Uname))
	}
	// Sorted, root-owned, epoch timestamps; SOURCES.tsv is not payload.
	want := []string{
		"manifests/ 755 0 0/0 ",
		"manifests/0000_00_cvo_ns.yaml 444 0 0/0 ",
		"release-manifests/ 755 0 0/0 ",
		"release-manifests/0000_50_x_a.yaml 444 0 0/0 ",
		"release-manifests/0000_50_x_b.yaml 444 0 0/0 ",
		"release-manifests/0000_90_x_zz-last-file.yaml 444 0 0/0 ",
		"release-manifests/release-metadata 444 0 0/0 ",
		"release-manifests/sub/ 755 0 0/0 ",
		"release-manifests/sub/nested.yaml 444 0 0/0 ",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("layer entries (-want +got):\n%s", diff)
	}
}

func TestBuildConfig(t *testing.T) {
	tests := []struct {
		name         string
		format       image.Format
		wantManifest types.MediaType
		wantLayer    types.MediaType
	}{
		{name: "oci", format: image.FormatOCI, wantManifest: types.OCIManifestSchema1, wantLayer: types.OCILayer},
		{name: "default is oci", wantManifest: types.OCIManifestSchema1, wantLayer: types.OCILayer},
		{name: "docker-archive", format: image.FormatDockerArchive, wantManifest: types.DockerManifestSchema2, wantLayer: types.DockerLayer},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			img, err := image.Build(payloadFS(), image.BuildOptions{Version: "4.22.0", Format: tc.format})
			if err != nil {
				t.Fatal(err)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("%s/%s created=%d labels=%v", cf.OS, cf.Architecture, cf.Created.Unix(), cf.Config.Labels)
			if diff := cmp.Diff("linux/amd64 created=0 labels=map[io.openshift.release:4.22.0]", got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
			m, err := img.Manifest()
			if err != nil {
				t.Fatal(err)
			}
			if m.MediaType != tc.wantManifest || m.Layers[0].MediaType != tc.wantLayer {
				t.Errorf("media types %s, %s; want %s, %s", m.MediaType, m.Layers[0].MediaType, tc.wantManifest, tc.wantLayer)
			}
		})
	}
}

func TestBuildReproducible(t *testing.T) {
	for _, format := range image.Formats() {
		t.Run(string(format), func(t *testing.T) {
			var digests, files []string
			for i := 0; i < 2; i++ {
				img, err := image.Build(payloadFS(), image.BuildOptions{Version: "4.22.0", Format: format})
				if err != nil {
					t.Fatal(err)
				}
				d, err := img.Digest()
				if err != nil {
					t.Fatal(err)
				}
				digests = append(digests, d.String())
				out := filepath.Join(t.TempDir(), "out")
				if err := image.Write(img, out, image.WriteOptions{Format: format, Tag: "4.22.0"}); err != nil {
					t.Fatal(err)
				}
				files = append(files, treeDigest(t, out))
			}
			if digests[0] != digests[1] {
				t.Errorf("image digests differ: %v", digests)
			}
			if files[0] != files[1] {
				t.Errorf("written outputs differ: %v", files)
			}
		})
	}
}

// treeDigest hashes a file, or every file of a directory with its path.
func treeDigest(t *testing.T, root string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		data, err := os.ReadFile(p)
		fmt.Fprintf(h, "%s %d\n", rel, len(data))
		h.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func TestWriteAndLoad(t *testing.T) {
	want := contents(t, payloadFS())
	delete(want, "SOURCES.tsv")
	tests := []struct {
		name   string
		format image.Format
		// archive turns the written layout into an OCI archive (a tar of it).
		archive bool
	}{
		{name: "oci layout", format: image.FormatOCI},
		{name: "docker-archive", format: image.FormatDockerArchive},
		{name: "oci archive", format: image.FormatOCI, archive: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			img, err := image.Build(payloadFS(), image.BuildOptions{Version: "4.22.0", Format: tc.format})
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "out")
			if err := image.Write(img, out, image.WriteOptions{Format: tc.format, Tag: "4.22.0"}); err != nil {
				t.Fatal(err)
			}
			if tc.archive {
				out = tarDir(t, out)
			}
			fsys, err := image.Load(out, image.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, contents(t, fsys)); diff != "" {
				t.Errorf("loaded files (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(map[string]string{image.ReleaseLabel: "4.22.0"}, fsys.Labels()); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if tc.format == image.FormatOCI {
				d, _ := img.Digest()
				if fsys.Digest() != d {
					t.Errorf("loaded digest %s, built %s", fsys.Digest(), d)
				}
			}
		})
	}
}

// tarDir packs a directory into a tar next to it.
func tarDir(t testing.TB, dir string) string {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel) + "/", Typeflag: tar.TypeDir, Mode: 0o755})
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(data))}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return writeFile(t, "archive.tar", b.Bytes())
}

func TestBuildOnBase(t *testing.T) {
	base := imageOf(t, []entry{
		file("usr/bin/cluster-version-operator", "binary"),
		file("manifests/0000_00_cvo_deployment.yaml", "from the base\n"),
		file("release-manifests/0000_50_stale_a.yaml", "stale\n"),
	})
	baseDigest, err := base.Digest()
	if err != nil {
		t.Fatal(err)
	}
	noCVO := payloadFS()
	delete(noCVO, "manifests/0000_00_cvo_ns.yaml")
	img, err := image.Build(noCVO, image.BuildOptions{Version: "4.22.0", Base: base})
	if err != nil {
		t.Fatal(err)
	}
	layers, _ := img.Layers()
	if len(layers) != 2 {
		t.Errorf("%d layers, want the base's and the payload's", len(layers))
	}
	fsys, err := image.Flatten(img, image.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The base's manifests/ shows through (the payload has none), its
	// release-manifests/ does not (the payload layer marks it opaque).
	want := map[string]string{
		"manifests/0000_00_cvo_deployment.yaml":         "from the base\n",
		"release-manifests/0000_50_x_a.yaml":            "a\n",
		"release-manifests/0000_50_x_b.yaml":            "b\n",
		"release-manifests/0000_90_x_zz-last-file.yaml": "z\n",
		"release-manifests/release-metadata":            "{}\n",
		"release-manifests/sub/nested.yaml":             "nested\n",
	}
	if diff := cmp.Diff(want, contents(t, fsys)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	wantLabels := map[string]string{image.ReleaseLabel: "4.22.0", image.BaseImageDigestLabel: baseDigest.String()}
	if diff := cmp.Diff(wantLabels, fsys.Labels()); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
}

func TestBuildOnRandomBase(t *testing.T) {
	base, err := random.Image(1024, 3)
	if err != nil {
		t.Fatal(err)
	}
	img, err := image.Build(payloadFS(), image.BuildOptions{Version: "4.22.0", Base: base})
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(img); err != nil {
		t.Fatalf("validate.Image: %v", err)
	}
	layers, _ := img.Layers()
	baseLayers, _ := base.Layers()
	for i, l := range baseLayers {
		a, _ := l.Digest()
		b, _ := layers[i].Digest()
		if a != b {
			t.Errorf("layer %d: %s, want the base's %s first", i, b, a)
		}
	}
	if len(layers) != len(baseLayers)+1 {
		t.Errorf("%d layers, want %d", len(layers), len(baseLayers)+1)
	}
}

func TestBuildErrors(t *testing.T) {
	tests := []struct {
		name    string
		payload fs.FS
		opts    image.BuildOptions
		want    string
	}{
		{name: "no version", payload: payloadFS(), want: "build image: version is required"},
		{name: "no payload directories", payload: contentsFS("README", "x"), opts: image.BuildOptions{Version: "1.0.0"},
			want: "build image: payload has neither manifests/ nor release-manifests/"},
		{name: "release-manifests is a file", payload: contentsFS("release-manifests", "x"), opts: image.BuildOptions{Version: "1.0.0"},
			want: "build image: release-manifests: not a directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := image.Build(tc.payload, tc.opts)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func contentsFS(kv ...string) fs.FS {
	m := fstest.MapFS{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = &fstest.MapFile{Data: []byte(kv[i+1])}
	}
	return m
}

func TestWriteRefusesToClobber(t *testing.T) {
	img, err := image.Build(payloadFS(), image.BuildOptions{Version: "4.22.0"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "precious"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = image.Write(img, dir, image.WriteOptions{})
	if err == nil || !strings.Contains(err.Error(), "exists and is neither empty nor an OCI layout") {
		t.Errorf("error %v, want a refusal", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "precious")); err != nil {
		t.Errorf("the directory was changed: %v", err)
	}
	// An existing layout is replaced.
	out := filepath.Join(t.TempDir(), "layout")
	for i := 0; i < 2; i++ {
		if err := image.Write(img, out, image.WriteOptions{}); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	blobs, _ := os.ReadDir(filepath.Join(out, "blobs", "sha256"))
	if len(blobs) != 3 {
		t.Errorf("%d blobs after rewriting, want 3 (manifest, config, layer)", len(blobs))
	}
}
