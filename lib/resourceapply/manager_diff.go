package resourceapply

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// DiffOptions say how Diff and DiffAll compute what Apply would do. Use
// DefaultDiffOptions and change what you need.
type DiffOptions struct {
	// Parallelism is how many objects DiffAll reads at once; below 1: 1.
	Parallelism int
	// Force makes the server-side dry run take over fields another manager
	// owns, as Apply does with ApplyOptions.Force.
	Force bool
	// Retry bounds the retries of transient failures per request.
	Retry RetryOptions
}

// DefaultDiffOptions read 32 objects at once, force conflicts as Apply
// does by default, and retry transient failures for two minutes.
func DefaultDiffOptions() DiffOptions {
	return DiffOptions{Parallelism: 32, Force: true, Retry: DefaultRetryOptions()}
}

// Preview is what Apply would do to one object, computed without changing
// anything: the object as it is (Live) and as it would be (Merged).
type Preview struct {
	// Object is the object's identity.
	Object manifest.ID
	// Action is what Apply would do: Created (Live is nil), Configured
	// (Apply would write: the live object differs from the payload's, and
	// Merged is the server's dry-run result, which may still equal Live but
	// for server-owned fields), Unchanged (Merged is Live), Deleted (Merged
	// is nil), Skipped (a create-only object or ClusterOperator that exists:
	// Merged is Live; an object to delete that is already gone: both nil)
	// or Failed (see Err).
	Action Action
	// Message says why, when the action needs explaining.
	Message string
	// Live is the object on the server, nil when it does not exist.
	Live *unstructured.Unstructured
	// Merged is the object as Apply would leave it, nil when Apply would
	// delete it or leave it absent. It may be Live itself: treat both as
	// read-only.
	Merged *unstructured.Unstructured
	// AsGiven is set when Merged is the payload's object as given instead
	// of the server's dry-run result: the server has no API for its kind
	// yet, or its namespace does not exist yet, and the plan creates them
	// (see Manager.ExpectKinds and ExpectNamespaces), so a dry run cannot
	// run. Defaults the server would add are missing from it.
	AsGiven bool
	// Err is the failure, an *ApplyError, when Action is Failed.
	Err error
}

// Diff computes what Apply would do to obj without writing anything:
//
//   - release.openshift.io/delete: "true": the live object, to be deleted;
//     nothing when it is already gone.
//   - release.openshift.io/create-only: "true", and every ClusterOperator:
//     when it exists, unchanged (Apply never updates it); when missing, a
//     server-side dry-run create.
//   - anything else: when the live object is in sync with obj (InSync,
//     Apply's own test), unchanged, at the cost of one read (a GET, or
//     its share of a list as Apply reads: see ExpectObjects) and no dry
//     run; else a server-side dry-run apply with the Manager's field
//     manager (a dry-run create when it is missing), whose result is
//     Merged, less what other managers set where the CVO's merge would
//     not leave it (what Apply's repair removes; the Message names it).
//     When only that differs, Merged is the live object less it, with no
//     dry run.
//
// An object whose kind or namespace the server lacks but the plan creates
// (ExpectKinds, ExpectNamespaces) is reported as to be created, as the
// payload gives it (Preview.AsGiven). One whose kind or namespace nothing
// creates fails as Apply would: ReasonResourceTypeMissing or
// ReasonNamespaceMissing. On failure the error is an *ApplyError, also in
// Preview.Err, and the Action is Failed.
func (m *Manager) Diff(ctx context.Context, obj *unstructured.Unstructured, opts DiffOptions) (Preview, error) {
	id := IDOf(obj)
	ctx = withoutBodyLogs(WithObject(ctx, id), obj)
	p := Preview{Object: id, Action: Failed}
	fail := func(err error) (Preview, error) {
		p.Action, p.Err = Failed, err
		return p, err
	}
	gvk := obj.GroupVersionKind()
	gk := gvk.GroupKind()
	del := obj.GetAnnotations()[manifest.DeleteAnnotation] == "true"
	createOnly := obj.GetAnnotations()[manifest.CreateOnlyAnnotation] == "true" || gk == clusterOperatorGK
	aopts := ApplyOptions{Force: opts.Force, DryRun: true, Retry: opts.Retry}

	if !del && m.isExpected(gk) {
		if _, err := m.mapping(gvk); meta.IsNoMatchError(err) {
			p.Action, p.Merged, p.AsGiven = Created, obj, true
			p.Message = "no API for its kind yet (this plan's CustomResourceDefinition creates it): shown as the payload gives it"
			return p, nil
		}
	}
	mapping, _, err := m.mapFor(ctx, obj, ApplyOptions{Retry: opts.Retry})
	if err != nil {
		if del && IsResourceTypeMissing(err) {
			p.Action, p.Message = Skipped, "already gone: the server has no API for its kind"
			return p, nil
		}
		return fail(err)
	}
	required, err := m.required(obj, mapping)
	if err != nil {
		return fail(&ApplyError{Object: id, Verb: "apply", Reason: ReasonInvalid, Err: err})
	}
	if required, err = m.withProxy(ctx, required, aopts); err != nil {
		return fail(m.proxyFailed(ctx, id, err))
	}
	ri := m.resource(mapping, required.GetNamespace())
	live, _, err := m.read(ctx, mapping, ri, required.GetNamespace(), required.GetName(), aopts)
	if err != nil {
		return fail(m.fail(ctx, id, "get", err))
	}
	p.Live = live

	switch {
	case del && live == nil:
		p.Action, p.Message = Skipped, "already gone"
	case del:
		p.Action = Deleted
		if live.GetDeletionTimestamp() != nil {
			p.Message = "deletion in progress"
		}
	case createOnly && live != nil:
		p.Action, p.Merged, p.Message = Skipped, live, "create-only: exists"
		if gk == clusterOperatorGK {
			p.Message = "ClusterOperator exists: created once, never overwritten"
		}
	case live == nil:
		if ns := required.GetNamespace(); ns != "" {
			exists, err := m.namespaceExists(ctx, ns, aopts)
			switch {
			case err != nil:
				return fail(m.fail(ctx, id, "get", err))
			case !exists && m.isExpectedNamespace(ns):
				p.Action, p.Merged, p.AsGiven = Created, required, true
				p.Message = "namespace " + ns + " does not exist yet (this plan creates it): shown as the payload gives it"
				return p, nil
			case !exists:
				return fail(&ApplyError{Object: id, Verb: "apply", Reason: ReasonNamespaceMissing,
					Err: fmt.Errorf("namespace %q does not exist, and no Namespace in this plan creates it", ns)})
			}
		}
		merged, err := m.dryRunCreate(ctx, ri, required, createOnly, aopts)
		if err != nil {
			return fail(m.fail(ctx, id, "dry-run apply", err))
		}
		p.Action, p.Merged = Created, merged
		if merged == nil {
			// Created by someone else since it was read.
			p.Action, p.Merged, p.Message = Skipped, nil, "create-only: exists"
		}
	default:
		d := compare(required, live, m.fieldManager)
		if d.inSync() {
			p.Action, p.Merged = Unchanged, live
			break
		}
		merged := live
		if d.apply != "" {
			if merged, err = m.serverSideApply(ctx, ri, required, aopts); err != nil {
				return fail(m.fail(ctx, id, "dry-run apply", err))
			}
			d.removals = removals(required, merged, m.fieldManager)
		}
		if len(d.removals) > 0 {
			merged = withoutRemovals(merged, d.removals)
			p.Message = removedMessage(d.removals)
		}
		p.Action, p.Merged = Configured, merged
	}
	return p, nil
}

