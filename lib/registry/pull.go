package registry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/payload-apply/payload-apply/lib/image"
)

// Resolved is what a reference names in a registry.
type Resolved struct {
	// Ref is the reference as given.
	Ref name.Reference
	// Digest is the digest Ref resolves to: the manifest's, or the image
	// index's for a multi-platform image. Signatures name this digest.
	Digest v1.Hash
	// MediaType is the manifest's media type.
	MediaType types.MediaType
}

// Pinned returns the repository at Digest ("HOST/REPO@sha256:...").
func (r Resolved) Pinned() name.Digest {
	return r.Ref.Context().Digest(r.Digest.String())
}

// Resolve returns the digest ref names, with one HEAD request of the
// manifest (a GET when the registry does not answer HEAD). For a digest
// reference it asks nothing and returns the digest.
func (c *Client) Resolve(ctx context.Context, ref name.Reference) (Resolved, error) {
	if d, ok := ref.(name.Digest); ok {
		h, err := v1.NewHash(d.DigestStr())
		if err != nil {
			return Resolved{}, fmt.Errorf("resolve %s: %w", ref, err)
		}
		return Resolved{Ref: ref, Digest: h}, nil
	}
	desc, err := remote.Head(ref, c.remote(ctx)...)
	if err != nil {
		var ae *AccessError
		if e := c.explain(ctx, "resolve", ref, err); errors.As(e, &ae) {
			return Resolved{}, e
		}
		g, gerr := remote.Get(ref, c.remote(ctx)...)
		if gerr != nil {
			return Resolved{}, c.explain(ctx, "resolve", ref, gerr)
		}
		desc = &g.Descriptor
	}
	return Resolved{Ref: ref, Digest: desc.Digest, MediaType: desc.MediaType}, nil
}

// Image returns the image ref names, reading only manifests; layers are
// read when asked for. An image index is followed to its image for
// Options.Platform, at most image.MaxIndexDepth indexes deep; every
// manifest's content must be what its media type says (an index where an
// image manifest is named, or the reverse, is an error saying so), is
// bounded by Limits.MaxManifestSize, and is checked against the digest
// it was asked for by. Resolved names ref's own manifest.
func (c *Client) Image(ctx context.Context, ref name.Reference) (v1.Image, Resolved, error) {
	desc, err := remote.Get(ref, c.remote(ctx)...)
	if err != nil {
		return nil, Resolved{}, c.explain(ctx, "pull", ref, err)
	}
	res := Resolved{Ref: ref, Digest: desc.Digest, MediaType: desc.MediaType}
	what := "the manifest"
	named := desc.MediaType
	for depth := 0; ; depth++ {
		index, err := image.ManifestKind(desc.Manifest, named)
		if err == nil && named != desc.MediaType {
			index, err = image.ManifestKind(desc.Manifest, desc.MediaType)
		}
		if err != nil {
			return nil, res, fmt.Errorf("pull %s: %s %s: %w", ref, what, desc.Digest, err)
		}
		if !index {
			img, err := desc.Image()
			if err != nil {
				return nil, res, c.explain(ctx, "pull", ref, err)
			}
			return img, res, nil
		}
		if depth >= image.MaxIndexDepth {
			return nil, res, fmt.Errorf("pull %s: image index %s: image indexes nested more than %d deep (the index depth limit)", ref, desc.Digest, image.MaxIndexDepth)
		}
		im, err := v1.ParseIndexManifest(bytes.NewReader(desc.Manifest))
		if err != nil {
			return nil, res, fmt.Errorf("pull %s: image index %s: %w", ref, desc.Digest, err)
		}
		child, err := c.pickChild(im)
		if err != nil {
			return nil, res, fmt.Errorf("pull %s: image index %s: %w", ref, desc.Digest, err)
		}
		parent := desc.Digest
		childRef := ref.Context().Digest(child.Digest.String())
		if desc, err = remote.Get(childRef, c.remote(ctx)...); err != nil {
			e := c.explain(ctx, "pull", childRef, err)
			var ae *AccessError
			if errors.As(e, &ae) && ae.Status == http.StatusNotFound {
				return nil, res, fmt.Errorf("pull %s: image index %s names %s for %s, which the registry does not have (404)", ref, parent, child.Digest, platformString(c.opts.Platform))
			}
			return nil, res, e
		}
		what, named = "image index "+parent.String()+"'s child", child.MediaType
	}
}

// pickChild returns the manifest of an image index for the Client's
// platform; an index of one manifest without a platform gives that one.
func (c *Client) pickChild(im *v1.IndexManifest) (v1.Descriptor, error) {
	var names []string
	for _, d := range im.Manifests {
		if d.Platform != nil && d.Platform.Satisfies(c.opts.Platform) {
			return d, nil
		}
		if d.Platform != nil {
			names = append(names, platformString(*d.Platform))
		}
	}
	if len(im.Manifests) == 1 && im.Manifests[0].Platform == nil {
		return im.Manifests[0], nil
	}
	return v1.Descriptor{}, fmt.Errorf("no image for %s among its %d manifests (platforms: %s)", platformString(c.opts.Platform), len(im.Manifests), strings.Join(names, ", "))
}

func platformString(p v1.Platform) string {
	s := p.OS + "/" + p.Architecture
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	return s
}

