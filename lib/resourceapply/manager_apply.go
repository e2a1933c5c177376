package resourceapply

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/redact"
)

// ApplyOptions say how Apply and Delete treat one object. Use
// DefaultApplyOptions and change what you need.
type ApplyOptions struct {
	// Force makes server-side apply take over fields another manager owns
	// (conflicts are forced, as the CVO overwrites them).
	Force bool
	// DryRun sends every write with dryRun=All: the server validates and
	// computes the result, and nothing is persisted. Objects whose
	// namespace or CustomResourceDefinition the same dry run would have
	// created are Skipped.
	DryRun bool
	// Retry bounds the retries of transient failures per request.
	Retry RetryOptions
	// TypeWait is how long an object of an expected kind (see
	// Manager.ExpectKinds) waits for its API to appear before failing as
	// ReasonResourceTypeMissing. Kinds nobody expects fail at once.
	TypeWait time.Duration
	// EstablishTimeout bounds the wait for an applied
	// CustomResourceDefinition to become Established.
	EstablishTimeout time.Duration
	// OnWait, when set, is told when Apply starts waiting for something,
	// and what: a kind or namespace the apply creates, a
	// CustomResourceDefinition to become Established, a retry after a
	// transient failure. It is called from the goroutine calling Apply, at
	// most once per object and reason.
	OnWait func(object manifest.ID, why string)
}

// DefaultApplyOptions force conflicts, retry transient failures for two
// minutes, and wait up to two minutes for a type or a
// CustomResourceDefinition.
func DefaultApplyOptions() ApplyOptions {
	return ApplyOptions{
		Force:            true,
		Retry:            DefaultRetryOptions(),
		TypeWait:         2 * time.Minute,
		EstablishTimeout: 2 * time.Minute,
	}
}

// Apply makes the cluster hold obj, the way the CVO does at install time:
//
//   - release.openshift.io/delete: "true": the object is deleted (Delete).
//   - release.openshift.io/create-only: "true", and every ClusterOperator:
//     created when missing, never updated (a ClusterOperator's status
//     belongs to its operator; Wait checks it).
//   - anything else: server-side apply with the Manager's field manager,
//     but only when the live object differs (InSync); an unchanged object
//     costs no write, and one GET, or a share of a list when the Manager
//     was told of several objects of its kind (ExpectObjects).
//
// A CustomResourceDefinition is waited on until Established, and the
// RESTMapper is reset so that its kind can be applied next.
//
// The Change says what happened. On failure the error is an *ApplyError
// and the Change's Action is Failed.
//
// The error of a Secret (or of a List holding Secrets) never shows the
// Secrets' data or stringData values, even when the server's message echoes
// them.
func (m *Manager) Apply(ctx context.Context, obj *unstructured.Unstructured, opts ApplyOptions) (Change, error) {
	change, err := m.apply(ctx, obj, opts)
	if err != nil && redact.HasSecret(obj.Object) {
		var values redact.Values
		values.AddSecret(obj.Object)
		var ae *ApplyError
		if errors.As(err, &ae) && ae.Err != nil {
			ae.Err = redact.Wrap(ae.Err, &values)
		} else {
			err = redact.Wrap(err, &values)
		}
	}
	return change, err
}

