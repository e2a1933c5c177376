//go:build e2e

package resourceapply

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/payload-apply/payload-apply/lib/requests"
	"github.com/payload-apply/payload-apply/test/apiserver"
)

// verbManager is a Manager told of objs (ExpectObjects) whose requests are
// counted by verb: a new run of an apply.
func verbManager(t *testing.T, s *apiserver.Server, objs []*unstructured.Unstructured) (*Manager, *requests.Counter) {
	t.Helper()
	cfg := s.RESTConfig()
	c := &requests.Counter{}
	c.Wrap(cfg)
	mgr, err := NewManager(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mgr.ExpectObjects(objs...)
	return mgr, c
}

// applyAll applies objs with mgr and returns the actions by object name.
func applyAll(t *testing.T, mgr *Manager, objs []*unstructured.Unstructured) map[string]Action {
	t.Helper()
	out := map[string]Action{}
	for _, o := range objs {
		c, err := mgr.Apply(t.Context(), o, DefaultApplyOptions())
		if err != nil {
			t.Fatalf("%s: %v", IDOf(o), err)
		}
		out[o.GetName()] = c.Action
	}
	return out
}

// counts returns c's counts without discovery (whose number depends on
// what the mapper had cached), and resets c.
func counts(c *requests.Counter) map[string]int64 {
	out := c.Counts()
	for k, v := range out {
		c.Add(k, -v)
		if k == requests.Discovery || v == 0 {
			delete(out, k)
		}
	}
	return out
}

// TestReadsByList: a Manager told of several objects of a kind reads them
// with one list (per namespace for ConfigMaps, across namespaces for other
// kinds), writes nothing when nothing changed, repairs exactly what drifted,
// never updates a create-only object, and reads by GET an object whose
// listed state it used already.
func TestReadsByList(t *testing.T) {
	s := apiserver.Shared(t)
	e := newEnv(t, s)
	other := e.ns + "-b"
	e.apply(fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", other))
	var docs []string
	for _, n := range []string{"a", "b", "c"} {
		docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: NS}\ndata: {k: %s}\n", n, n))
	}
	docs = append(docs, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: once, namespace: NS, annotations: {release.openshift.io/create-only: \"true\"}}\ndata: {k: first}\n")
	for _, ns := range []string{e.ns, other} {
		docs = append(docs, fmt.Sprintf("apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: r-%s, namespace: %s}\nrules: [{apiGroups: [\"\"], resources: [pods], verbs: [get]}]\n", ns, ns))
	}
	var objs []*unstructured.Unstructured
	for _, d := range docs {
		objs = append(objs, parse(t, strings.ReplaceAll(d, "NS", e.ns)))
	}
	applyAll(t, e.mgr, objs)
	rvs := func() map[string]string {
		out := map[string]string{}
		for _, o := range objs {
			gvr := configMaps
			if o.GetKind() == "Role" {
				gvr = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}
			}
			out[o.GetName()] = e.get(gvr, o.GetNamespace(), o.GetName()).GetResourceVersion()
		}
		return out
	}
	before := rvs()
	roles := "r-" + e.ns
	rolesB := "r-" + other

	t.Run("no-op", func(t *testing.T) {
		mgr, c := verbManager(t, s, objs)
		got := applyAll(t, mgr, objs)
		want := map[string]Action{"a": Unchanged, "b": Unchanged, "c": Unchanged, "once": Skipped, roles: Unchanged, rolesB: Unchanged}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("actions (-want +got):\n%s", diff)
		}
		// One list of the ConfigMaps of the namespace, one of Roles
		// across namespaces.
		if diff := cmp.Diff(map[string]int64{requests.List: 2}, counts(c)); diff != "" {
			t.Errorf("requests (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(before, rvs()); diff != "" {
			t.Errorf("resourceVersions (-before +after):\n%s", diff)
		}
	})

	t.Run("drift repaired, create-only left alone", func(t *testing.T) {
		ctx := t.Context()
		cms := e.client.Resource(configMaps).Namespace(e.ns)
		a := e.get(configMaps, e.ns, "a")
		_ = unstructured.SetNestedField(a.Object, "changed", "data", "k")
		if _, err := cms.Update(ctx, a, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := cms.Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		once := e.get(configMaps, e.ns, "once")
		_ = unstructured.SetNestedField(once.Object, "theirs", "data", "k")
		if _, err := cms.Update(ctx, once, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		mgr, c := verbManager(t, s, objs)
		got := applyAll(t, mgr, objs)
		want := map[string]Action{"a": Configured, "b": Created, "c": Unchanged, "once": Skipped, roles: Unchanged, rolesB: Unchanged}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("actions (-want +got):\n%s", diff)
		}
		// The missing b's namespace is read once (the apply holds no
		// Namespaces to list).
		if diff := cmp.Diff(map[string]int64{requests.List: 2, requests.Get: 1, requests.Patch: 2}, counts(c)); diff != "" {
			t.Errorf("requests (-want +got):\n%s", diff)
		}
		for name, want := range map[string]string{"a": "a", "b": "b", "once": "theirs"} {
			if v, _, _ := unstructured.NestedString(e.get(configMaps, e.ns, name).Object, "data", "k"); v != want {
				t.Errorf("%s: data.k %q, want %q", name, v, want)
			}
		}

		// The same Manager answered a's read from its list already:
		// applying it again reads it by GET and sees the change.
		changed := objs[0].DeepCopy()
		_ = unstructured.SetNestedField(changed.Object, "again", "data", "k")
		ch, err := mgr.Apply(ctx, changed, DefaultApplyOptions())
		mustAction(t, ch, err, Configured)
		ch, err = mgr.Apply(ctx, objs[0], DefaultApplyOptions())
		mustAction(t, ch, err, Configured)
		if diff := cmp.Diff(map[string]int64{requests.Get: 2, requests.Patch: 2}, counts(c)); diff != "" {
			t.Errorf("requests of the applies again (-want +got):\n%s", diff)
		}
	})

	t.Run("create-only made after the list is left alone", func(t *testing.T) {
		// Two create-only ConfigMaps: the first apply lists them, then
		// someone else creates the second.
		var pair []*unstructured.Unstructured
		for _, n := range []string{"late-1", "late-2"} {
			pair = append(pair, parse(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s, annotations: {release.openshift.io/create-only: \"true\"}}\ndata: {k: ours}\n", n, e.ns)))
		}
		mgr, c := verbManager(t, s, pair)
		ch, err := mgr.Apply(t.Context(), pair[0], DefaultApplyOptions())
		mustAction(t, ch, err, Created)
		theirs := pair[1].DeepCopy()
		_ = unstructured.SetNestedField(theirs.Object, "theirs", "data", "k")
		if _, err := e.client.Resource(configMaps).Namespace(e.ns).Create(t.Context(), theirs, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		ch, err = mgr.Apply(t.Context(), pair[1], DefaultApplyOptions())
		mustAction(t, ch, err, Skipped)
		if v, _, _ := unstructured.NestedString(e.get(configMaps, e.ns, "late-2").Object, "data", "k"); v != "theirs" {
			t.Errorf("late-2 data.k %q: a create-only object was overwritten", v)
		}
		// One list, a GET of each (missing from the list), one of the
		// namespace, and the first one's create.
		if diff := cmp.Diff(map[string]int64{requests.List: 1, requests.Get: 3, requests.Post: 1}, counts(c)); diff != "" {
			t.Errorf("requests (-want +got):\n%s", diff)
		}
	})

	// Lists that would hold too much, by count or by bytes: the reads
	// fall back to smaller lists and GETs, and a list over a bound is not
	// read again in the run. Seven more ConfigMaps and Roles the applies
	// do not hold; the subset is a and b and both Roles.
	for i := range 7 {
		if _, err := e.apply(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra-%d, namespace: NS}\n", i)); err != nil {
			t.Fatal(err)
		}
		if _, err := e.apply(fmt.Sprintf("apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: extra-%d, namespace: NS}\n", i)); err != nil {
			t.Fatal(err)
		}
	}
	subset := []*unstructured.Unstructured{objs[0], objs[1], objs[4], objs[5]}
	cmList := listKey{gvr: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, namespace: e.ns}
	for _, tc := range []struct {
		name string
		tune func(*Manager)
	}{{
		// At most 4 objects per object wanted (listMin 1): 2 ConfigMaps
		// wanted, 9 there; 2 Roles, more than 8 in the cluster.
		name: "lists that would hold too many objects",
		tune: func(m *Manager) { m.listMin = 1 },
	}, {
		// At most 64 bytes: every list is cut short and dropped.
		name: "lists over the byte bound",
		tune: func(m *Manager) { m.listMaxBytes = 64 },
	}} {
		t.Run(tc.name, func(t *testing.T) {
			mgr, c := verbManager(t, s, subset)
			tc.tune(mgr)
			got := applyAll(t, mgr, subset)
			for name, a := range got {
				if a != Unchanged {
					t.Errorf("%s: %s", name, a)
				}
			}
			// ConfigMaps: one list, then two GETs (the second read does
			// not list again). Roles: a list across namespaces, then one
			// per namespace (one Role in each: a GET each).
			if diff := cmp.Diff(map[string]int64{requests.List: 2, requests.Get: 4}, counts(c)); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if !mgr.overLists[cmList] {
				t.Errorf("the ConfigMaps' list is not marked as over a bound: %v", mgr.overLists)
			}
		})
	}
}

// TestRESTListerDecodesAsDynamic: the one-pass decoding of lists gives the
// objects the dynamic client gives, numbers and item kinds included.
func TestRESTListerDecodesAsDynamic(t *testing.T) {
	s := apiserver.Shared(t)
	mgr, _ := verbManager(t, s, nil)
	dyn := dynamicLister(mgr.client)
	for _, key := range []listKey{
		{gvr: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}, all: true},
		{gvr: schema.GroupVersionResource{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "flowschemas"}},
		{gvr: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}},
		{gvr: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}},
		{gvr: schema.GroupVersionResource{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "prioritylevelconfigurations"}},
		{gvr: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, namespace: "kube-system"},
	} {
		want, wantCont, err := dyn(t.Context(), key, 500)
		if err != nil {
			t.Fatal(err)
		}
		got, gotCont, err := mgr.lister(t.Context(), key, 500)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 {
			t.Errorf("%v: nothing listed: the test proves nothing", key)
		}
		if diff := cmp.Diff(want, got); diff != "" || gotCont != wantCont {
			t.Errorf("%v: (-dynamic +rest):\n%s\ncontinue %q, want %q", key, diff, gotCont, wantCont)
		}
	}
	// Past the limit: a continue token.
	_, cont, err := mgr.lister(t.Context(), listKey{gvr: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}}, 1)
	if err != nil || cont == "" {
		t.Errorf("limit 1: continue %q, %v", cont, err)
	}
	// An unknown resource: NotFound, as the dynamic client says.
	_, _, err = mgr.lister(t.Context(), listKey{gvr: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "nothings"}}, 1)
	if !apierrors.IsNotFound(err) {
		t.Errorf("unknown resource: %v, want NotFound", err)
	}
}
