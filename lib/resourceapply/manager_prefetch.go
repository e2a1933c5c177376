package resourceapply

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// prefetchParallel is how many lists Prefetch reads at once.
const prefetchParallel = 4

// Prefetch starts reading, in the background and in the order of objs,
// the lists that will answer the reads of objs (see ExpectObjects, which
// must have been told of them), for the kinds the server serves now, at
// most prefetchParallel at once. It returns at once; an object read while
// its list is being prefetched waits for it as for a list another read
// started. Without it a list is read when the first object of its kind
// is: the kinds of a later run level, or after the CustomResourceDefinitions
// and Namespaces staged first, wait for their lists one after the other.
//
// A prefetched list is what a read would have listed a little later (a
// consistent read, answering reads for listMaxAge, forgotten for an
// object this Manager writes meanwhile); a list that fails is read again
// by the next read. Kinds not mapped yet (their CRD is part of the apply)
// are left to their reads. The lists
// stop with ctx: pass the context that ends with the apply or its
// interrupt. The channel returned is closed when every list started is
// read (or stopped).
func (m *Manager) Prefetch(ctx context.Context, objs []*unstructured.Unstructured, opts ApplyOptions) <-chan struct{} {
	type fetch struct {
		mapping *meta.RESTMapping
		ns      string
	}
	var todo []fetch
	seen := map[listKey]bool{}
	for _, o := range objs {
		// The Manager's mapper remembers each kind's answer, a kind the
		// server does not serve too: no discovery read per object.
		gvk := o.GroupVersionKind()
		mapping, err := m.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			continue
		}
		ns := o.GetNamespace()
		if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
			ns = ""
		}
		key, _, ok := m.listKeyFor(mapping, ns)
		if !ok || seen[key] {
			continue
		}
		seen[key] = true
		todo = append(todo, fetch{mapping: mapping, ns: ns})
	}
	done := make(chan struct{})
	if len(todo) == 0 {
		close(done)
		return done
	}
	next := make(chan fetch)
	var wg sync.WaitGroup
	for range min(prefetchParallel, len(todo)) {
		wg.Go(func() {
			for f := range next {
				// Errors are the reads' to see: the list is read again.
				_, _ = m.listed(ctx, f.mapping, f.ns, opts)
			}
		})
	}
	go func() {
		defer close(next)
		for _, f := range todo {
			select {
			case next <- f:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		wg.Wait()
		close(done)
	}()
	return done
}