func (m *Manager) apply(ctx context.Context, obj *unstructured.Unstructured, opts ApplyOptions) (change Change, err error) {
	if obj.GetAnnotations()[manifest.DeleteAnnotation] == "true" {
		return m.Delete(ctx, obj, opts)
	}
	if k, ok := crdKind(obj); ok && obj.GroupVersionKind().GroupKind() == crdGK && !opts.DryRun {
		// Objects of its kind waiting for it must not wait out TypeWait
		// for a CustomResourceDefinition that will not come.
		defer func() {
			switch {
			case err == nil:
				m.noteFailedKind(k, nil)
			case ReasonOf(err) != ReasonCanceled:
				m.noteFailedKind(k, err)
			}
		}()
	}
	id := IDOf(obj)
	ctx = withOutageLimit(withWaitNote(withoutBodyLogs(WithObject(ctx, id), obj), id, opts.OnWait), m.health, opts.Retry.Timeout)
	change = Change{Object: id, DryRun: opts.DryRun, Action: Failed}
	mapping, skip, err := m.mapFor(ctx, obj, opts)
	if err != nil {
		return change, err
	}
	if skip != "" {
		change.Action, change.Message = Skipped, skip
		return change, nil
	}
	known, dropped, err := m.known(obj)
	if err != nil {
		return change, &ApplyError{Object: id, Verb: "apply", Reason: ReasonInvalid, Err: err}
	}
	required, err := prepare(known, mapping)
	if err != nil {
		return change, &ApplyError{Object: id, Verb: "apply", Reason: ReasonInvalid, Err: err}
	}
	if required, err = m.withProxy(ctx, required, opts); err != nil {
		return change, m.proxyFailed(ctx, id, err)
	}
	if len(dropped) > 0 {
		change.Message = "dropped fields its type does not have: " + strings.Join(dropped, ", ")
	}
	ri := m.resource(mapping, required.GetNamespace())
	name := required.GetName()
	ns := required.GetNamespace()
	gk := obj.GroupVersionKind().GroupKind()
	createOnly := obj.GetAnnotations()[manifest.CreateOnlyAnnotation] == "true" || gk == clusterOperatorGK

	// An object in a namespace this Manager created cannot exist yet,
	// unless this Manager applied it already: no need to read it.
	var live *unstructured.Unstructured
	readSkipped := !opts.DryRun && m.firstInCreatedNamespace(id)
	if !readSkipped {
		var listed bool
		if live, listed, err = m.read(ctx, mapping, ri, ns, name, opts); err != nil {
			return change, m.fail(ctx, id, "get", err)
		}
		if live == nil && listed && createOnly {
			// Missing from a list read a few seconds ago: a create-only
			// object is never updated, so make sure it is still missing
			// before creating it (which may be by server-side apply).
			if live, err = m.get(ctx, ri, name, opts); err != nil {
				return change, m.fail(ctx, id, "get", err)
			}
		}
	}
	// Whatever is written, no list read before answers for it again.
	wrote := false
	defer func() {
		if wrote {
			m.forget(mapping.Resource, ns, name)
		}
	}()
	if live == nil && ns != "" {
		// Without its namespace the write would fail; wait for it when
		// this apply creates it, else say so without sending the write.
		skip, err := m.waitNamespace(ctx, id, ns, opts)
		if err != nil {
			return change, err
		}
		if skip != "" {
			change.Action, change.Message = Skipped, skip
			return change, nil
		}
	}

	// current is the object as the server last returned it.
	current := live
	switch {
	case createOnly && live != nil:
		change.Action = Skipped
		change.Message = "create-only: exists"
		if gk == clusterOperatorGK {
			change.Message = "ClusterOperator exists: created once, never overwritten"
		}
	case createOnly && (readSkipped || m.createdKind(gk)):
		// Nobody but this apply can have made it since the read: its
		// namespace or its CustomResourceDefinition is this apply's own
		// (unless another apply runs at the same time: then it exists).
		// Server-side apply creates it without the pause a POST gets
		// right after a CRD becomes established.
		wrote = true
		created, err := m.createByApply(ctx, ri, required, opts)
		if err != nil {
			return m.failWrite(ctx, change, "create", err, opts)
		}
		change.Action, current = Created, created
		if created == nil {
			change.Action, change.Message = Skipped, "create-only: exists"
		}
	case createOnly:
		wrote = true
		created, err := m.create(ctx, ri, required, opts)
		if err != nil {
			return m.failWrite(ctx, change, "create", err, opts)
		}
		change.Action, change.Message, current = Skipped, "create-only: exists", created
		if created != nil {
			change.Action, change.Message = Created, ""
		}
	case live == nil:
		wrote = true
		applied, err := m.serverSideApply(ctx, ri, required, opts)
		if err != nil && Classify(err) == ReasonInvalid {
			// Server-side apply cannot send a null, and some schemas
			// require fields their Go type leaves null (a
			// SecurityContextConstraints' allowedCapabilities): create the
			// object as the CVO does, from its Go type.
			created, cerr := m.create(ctx, ri, required, opts)
			if cerr == nil && created != nil {
				change.Action, current = Created, created
				change.Message = joinMessages(change.Message, "created with POST from its Go type: server-side apply was rejected: "+err.Error())
				break
			}
			if cerr == nil {
				// It exists now: another writer (a second apply running
				// at the same time) created it since it was read. What
				// server-side apply could not create it can update.
				var ok bool
				if change, current, ok, err = m.updateRaced(ctx, change, ri, required, opts); ok {
					break
				}
			}
		}
		if err != nil {
			return m.failWrite(ctx, change, "apply", err, opts)
		}
		change.Action, current = Created, applied
		if readSkipped && managedByOthers(applied, m.fieldManager) {
			// A controller had made it already (a namespace's default
			// ServiceAccount, say).
			change.Action = Configured
		}
	default:
		d := compare(required, live, m.fieldManager)
		if d.inSync() {
			change.Action = Unchanged
			break
		}
		wrote = true
		if change, current, err = m.update(ctx, change, ri, required, live, d, opts); err != nil {
			return m.failWrite(ctx, change, "apply", err, opts)
		}
	}

	if opts.DryRun {
		if change.Action == Created {
			m.noteDryRun(required)
		}
		return change, nil
	}
	if gk == namespaceGK && change.Action == Created {
		m.noteCreatedNamespace(name)
	}
	if gk == crdGK {
		if err := m.waitEstablished(ctx, ri, name, current, change.Action != Unchanged && change.Action != Skipped, opts); err != nil {
			change.Action = Failed
			return change, err
		}
		if k, ok := crdKind(required); ok {
			m.ExpectKinds(k)
			if change.Action == Created {
				m.noteCreatedKind(k)
			}
		}
	}
	return change, nil
}

