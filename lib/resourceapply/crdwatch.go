package resourceapply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// crdWatcher watches one CustomResourceDefinition by name.
type crdWatcher func(ctx context.Context, name string) (watch.Interface, error)

// dynamicCRDWatcher watches through the dynamic client: every event's
// whole CRD, schemas included, decoded into an unstructured object.
func dynamicCRDWatcher(ri dynamic.ResourceInterface) crdWatcher {
	return func(ctx context.Context, name string) (watch.Interface, error) {
		return ri.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	}
}

// slimCRDWatcher watches with a REST client and decodes of each event only
// what waitEstablished reads (the name, resource version, deletion
// timestamp and status conditions) and what its kinds are mapped from
// (crdMappings: the group, scope, versions served and names accepted): a
// CRD's schemas, most of its bytes,
// are scanned but never built into maps. A first install waits for every
// CRD it creates, and decoding their events whole was a fifth of the
// client's CPU.
func slimCRDWatcher(rc rest.Interface) crdWatcher {
	return func(ctx context.Context, name string) (watch.Interface, error) {
		body, err := rc.Get().AbsPath("/apis", crdGK.Group, "v1", "customresourcedefinitions").
			Param("watch", "true").
			Param("fieldSelector", fields.OneTermEqualSelector("metadata.name", name).String()).
			Stream(ctx)
		if err != nil {
			return nil, err
		}
		return newSlimWatch(body), nil
	}
}

// slimEvent is a watch event of a CustomResourceDefinition as
// waitEstablished reads it. An ERROR event's object is a Status, of which
// nothing here is read.
type slimEvent struct {
	Type   watch.EventType `json:"type"`
	Object struct {
		Metadata struct {
			Name              string  `json:"name"`
			ResourceVersion   string  `json:"resourceVersion"`
			DeletionTimestamp *string `json:"deletionTimestamp"`
		} `json:"metadata"`
		Spec struct {
			Group    string `json:"group"`
			Scope    string `json:"scope"`
			Versions []struct {
				Name   string `json:"name"`
				Served bool   `json:"served"`
			} `json:"versions"`
		} `json:"spec"`
		Status struct {
			Conditions []struct {
				Type    string `json:"type"`
				Status  string `json:"status"`
				Reason  string `json:"reason"`
				Message string `json:"message"`
			} `json:"conditions"`
			AcceptedNames struct {
				Kind   string `json:"kind"`
				Plural string `json:"plural"`
			} `json:"acceptedNames"`
		} `json:"status"`
	} `json:"object"`
}

// object is the event's CRD as an unstructured object with only the
// fields slimEvent keeps.
func (e *slimEvent) object() runtime.Object {
	meta := map[string]any{"name": e.Object.Metadata.Name, "resourceVersion": e.Object.Metadata.ResourceVersion}
	if e.Object.Metadata.DeletionTimestamp != nil {
		meta["deletionTimestamp"] = *e.Object.Metadata.DeletionTimestamp
	}
	conds := make([]any, 0, len(e.Object.Status.Conditions))
	for _, c := range e.Object.Status.Conditions {
		conds = append(conds, map[string]any{"type": c.Type, "status": c.Status, "reason": c.Reason, "message": c.Message})
	}
	spec := e.Object.Spec
	versions := make([]any, 0, len(spec.Versions))
	for _, v := range spec.Versions {
		versions = append(versions, map[string]any{"name": v.Name, "served": v.Served})
	}
	names := e.Object.Status.AcceptedNames
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": crdGK.Group + "/v1",
		"kind":       crdGK.Kind,
		"metadata":   meta,
		"spec":       map[string]any{"group": spec.Group, "scope": spec.Scope, "versions": versions},
		"status": map[string]any{"conditions": conds,
			"acceptedNames": map[string]any{"kind": names.Kind, "plural": names.Plural}},
	}}
}

// slimWatch is a watch.Interface over a watch response's body.
type slimWatch struct {
	body   io.ReadCloser
	result chan watch.Event
	done   chan struct{}
	once   sync.Once
}

// newSlimWatch reads events from body until it ends, fails or Stop is
// called; the result channel is closed then.
func newSlimWatch(body io.ReadCloser) *slimWatch {
	w := &slimWatch{body: body, result: make(chan watch.Event), done: make(chan struct{})}
	go w.receive()
	return w
}

func (w *slimWatch) receive() {
	defer close(w.result)
	defer w.body.Close()
	dec := json.NewDecoder(w.body)
	for {
		var e slimEvent
		err := dec.Decode(&e)
		var typeErr *json.UnmarshalTypeError
		switch {
		case errors.As(err, &typeErr) || e.Type == watch.Error:
			// An ERROR event's Status, or an event whose fields are not
			// of the types above: the event was read whole, and the
			// stream goes on.
			msg := "an error event"
			if e.Type != watch.Error {
				msg = fmt.Sprintf("a %s event not read: %v", e.Type, err)
			}
			if !w.send(watch.Event{Type: watch.Error, Object: &metav1.Status{Status: metav1.StatusFailure, Message: msg}}) {
				return
			}
			continue
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return
		case err != nil:
			w.send(watch.Event{Type: watch.Error, Object: &metav1.Status{
				Status: metav1.StatusFailure, Message: fmt.Sprintf("decoding a watch event: %v", err)}})
			return
		}
		if !w.send(watch.Event{Type: e.Type, Object: e.object()}) {
			return
		}
	}
}

// send delivers e unless the watch was stopped.
func (w *slimWatch) send(e watch.Event) bool {
	select {
	case w.result <- e:
		return true
	case <-w.done:
		return false
	}
}

// Stop ends the watch: the body is closed, which ends a blocked read.
func (w *slimWatch) Stop() {
	w.once.Do(func() {
		close(w.done)
		w.body.Close()
	})
}

// ResultChan returns the events, closed when the watch ends.
func (w *slimWatch) ResultChan() <-chan watch.Event { return w.result }
