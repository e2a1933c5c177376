//go:build e2e

package resourceapply

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/payload-apply/payload-apply/test/apiserver"
)

// diff runs Diff on a YAML document (NS is replaced by the test's
// namespace) and checks the action.
func (e *env) diff(doc string, want Action) Preview {
	e.t.Helper()
	p, err := e.mgr.Diff(e.t.Context(), parse(e.t, strings.ReplaceAll(doc, "NS", e.ns)), DefaultDiffOptions())
	if err != nil {
		e.t.Fatalf("diff: %v", err)
	}
	if p.Action != want {
		e.t.Fatalf("action %s (%s), want %s", p.Action, p.Message, want)
	}
	return p
}

func TestDiff(t *testing.T) {
	e := newEnv(t, apiserver.Shared(t))
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: NS}\ndata: {x: \"1\"}\n"

	t.Run("missing: a dry-run apply, nothing persisted", func(t *testing.T) {
		e.count.reset()
		p := e.diff(cm, Created)
		if p.Live != nil || p.AsGiven {
			t.Errorf("live %v, as given %v", p.Live, p.AsGiven)
		}
		if got, _, _ := unstructured.NestedString(p.Merged.Object, "data", "x"); got != "1" || p.Merged.GetUID() == "" {
			t.Errorf("merged is not the server's dry run: %v", p.Merged.Object)
		}
		if e.get(configMaps, e.ns, "cm") != nil {
			t.Error("the dry run created the object")
		}
		if w := e.count.writes.Load(); w != 1 {
			t.Errorf("%d writes, want the one dry run", w)
		}
	})
	if _, err := e.apply(cm); err != nil {
		t.Fatal(err)
	}
	t.Run("in sync: one read, no dry run", func(t *testing.T) {
		e.count.reset()
		p := e.diff(cm, Unchanged)
		if p.Merged != p.Live {
			t.Error("merged is not the live object")
		}
		if r, w := e.count.reads.Load(), e.count.writes.Load(); r != 1 || w != 0 {
			t.Errorf("%d reads, %d writes; want 1 and 0", r, w)
		}
	})
	t.Run("drift: the dry run puts the payload's value back", func(t *testing.T) {
		live := e.get(configMaps, e.ns, "cm")
		_ = unstructured.SetNestedField(live.Object, "edited", "data", "x")
		if _, err := e.client.Resource(configMaps).Namespace(e.ns).Update(t.Context(), live, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
			t.Fatal(err)
		}
		e.count.reset()
		p := e.diff(cm, Configured)
		if got, _, _ := unstructured.NestedString(p.Live.Object, "data", "x"); got != "edited" {
			t.Errorf("live data.x = %q", got)
		}
		if got, _, _ := unstructured.NestedString(p.Merged.Object, "data", "x"); got != "1" {
			t.Errorf("merged data.x = %q", got)
		}
		if got, _, _ := unstructured.NestedString(e.get(configMaps, e.ns, "cm").Object, "data", "x"); got != "edited" {
			t.Errorf("the dry run changed the object: data.x = %q", got)
		}
		if r, w := e.count.reads.Load(), e.count.writes.Load(); r != 1 || w != 1 {
			t.Errorf("%d reads, %d writes; want 1 and 1", r, w)
		}
	})

	once := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: once, namespace: NS, annotations: {release.openshift.io/create-only: \"true\"}}\ndata: {x: \"1\"}\n"
	t.Run("create-only, missing: a dry-run create", func(t *testing.T) {
		p := e.diff(once, Created)
		if p.Merged == nil || p.Merged.GetUID() == "" {
			t.Errorf("merged %v", p.Merged)
		}
	})
	if _, err := e.apply(once); err != nil {
		t.Fatal(err)
	}
	t.Run("create-only, exists and differs: unchanged, no dry run", func(t *testing.T) {
		e.count.reset()
		p := e.diff(strings.Replace(once, `x: "1"`, `x: "2"`, 1), Skipped)
		if p.Merged != p.Live {
			t.Error("merged is not the live object")
		}
		if w := e.count.writes.Load(); w != 0 {
			t.Errorf("%d writes", w)
		}
	})

	del := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: once, namespace: NS, annotations: {release.openshift.io/delete: \"true\"}}\n"
	t.Run("to delete, exists: the live object, no write", func(t *testing.T) {
		e.count.reset()
		p := e.diff(del, Deleted)
		if p.Live == nil || p.Merged != nil {
			t.Errorf("live %v, merged %v", p.Live, p.Merged)
		}
		if w := e.count.writes.Load(); w != 0 {
			t.Errorf("%d writes", w)
		}
	})
	t.Run("to delete, gone: nothing", func(t *testing.T) {
		p := e.diff(strings.Replace(del, "name: once", "name: gone", 1), Skipped)
		if p.Live != nil || p.Merged != nil {
			t.Errorf("live %v, merged %v", p.Live, p.Merged)
		}
	})
}

func TestDiffMissingKindsAndNamespaces(t *testing.T) {
	e := newEnv(t, apiserver.Shared(t))
	group := e.ns + ".example.com"
	widget := "apiVersion: " + group + "/v1\nkind: Widget\nmetadata: {name: w, namespace: NS}\nspec: {size: 1}\n"
	later := e.ns + "-later"
	objs := []*unstructured.Unstructured{
		parse(t, strings.ReplaceAll(widgetCRD, "KIND", e.ns)),
		parse(t, strings.ReplaceAll(widget, "NS", e.ns)),
		parse(t, strings.ReplaceAll(strings.Replace(widget, "Widget", "Gadget", 1), "NS", e.ns)),
		parse(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: "+later+"}\n"),
		parse(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: "+later+"}\n"),
		parse(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: "+e.ns+"-nowhere}\n"),
	}
	e.count.reset()
	previews, err := e.mgr.DiffAll(t.Context(), objs, DefaultDiffOptions())
	type want struct {
		action  Action
		asGiven bool
		reason  Reason
	}
	wants := []want{
		{action: Created},
		{action: Created, asGiven: true},
		{action: Failed, reason: ReasonResourceTypeMissing},
		{action: Created},
		{action: Created, asGiven: true},
		{action: Failed, reason: ReasonNamespaceMissing},
	}
	if len(previews) != len(wants) {
		t.Fatalf("%d previews", len(previews))
	}
	for i, w := range wants {
		p := previews[i]
		if p.Object != IDOf(objs[i]) {
			t.Errorf("preview %d is %s, want %s", i, p.Object, IDOf(objs[i]))
		}
		if p.Action != w.action || p.AsGiven != w.asGiven || ReasonOf(p.Err) != w.reason {
			t.Errorf("%s: action %s, as given %v, reason %q (%v); want %s, %v, %q", p.Object, p.Action, p.AsGiven, ReasonOf(p.Err), p.Err, w.action, w.asGiven, w.reason)
		}
		if p.AsGiven && p.Merged == nil {
			t.Errorf("%s: as given, but no object", p.Object)
		}
	}
	if err == nil || strings.Count(err.Error(), "\n") != 1 {
		t.Errorf("error %v, want the two failures", err)
	}
	if !strings.Contains(err.Error(), "Gadget."+group+"/"+e.ns+"/w: apply: resource type missing: ") ||
		!strings.Contains(err.Error(), "ConfigMap/"+e.ns+"-nowhere/c: apply: namespace missing: namespace \""+e.ns+"-nowhere\" does not exist, and no Namespace in this plan creates it") {
		t.Errorf("messages: %v", err)
	}
	// The CRD and the Namespace are dry runs; nothing else writes.
	if w := e.count.writes.Load(); w != 2 {
		t.Errorf("%d writes, want 2 dry runs", w)
	}
}
