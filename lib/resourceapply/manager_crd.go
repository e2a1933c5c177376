package resourceapply

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// waitEstablished waits until the CustomResourceDefinition name is
// Established (and its names accepted), watching it, then has the mapper
// reset. current is its latest state when known; when it is Established
// and unchanged by this apply (changed false), its kind is served already
// and the mapper is left alone (a kind missing from it is still found:
// expected kinds refresh the mapper).
//
// A kube-apiserver that restarts while a CRD is Installing does not take
// it up again until the CRD changes (its establishing queue is fed by
// update events only): a CRD still Installing after establishNudge is
// nudged with an annotation added and removed again.
func (m *Manager) waitEstablished(ctx context.Context, ri dynamic.ResourceInterface, name string, current *unstructured.Unstructured, changed bool, opts ApplyOptions) error {
	id := manifest.ID{Group: crdGK.Group, Kind: crdGK.Kind, Name: name}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, opts.EstablishTimeout)
	defer cancel()
	last := Readiness{Message: "not read yet"}
	var lastObj *unstructured.Unstructured
	check := func(obj *unstructured.Unstructured) (done bool, err error) {
		last, lastObj = Check(nil, obj), obj
		switch {
		case last.Ready:
			m.crdEstablished(obj)
			return true, nil
		case last.Failed:
			return true, &ApplyError{Object: id, Verb: "wait", Reason: ReasonInvalid, Err: errors.New(last.Message)}
		}
		return false, nil
	}
	if current != nil && !changed {
		if r := Check(nil, current); r.Ready {
			return nil
		}
	}
	if current != nil {
		if done, err := check(current); done {
			return err
		}
	}
	noteWait(ctx, "waiting for Established")
	start, nudged := time.Now(), false
	b := newBackoff(RetryOptions{Timeout: opts.EstablishTimeout, InitialBackoff: 50 * time.Millisecond, MaxBackoff: time.Second})
	watchCRD := m.crdWatch
	if watchCRD == nil {
		watchCRD = dynamicCRDWatcher(ri)
	}
	for {
		// A watch without resourceVersion starts with the object as it
		// is, then reports each change; it is renewed every
		// establishNudge so that a lost connection cannot hang it.
		wctx, wcancel := context.WithTimeout(ctx, establishNudge)
		w, err := watchCRD(wctx, name)
		if err == nil {
			for ev := range w.ResultChan() {
				obj, ok := ev.Object.(*unstructured.Unstructured)
				if !ok || ev.Type == watch.Error || ev.Type == watch.Deleted {
					continue
				}
				if done, err := check(obj); done {
					w.Stop()
					wcancel()
					return err
				}
			}
			w.Stop()
		}
		wcancel()
		switch {
		case parent.Err() != nil:
			// The caller gave up (an interrupt, the apply's timeout):
			// not a CRD that failed to establish.
			return m.fail(parent, id, "wait", fmt.Errorf("%w: not Established yet: %s", parent.Err(), last.Message))
		case ctx.Err() != nil:
			return &ApplyError{Object: id, Verb: "wait", Reason: ReasonTimeout,
				Err: fmt.Errorf("not Established after %s: %s", opts.EstablishTimeout, last.Message)}
		case err != nil && !retryable(err) && !errors.Is(err, context.DeadlineExceeded):
			return m.fail(ctx, id, "wait", err)
		case err != nil:
			if !b.wait(ctx, err) {
				if oerr := outageExceeded(ctx); oerr != nil {
					err = fmt.Errorf("%w (last error: %v)", oerr, err)
				}
				return m.fail(ctx, id, "wait", err)
			}
		case outageExceeded(ctx) != nil:
			return m.fail(ctx, id, "wait", outageExceeded(ctx))
		case !nudged && time.Since(start) >= establishNudge && installing(lastObj):
			nudged = true
			noteWait(ctx, "nudging: Installing for "+establishNudge.String())
			if err := m.nudge(ctx, ri, name); err != nil && !retryable(err) {
				return m.fail(ctx, id, "wait", err)
			}
		}
	}
}

// establishNudge is how long a CRD may stay Installing before it is nudged.
const establishNudge = 10 * time.Second

// installing reports a CRD whose names are accepted but that is not
// Established.
func installing(crd *unstructured.Unstructured) bool {
	if crd == nil {
		return false
	}
	c := conditions(crd)
	return c["NamesAccepted"].Status == "True" && c["Established"].Status != "True"
}

// nudgeAnnotation is set and removed again to make kube-apiserver look at
// a CustomResourceDefinition again.
const nudgeAnnotation = "payload-apply.openshift.io/establish"

// nudge changes the CRD and changes it back: two update events, which put
// it back in kube-apiserver's establishing queue.
func (m *Manager) nudge(ctx context.Context, ri dynamic.ResourceInterface, name string) error {
	for _, patch := range []string{
		`{"metadata":{"annotations":{"` + nudgeAnnotation + `":"retry"}}}`,
		`{"metadata":{"annotations":{"` + nudgeAnnotation + `":null}}}`,
	} {
		if _, err := ri.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: m.fieldManager}); err != nil {
			return err
		}
	}
	return nil
}

// noteCreatedKind remembers a kind whose CustomResourceDefinition this
// Manager created.
func (m *Manager) noteCreatedKind(gk schema.GroupKind) {
	m.mu.Lock()
	m.createdKinds[gk] = true
	m.mu.Unlock()
}

// createdKind reports whether this Manager created the
// CustomResourceDefinition of gk.
func (m *Manager) createdKind(gk schema.GroupKind) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.createdKinds[gk]
}

// noteFailedKind remembers that the CustomResourceDefinition of gk could
// not be applied (or did not become Established), and why: the objects of
// gk waiting for their API stop waiting (mapFor). A nil err forgets it
// (the CustomResourceDefinition went in since).
func (m *Manager) noteFailedKind(gk schema.GroupKind, err error) {
	m.mu.Lock()
	if err == nil {
		delete(m.failedKinds, gk)
	} else {
		m.failedKinds[gk] = err
	}
	m.mu.Unlock()
}

// failedKind returns why the CustomResourceDefinition of gk failed, or nil.
func (m *Manager) failedKind(gk schema.GroupKind) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.failedKinds[gk]
}