// Pulled is a payload pulled from a registry.
type Pulled struct {
	Resolved
	// FS holds the payload directories, as image.Flatten returns them.
	FS *image.FS
	// Layers is the image's layer count and LayersRead how many of them
	// (from the top) were downloaded.
	Layers, LayersRead int
	// BytesRead counts the compressed layer bytes downloaded.
	BytesRead int64
}

// Pull reads the payload of the image ref names: its manifest, config and
// the layers image.FlattenTop needs, within opts' limits (the declared
// sizes are checked before anything is downloaded). Layers are spooled to
// temporary files under tmpDir ("" for the system's), checked against
// their digests, and removed before Pull returns.
func (c *Client) Pull(ctx context.Context, ref name.Reference, opts image.LoadOptions, tmpDir string) (*Pulled, error) {
	img, res, err := c.Image(ctx, ref)
	if err != nil {
		return nil, err
	}
	def := image.DefaultLoadOptions()
	if opts.MaxLayers <= 0 {
		opts.MaxLayers = def.MaxLayers
	}
	if opts.MaxTotalSize <= 0 {
		opts.MaxTotalSize = def.MaxTotalSize
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, c.explain(ctx, "pull", ref, err)
	}
	if err := c.checkManifest(m, opts); err != nil {
		return nil, fmt.Errorf("pull %s: %w", ref, err)
	}
	dir, err := os.MkdirTemp(tmpDir, "pull-")
	if err != nil {
		return nil, fmt.Errorf("pull %s: %w", ref, err)
	}
	defer os.RemoveAll(dir)
	var read atomic.Int64
	layers := make([]v1.Layer, len(m.Layers))
	for i, d := range m.Layers {
		l, err := img.LayerByDigest(d.Digest)
		if err != nil {
			return nil, c.explain(ctx, "pull", ref, err)
		}
		s := &spooled{ctx: ctx, layer: l, desc: d, path: filepath.Join(dir, fmt.Sprintf("layer-%d", i)), read: &read}
		if layers[i], err = partial.CompressedToLayer(s); err != nil {
			return nil, fmt.Errorf("pull %s: layer %d: %w", ref, i, err)
		}
	}
	fsys, n, err := image.FlattenTop(&spooledImage{Image: img, layers: layers}, opts)
	if err != nil {
		return nil, c.explain(ctx, "pull", ref, err)
	}
	return &Pulled{Resolved: res, FS: fsys, Layers: len(layers), LayersRead: n, BytesRead: read.Load()}, nil
}

// checkManifest checks an image manifest's declared sizes against the
// limits, before anything it names is downloaded.
func (c *Client) checkManifest(m *v1.Manifest, opts image.LoadOptions) error {
	if m.Config.Size > c.opts.Limits.MaxManifestSize || m.Config.Size < 0 {
		return fmt.Errorf("image config of %d bytes, limit %d: %w", m.Config.Size, c.opts.Limits.MaxManifestSize, ErrLimit)
	}
	if len(m.Layers) > opts.MaxLayers {
		return &image.RefusedError{Layer: -1, Reason: image.ErrTooManyFiles, Detail: fmt.Sprintf("%d layers, limit %d", len(m.Layers), opts.MaxLayers)}
	}
	var total int64
	for i, l := range m.Layers {
		if l.Size < 0 || l.Size > opts.MaxTotalSize {
			return &image.RefusedError{Layer: i, Reason: image.ErrTooLarge, Detail: fmt.Sprintf("compressed layer of %d bytes, limit %d", l.Size, opts.MaxTotalSize)}
		}
		total += l.Size
		if total > opts.MaxTotalSize {
			return &image.RefusedError{Layer: i, Reason: image.ErrTooLarge, Detail: fmt.Sprintf("compressed layers above %d bytes in all", opts.MaxTotalSize)}
		}
	}
	return nil
}

// spooledImage is a remote image whose layers are spooled.
type spooledImage struct {
	v1.Image
	layers []v1.Layer
}

func (s *spooledImage) Layers() ([]v1.Layer, error) { return s.layers, nil }

// spooled is a remote layer downloaded once, on first read, to a file;
// later reads come from the file. go-containerregistry checks the size and
// digest as it downloads.
type spooled struct {
	ctx   context.Context
	layer v1.Layer
	desc  v1.Descriptor
	path  string
	read  *atomic.Int64

	once sync.Once
	err  error
}

var _ partial.CompressedLayer = (*spooled)(nil)

func (s *spooled) Digest() (v1.Hash, error)            { return s.desc.Digest, nil }
func (s *spooled) Size() (int64, error)                { return s.desc.Size, nil }
func (s *spooled) MediaType() (types.MediaType, error) { return s.desc.MediaType, nil }

// Compressed downloads the layer the first time and opens the file.
func (s *spooled) Compressed() (io.ReadCloser, error) {
	s.once.Do(func() { s.err = s.fetch() })
	if s.err != nil {
		return nil, s.err
	}
	return os.Open(s.path)
}

func (s *spooled) fetch() error {
	rc, err := s.layer.Compressed()
	if err != nil {
		return fmt.Errorf("layer %s: %w", s.desc.Digest, err)
	}
	defer rc.Close()
	f, err := os.OpenFile(s.path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, &ctxReader{ctx: s.ctx, r: rc})
	s.read.Add(n)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(s.path)
		return fmt.Errorf("layer %s: %w", s.desc.Digest, err)
	}
	return nil
}

// ctxReader stops reading once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
