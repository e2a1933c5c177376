package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/payload-apply/payload-apply/lib/image"
	"github.com/payload-apply/payload-apply/lib/signature"
)

// Bounds of a cosign signature image: its layers and each payload.
const (
	maxCosignLayers  = 64
	maxCosignPayload = 64 << 10
)

var _ signature.CosignSource = (*Client)(nil)

// String names the Client as a cosign signature source.
func (c *Client) String() string { return "registry" }

// CosignSignatures reads the cosign signatures of digest in repository
// (HOST/REPO): the layers of the image tagged signature.CosignTag(digest),
// each payload checked against its digest and bounded. No such tag: none.
// A tag that is an image index, not the image manifest cosign writes, is
// an error saying so (not "no signature").
func (c *Client) CosignSignatures(ctx context.Context, repository string, digest v1.Hash) ([]signature.CosignSignature, error) {
	ref, err := c.cosignRef(repository, digest)
	if err != nil {
		return nil, err
	}
	desc, err := remote.Get(ref, c.remote(ctx)...)
	if err != nil {
		err = c.explain(ctx, "read signatures", ref, err)
		var ae *AccessError
		if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
			return nil, nil
		}
		return nil, err
	}
	index, err := image.ManifestKind(desc.Manifest, desc.MediaType)
	if err == nil && index {
		err = errors.New("an image index (it lists manifests), where cosign stores signatures as one image manifest whose layers are the signatures")
	}
	if err != nil {
		return nil, fmt.Errorf("read signatures %s: %w", ref, err)
	}
	img, err := desc.Image()
	if err != nil {
		return nil, c.explain(ctx, "read signatures", ref, err)
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, c.explain(ctx, "read signatures", ref, err)
	}
	if len(m.Layers) > maxCosignLayers {
		return nil, fmt.Errorf("read signatures %s: %d layers, limit %d: %w", ref, len(m.Layers), maxCosignLayers, ErrLimit)
	}
	var out []signature.CosignSignature
	for _, d := range m.Layers {
		if d.MediaType != signature.CosignPayloadMediaType {
			continue
		}
		if d.Size > maxCosignPayload || d.Size < 0 {
			return nil, fmt.Errorf("read signatures %s: payload of %d bytes, limit %d: %w", ref, d.Size, maxCosignPayload, ErrLimit)
		}
		l, err := img.LayerByDigest(d.Digest)
		if err != nil {
			return nil, c.explain(ctx, "read signatures", ref, err)
		}
		rc, err := l.Compressed()
		if err != nil {
			return nil, c.explain(ctx, "read signatures", ref, err)
		}
		data, err := io.ReadAll(io.LimitReader(rc, maxCosignPayload+1))
		rc.Close()
		if err != nil {
			return nil, c.explain(ctx, "read signatures", ref, err)
		}
		out = append(out, signature.CosignSignature{Payload: data, Signature: d.Annotations[signature.CosignSignatureAnnotation]})
	}
	return out, nil
}

func (c *Client) cosignRef(repository string, digest v1.Hash) (name.Tag, error) {
	ref, err := c.ParseReference(repository + ":" + signature.CosignTag(digest))
	if err != nil {
		return name.Tag{}, err
	}
	tag, ok := ref.(name.Tag)
	if !ok {
		return name.Tag{}, fmt.Errorf("signature reference %s is not a tag", ref)
	}
	return tag, nil
}

// WriteCosignSignature adds sig to the signatures of digest in repository,
// as cosign sign does: a layer of the image tagged
// signature.CosignTag(digest), created when missing; a signature already
// there is not added twice. It returns the tag written.
func (c *Client) WriteCosignSignature(ctx context.Context, repository string, digest v1.Hash, sig signature.CosignSignature) (string, error) {
	ref, err := c.cosignRef(repository, digest)
	if err != nil {
		return "", err
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	if old, _, err := c.Image(ctx, ref); err == nil {
		sigs, err := c.CosignSignatures(ctx, repository, digest)
		if err != nil {
			return "", err
		}
		for _, s := range sigs {
			if string(s.Payload) == string(sig.Payload) && s.Signature == sig.Signature {
				return ref.String(), nil
			}
		}
		base = old
	} else {
		var ae *AccessError
		if !errors.As(err, &ae) || ae.Status != http.StatusNotFound {
			var te *transport.Error
			if !errors.As(err, &te) || te.StatusCode != http.StatusNotFound {
				return "", err
			}
		}
	}
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:       static.NewLayer(sig.Payload, signature.CosignPayloadMediaType),
		Annotations: map[string]string{signature.CosignSignatureAnnotation: sig.Signature},
	})
	if err != nil {
		return "", fmt.Errorf("write signature %s: %w", ref, err)
	}
	if err := remote.Write(ref, img, c.remote(ctx)...); err != nil {
		return "", c.explain(ctx, "write signature", ref, err)
	}
	return ref.String(), nil
}
