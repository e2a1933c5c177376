package resourceapply

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestListKeyFor: which list answers the read of an object.
func TestListKeyFor(t *testing.T) {
	obj := namedObj
	m := New(nil, nil, Options{})
	m.ExpectObjects(
		obj("v1", "ConfigMap", "x", "a"), obj("v1", "ConfigMap", "x", "b"), obj("v1", "ConfigMap", "y", "c"),
		obj("v1", "ServiceAccount", "x", "a"), obj("v1", "ServiceAccount", "y", "a"),
		obj("apps/v1", "Deployment", "x", "a"), obj("apps/v1", "Deployment", "x", "b"),
		obj("v1", "Service", "x", "a"),
		obj("v1", "Secret", "x", "a"), obj("v1", "Secret", "x", "b"), obj("v1", "Secret", "y", "c"),
		obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "a"), obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "b"),
		obj("config.openshift.io/v1", "Infrastructure", "", "cluster"),
	)
	mapping := func(apiVersion, kind, resource string, namespaced bool) *meta.RESTMapping {
		gv, _ := schema.ParseGroupVersion(apiVersion)
		scope := meta.RESTScopeRoot
		if namespaced {
			scope = meta.RESTScopeNamespace
		}
		return &meta.RESTMapping{GroupVersionKind: gv.WithKind(kind), Resource: gv.WithResource(resource), Scope: scope}
	}
	for _, tc := range []struct {
		name    string
		mapping *meta.RESTMapping
		ns      string
		want    listKey
		wantN   int
		ok      bool
	}{
		{"ConfigMaps per namespace", mapping("v1", "ConfigMap", "configmaps", true), "x", listKey{gvr: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, namespace: "x"}, 2, true},
		{"one ConfigMap in its namespace", mapping("v1", "ConfigMap", "configmaps", true), "y", listKey{}, 0, false},
		{"across namespaces", mapping("v1", "ServiceAccount", "serviceaccounts", true), "y", listKey{gvr: schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, all: true}, 2, true},
		{"one namespace", mapping("apps/v1", "Deployment", "deployments", true), "x", listKey{gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, namespace: "x"}, 2, true},
		{"one object", mapping("v1", "Service", "services", true), "x", listKey{}, 0, false},
		{"cluster-scoped", mapping("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", false), "", listKey{gvr: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}}, 2, true},
		{"one cluster-scoped", mapping("config.openshift.io/v1", "Infrastructure", "infrastructures", false), "", listKey{}, 0, false},
		{"too many across namespaces", mapping("v1", "ServiceAccount", "serviceaccounts", true), "x", listKey{}, 0, false},
		{"Secrets never", mapping("v1", "Secret", "secrets", true), "x", listKey{}, 0, false},
		{"not told", mapping("v1", "Pod", "pods", true), "x", listKey{}, 0, false},
		{"other version", mapping("apps/v1beta1", "Deployment", "deployments", true), "x", listKey{}, 0, false},
		{"a list that held too much", mapping("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", false), "", listKey{}, 0, false},
		{"a namespace's list that held too much", mapping("apps/v1", "Deployment", "deployments", true), "x", listKey{}, 0, false},
	} {
		switch tc.name {
		case "too many across namespaces":
			m.tooBig[tc.mapping.Resource] = true
		case "a list that held too much":
			m.overLists[listKey{gvr: tc.mapping.Resource}] = true
		case "a namespace's list that held too much":
			m.overLists[listKey{gvr: tc.mapping.Resource, namespace: tc.ns}] = true
		}
		t.Run(tc.name, func(t *testing.T) {
			key, n, ok := m.listKeyFor(tc.mapping, tc.ns)
			if ok != tc.ok || (ok && (key != tc.want || n != tc.wantN)) {
				t.Errorf("got %+v %d %v, want %+v %d %v", key, n, ok, tc.want, tc.wantN, tc.ok)
			}
		})
	}
}

// TestWriteWhileListed: an object written while its list is being read is
// answered by GET, and the list still answers for the others: it is not
// read again (a stage writing many objects of one kind listed it again for
// nearly every object).
func TestWriteWhileListed(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	key := listKey{gvr: gvr}
	m := New(nil, nil, Options{})
	release := make(chan struct{})
	started := make(chan struct{})
	calls := 0
	m.lister = func(ctx context.Context, k listKey, limit int64) ([]*unstructured.Unstructured, string, error) {
		if calls++; calls == 1 {
			close(started)
			<-release
		}
		var out []*unstructured.Unstructured
		for _, name := range []string{"a", "b", "c"} {
			u := &unstructured.Unstructured{}
			u.SetName(name)
			out = append(out, u)
		}
		return out, "", nil
	}
	done := make(chan *listEntry)
	go func() {
		e, err := m.list(t.Context(), key, 3, ApplyOptions{})
		if err != nil {
			t.Error(err)
		}
		done <- e
	}()
	<-started
	m.forget(gvr, "", "b") // written while the list is read
	close(release)
	e := <-done
	if _, answered := m.take(e, "", "b"); answered {
		t.Error("b, written while listed, was answered from the list")
	}
	for _, name := range []string{"a", "c"} {
		if obj, answered := m.take(e, "", name); !answered || obj == nil {
			t.Errorf("%s: answered %v, %v; want the listed object", name, answered, obj)
		}
	}
	again, err := m.list(t.Context(), key, 3, ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again != e || calls != 1 {
		t.Errorf("the list was read %d times (same entry: %v), want once", calls, again == e)
	}
}
