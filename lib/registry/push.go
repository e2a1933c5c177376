package registry

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Push uploads img to ref (a tag or a digest reference) and returns the
// repository at the image's digest. Blobs the registry has are not sent
// again; layers of a base image in another repository of the same registry
// are mounted.
func (c *Client) Push(ctx context.Context, ref name.Reference, img v1.Image) (Resolved, error) {
	digest, err := img.Digest()
	if err != nil {
		return Resolved{}, fmt.Errorf("push %s: %w", ref, err)
	}
	if d, ok := ref.(name.Digest); ok && d.DigestStr() != digest.String() {
		return Resolved{}, fmt.Errorf("push %s: the image's digest is %s", ref, digest)
	}
	mt, err := img.MediaType()
	if err != nil {
		return Resolved{}, fmt.Errorf("push %s: %w", ref, err)
	}
	if err := remote.Write(ref, img, c.remote(ctx)...); err != nil {
		return Resolved{}, c.explain(ctx, "push", ref, err)
	}
	return Resolved{Ref: ref, Digest: digest, MediaType: mt}, nil
}
