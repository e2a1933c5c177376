package image

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// FlattenTop is Flatten reading as few layers as the result allows, for
// images whose layers are expensive to read (a registry's). It scans the
// layers from the top down until one hides every kept directory from the
// layers below it, with an opaque marker (".wh..wh..opq") in the directory
// or a whiteout of it, as Build marks a payload on a base image; the layers
// below that one cannot change the result and are never read. When a
// scanned layer holds a symbolic or hard link (which may reach below), or
// no layer hides the kept directories, every layer is read, as Flatten does.
//
// It returns the flattened FS, exactly what Flatten returns for img, and
// how many layers (from the top) were read. A scanned layer is read twice,
// once to scan and once to flatten: give FlattenTop layers that can be read
// again cheaply (spooled to disk). Errors are Flatten's; a *RefusedError's
// Layer counts from the bottom of img.
func FlattenTop(img v1.Image, opts LoadOptions) (*FS, int, error) {
	opts = opts.withDefaults()
	layers, err := img.Layers()
	if err != nil {
		return nil, 0, fmt.Errorf("read layers: %w", err)
	}
	if len(layers) > opts.MaxLayers {
		return nil, 0, &RefusedError{Layer: -1, Reason: ErrTooManyFiles, Detail: fmt.Sprintf("%d layers, limit %d", len(layers), opts.MaxLayers)}
	}
	first := 0
	hidden := map[string]bool{}
	var budget int64
	for i := len(layers) - 1; i >= 0; i-- {
		s, err := scanLayer(layers[i], i, opts, &budget)
		if err != nil {
			return nil, 0, err
		}
		if s.links {
			first = 0
			break
		}
		for _, k := range s.hides {
			hidden[k] = true
		}
		if len(hidden) == len(opts.Keep) {
			first = i
			break
		}
	}
	if first == 0 {
		fsys, err := Flatten(img, opts)
		return fsys, len(layers), err
	}
	fsys, err := Flatten(&topImage{Image: img, layers: layers[first:]}, opts)
	var re *RefusedError
	if errors.As(err, &re) && re.Layer >= 0 {
		re.Layer += first
	}
	return fsys, len(layers) - first, err
}

// topImage is an image seen from one of its layers up.
type topImage struct {
	v1.Image
	layers []v1.Layer
}

func (t *topImage) Layers() ([]v1.Layer, error) { return t.layers, nil }

// layerScan is what scanLayer learns of a layer.
type layerScan struct {
	// hides are the kept directories the layer hides from the layers
	// below: an opaque marker in them or a whiteout of them.
	hides []string
	// links is true when the layer has a symbolic or hard link.
	links bool
}

// scanLayer reads layer i's tar headers, within the limits of opts (budget
// counts the uncompressed bytes of every scan).
func scanLayer(l v1.Layer, i int, opts LoadOptions, budget *int64) (layerScan, error) {
	var s layerScan
	rc, err := l.Uncompressed()
	if err != nil {
		return s, fmt.Errorf("layer %d: open: %w", i, err)
	}
	defer rc.Close()
	max := opts.MaxTotalSize + int64(opts.MaxFiles)*2048 + 64<<20
	tr := tar.NewReader(&budgetReader{r: rc, read: budget, max: max})
	keep := map[string]bool{}
	for _, k := range opts.Keep {
		keep[k] = true
	}
	hides := map[string]bool{}
	for n := 0; ; n++ {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if errors.Is(err, errStreamLimit) {
			return s, &RefusedError{Layer: i, Reason: ErrTooLarge, Detail: fmt.Sprintf("uncompressed layers above %d bytes", max)}
		}
		if err != nil && !errors.Is(err, tar.ErrInsecurePath) {
			return s, fmt.Errorf("layer %d: read tar: %w", i, err)
		}
		if n >= opts.MaxFiles {
			return s, &RefusedError{Layer: i, Entry: hdr.Name, Reason: ErrTooManyFiles, Detail: fmt.Sprintf("more than %d entries", opts.MaxFiles)}
		}
		switch hdr.Typeflag {
		case tar.TypeSymlink, tar.TypeLink:
			s.links = true
		}
		name := path.Clean(strings.TrimPrefix(hdr.Name, "./"))
		dir, base := path.Dir(name), path.Base(name)
		switch {
		case base == opaqueMarker && keep[dir]:
			hides[dir] = true
		case dir == "." && strings.HasPrefix(base, whiteoutPrefix) && keep[strings.TrimPrefix(base, whiteoutPrefix)]:
			hides[strings.TrimPrefix(base, whiteoutPrefix)] = true
		}
	}
	for _, k := range opts.Keep {
		if hides[k] {
			s.hides = append(s.hides, k)
		}
	}
	return s, nil
}
