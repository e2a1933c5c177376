package plan

import (
	"context"
	"errors"
	"sync"

	"github.com/payload-apply/payload-apply/lib/apicheck"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/overlay"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/profiles"
)

// Cache holds what plans of one loaded payload (Options.Loaded) for several
// selections share: the embedded profiles, the payload as each profile's
// templates render it, the overlay builds (see overlay.Cache), and the YAML
// of each object written.
// Validate uses one for its matrix of profiles and feature sets; pass one
// in Options.Cache to render several selections. A Cache must only serve
// one payload and one set of profiles and overlays that do not change
// meanwhile; it keeps what it has seen alive. A Cache is safe for
// concurrent use; a nil *Cache caches nothing.
type Cache struct {
	overlays *overlay.Cache
	schemas  *apicheck.Cache

	mu       sync.Mutex
	profiles map[profileKey]*once[*payload.Payload]
	yaml     map[*manifest.Manifest]*once[[]byte]
	embedded *profiles.Set
}

// once is a value computed by the first caller that needs it; callers
// that come meanwhile wait for it instead of computing it again.
type once[T any] struct {
	once sync.Once
	v    T
	err  error
}

func (o *once[T]) get(f func() (T, error)) (T, error) {
	o.once.Do(func() { o.v, o.err = f() })
	return o.v, o.err
}

// entry returns m's entry for key, creating it.
func entry[K comparable, T any](mu *sync.Mutex, m map[K]*once[T], key K) *once[T] {
	mu.Lock()
	defer mu.Unlock()
	e, ok := m[key]
	if !ok {
		e = &once[T]{}
		m[key] = e
	}
	return e
}

type profileKey struct {
	payload *payload.Payload
	profile string
}

// NewCache returns an empty Cache.
func NewCache() *Cache {
	return &Cache{
		overlays: overlay.NewCache(),
		schemas:  apicheck.NewCache(),
		profiles: map[profileKey]*once[*payload.Payload]{},
		yaml:     map[*manifest.Manifest]*once[[]byte]{},
	}
}

// embeddedProfiles is profiles.Embedded(), once.
func (c *Cache) embeddedProfiles() (*profiles.Set, error) {
	if c == nil {
		return profiles.Embedded()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.embedded == nil {
		set, err := profiles.Embedded()
		if err != nil {
			return nil, err
		}
		c.embedded = set
	}
	return c.embedded, nil
}

// withProfile is p.WithProfile(ctx, profile), once per payload and
// profile. A result that ctx ending cut short is not kept.
func (c *Cache) withProfile(ctx context.Context, p *payload.Payload, profile string) (*payload.Payload, error) {
	if c == nil {
		return p.WithProfile(ctx, profile)
	}
	key := profileKey{p, profile}
	e := entry(&c.mu, c.profiles, key)
	q, err := e.get(func() (*payload.Payload, error) { return p.WithProfile(ctx, profile) })
	if err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		c.mu.Lock()
		if c.profiles[key] == e {
			delete(c.profiles, key)
		}
		c.mu.Unlock()
	}
	return q, err
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
	return entry(&c.mu, c.yaml, m).get(func() ([]byte, error) { return MarshalObject(m) })
}
