package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// Image returns the image ref names (for an image index, the image of
// Options.Platform), reading only its manifest; layers are read when
// asked for. The manifest's size is bounded by Limits.MaxManifestSize and
// checked against the digest of a digest reference.
func (c *Client) Image(ctx context.Context, ref name.Reference) (v1.Image, Resolved, error) {
	desc, err := remote.Get(ref, c.remote(ctx)...)
	if err != nil {
		return nil, Resolved{}, c.explain(ctx, "pull", ref, err)
	}
	res := Resolved{Ref: ref, Digest: desc.Digest, MediaType: desc.MediaType}
	img, err := desc.Image()
	if err != nil {
		return nil, res, c.explain(ctx, "pull", ref, err)
	}
	return img, res, nil
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
