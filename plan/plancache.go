package plan

import (
	"context"
	"fmt"
	"io/fs"
	"sync"

	"github.com/payload-apply/payload-apply/lib/plancache"
	"github.com/payload-apply/payload-apply/payload"
)

// CacheUse says what the plan cache (Options.PlanCache) did for a Build.
type CacheUse struct {
	// Key names the entry: the payload's content (Fingerprint), the
	// binary and the parse limits. Empty: no cache was used.
	Key string
	// Fingerprint is the payload's content digest ("sha256:HEX").
	Fingerprint string
	// Content is the fingerprint itself, file by file: the content the
	// plan was made from (payload.DigestOf takes it).
	Content *payload.Fingerprint
	// Hit is true when the payload's parse came from the cache.
	Hit bool
	// Files is the number of files the entry held (Hit) or was written
	// with.
	Files int
	// Saved is true when a new entry was written.
	Saved bool
	// Err is what went wrong with the cache (a damaged entry, a write that
	// failed, a payload that changed while it was read); the plan is
	// right regardless.
	Err error
}

var binaryID = sync.OnceValue(plancache.BinaryID)

// planCacheFormat changes when what an entry holds changes meaning.
const planCacheFormat = "payload-apply plan cache: parse v1"

// openPlanCache fingerprints fsys and opens the cache's entry for it, and
// sets lopts to use it and record what Load reads. A payload that cannot
// be fingerprinted is loaded without the cache (Load reports why).
func openPlanCache(ctx context.Context, store *plancache.Store, fsys fs.FS, lopts *payload.LoadOptions) (*planCache, *CacheUse) {
	fp, err := payload.FingerprintOf(ctx, fsys, *lopts)
	if err != nil {
		return nil, nil
	}
	key := plancache.NewKey(planCacheFormat, binaryID(), fp.String(), fmt.Sprintf("%+v", lopts.Limits))
	parsed, err := plancache.OpenParsed(store, key, lopts.Limits)
	use := &CacheUse{Key: key.String(), Fingerprint: fp.String(), Content: fp, Hit: parsed.Hit(), Files: parsed.Len(), Err: err}
	c := &planCache{parsed: parsed, fp: fp}
	lopts.Parsed = parsed
	lopts.OnRead = c.read.Record
	return c, use
}

type planCache struct {
	parsed *plancache.Parsed
	fp     *payload.Fingerprint
	read   payload.ReadRecorder
}

// save writes what Load parsed, when every file Load read is the file
// the fingerprint hashed: never a parse under the key of other bytes.
func (c *planCache) save(use *CacheUse) {
	if c.parsed.Added() == 0 {
		return
	}
	for path, sum := range c.read.Files() {
		if want, ok := c.fp.Files[path]; !ok || want != sum {
			use.Err = fmt.Errorf("plan cache: %s changed while it was read: not cached", path)
			return
		}
	}
	files := c.parsed.Len() + c.parsed.Added()
	if err := c.parsed.Save(); err != nil {
		use.Err = err
		return
	}
	use.Saved, use.Files = true, files
}