// Required returns obj as Apply and Diff send it to the server: without
// the fields its Go type does not have (the cluster-version operator
// decodes built-in kinds into their types), without server-set metadata,
// and without a namespace when its kind is cluster-scoped. It is for
// giving another tool (kubectl diff, in hack/diffbench) the very objects
// Apply sends. The kind must be served: errors are *ApplyError.
func (m *Manager) Required(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	mapping, err := m.mapping(obj.GroupVersionKind())
	if err != nil {
		return nil, &ApplyError{Object: IDOf(obj), Verb: "apply", Reason: Classify(err), Err: err}
	}
	required, err := m.required(obj, mapping)
	if err != nil {
		return nil, &ApplyError{Object: IDOf(obj), Verb: "apply", Reason: ReasonInvalid, Err: err}
	}
	return required, nil
}

// required is obj pruned to its Go type (known), then prepared to send.
func (m *Manager) required(obj *unstructured.Unstructured, mapping *meta.RESTMapping) (*unstructured.Unstructured, error) {
	known, _, err := m.known(obj)
	if err != nil {
		return nil, err
	}
	return prepare(known, mapping)
}

// dryRunCreate returns what creating required would make: a dry-run POST
// for a create-only object (nil when it exists by now), else a dry-run
// server-side apply, falling back to a POST from its Go type when the
// schema rejects the apply, as Apply does.
func (m *Manager) dryRunCreate(ctx context.Context, ri dynamic.ResourceInterface, required *unstructured.Unstructured, createOnly bool, opts ApplyOptions) (*unstructured.Unstructured, error) {
	if createOnly {
		return m.create(ctx, ri, required, opts)
	}
	merged, err := m.serverSideApply(ctx, ri, required, opts)
	if err != nil && Classify(err) == ReasonInvalid {
		if created, cerr := m.create(ctx, ri, required, opts); cerr == nil && created != nil {
			return created, nil
		}
	}
	return merged, err
}

// DiffAll runs Diff for every object, at most opts.Parallelism at once,
// and returns the previews in the order of objs. Live objects are read as
// Apply reads them once told of objs (ExpectObjects, which DiffAll calls):
// a kind with several objects by one bounded LIST, Secrets and objects
// alone of their kind by GET. The kinds the CustomResourceDefinitions
// among objs define and the Namespaces among them are expected first
// (ExpectKinds, ExpectNamespaces): objects that need them are shown as to
// be created, as the payload gives them.
//
// A failed object does not stop the others; the error joins every
// object's *ApplyError, in the order of objs (nil when none failed).
func (m *Manager) DiffAll(ctx context.Context, objs []*unstructured.Unstructured, opts DiffOptions) ([]Preview, error) {
	m.ExpectKinds(CRDKinds(objs)...)
	m.ExpectNamespaces(Namespaces(objs)...)
	m.ExpectObjects(objs...)
	out := make([]Preview, len(objs))
	var g errgroup.Group
	g.SetLimit(max(opts.Parallelism, 1))
	for i, obj := range objs {
		g.Go(func() error {
			out[i], _ = m.Diff(ctx, obj, opts)
			return nil
		})
	}
	_ = g.Wait()
	var errs []error
	for _, p := range out {
		if p.Err != nil {
			errs = append(errs, p.Err)
		}
	}
	return out, errors.Join(errs...)
}
