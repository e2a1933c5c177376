package resourceapply

import (
	"context"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// waitNote carries ApplyOptions.OnWait through one Apply call.
type waitNote struct {
	id     manifest.ID
	onWait func(manifest.ID, string)
	said   map[string]bool
}

type waitNoteKey struct{}

// withWaitNote returns ctx carrying onWait for object id; nil onWait leaves
// ctx as it is.
func withWaitNote(ctx context.Context, id manifest.ID, onWait func(manifest.ID, string)) context.Context {
	if onWait == nil {
		return ctx
	}
	return context.WithValue(ctx, waitNoteKey{}, &waitNote{id: id, onWait: onWait, said: map[string]bool{}})
}

// noteWait tells the caller of Apply what the object waits for, once per
// distinct reason. Apply runs in one goroutine, so no lock is needed.
func noteWait(ctx context.Context, why string) {
	n, ok := ctx.Value(waitNoteKey{}).(*waitNote)
	if !ok || n.said[why] {
		return
	}
	n.said[why] = true
	n.onWait(n.id, why)
}
