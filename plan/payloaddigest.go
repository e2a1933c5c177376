package plan

import (
	"context"
	"encoding/hex"
	"io/fs"
	"strings"

	"github.com/payload-apply/payload-apply/lib/plancache"
	"github.com/payload-apply/payload-apply/payload"
)

// PayloadDigest returns payload.Digest of fsys, the payload the plan was
// made from. A plan made through the plan cache remembers it there, beside
// its parse and its findings, under the files its fingerprint hashed
// (payload.DigestOf): the next command over an unchanged payload reads no
// file again for it. A plan whose Build took a Preload of fsys has it from
// there, made in the background while the command read the cluster.
// A plan whose cache use went wrong (CacheUse.Err: a file changed while
// the plan was made, say) is of bytes its fingerprint may not describe:
// its digest is made from the files as they are, the memo left alone.
func (p *Plan) PayloadDigest(ctx context.Context, fsys fs.FS) (string, error) {
	if p.store == nil || p.PlanCache == nil || p.PlanCache.Content == nil || p.PlanCache.Err != nil {
		return payload.Digest(ctx, fsys)
	}
	if d, ok, err := p.PlanCache.preloadedDigest(ctx, fsys); ok || err != nil {
		return d, err
	}
	return payload.DigestOf(ctx, fsys, p.PlanCache.Content, digestMemo{p.store})
}

// preloadedDigest waits for the digest of the Preload that made u, when
// that preload was of fsys and the plan was made from the bytes it
// fingerprinted; ok is false when there is none to take.
func (u *CacheUse) preloadedDigest(ctx context.Context, fsys fs.FS) (d string, ok bool, err error) {
	pre := u.pre
	if pre == nil || !comparableFS(fsys) {
		return "", false, nil
	}
	if pre.fsys != payloadFS(fsys) {
		return "", false, nil
	}
	select {
	case <-pre.digestDone:
	case <-ctx.Done():
		return "", false, ctx.Err()
	}
	if pre.digestErr != nil {
		return "", false, nil
	}
	return pre.digest, true, nil
}

// digestMemo keeps payload digests in the plan cache's store.
type digestMemo struct{ s *plancache.Store }

// digestMemoFormat changes when what a digest entry holds changes meaning.
const digestMemoFormat = "payload-apply plan cache: payload digest v1"

// Load implements payload.DigestMemo: an entry that is not a digest is a
// miss.
func (m digestMemo) Load(key [32]byte) (string, bool) {
	body, err := m.s.Get(plancache.NewKey(digestMemoFormat, hex.EncodeToString(key[:])))
	if err != nil || body == nil {
		return "", false
	}
	d := string(body)
	if !strings.HasPrefix(d, "sha256:") || len(d) != len("sha256:")+64 {
		return "", false
	}
	if _, err := hex.DecodeString(d[len("sha256:"):]); err != nil {
		return "", false
	}
	return d, true
}

// Store implements payload.DigestMemo; a store that cannot take it costs
// the next command a read of the payload, nothing else.
func (m digestMemo) Store(key [32]byte, digest string) {
	_ = m.s.Put(plancache.NewKey(digestMemoFormat, hex.EncodeToString(key[:])), []byte(digest))
}
