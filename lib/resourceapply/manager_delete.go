package resourceapply

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Delete deletes obj with background propagation, as the CVO does for
// manifests annotated release.openshift.io/delete: "true". An object that
// is already gone, or whose kind the server does not know, is Skipped; one
// already being deleted is Skipped too, without a second request. It reads
// the object first (from a list, see ExpectObjects), so a repeated Delete
// writes nothing. It does not wait for finalizers. Errors are *ApplyError.
func (m *Manager) Delete(ctx context.Context, obj *unstructured.Unstructured, opts ApplyOptions) (Change, error) {
	id := IDOf(obj)
	ctx = withOutageLimit(withWaitNote(withoutBodyLogs(WithObject(ctx, id), obj), id, opts.OnWait), m.health, opts.Retry.Timeout)
	change := Change{Object: id, DryRun: opts.DryRun, Action: Failed}
	mapping, err := m.mapping(obj.GroupVersionKind())
	if err != nil {
		if IsResourceTypeMissing(err) {
			change.Action, change.Message = Skipped, "already gone: the server has no API for its kind"
			return change, nil
		}
		return change, m.fail(ctx, id, "delete", err)
	}
	if k, ok := crdKind(obj); ok && obj.GroupVersionKind().GroupKind() == crdGK && !opts.DryRun {
		// Its kinds are no longer what discovery will say.
		m.mapper.forget(k)
	}
	required, err := prepare(obj, mapping)
	if err != nil {
		return change, &ApplyError{Object: id, Verb: "delete", Reason: ReasonInvalid, Err: err}
	}
	ri := m.resource(mapping, required.GetNamespace())
	live, _, err := m.read(ctx, mapping, ri, required.GetNamespace(), required.GetName(), opts)
	switch {
	case err != nil:
		return change, m.fail(ctx, id, "get", err)
	case live == nil:
		change.Action, change.Message = Skipped, "already gone"
		return change, nil
	case live.GetDeletionTimestamp() != nil:
		change.Action, change.Message = Skipped, "deletion in progress"
		return change, nil
	}
	defer m.forget(mapping.Resource, required.GetNamespace(), required.GetName())
	policy := metav1.DeletePropagationBackground
	uid := live.GetUID()
	err = retry(ctx, opts.Retry, func() error {
		err := ri.Delete(ctx, required.GetName(), metav1.DeleteOptions{
			PropagationPolicy: &policy,
			DryRun:            dryRun(opts),
			// Delete the object we read, not one created since.
			Preconditions: &metav1.Preconditions{UID: &uid},
		})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return change, m.fail(ctx, id, "delete", err)
	}
	change.Action = Deleted
	return change, nil
}
