package image_test

import (
	"errors"
	"io"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/payload-apply/payload-apply/lib/image"
)

// countedLayer counts the reads of a layer.
type countedLayer struct {
	v1.Layer
	reads *atomic.Int32
}

func (c countedLayer) Uncompressed() (io.ReadCloser, error) {
	c.reads.Add(1)
	return c.Layer.Uncompressed()
}

func (c countedLayer) Compressed() (io.ReadCloser, error) {
	c.reads.Add(1)
	return c.Layer.Compressed()
}

func TestFlattenTop(t *testing.T) {
	base := []entry{
		file("bin/cluster-version-operator", "ELF"),
		file("manifests/0000_00_cvo.yaml", "base cvo"),
		file("release-manifests/stale.yaml", "stale"),
	}
	opaquePayload := []entry{
		dirEntry("manifests/"), file("manifests/.wh..wh..opq", ""), file("manifests/0000_00_cvo.yaml", "payload cvo"),
		dirEntry("release-manifests/"), file("release-manifests/.wh..wh..opq", ""), file("release-manifests/a.yaml", "a"),
	}
	tests := []struct {
		name   string
		layers [][]entry
		// read is how many layers from the top FlattenTop reads.
		read int
	}{
		{
			name:   "an opaque payload layer on a base: only the top layer",
			layers: [][]entry{base, {file("etc/motd", "hi")}, opaquePayload},
			read:   1,
		},
		{
			name:   "layers above the opaque layer are read too",
			layers: [][]entry{base, opaquePayload, {file("release-manifests/b.yaml", "b")}},
			read:   2,
		},
		{
			name: "whiteouts of the payload directories hide them too",
			layers: [][]entry{base, {file(".wh.manifests", ""), file(".wh.release-manifests", ""),
				file("release-manifests/new.yaml", "new")}},
			read: 1,
		},
		{
			name: "one directory opaque is not enough: every layer",
			layers: [][]entry{base, {dirEntry("release-manifests/"), file("release-manifests/.wh..wh..opq", ""),
				file("release-manifests/a.yaml", "a")}},
			read: 2,
		},
		{
			name:   "no opaque marker (as oc builds a release): every layer",
			layers: [][]entry{base, {file("release-manifests/a.yaml", "a")}},
			read:   2,
		},
		{
			name:   "a link in a scanned layer may reach below: every layer",
			layers: [][]entry{base, append(append([]entry{}, opaquePayload...), symlink("release-manifests/l.yaml", "../bin/cluster-version-operator"))},
			read:   2,
		},
		{
			name:   "a single layer",
			layers: [][]entry{opaquePayload},
			read:   1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reads []*atomic.Int32
			var layers []v1.Layer
			for _, es := range tt.layers {
				n := &atomic.Int32{}
				reads = append(reads, n)
				layers = append(layers, countedLayer{Layer: layerOf(t, es...), reads: n})
			}
			img := imageWithLayers(t, layers...)
			want, err := image.Flatten(img, image.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range reads {
				n.Store(0)
			}
			got, read, err := image.FlattenTop(img, image.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if read != tt.read {
				t.Errorf("read %d layers, want %d", read, tt.read)
			}
			for i, n := range reads[:len(reads)-tt.read] {
				if n.Load() != 0 {
					t.Errorf("layer %d (below the payload) was read %d times", i, n.Load())
				}
			}
			if diff := cmp.Diff(contents(t, want), contents(t, got)); diff != "" {
				t.Errorf("FlattenTop differs from Flatten (-Flatten +FlattenTop):\n%s", diff)
			}
			if got.Digest() != want.Digest() {
				t.Errorf("digest %s, want %s", got.Digest(), want.Digest())
			}
		})
	}
}

func TestFlattenTopRefuses(t *testing.T) {
	opaque := []entry{dirEntry("manifests/"), file("manifests/.wh..wh..opq", ""),
		dirEntry("release-manifests/"), file("release-manifests/.wh..wh..opq", "")}
	img := imageOf(t, []entry{file("a", "a")}, append(opaque, file("release-manifests/../../etc/passwd", "x")))
	_, _, err := image.FlattenTop(img, image.LoadOptions{})
	var re *image.RefusedError
	if !errors.As(err, &re) || !errors.Is(err, image.ErrUnsafePath) {
		t.Fatalf("err = %v, want a refusal for the unsafe path", err)
	}
	if re.Layer != 1 {
		t.Errorf("refused layer %d, want 1 (counted from the bottom of the image)", re.Layer)
	}

	many := make([][]entry, 5)
	for i := range many {
		many[i] = []entry{file("f", "x")}
	}
	if _, _, err := image.FlattenTop(imageOf(t, many...), image.LoadOptions{MaxLayers: 4}); !errors.Is(err, image.ErrTooManyFiles) {
		t.Errorf("5 layers with MaxLayers 4: err = %v, want ErrTooManyFiles", err)
	}
}
