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
	// learned are mappings read from CustomResourceDefinitions seen
	// established (crdMappings), kept across resets for learnedFor: a kind
	// is served as soon as its CRD is Established, and discovery, read
	// again for it, would say so a little later.
	learned map[mappingKey]learnedMapping
}

// learnedMapping is a mapping learned from a CRD, and when.
type learnedMapping struct {
	mapping *meta.RESTMapping
	at      time.Time
}

// learnedFor is how long a learned mapping is used without discovery
// confirming it: long enough for a first install's CRDs (discovery lags
// their establishing by well under a second), short enough that a CRD
// deleted by someone else meanwhile does not leave its kind mapped in a
// long-lived Manager (the operator's).
const learnedFor = 30 * time.Second

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
	return &cachedMapper{ResettableRESTMapper: m, answers: map[mappingKey]mappingAnswer{}, learned: map[mappingKey]learnedMapping{}}
}

// RESTMapping answers from what it learned of established CRDs or
// remembers, else asks the mapper. With more than one version it asks the
// mapper, as it cannot know which answered.
func (c *cachedMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if len(versions) > 1 {
		return c.ResettableRESTMapper.RESTMapping(gk, versions...)
	}
	k := mappingKey{gk: gk}
	if len(versions) == 1 {
		k.version = versions[0]
	}
	c.mu.Lock()
	if l, ok := c.learned[k]; ok {
		if time.Since(l.at) < learnedFor {
			c.mu.Unlock()
			return l.mapping, nil
		}
		delete(c.learned, k)
	}
	a, ok := c.answers[k]
	gen := c.gen
	if !ok && c.readAt.IsZero() {
		c.readAt = time.Now()
	}
	c.mu.Unlock()
	if ok {
		return a.mapping, a.err
	}
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

// learn keeps mappings read from a CustomResourceDefinition that is
// Established (see learnedFor). It reports whether it kept any.
func (c *cachedMapper) learn(mappings []*meta.RESTMapping) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	now, kept := time.Now(), false
	for _, m := range mappings {
		if len(c.learned) >= maxCachedMappings {
			break
		}
		gvk := m.GroupVersionKind
		k := mappingKey{gk: gvk.GroupKind(), version: gvk.Version}
		c.learned[k] = learnedMapping{mapping: m, at: now}
		// A "no match" remembered before the CRD was established is
		// no longer the answer.
		delete(c.answers, k)
		kept = true
	}
	return kept
}

// forget drops what was learned of the kinds of gk's group and kind (its
// CustomResourceDefinition is being deleted).
func (c *cachedMapper) forget(gk schema.GroupKind) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.learned {
		if k.gk == gk {
			delete(c.learned, k)
		}
	}
}
