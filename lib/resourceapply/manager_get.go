package resourceapply

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// Get reads one object, retrying transient failures per opts. It returns
// nil and no error when the object does not exist. Errors are *ApplyError;
// a kind the server does not serve is ReasonResourceTypeMissing.
func (m *Manager) Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string, opts RetryOptions) (*unstructured.Unstructured, error) {
	id := manifest.ID{Group: gvk.Group, Kind: gvk.Kind, Namespace: namespace, Name: name}
	ctx = withOutageLimit(ctx, m.health, opts.Timeout)
	mapping, err := m.mapping(gvk)
	if err != nil {
		return nil, m.fail(ctx, id, "get", err)
	}
	live, err := m.get(ctx, m.resource(mapping, namespace), name, ApplyOptions{Retry: opts})
	if err != nil {
		return nil, m.fail(ctx, id, "get", err)
	}
	return live, nil
}
