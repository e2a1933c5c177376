//go:build e2e

package resourceapply

import (
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

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

// TestDiffAllReadsInBulk: DiffAll reads several objects of one resource
// with one bounded LIST (ConfigMaps per namespace), never lists Secrets,
// and falls back to GETs when a LIST would not fit (the ClusterRoles: with
// pages of 4 objects per object wanted, the server's own bootstrap roles
// outnumber the page).
func TestDiffAllReadsInBulk(t *testing.T) {
	s := apiserver.Shared(t)
	e := newEnv(t, s)
	ns2 := e.ns + "-b"
	e.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: " + ns2 + "}\n")
	cm := func(ns, name, x string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: " + ns + "}\ndata: {x: \"" + x + "\"}\n"
	}
	secret := func(name string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: " + name + ", namespace: NS}\ndata: {x: MQ==}\n"
	}
	role := func(name string) string {
		return "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: " + e.ns + "-" + name + "}\nrules: []\n"
	}
	for _, doc := range []string{cm(e.ns, "a", "1"), cm(e.ns, "b", "1"), cm(ns2, "c", "1"), secret("s1"), secret("s2"), role("r1")} {
		if _, err := e.apply(doc); err != nil {
			t.Fatal(err)
		}
	}
	var objs []*unstructured.Unstructured
	for _, doc := range []string{
		cm(e.ns, "a", "1"), cm(e.ns, "b", "2"), cm(ns2, "c", "1"), cm(ns2, "d", "1"),
		secret("s1"), secret("s2"), role("r1"), role("r2"),
	} {
		objs = append(objs, parse(t, strings.ReplaceAll(doc, "NS", e.ns)))
	}

	cfg := s.RESTConfig()
	var mu sync.Mutex
	var reads []string
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return rtFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet {
				mu.Lock()
				reads = append(reads, r.URL.Path+"?"+r.URL.RawQuery)
				mu.Unlock()
			}
			return rt.RoundTrip(r)
		})
	}
	mgr, err := NewManager(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mgr.listMin = 1
	previews, err := mgr.DiffAll(t.Context(), objs, DefaultDiffOptions())
	if err != nil {
		t.Fatal(err)
	}
	want := []Action{Unchanged, Configured, Unchanged, Created, Unchanged, Unchanged, Unchanged, Created}
	for i, p := range previews {
		if p.Action != want[i] {
			t.Errorf("%s: %s (%s), want %s", p.Object, p.Action, p.Message, want[i])
		}
	}

	count := func(re string) int {
		n := 0
		for _, r := range reads {
			if regexp.MustCompile(re).MatchString(r) {
				n++
			}
		}
		return n
	}
	if n := count(`/configmaps/`); n != 0 {
		t.Errorf("%d GETs of single ConfigMaps, want none:\n%s", n, strings.Join(reads, "\n"))
	}
	if n := count(`/namespaces/` + e.ns + `(-b)?/configmaps\?limit=8$`); n != 2 {
		t.Errorf("%d LISTs of ConfigMaps with a page of 8, want 1 per namespace:\n%s", n, strings.Join(reads, "\n"))
	}
	if n := count(`/secrets\?`); n != 0 {
		t.Errorf("Secrets listed:\n%s", strings.Join(reads, "\n"))
	}
	if n := count(`/secrets/s[12]\?`); n != 2 {
		t.Errorf("%d GETs of the Secrets, want 2:\n%s", n, strings.Join(reads, "\n"))
	}
	if n := count(`/clusterroles\?limit=8$`); n != 1 {
		t.Errorf("%d LISTs of ClusterRoles with a page of 8, want 1:\n%s", n, strings.Join(reads, "\n"))
	}
	roles, err := e.client.Resource(schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantGets := 0
	if len(roles.Items) > 8 {
		wantGets = 2
	}
	if n := count(`/clusterroles/` + e.ns); n != wantGets {
		t.Errorf("%d GETs of single ClusterRoles, want %d (%d on the server):\n%s", n, wantGets, len(roles.Items), strings.Join(reads, "\n"))
	}
}
