package resourceapply

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// cachedMapper remembers the RESTMapping answers of a mapper until it is
// reset: client-go's discovery mapper searches every group and version of
// the server for each question (about 20 µs with a payload's CRDs served,
// a tenth of a no-op apply's mapping time), and an apply asks once per
// object. "No match" is remembered too (a payload's hundred objects of a
// kind the server lacks ask again and again); other errors (discovery
// failed) are not, so that the next question tries again.
type cachedMapper struct {
	meta.ResettableRESTMapper

	mu sync.Mutex
	// gen counts resets: an answer found before one is not kept after it.
	gen     uint64
	answers map[mappingKey]mappingAnswer
	// readAt is when the mapper was first asked since its last reset
	// (when it read discovery); zero before.
	readAt time.Time
}

type mappingKey struct {
	gk      schema.GroupKind
	version string
}

type mappingAnswer struct {
	mapping *meta.RESTMapping
	err     error
}

// maxCachedMappings bounds the answers kept between resets (a payload
// names a few hundred kinds; the bound is never reached in practice).
const maxCachedMappings = 4096

func newCachedMapper(m meta.ResettableRESTMapper) *cachedMapper {
	return &cachedMapper{ResettableRESTMapper: m, answers: map[mappingKey]mappingAnswer{}}
}

// RESTMapping answers from what it remembers, else asks the mapper. With
// more than one version it asks the mapper, as it cannot know which
// answered.
func (c *cachedMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if len(versions) > 1 {
		return c.ResettableRESTMapper.RESTMapping(gk, versions...)
	}
	k := mappingKey{gk: gk}
	if len(versions) == 1 {
		k.version = versions[0]
	}
	c.mu.Lock()
	a, ok := c.answers[k]
	gen := c.gen
	c.mu.Unlock()
	if ok {
		return a.mapping, a.err
	}
	c.mu.Lock()
	if c.gen == gen && c.readAt.IsZero() {
		c.readAt = time.Now()
	}
	c.mu.Unlock()
	mapping, err := c.ResettableRESTMapper.RESTMapping(gk, versions...)
	if err == nil || meta.IsNoMatchError(err) {
		c.mu.Lock()
		if c.gen == gen && len(c.answers) < maxCachedMappings {
			c.answers[k] = mappingAnswer{mapping: mapping, err: err}
		}
		c.mu.Unlock()
	}
	return mapping, err
}

// resets counts the resets so far.
func (c *cachedMapper) resets() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// readSince reports how long ago the mapper read discovery (0 when it
// has not since its last reset).
func (c *cachedMapper) readSince() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.readAt.IsZero() {
		return 0
	}
	return time.Since(c.readAt)
}

// Reset forgets every answer and resets the mapper.
func (c *cachedMapper) Reset() {
	c.mu.Lock()
	c.gen++
	c.readAt = time.Time{}
	clear(c.answers)
	c.mu.Unlock()
	c.ResettableRESTMapper.Reset()
}
