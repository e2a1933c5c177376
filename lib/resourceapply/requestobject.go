package resourceapply

import (
	"context"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

type requestObjectKey struct{}

// WithObject returns ctx naming the object its requests are about. The
// Manager's verbs on one object (Apply, Delete, Diff, Wait's reads) set
// it, so that a rest.WarningHandlerWithContext can say which object a
// warning of the API server came with (ObjectOf): client-go gives the
// handler the request's context and nothing else about the request.
func WithObject(ctx context.Context, id manifest.ID) context.Context {
	return context.WithValue(ctx, requestObjectKey{}, id)
}

// ObjectOf returns the object ctx's requests are about; ok is false for a
// request about no one object (discovery, a list read for many).
func ObjectOf(ctx context.Context) (id manifest.ID, ok bool) {
	id, ok = ctx.Value(requestObjectKey{}).(manifest.ID)
	return id, ok
}
