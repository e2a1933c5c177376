package resourceapply

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// namedObj is an object of apiVersion and kind with a namespace and name
// only.
func namedObj(apiVersion, kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// resettable is a static mapper that can be reset (to nothing new).
type resettable struct{ meta.RESTMapper }

func (resettable) Reset() {}

// prefetchMapper maps the kinds of the prefetch tests, and extra kinds of
// example.com/v1 (cluster-scoped); Foo is not served.
func prefetchMapper(extra ...string) meta.ResettableRESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	add := func(gv schema.GroupVersion, kind, resource string, scope meta.RESTScope) {
		m.AddSpecific(gv.WithKind(kind), gv.WithResource(resource), gv.WithResource(resource[:len(resource)-1]), scope)
	}
	add(schema.GroupVersion{Group: "apiextensions.k8s.io", Version: "v1"}, "CustomResourceDefinition", "customresourcedefinitions", meta.RESTScopeRoot)
	add(schema.GroupVersion{Version: "v1"}, "ConfigMap", "configmaps", meta.RESTScopeNamespace)
	add(schema.GroupVersion{Version: "v1"}, "Secret", "secrets", meta.RESTScopeNamespace)
	add(schema.GroupVersion{Group: "apps", Version: "v1"}, "Deployment", "deployments", meta.RESTScopeNamespace)
	for _, k := range extra {
		add(schema.GroupVersion{Group: "example.com", Version: "v1"}, k, k+"s", meta.RESTScopeRoot)
	}
	return resettable{m}
}

// recordingLister lists name-only objects a and b of any key, recording
// the keys in the order asked, and how many lists ran at once at most.
type recordingLister struct {
	mu          sync.Mutex
	keys        []listKey
	inFlight    int
	maxInFlight int
	// hold, when set, is waited for by every list (or its ctx).
	hold chan struct{}
	// fail makes the first list of each key fail.
	fail   bool
	failed map[listKey]bool
}

func (l *recordingLister) list(ctx context.Context, key listKey, limit int64) ([]*unstructured.Unstructured, string, error) {
	l.mu.Lock()
	l.keys = append(l.keys, key)
	l.inFlight++
	l.maxInFlight = max(l.maxInFlight, l.inFlight)
	fail := l.fail && !l.failed[key]
	if fail {
		if l.failed == nil {
			l.failed = map[listKey]bool{}
		}
		l.failed[key] = true
	}
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.inFlight--
		l.mu.Unlock()
	}()
	if l.hold != nil {
		select {
		case <-l.hold:
		case <-ctx.Done():
			return nil, "", ctx.Err()
		}
	}
	if fail {
		return nil, "", errors.New("connection reset")
	}
	var out []*unstructured.Unstructured
	for _, name := range []string{"a", "b"} {
		u := &unstructured.Unstructured{}
		u.SetNamespace(key.namespace)
		u.SetName(name)
		out = append(out, u)
	}
	return out, "", nil
}

func (l *recordingLister) calls() []listKey {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.keys)
}

func waitDone(t *testing.T, done <-chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Prefetch did not end")
	}
}

// TestPrefetch: the lists the reads of the objects need are read ahead,
// once each; kinds that are not served, read
// by GET (one object of its kind, Secrets) are not listed; a read then
// takes its object from the prefetched list without listing again.
func TestPrefetch(t *testing.T) {
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	objs := []*unstructured.Unstructured{
		namedObj("v1", "ConfigMap", "x", "a"), namedObj("v1", "ConfigMap", "x", "b"),
		namedObj("v1", "ConfigMap", "y", "a"), // alone in y: a GET
		namedObj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "a"),
		namedObj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "b"),
		namedObj("v1", "Secret", "x", "a"), namedObj("v1", "Secret", "x", "b"), // never listed
		namedObj("apps/v1", "Deployment", "x", "a"),                                            // alone of its kind
		namedObj("example.com/v1", "Foo", "", "a"), namedObj("example.com/v1", "Foo", "", "b"), // not served
	}
	m := New(nil, prefetchMapper(), Options{})
	l := &recordingLister{}
	m.lister = l.list
	m.ExpectObjects(objs...)
	waitDone(t, m.Prefetch(t.Context(), objs, ApplyOptions{}))
	// Two lists run at once: each is read once, in whichever order.
	want := []listKey{{gvr: cms, namespace: "x"}, {gvr: crds}} // by resource
	got := l.calls()
	slices.SortFunc(got, func(a, b listKey) int { return strings.Compare(a.gvr.Resource, b.gvr.Resource) })
	if !slices.Equal(got, want) {
		t.Fatalf("lists read %v, want %v", got, want)
	}
	mapping, err := m.mapper.RESTMapping(schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}, "v1")
	if err != nil {
		t.Fatal(err)
	}
	obj, listed, err := m.read(t.Context(), mapping, nil, "", "b", ApplyOptions{})
	if err != nil || !listed || obj == nil || obj.GetName() != "b" {
		t.Fatalf("read of CRD b: %v listed %v, %v; want it from the prefetched list", obj, listed, err)
	}
	if n := len(l.calls()); n != 2 {
		t.Errorf("the read listed again: %d lists", n)
	}
}