// typedBody is what create and createByApply send: required as its Go
// type encodes it when the scheme knows the kind (typed is then true, and
// the body a copy), else required itself.
func (m *Manager) typedBody(required *unstructured.Unstructured) (body *unstructured.Unstructured, typed bool, err error) {
	rt, err := m.roundTrip(required)
	if err != nil || rt == nil {
		return required, false, err
	}
	rt.SetNamespace(required.GetNamespace())
	return rt, true, nil
}

// createByApply creates required with server-side apply, from its Go type
// when the scheme knows the kind (as create does); a schema that requires
// fields server-side apply cannot send (nulls) gets a POST instead.
func (m *Manager) createByApply(ctx context.Context, ri dynamic.ResourceInterface, required *unstructured.Unstructured, opts ApplyOptions) (*unstructured.Unstructured, error) {
	body, typed, err := m.typedBody(required)
	if err != nil {
		return nil, err
	}
	if typed {
		delete(body.Object, "status")
	}
	applied, err := m.serverSideApply(ctx, ri, body, opts)
	if err != nil && Classify(err) == ReasonInvalid {
		if created, cerr := m.create(ctx, ri, required, opts); cerr == nil {
			// Created, or (nil) it exists: another writer made it.
			return created, nil
		}
	}
	return applied, err
}

// updateRaced is the write of an object that was missing when read and
// exists when created (another writer made it meanwhile): the live object
// is read again and, unless it is in sync already, applied to with
// server-side apply. ok is false (and err the last error) when that fails
// too.
func (m *Manager) updateRaced(ctx context.Context, change Change, ri dynamic.ResourceInterface, required *unstructured.Unstructured, opts ApplyOptions) (Change, *unstructured.Unstructured, bool, error) {
	live, err := m.get(ctx, ri, required.GetName(), opts)
	if err != nil || live == nil {
		if err == nil {
			err = fmt.Errorf("created by another writer, then gone")
		}
		return change, nil, false, err
	}
	change.Message = joinMessages(change.Message, "created by another writer meanwhile")
	d := compare(required, live, m.fieldManager)
	if d.inSync() {
		change.Action = Unchanged
		return change, live, true, nil
	}
	change, current, err := m.update(ctx, change, ri, required, live, d, opts)
	if err != nil {
		return change, nil, false, err
	}
	return change, current, true, nil
}

