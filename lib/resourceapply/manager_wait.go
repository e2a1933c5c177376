package resourceapply

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// WaitOptions say how long and how often Wait polls.
type WaitOptions struct {
	// Timeout bounds the wait; zero: until ctx ends.
	Timeout time.Duration
	// Interval is the pause between two polls; zero: one second.
	Interval time.Duration
	// MaxInterval, when above Interval, makes the pause double after every
	// poll up to it (quick first polls, then fewer requests).
	MaxInterval time.Duration
	// Readiness decides when an object is ready; nil: Check.
	Readiness func(required, live *unstructured.Unstructured) Readiness
	// Progress, when set, is called after every poll with what is still
	// pending, from the calling goroutine.
	Progress func(WaitProgress)
	// BeforePoll, when set, is called before every poll, from the calling
	// goroutine (to run the steps that write the statuses waited for).
	BeforePoll func(context.Context)
	// StopAtFailure ends the wait after the poll in which an object
	// reports a failure it will not leave (Readiness.Failed): the outcome
	// is known, and waiting for the others would only delay it. Objects
	// still pending then are not errors; the last Progress names them.
	StopAtFailure bool
}

// DefaultWaitOptions poll every second with no timeout of their own.
func DefaultWaitOptions() WaitOptions { return WaitOptions{Interval: time.Second} }

// WaitProgress is the state of a Wait after one poll.
type WaitProgress struct {
	// Ready and Total count objects.
	Ready, Total int
	// Pending are the objects not ready yet, in the order given to Wait,
	// each with what it lacks.
	Pending []Pending
}

// Pending is one object Wait still waits for.
type Pending struct {
	Object  manifest.ID
	Message string
	// Reason classifies Message (Readiness.Reason; ReadError when the
	// object could not be read).
	Reason string
}

// String prints "Kind/ns/name: message".
func (p Pending) String() string { return p.Object.String() + ": " + p.Message }

// listThreshold is the number of objects of one resource from which Wait
// lists the resource instead of getting each object.
const listThreshold = 4

// Wait polls objs until each is ready by Check (objs are the payload's
// objects: a ClusterOperator's expected versions come from them) or
// reports a failure it will not leave (with StopAtFailure, until the first
// such failure), or the timeout passes. Several objects of one resource
// are read with one LIST. It returns nil when all are ready, else an
// *ApplyError per object that is not (joined), with ReasonTimeout and the
// object's last message, or ReasonNotReady for a failure (objects still
// pending when StopAtFailure ended the wait are left out); objects whose
// kind the server does not know fail as ReasonResourceTypeMissing.
func (m *Manager) Wait(ctx context.Context, objs []*unstructured.Unstructured, opts WaitOptions) error {
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	check := opts.Readiness
	if check == nil {
		check = Check
	}
	interval := opts.Interval
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	type item struct {
		obj     *unstructured.Unstructured
		id      manifest.ID
		gvr     schema.GroupVersionResource
		ns      string
		ready   bool
		failed  bool
		message string
		reason  string
	}
	var errs []error
	var items []*item
	for _, o := range objs {
		id := IDOf(o)
		mapping, err := m.mapping(o.GroupVersionKind())
		if err != nil {
			errs = append(errs, m.fail(ctx, id, "wait", err))
			continue
		}
		it := &item{obj: o, id: id, gvr: mapping.Resource, message: "not read yet"}
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			it.ns = o.GetNamespace()
		}
		items = append(items, it)
	}
	start := time.Now()
	for {
		if opts.BeforePoll != nil {
			opts.BeforePoll(ctx)
		}
		// Group what is pending by resource.
		groups := map[schema.GroupVersionResource][]*item{}
		for _, it := range items {
			if !it.ready && !it.failed {
				groups[it.gvr] = append(groups[it.gvr], it)
			}
		}
		if len(groups) == 0 {
			break
		}
		var wg sync.WaitGroup
		sem := make(chan struct{}, 16)
		for gvr, group := range groups {
			if len(group) >= listThreshold {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sem <- struct{}{}
					defer func() { <-sem }()
					list, err := m.client.Resource(gvr).List(withoutBodyLogs(ctx, group[0].obj), metav1.ListOptions{})
					if err != nil {
						for _, it := range group {
							it.message, it.reason = "list: "+err.Error(), "ReadError"
						}
						return
					}
					byKey := make(map[string]*unstructured.Unstructured, len(list.Items))
					for i := range list.Items {
						byKey[list.Items[i].GetNamespace()+"/"+list.Items[i].GetName()] = &list.Items[i]
					}
					for _, it := range group {
						r := check(it.obj, byKey[it.ns+"/"+it.obj.GetName()])
						it.ready, it.failed, it.message, it.reason = r.Ready, r.Failed, r.Message, r.Reason
					}
				}()
				continue
			}
			for _, it := range group {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sem <- struct{}{}
					defer func() { <-sem }()
					ri := m.client.Resource(gvr).Namespace(it.ns)
					live, err := ri.Get(withoutBodyLogs(WithObject(ctx, it.id), it.obj), it.obj.GetName(), metav1.GetOptions{})
					switch {
					case apierrors.IsNotFound(err):
						live = nil
					case err != nil:
						it.message, it.reason = "get: "+err.Error(), "ReadError"
						return
					}
					r := check(it.obj, live)
					it.ready, it.failed, it.message, it.reason = r.Ready, r.Failed, r.Message, r.Reason
				}()
			}
		}
		wg.Wait()
		if opts.Progress != nil {
			p := WaitProgress{Total: len(items)}
			for _, it := range items {
				if it.ready {
					p.Ready++
				} else {
					p.Pending = append(p.Pending, Pending{Object: it.id, Message: it.message, Reason: it.reason})
				}
			}
			opts.Progress(p)
		}
		pending, failed := 0, 0
		for _, it := range items {
			switch {
			case it.failed:
				failed++
			case !it.ready:
				pending++
			}
		}
		if pending == 0 || opts.StopAtFailure && failed > 0 {
			break
		}
		t := time.NewTimer(interval)
		if interval *= 2; interval > opts.MaxInterval {
			interval = max(opts.MaxInterval, opts.Interval)
		}
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		if ctx.Err() != nil {
			break
		}
	}
	waited := time.Since(start).Round(time.Second)
	for _, it := range items {
		switch {
		case it.ready:
		case !it.failed && opts.StopAtFailure && ctx.Err() == nil:
			// Not waited for: another object failed.
		case it.failed:
			errs = append(errs, &ApplyError{Object: it.id, Verb: "wait", Reason: ReasonNotReady, Err: errors.New(it.message)})
		default:
			reason := Classify(ctx.Err())
			errs = append(errs, &ApplyError{Object: it.id, Verb: "wait", Reason: reason,
				Err: fmt.Errorf("not ready after %s: %s", waited, it.message)})
		}
	}
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return errors.Join(errs...)
}