// TestPrefetchBounded: at most prefetchParallel lists at once, and an
// interrupt stops what has not started.
func TestPrefetchBounded(t *testing.T) {
	var kinds []string
	var objs []*unstructured.Unstructured
	for _, k := range []string{"Aa", "Bb", "Cc", "Dd", "Ee", "Ff", "Gg", "Hh", "Ii", "Jj"} {
		kinds = append(kinds, k)
		objs = append(objs, namedObj("example.com/v1", k, "", "a"), namedObj("example.com/v1", k, "", "b"))
	}
	m := New(nil, prefetchMapper(kinds...), Options{})
	l := &recordingLister{hold: make(chan struct{})}
	m.lister = l.list
	m.ExpectObjects(objs...)
	ctx, cancel := context.WithCancel(t.Context())
	done := m.Prefetch(ctx, objs, ApplyOptions{})
	deadline := time.Now().Add(5 * time.Second)
	for len(l.calls()) < prefetchParallel && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // a fifth list would start now
	if n := len(l.calls()); n != prefetchParallel {
		t.Fatalf("%d lists started while none ended, want %d", n, prefetchParallel)
	}
	cancel()
	waitDone(t, done)
	if n := len(l.calls()); n >= len(kinds) {
		t.Errorf("%d of %d lists started after the interrupt", n, len(kinds))
	}
	if l.maxInFlight > prefetchParallel {
		t.Errorf("%d lists at once, want at most %d", l.maxInFlight, prefetchParallel)
	}
}

// TestPrefetchFailed: a prefetched list that failed is read again by the
// first read that needs it.
func TestPrefetchFailed(t *testing.T) {
	objs := []*unstructured.Unstructured{
		namedObj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "a"),
		namedObj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "b"),
	}
	m := New(nil, prefetchMapper(), Options{})
	l := &recordingLister{fail: true}
	m.lister = l.list
	m.ExpectObjects(objs...)
	waitDone(t, m.Prefetch(t.Context(), objs, ApplyOptions{}))
	mapping, err := m.mapper.RESTMapping(schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}, "v1")
	if err != nil {
		t.Fatal(err)
	}
	obj, listed, err := m.read(t.Context(), mapping, nil, "", "a", ApplyOptions{})
	if err != nil || !listed || obj == nil {
		t.Fatalf("read after a failed prefetch: %v listed %v, %v; want it listed again", obj, listed, err)
	}
	if n := len(l.calls()); n != 2 {
		t.Errorf("%d lists, want 2 (the failed prefetch, the read's)", n)
	}
}

// TestFailedKindsAreForgotten: a CustomResourceDefinition that failed
// (a timeout on a loaded server) stops its kind's objects in that apply
// only: the next run (the operator's next pass) and a later success
// forget it, so that a pass does not fail on an old failure forever.
func TestFailedKindsAreForgotten(t *testing.T) {
	m := New(nil, prefetchMapper(), Options{})
	gk := schema.GroupKind{Group: "example.com", Kind: "Widget"}
	m.noteFailedKind(gk, errors.New("timeout"))
	m.NewRun()
	if err := m.failedKind(gk); err != nil {
		t.Errorf("after NewRun: %v", err)
	}
	m.noteFailedKind(gk, errors.New("timeout"))
	m.noteFailedKind(gk, nil)
	if err := m.failedKind(gk); err != nil {
		t.Errorf("after the CRD went in: %v", err)
	}
}
