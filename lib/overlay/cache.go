package overlay

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// Cache remembers what overlays did to the objects they were given, so that
// planning several selections of one payload (validate, a matrix of
// profiles and feature sets) builds each overlay once per distinct input.
// An entry is keyed by the overlay's kustomization file (Overlay.File) and
// the very objects it was given (pointers, compared one by one), so a Cache
// must only serve overlays whose files do not change meanwhile, and objects
// that nobody changes in place (which the pipeline never does). It holds
// on to the objects of its entries. A Cache is safe for concurrent use;
// the nil *Cache remembers nothing.
type Cache struct {
	mu       sync.Mutex
	building map[string]*sync.Mutex // one build of an overlay at a time, so that no two do the same work
	entries  map[string][]*cacheEntry
	objects  map[string]map[state]state // overlays whose objects are independent (narrowing.perObject)
	prepared map[string]*prepared
}

// NewCache returns an empty Cache.
func NewCache() *Cache {
	return &Cache{building: map[string]*sync.Mutex{}, entries: map[string][]*cacheEntry{}, objects: map[string]map[state]state{}, prepared: map[string]*prepared{}}
}

// cacheEntry is one overlay build: the objects given to kustomize, and
// what came out.
type cacheEntry struct {
	in      []state
	out     []state // one per input; m nil when the overlay deleted it
	added   []state
	changes []Change
}

func (c *Cache) lookup(key string, in []state) *cacheEntry {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries[key] {
		if slices.Equal(e.in, in) {
			return e
		}
	}
	return nil
}

// prepare returns o.prepare(), once per overlay file. A prepared overlay is
// only read once its objects are written, which build does under buildMu.
func (c *Cache) prepare(o *Overlay) (*prepared, error) {
	if c == nil {
		return o.prepare()
	}
	c.mu.Lock()
	p, ok := c.prepared[o.File]
	c.mu.Unlock()
	if ok {
		return p, nil
	}
	p, err := o.prepare()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.prepared[o.File] = p
	c.mu.Unlock()
	return p, nil
}

// lockBuilds takes the lock of the builds of key, and returns its release.
func (c *Cache) lockBuilds(key string) func() {
	c.mu.Lock()
	l, ok := c.building[key]
	if !ok {
		l = &sync.Mutex{}
		c.building[key] = l
	}
	c.mu.Unlock()
	l.Lock()
	return l.Unlock
}

func (c *Cache) store(key string, e *cacheEntry) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[key] = append(c.entries[key], e)
}

// Apply is the package's Apply, remembering and reusing overlay builds in c.
func (c *Cache) Apply(ctx context.Context, objs []*manifest.Manifest, overlays []*Overlay) (*Result, error) {
	return c.apply(ctx, objs, overlays, true)
}

// apply is Apply; narrow false gives every object to kustomize.
func (c *Cache) apply(ctx context.Context, objs []*manifest.Manifest, overlays []*Overlay, narrow bool) (*Result, error) {
	cur := make([]state, len(objs))
	for i, m := range objs {
		cur[i] = state{m: m, source: m}
	}
	res := &Result{}
	for _, o := range overlays {
		if err := ctx.Err(); err != nil {
			return nil, &Error{File: o.File, Err: fmt.Errorf("kustomize build: %w", err)}
		}
		next, changes, err := o.applyCached(ctx, cur, c, narrow)
		if err != nil {
			return nil, err
		}
		cur = next
		res.Changes = append(res.Changes, changes...)
	}
	res.Objects = make([]*manifest.Manifest, len(cur))
	for i, s := range cur {
		res.Objects[i] = s.m
	}
	return res, nil
}

// state is one object between overlays: the object now and the input
// object it descends from (nil when an overlay added it).
type state struct {
	m      *manifest.Manifest
	source *manifest.Manifest
}

const memRoot = "/overlay"

// applyCached runs the overlay over in: the objects it may touch go to
// kustomize (or to c, when it has seen them), the others pass through.
func (o *Overlay) applyCached(ctx context.Context, in []state, c *Cache, narrow bool) ([]state, []Change, error) {
	mem, err := c.prepare(o)
	if err != nil {
		return nil, nil, err
	}
	fed := make([]state, 0, len(in))
	feed := make([]bool, len(in))
	for i, s := range in {
		if !narrow || mem.narrowing == nil || mem.narrowing.mayTouch(s.m) {
			fed = append(fed, s)
			feed[i] = true
		}
	}
	key := o.File
	if !narrow {
		key += "\x00full"
	}
	if c != nil {
		// kustomize builds run one at a time anyway (buildMu).
		unlock := c.lockBuilds(key)
		defer unlock()
	}
	if narrow && mem.narrowing != nil && mem.narrowing.perObject && c != nil {
		return c.applyPerObject(ctx, o, mem, key, in, feed, fed)
	}
	e := c.lookup(key, fed)
	if e == nil {
		if e, err = o.build(ctx, mem, fed); err != nil {
			return nil, nil, err
		}
		c.store(key, e)
	}
	out := make([]state, 0, len(in)+len(e.added))
	j := 0
	for i, s := range in {
		if !feed[i] {
			out = append(out, s)
			continue
		}
		if r := e.out[j]; r.m != nil {
			out = append(out, r)
		}
		j++
	}
	return append(out, e.added...), e.changes, nil
}

// applyPerObject is applyCached for an overlay whose patches each touch
// an object without regard to the others (narrowing.perObject): what the
// overlay made of an object is remembered object by object, and kustomize
// only gets the objects it has not seen yet. The changes come in the order
// a build of all of them gives: modified objects in input order (kustomize
// keeps the order; these overlays add nothing), then deleted ones.
func (c *Cache) applyPerObject(ctx context.Context, o *Overlay, mem *prepared, key string, in []state, feed []bool, fed []state) ([]state, []Change, error) {
	c.mu.Lock()
	known := c.objects[key]
	var missing []state
	for _, s := range fed {
		if _, ok := known[s]; !ok {
			missing = append(missing, s)
		}
	}
	c.mu.Unlock()
	if len(missing) > 0 || known == nil {
		e, err := o.build(ctx, mem, missing)
		if err != nil {
			return nil, nil, err
		}
		c.mu.Lock()
		if c.objects[key] == nil {
			c.objects[key] = map[state]state{}
		}
		for j, s := range missing {
			c.objects[key][s] = e.out[j]
		}
		known = c.objects[key]
		c.mu.Unlock()
	}
	c.mu.Lock()
	results := make([]state, len(fed))
	for j, s := range fed {
		results[j] = known[s]
	}
	c.mu.Unlock()
	out := make([]state, 0, len(in))
	var changes, deleted []Change
	j := 0
	for i, s := range in {
		if !feed[i] {
			out = append(out, s)
			continue
		}
		r := results[j]
		j++
		switch {
		case r.m == nil:
			deleted = append(deleted, Change{Overlay: o.File, Action: Deleted, Source: s.source})
		case r.m != s.m:
			changes = append(changes, Change{Overlay: o.File, Action: Modified, Source: s.source, Object: r.m})
			out = append(out, r)
		default:
			out = append(out, r)
		}
	}
	return out, append(changes, deleted...), nil
}
