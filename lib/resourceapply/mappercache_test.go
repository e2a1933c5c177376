package resourceapply

import (
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// askingMapper answers from kinds and counts the questions; err, when
// set, is its answer to everything (a discovery that failed).
type askingMapper struct {
	meta.ResettableRESTMapper
	kinds   map[schema.GroupKind]bool
	err     error
	asked   int
	resets  int
	onAsked func()
}

func (c *askingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	c.asked++
	if c.onAsked != nil {
		c.onAsked()
	}
	if c.err != nil {
		return nil, c.err
	}
	if !c.kinds[gk] {
		return nil, &meta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions}
	}
	return &meta.RESTMapping{Resource: schema.GroupVersionResource{Group: gk.Group, Version: "v1", Resource: gk.Kind + "s"}}, nil
}

func (c *askingMapper) Reset() { c.resets++ }

func TestCachedMapper(t *testing.T) {
	deploy := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	monitor := schema.GroupKind{Group: "monitoring.coreos.com", Kind: "ServiceMonitor"}
	under := &askingMapper{kinds: map[schema.GroupKind]bool{deploy: true}}
	m := newCachedMapper(under)

	ask := func(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
		t.Helper()
		return m.RESTMapping(gk, versions...)
	}
	first, err := ask(deploy, "v1")
	for range 5 {
		again, err2 := ask(deploy, "v1")
		if again != first || err2 != err {
			t.Fatal("a remembered answer differs")
		}
	}
	if err != nil || under.asked != 1 {
		t.Fatalf("Deployment: %v, asked %d times, want once", err, under.asked)
	}
	if _, err := ask(deploy, "v1beta1"); err != nil || under.asked != 2 {
		t.Fatalf("another version: %v, asked %d, want a question of its own", err, under.asked)
	}
	for range 3 {
		if _, err := ask(monitor, "v1"); !meta.IsNoMatchError(err) {
			t.Fatalf("ServiceMonitor: %v, want no match", err)
		}
	}
	if under.asked != 3 {
		t.Fatalf("no match asked %d times in all, want once remembered", under.asked-2)
	}
	if _, err := ask(deploy, "v1", "v1beta1"); err != nil || under.asked != 4 {
		t.Fatalf("two versions: asked %d, want the mapper asked", under.asked)
	}

	// A reset forgets: the kind the server serves now is found.
	under.kinds[monitor] = true
	m.Reset()
	if _, err := ask(monitor, "v1"); err != nil || under.resets != 1 || under.asked != 5 {
		t.Fatalf("after a reset: %v, resets %d, asked %d", err, under.resets, under.asked)
	}

	// Another error is not remembered: the next question tries again.
	failing := &askingMapper{err: errors.New("discovery failed")}
	m = newCachedMapper(failing)
	for range 2 {
		if _, err := m.RESTMapping(deploy, "v1"); err == nil {
			t.Fatal("no error")
		}
	}
	if failing.asked != 2 {
		t.Fatalf("a failed discovery asked %d times, want 2 (not remembered)", failing.asked)
	}

	// An answer found while a reset happened is not kept past it.
	racing := &askingMapper{kinds: map[schema.GroupKind]bool{deploy: true}}
	m = newCachedMapper(racing)
	racing.onAsked = func() { racing.onAsked = nil; m.Reset() }
	if _, err := m.RESTMapping(deploy, "v1"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.RESTMapping(deploy, "v1"); err != nil || racing.asked != 2 {
		t.Fatalf("asked %d, want the answer from before the reset not remembered", racing.asked)
	}
}

func TestOwnedFields(t *testing.T) {
	live := parse(t, liveDeployment)
	fields := ownedFields(live, DefaultFieldManager)
	if _, ok := fields["f:spec"]; !ok {
		t.Fatalf("ownedFields = %v, want the Apply entry's set", fields)
	}
	if got := ownedFields(live, "kube-controller-manager"); got != nil {
		t.Errorf("an Update of status: %v, want nil", got)
	}
	for name, edit := range map[string]func(map[string]any){
		"not Apply":         func(e map[string]any) { e["operation"] = "Update" },
		"a subresource":     func(e map[string]any) { e["subresource"] = "status" },
		"no fieldsV1":       func(e map[string]any) { delete(e, "fieldsV1") },
		"fieldsV1 a string": func(e map[string]any) { e["fieldsV1"] = "f:spec" },
		"manager a number":  func(e map[string]any) { e["manager"] = int64(1) },
	} {
		live := parse(t, liveDeployment)
		edit(live.Object["metadata"].(map[string]any)["managedFields"].([]any)[0].(map[string]any))
		if got := ownedFields(live, DefaultFieldManager); got != nil {
			t.Errorf("%s: %v, want nil", name, got)
		}
	}
	delete(live.Object, "metadata")
	if got := ownedFields(live, DefaultFieldManager); got != nil {
		t.Errorf("no metadata: %v", got)
	}
}

// TestRefreshOnce: a kind missing from discovery read just now is
// missing; from discovery read long ago, or never, it is looked up again
// after a reset; after a reset made since the miss, without one; and only
// once per kind.
func TestRefreshOnce(t *testing.T) {
	monitor := schema.GroupKind{Group: "monitoring.coreos.com", Kind: "ServiceMonitor"}
	rule := schema.GroupKind{Group: "monitoring.coreos.com", Kind: "PrometheusRule"}
	creds := schema.GroupKind{Group: "cloudcredential.openshift.io", Kind: "CredentialsRequest"}
	under := &askingMapper{kinds: map[schema.GroupKind]bool{}}
	m := New(nil, under, Options{})

	if _, err := m.mapper.RESTMapping(monitor, "v1"); !meta.IsNoMatchError(err) {
		t.Fatal(err)
	}
	if m.refreshOnce(monitor, m.mapper.resets()) || under.resets != 0 {
		t.Fatalf("discovery just read: looked up again (resets %d)", under.resets)
	}

	m.mapper.mu.Lock()
	m.mapper.readAt = time.Now().Add(-time.Minute)
	m.mapper.mu.Unlock()
	if !m.refreshOnce(rule, m.mapper.resets()) || under.resets != 1 {
		t.Fatalf("discovery a minute old: not read again (resets %d)", under.resets)
	}
	if m.refreshOnce(rule, m.mapper.resets()) {
		t.Fatal("a second refresh of one kind")
	}

	seen := m.mapper.resets()
	m.mapper.Reset() // another kind's refresh, meanwhile
	if !m.refreshOnce(creds, seen) || under.resets != 2 {
		t.Fatalf("read again since the miss: %d resets, want none more", under.resets)
	}
}