// update makes live, which differs from required as d says, what the CVO's
// merge would leave: a server-side apply when a field of required differs
// (or one the Manager applied left it), then a JSON patch removing what
// other managers set where the CVO's merge would not leave it (repair).
// The Change says Configured when either changed the object; the error is
// the write's, for the caller to wrap.
func (m *Manager) update(ctx context.Context, change Change, ri dynamic.ResourceInterface, required, live *unstructured.Unstructured, d drift, opts ApplyOptions) (Change, *unstructured.Unstructured, error) {
	current := live
	change.Action = Unchanged
	if d.apply != "" {
		applied, err := m.serverSideApply(ctx, ri, required, opts)
		if err != nil {
			return change, nil, err
		}
		current = applied
		d.removals = removals(required, applied, m.fieldManager)
	}
	if len(d.removals) > 0 {
		repaired, done, err := m.repair(ctx, ri, required, current, d.removals, opts)
		if err != nil {
			return change, nil, err
		}
		current = repaired
		if len(done) > 0 {
			change.Message = joinMessages(change.Message, removedMessage(done))
		}
	}
	if current.GetResourceVersion() != live.GetResourceVersion() {
		change.Action = Configured
	}
	return change, current, nil
}

// repairAttempts bounds the JSON patches of one repair: a patch whose
// tests fail (the object changed since it was read) is computed again
// from the object read again.
const repairAttempts = 3

// repair removes rs from current with a JSON patch that tests each value
// first, as the CVO's merge would have left the object without them. It
// returns the object and what was removed.
func (m *Manager) repair(ctx context.Context, ri dynamic.ResourceInterface, required, current *unstructured.Unstructured, rs []removal, opts ApplyOptions) (*unstructured.Unstructured, []removal, error) {
	for attempt := 1; ; attempt++ {
		body, err := jsonPatch(rs)
		if err != nil {
			return nil, nil, err
		}
		var patched *unstructured.Unstructured
		err = retry(ctx, opts.Retry, func() error {
			var err error
			patched, err = ri.Patch(ctx, current.GetName(), types.JSONPatchType, body,
				metav1.PatchOptions{FieldManager: m.fieldManager, DryRun: dryRun(opts)})
			return err
		})
		if err == nil {
			return patched, rs, nil
		}
		if !apierrors.IsInvalid(err) || attempt == repairAttempts {
			return nil, nil, err
		}
		// A test failed: someone changed the object since it was read.
		if current, err = m.get(ctx, ri, current.GetName(), opts); err != nil || current == nil {
			if err == nil {
				err = fmt.Errorf("deleted while being repaired")
			}
			return nil, nil, err
		}
		if rs = removals(required, current, m.fieldManager); len(rs) == 0 {
			return current, nil, nil
		}
	}
}

