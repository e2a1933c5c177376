package resourceapply

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
//     Apply's own test), unchanged, at the cost of one GET and no dry
//     run; else a server-side dry-run apply with the Manager's field
//     manager (a dry-run create when it is missing), whose result is
//     Merged.
//
// An object whose kind or namespace the server lacks but the plan creates
// (ExpectKinds, ExpectNamespaces) is reported as to be created, as the
// payload gives it (Preview.AsGiven). One whose kind or namespace nothing
// creates fails as Apply would: ReasonResourceTypeMissing or
// ReasonNamespaceMissing. On failure the error is an *ApplyError, also in
// Preview.Err, and the Action is Failed.
func (m *Manager) Diff(ctx context.Context, obj *unstructured.Unstructured, opts DiffOptions) (Preview, error) {
	return m.diff(ctx, obj, opts, nil)
}

// diff is Diff, reading the live object from listed when its resource
// and namespace were listed there.
func (m *Manager) diff(ctx context.Context, obj *unstructured.Unstructured, opts DiffOptions, listed *listedObjects) (Preview, error) {
	id := IDOf(obj)
	ctx = withoutBodyLogs(ctx, obj)
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
	ri := m.resource(mapping, required.GetNamespace())
	live, ok := listed.lookup(mapping.Resource, required.GetNamespace(), required.GetName())
	if !ok {
		if live, err = m.get(ctx, ri, required.GetName(), aopts); err != nil {
			return fail(m.fail(ctx, id, "get", err))
		}
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
		if ok, _ := InSync(required, live, m.fieldManager); ok {
			p.Action, p.Merged = Unchanged, live
			break
		}
		merged, err := m.serverSideApply(ctx, ri, required, aopts)
		if err != nil {
			return fail(m.fail(ctx, id, "dry-run apply", err))
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
// and returns the previews in the order of objs. Live objects are read by
// one LIST per resource and namespace (per resource for cluster-scoped
// kinds) where objs have at least diffListThreshold objects, except Secrets,
// and by one GET each otherwise, or when a LIST fails (a client allowed
// to get but not to list, say). The kinds the
// CustomResourceDefinitions among objs define and the Namespaces among
// them are expected first (ExpectKinds, ExpectNamespaces): objects that
// need them are shown as to be created, as the payload gives them.
//
// A failed object does not stop the others; the error joins every
// object's *ApplyError, in the order of objs (nil when none failed).
func (m *Manager) DiffAll(ctx context.Context, objs []*unstructured.Unstructured, opts DiffOptions) ([]Preview, error) {
	m.ExpectKinds(CRDKinds(objs)...)
	m.ExpectNamespaces(Namespaces(objs)...)
	listed := m.listAll(ctx, objs, opts)
	out := make([]Preview, len(objs))
	var g errgroup.Group
	g.SetLimit(max(opts.Parallelism, 1))
	for i, obj := range objs {
		g.Go(func() error {
			out[i], _ = m.diff(ctx, obj, opts, listed)
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

// How DiffAll reads live objects in bulk. A LIST costs the server about
// what a GET of one object does, plus the objects it returns that the
// payload does not have; it is bounded to listLimitFactor times the
// objects wanted (at least listLimitMin), and given up for smaller reads
// when the cluster has more.
const (
	// diffListThreshold is how many objects of one resource in one
	// namespace (or of one cluster-scoped resource) make DiffAll list them
	// instead of getting them one by one.
	diffListThreshold = 2
	// listLimitFactor and listLimitMin bound a LIST's page: beyond it,
	// the cluster holds many more objects of the resource than the payload
	// and smaller reads are cheaper.
	listLimitFactor = 4
	listLimitMin    = 50
)

// diffListKey is a resource in a namespace ("" for cluster-scoped resources).
type diffListKey struct {
	resource  schema.GroupVersionResource
	namespace string
}

// listedObjects are the live objects DiffAll read by listing, by resource
// and namespace, then by name. Only resources and namespaces read in full
// are there. A nil *listedObjects has none.
type listedObjects struct {
	lists map[diffListKey]map[string]*unstructured.Unstructured
}

// lookup returns the live object name of resource in namespace and
// whether they were listed; nil when listed and absent.
func (l *listedObjects) lookup(resource schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, bool) {
	if l == nil {
		return nil, false
	}
	byName, ok := l.lists[diffListKey{resource, namespace}]
	if !ok {
		return nil, false
	}
	return byName[name], true
}

// wantedResource is what DiffAll reads of one resource: how many objects
// in each namespace ("" for a cluster-scoped resource), in order of first
// appearance.
type wantedResource struct {
	resource   schema.GroupVersionResource
	namespaced bool
	namespaces []string
	counts     map[string]int
	total      int
}

// listAll reads in bulk, at most opts.Parallelism requests at once, the
// live objects of objs it can, Secrets excepted (Diff reads only the
// payload's own Secrets, one by one):
//
//   - a cluster-scoped resource with at least diffListThreshold objects:
//     one LIST;
//   - a namespaced resource with objects in several namespaces: one LIST
//     across all namespaces; when that fails or the cluster has more than
//     its page holds, or for a resource in one namespace, one LIST per
//     namespace with at least diffListThreshold objects.
//
// Every LIST is bounded (listLimitFactor); one that fails or does not fit
// leaves its objects to Diff's GETs, as do kinds with no mapping yet.
func (m *Manager) listAll(ctx context.Context, objs []*unstructured.Unstructured, opts DiffOptions) *listedObjects {
	byResource := map[schema.GroupVersionResource]*wantedResource{}
	var wanted []*wantedResource
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		if gvk.GroupKind() == secretGK {
			continue
		}
		mapping, err := m.mapping(gvk)
		if err != nil {
			continue
		}
		namespaced := mapping.Scope.Name() == meta.RESTScopeNameNamespace
		ns := ""
		if namespaced {
			if ns = obj.GetNamespace(); ns == "" {
				continue
			}
		}
		w, ok := byResource[mapping.Resource]
		if !ok {
			w = &wantedResource{resource: mapping.Resource, namespaced: namespaced, counts: map[string]int{}}
			byResource[mapping.Resource] = w
			wanted = append(wanted, w)
		}
		if w.counts[ns] == 0 {
			w.namespaces = append(w.namespaces, ns)
		}
		w.counts[ns]++
		w.total++
	}
	out := &listedObjects{lists: map[diffListKey]map[string]*unstructured.Unstructured{}}
	var mu sync.Mutex
	sem := make(chan struct{}, max(opts.Parallelism, 1))
	// list reads resource in namespace ("": all) with a page of limit; it
	// returns nil when the read failed or did not fit.
	list := func(resource schema.GroupVersionResource, namespace string, limit int) []unstructured.Unstructured {
		sem <- struct{}{}
		defer func() { <-sem }()
		ri := m.client.Resource(resource)
		var nri dynamic.ResourceInterface = ri
		if namespace != "" {
			nri = ri.Namespace(namespace)
		}
		var l *unstructured.UnstructuredList
		err := retry(ctx, opts.Retry, func() error {
			var err error
			l, err = nri.List(ctx, metav1.ListOptions{Limit: int64(limit)})
			return err
		})
		if err != nil || l.GetContinue() != "" {
			// Refused, failed, or more than the page: smaller reads.
			return nil
		}
		return l.Items
	}
	keep := func(resource schema.GroupVersionResource, namespaces []string, items []unstructured.Unstructured) {
		mu.Lock()
		defer mu.Unlock()
		for _, ns := range namespaces {
			out.lists[diffListKey{resource, ns}] = map[string]*unstructured.Unstructured{}
		}
		for i := range items {
			if byName, ok := out.lists[diffListKey{resource, items[i].GetNamespace()}]; ok {
				byName[items[i].GetName()] = &items[i]
			}
		}
	}
	limitFor := func(n int) int { return max(listLimitFactor*n, listLimitMin) }
	var wg sync.WaitGroup
	for _, w := range wanted {
		switch {
		case !w.namespaced && w.total >= diffListThreshold:
			wg.Go(func() {
				if items := list(w.resource, "", limitFor(w.total)); items != nil {
					keep(w.resource, []string{""}, items)
				}
			})
		case w.namespaced:
			wg.Go(func() {
				if len(w.namespaces) > 1 {
					if items := list(w.resource, "", limitFor(w.total)); items != nil {
						keep(w.resource, w.namespaces, items)
						return
					}
				}
				var nwg sync.WaitGroup
				for _, ns := range w.namespaces {
					if w.counts[ns] < diffListThreshold {
						continue
					}
					nwg.Go(func() {
						if items := list(w.resource, ns, limitFor(w.counts[ns])); items != nil {
							keep(w.resource, []string{ns}, items)
						}
					})
				}
				nwg.Wait()
			})
		}
	}
	wg.Wait()
	return out
}
