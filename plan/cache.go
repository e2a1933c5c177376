package plan

import (
	"sync"

	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/overlay"
	"github.com/payload-apply/payload-apply/payload"
)

// Cache holds what plans of one loaded payload (Options.Loaded) for several
// selections share: the payload as each profile's templates render it, the
// overlay builds (see overlay.Cache), and the YAML of each object written.
// Validate uses one for its matrix of profiles and feature sets; pass one
// in Options.Cache to render several selections. A Cache must only serve
// one payload and one set of profiles and overlays that do not change
// meanwhile; it keeps what it has seen alive. A Cache is safe for
// concurrent use; a nil *Cache caches nothing.
type Cache struct {
	overlays *overlay.Cache

	mu       sync.Mutex
	profiles map[profileKey]*payload.Payload
	yaml     map[*manifest.Manifest][]byte
}

type profileKey struct {
	payload *payload.Payload
	profile string
}

// NewCache returns an empty Cache.
func NewCache() *Cache {
	return &Cache{
		overlays: overlay.NewCache(),
		profiles: map[profileKey]*payload.Payload{},
		yaml:     map[*manifest.Manifest][]byte{},
	}
}

// withProfile is p.WithProfile(profile), once per payload and profile.
func (c *Cache) withProfile(p *payload.Payload, profile string) (*payload.Payload, error) {
	if c == nil {
		return p.WithProfile(profile)
	}
	key := profileKey{p, profile}
	c.mu.Lock()
	q, ok := c.profiles[key]
	c.mu.Unlock()
	if ok {
		return q, nil
	}
	q, err := p.WithProfile(profile)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.profiles[key] = q
	c.mu.Unlock()
	return q, nil
}

// overlayCache returns the overlay cache (nil for a nil Cache).
func (c *Cache) overlayCache() *overlay.Cache {
	if c == nil {
		return nil
	}
	return c.overlays
}

// marshal is MarshalObject, once per object.
func (c *Cache) marshal(m *manifest.Manifest) ([]byte, error) {
	if c == nil {
		return MarshalObject(m)
	}
	c.mu.Lock()
	data, ok := c.yaml[m]
	c.mu.Unlock()
	if ok {
		return data, nil
	}
	data, err := MarshalObject(m)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.yaml[m] = data
	c.mu.Unlock()
	return data, nil
}
