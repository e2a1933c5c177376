package plan

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
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

	// pre is the Preload that made this use, whose digest of the payload
	// Plan.PayloadDigest takes.
	pre *Preload
}

var binaryID = sync.OnceValue(plancache.BinaryID)

// planCacheFormat changes when what an entry holds changes meaning.
const planCacheFormat = "payload-apply plan cache: parse v1"

// openPlanCache fingerprints fsys and opens the cache's entry for it, and
// sets lopts to use it and record what Load reads. A payload that cannot
// be fingerprinted is loaded without the cache (Load reports why). pre,
// when it was started for the same store, payload and limits, has done
// the first part already (or is doing it).
func openPlanCache(ctx context.Context, store *plancache.Store, fsys fs.FS, lopts *payload.LoadOptions, pre *Preload) (*planCache, *CacheUse, error) {
	var c *planCache
	var use *CacheUse
	if pre.matches(store, fsys, lopts) {
		select {
		case <-pre.done:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		c, use = pre.cache, pre.use
	} else {
		c, use = fingerprintEntry(ctx, store, fsys, *lopts)
	}
	if c == nil {
		return nil, nil, nil
	}
	lopts.Parsed = c.parsed
	lopts.OnRead = c.read.Record
	return c, use, nil
}

// fingerprintEntry fingerprints fsys as Load with lopts reads it and opens
// the cache's entry for that content; nil when fsys cannot be
// fingerprinted.
func fingerprintEntry(ctx context.Context, store *plancache.Store, fsys fs.FS, lopts payload.LoadOptions) (*planCache, *CacheUse) {
	fp, err := payload.FingerprintOf(ctx, fsys, lopts)
	if err != nil {
		return nil, nil
	}
	key := plancache.NewKey(planCacheFormat, binaryID(), fp.String(), fmt.Sprintf("%+v", lopts.Limits))
	parsed, err := plancache.OpenParsed(store, key, lopts.Limits)
	use := &CacheUse{Key: key.String(), Fingerprint: fp.String(), Content: fp, Hit: parsed.Hit(), Files: parsed.Len(), Err: err}
	return &planCache{parsed: parsed, fp: fp}, use
}

// Preload is the part of a Build through the plan cache that does not
// depend on the selection, started ahead of it: fingerprinting the payload
// and opening the cache's entry for it. A command that reads the cluster
// before it plans (the profile, the record) starts it first, and the
// Build that follows waits for it instead of doing it then.
type Preload struct {
	store *plancache.Store
	fsys  fs.FS
	done  chan struct{}
	cache *planCache
	use   *CacheUse
	used  bool
	mu    sync.Mutex

	// digestDone is closed when digest and digestErr are set: the
	// payload's digest (payload.DigestOf through the plan cache's memo),
	// made after the fingerprint, for Plan.PayloadDigest.
	digestDone chan struct{}
	digest     string
	digestErr  error
}

// errNoDigest: the preload made no digest (it was not asked for one, or
// could not fingerprint the payload).
var errNoDigest = errors.New("no digest preloaded")

// StartPreload starts the Preload of opts in the background and returns
// opts with it (Options.Preload), for one Build of the same payload; opts
// unchanged when there is nothing to preload (no plan cache, a parse
// cache of the caller's, a loaded payload). With digest, it then makes
// the payload's digest too, for a command that names the payload in the
// record (apply); diff and status never ask for it. ctx bounds the
// preload only: the Build still needs its own.
func StartPreload(ctx context.Context, opts Options, digest bool) Options {
	if opts.PlanCache == nil || opts.Parsed != nil || opts.Loaded != nil || !comparableFS(opts.Payload) {
		return opts
	}
	fsys := payloadFS(opts.Payload)
	pre := &Preload{store: opts.PlanCache, fsys: fsys, done: make(chan struct{}), digestDone: make(chan struct{})}
	go func() {
		defer close(pre.digestDone)
		pre.cache, pre.use = fingerprintEntry(ctx, pre.store, fsys, payload.LoadOptions{})
		if pre.use != nil {
			pre.use.pre = pre
		}
		close(pre.done)
		if !digest || pre.cache == nil {
			pre.digestErr = errNoDigest
			return
		}
		// The record names the payload by this digest; a command
		// that reads the cluster first has it by the time it writes.
		pre.digest, pre.digestErr = payload.DigestOf(ctx, fsys, pre.cache.fp, digestMemo{pre.store})
	}()
	opts.Preload = pre
	return opts
}

// matches reports whether p was started for what a Build is about to
// open, and takes it: a Preload serves one Build (what its entry adds is
// that Build's to save).
func (p *Preload) matches(store *plancache.Store, fsys fs.FS, lopts *payload.LoadOptions) bool {
	if p == nil || p.store != store || !comparableFS(fsys) || p.fsys != fsys ||
		lopts.Limits != (payload.LoadOptions{}).Limits || lopts.MaxPayloadSize != 0 || lopts.MaxFiles != 0 {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.used {
		return false
	}
	p.used = true
	return true
}

// payloadFS is the payload Options.Payload names: fsys, or the embedded
// one when nil.
func payloadFS(fsys fs.FS) fs.FS {
	if fsys == nil {
		return payload.Embedded()
	}
	return fsys
}

// comparableFS reports whether two file systems can be compared with ==
// (an fs.FS of a type that cannot would panic).
func comparableFS(fsys fs.FS) bool {
	return fsys == nil || reflect.TypeOf(fsys).Comparable()
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
