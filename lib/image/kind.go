package image

import (
	"encoding/json"
	"errors"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// MaxIndexDepth is how many image indexes deep an image is looked for,
// in a layout and in a registry alike: an index naming an index naming an
// image is depth 2.
const MaxIndexDepth = 4

// ManifestKind reads what a manifest's content is, an image index (it
// lists manifests) or an image manifest (a config and layers), and
// refuses content that contradicts mediaType, the media type it was named
// with (a descriptor's, or a registry's Content-Type; empty or unknown:
// whatever the content is), or its own mediaType field. The error says
// which was expected and which was found.
func ManifestKind(data []byte, mediaType types.MediaType) (index bool, err error) {
	var m struct {
		MediaType types.MediaType `json:"mediaType"`
		Manifests json.RawMessage `json:"manifests"`
		Config    json.RawMessage `json:"config"`
		Layers    json.RawMessage `json:"layers"`
		FSLayers  json.RawMessage `json:"fsLayers"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return false, fmt.Errorf("not a manifest: %w", err)
	}
	isIndex, isImage := m.Manifests != nil, m.Config != nil || m.Layers != nil
	switch {
	case m.FSLayers != nil:
		return false, errors.New("a Docker schema 1 manifest (fsLayers): not supported, as by the registries and tools of today")
	case isIndex && isImage:
		return false, errors.New("lists both manifests (an image index) and a config or layers (an image manifest)")
	case !isIndex && !isImage:
		return false, errors.New("neither an image index (no manifests) nor an image manifest (no config, no layers)")
	}
	found := "an image manifest (it has a config and layers)"
	if isIndex {
		found = "an image index (it lists manifests)"
	}
	for _, named := range []struct {
		mt    types.MediaType
		where string
	}{{mediaType, "named"}, {m.MediaType, "its mediaType says"}} {
		switch {
		case named.mt.IsIndex() && !isIndex:
			return false, fmt.Errorf("%s where an image index was expected (%s %s)", found, named.where, named.mt)
		case named.mt.IsImage() && !isImage:
			return false, fmt.Errorf("%s where an image manifest was expected (%s %s)", found, named.where, named.mt)
		}
	}
	return isIndex, nil
}

// verifyDigest checks data against h, with h's algorithm (sha256 or
// sha512); any other algorithm is refused, never taken on trust.
func verifyDigest(data []byte, h v1.Hash) error {
	hasher, err := v1.Hasher(h.Algorithm)
	if err != nil {
		return fmt.Errorf("%s: digest algorithm %q cannot be verified (sha256 or sha512 can): refused", blobName(h), h.Algorithm)
	}
	hasher.Write(data)
	if got := fmt.Sprintf("%x", hasher.Sum(nil)); got != h.Hex {
		return fmt.Errorf("%s: content has digest %s:%s", blobName(h), h.Algorithm, got)
	}
	return nil
}
