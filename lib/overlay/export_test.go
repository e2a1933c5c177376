package overlay

import (
	"context"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// ApplyFull is Apply giving every object to kustomize (no narrowing).
func ApplyFull(objs []*manifest.Manifest, overlays []*Overlay) (*Result, error) {
	return (*Cache)(nil).apply(context.Background(), objs, overlays, false)
}