// removedMessage says what a repair removed, and who had set it.
func removedMessage(rs []removal) string {
	const most = 5
	var b strings.Builder
	b.WriteString("removed what the CVO's merge would not leave: ")
	for i, r := range rs {
		if i == most {
			fmt.Fprintf(&b, " and %d more", len(rs)-most)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		who := r.manager
		if who == "" {
			who = "another writer"
		}
		fmt.Fprintf(&b, "%s (set by %s)", r, who)
	}
	return b.String()
}

// create POSTs required, as its Go type encodes it when the scheme knows
// the kind (so that fields the type always has are there: a
// ClusterOperator's spec). It returns the created object, or nil when the
// object exists already.
func (m *Manager) create(ctx context.Context, ri dynamic.ResourceInterface, required *unstructured.Unstructured, opts ApplyOptions) (*unstructured.Unstructured, error) {
	body, _, err := m.typedBody(required)
	if err != nil {
		return nil, err
	}
	var created *unstructured.Unstructured
	err = retry(ctx, opts.Retry, func() error {
		var err error
		created, err = ri.Create(ctx, body, metav1.CreateOptions{FieldManager: m.fieldManager, DryRun: dryRun(opts)})
		if apierrors.IsAlreadyExists(err) {
			created = nil
			return nil
		}
		return err
	})
	return created, err
}

// managedByOthers reports whether a manager other than fieldManager has
// fields in obj.
func managedByOthers(obj *unstructured.Unstructured, fieldManager string) bool {
	for _, e := range obj.GetManagedFields() {
		if e.Manager != fieldManager {
			return true
		}
	}
	return false
}

func dryRun(opts ApplyOptions) []string {
	if opts.DryRun {
		return []string{metav1.DryRunAll}
	}
	return nil
}

// get returns the live object, or nil when there is none.
func (m *Manager) get(ctx context.Context, ri dynamic.ResourceInterface, name string, opts ApplyOptions) (*unstructured.Unstructured, error) {
	var live *unstructured.Unstructured
	err := retry(ctx, opts.Retry, func() error {
		var err error
		live, err = ri.Get(ctx, name, metav1.GetOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return live, err
}

func (m *Manager) serverSideApply(ctx context.Context, ri dynamic.ResourceInterface, required *unstructured.Unstructured, opts ApplyOptions) (*unstructured.Unstructured, error) {
	var applied *unstructured.Unstructured
	err := retry(ctx, opts.Retry, func() error {
		var err error
		applied, err = ri.Apply(ctx, required.GetName(), required, metav1.ApplyOptions{
			FieldManager: m.fieldManager, Force: opts.Force, DryRun: dryRun(opts)})
		return err
	})
	return applied, err
}

// failWrite turns a failed write into the result: in a dry run, an object
// whose namespace the run would have created is Skipped.
func (m *Manager) failWrite(ctx context.Context, change Change, verb string, err error, opts ApplyOptions) (Change, error) {
	if opts.DryRun && isNamespaceNotFound(err) && m.dryRunCreatedNamespace(change.Object.Namespace) {
		change.Action = Skipped
		change.Message = fmt.Sprintf("dry run: namespace %s would be created by this apply", change.Object.Namespace)
		return change, nil
	}
	return change, m.fail(ctx, change.Object, verb, err)
}

// fail wraps err for the object; when the context ended while retrying, the
// context's error is the cause and err the last error seen.
func (m *Manager) fail(ctx context.Context, id manifest.ID, verb string, err error) error {
	reason := Classify(err)
	err = explain(err)
	if ctxErr := ctx.Err(); ctxErr != nil && (retryable(err) || errors.Is(err, ctxErr)) {
		if !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w (last error: %v)", ctxErr, err)
		}
		reason = Classify(ctxErr)
	}
	return &ApplyError{Object: id, Verb: verb, Reason: reason, Err: err}
}

// mapFor returns obj's REST mapping. A kind the server does not serve
// fails as ReasonResourceTypeMissing, at once unless the kind is expected
// (then after opts.TypeWait); skip is set instead when a dry run would have
// created the kind.
func (m *Manager) mapFor(ctx context.Context, obj *unstructured.Unstructured, opts ApplyOptions) (mapping *meta.RESTMapping, skip string, err error) {
	gvk := obj.GroupVersionKind()
	gk := gvk.GroupKind()
	id := IDOf(obj)
	transient := newBackoff(opts.Retry)
	typeWait := newBackoff(RetryOptions{Timeout: opts.TypeWait, InitialBackoff: 50 * time.Millisecond, MaxBackoff: 250 * time.Millisecond})
	what := gvk.Kind + " in " + gvk.GroupVersion().String()
	for {
		seen := m.mapper.resets()
		// Taken before the lookup: a CRD established after it wakes
		// the wait below.
		established := m.established()
		mapping, err := m.mapping(gvk)
		if err == nil {
			return mapping, "", nil
		}
		if !meta.IsNoMatchError(err) {
			if retryable(err) && transient.wait(ctx, err) {
				continue
			}
			return nil, "", m.fail(ctx, id, "map", err)
		}
		if m.health.outage() > 0 {
			// The server is failing: discovery may have failed too, and
			// not knowing the kind says nothing about the server.
			if transient.wait(ctx, err) {
				m.refresh()
				continue
			}
			cause := error(fmt.Errorf("the server is not answering (last error: %w)", err))
			if oerr := outageExceeded(ctx); oerr != nil {
				cause = oerr
			}
			return nil, "", m.fail(ctx, id, "map", &OutageError{For: m.health.outage(), Limit: opts.Retry.Timeout, cause: cause})
		}
		if opts.DryRun && m.dryRunCreatedKind(gk) {
			return nil, "dry run: its CustomResourceDefinition would be created by this apply", nil
		}
		if cause := m.failedKind(gk); cause != nil {
			// Its CustomResourceDefinition was part of the apply and
			// failed: nothing will define the kind.
			return nil, "", &ApplyError{Object: id, Verb: "apply", Reason: ReasonResourceTypeMissing,
				Err: fmt.Errorf("the server has no API for %s: its CustomResourceDefinition was not applied: %w", what, cause)}
		}
		if m.isExpected(gk) {
			// Its CustomResourceDefinition is part of the apply (in a dry
			// run: it will be dry-run created); wait for it.
			noteWait(ctx, "waiting for its CustomResourceDefinition: no API for "+what+" yet")
			// Woken when a CRD is established (its kinds are mapped
			// from it); discovery is read again only now and then, in
			// case the kind's CRD was established out of sight.
			if typeWait.waitOr(ctx, err, established) {
				if !opts.DryRun {
					m.refreshEvery(expectedKindRefresh)
				}
				continue
			}
			if ctx.Err() != nil {
				return nil, "", m.fail(ctx, id, "apply", ctx.Err())
			}
			if oerr := outageExceeded(ctx); oerr != nil {
				return nil, "", &ApplyError{Object: id, Verb: "apply", Reason: ReasonUnavailable,
					Err: fmt.Errorf("waiting for the API of %s: %w", what, oerr)}
			}
			return nil, "", &ApplyError{Object: id, Verb: "apply", Reason: ReasonResourceTypeMissing,
				Err: fmt.Errorf("the server has no API for %s: its CustomResourceDefinition did not become available within %s", what, opts.TypeWait)}
		}
		if m.refreshOnce(gk, seen) {
			continue
		}
		return nil, "", &ApplyError{Object: id, Verb: "apply", Reason: ReasonResourceTypeMissing,
			Err: fmt.Errorf("the server has no API for %s, and no CustomResourceDefinition in this apply defines it", what)}
	}
}

// prepare returns the object to send: a copy without server-set metadata,
// with the namespace dropped for cluster-scoped kinds. A namespaced object
// must name its namespace.
func prepare(obj *unstructured.Unstructured, mapping *meta.RESTMapping) (*unstructured.Unstructured, error) {
	out := obj.DeepCopy()
	if md, ok := out.Object["metadata"].(map[string]any); ok {
		for _, k := range []string{"resourceVersion", "uid", "selfLink", "managedFields", "generation", "creationTimestamp"} {
			delete(md, k)
		}
	}
	namespaced := mapping.Scope.Name() == meta.RESTScopeNameNamespace
	switch {
	case namespaced && out.GetNamespace() == "":
		return nil, fmt.Errorf("%s is namespaced but metadata.namespace is empty", mapping.GroupVersionKind.Kind)
	case !namespaced && out.GetNamespace() != "":
		out.SetNamespace("")
	}
	return out, nil
}
