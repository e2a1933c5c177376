//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/test/apiserver"
)

// planned is one object of `render --list`.
type planned struct {
	level, file, apiVersion, kind, namespace, name string
}

func (p planned) gvk() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(p.apiVersion, p.kind)
}

// key identifies an object the way events name it ("Kind/ns/name").
func (p planned) key() string {
	if p.namespace == "" {
		return p.kind + "/" + p.name
	}
	return p.kind + "/" + p.namespace + "/" + p.name
}

// plannedObjects lists the objects the real payload's default profile
// applies.
func plannedObjects(t *testing.T) []planned {
	t.Helper()
	r := cli(t, t.Context(), "render", "--list", "--payload", realpayload.Dir(t))
	if r.Code != 0 {
		t.Fatalf("render --list: exit %d: %s", r.Code, r.Stderr)
	}
	var out []planned
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 7 {
			t.Fatalf("render --list line %q", line)
		}
		out = append(out, planned{level: f[0], file: f[2], apiVersion: f[3], kind: f[4], namespace: f[5], name: f[6]})
	}
	return out
}

// realRun is the outcome of applying the real payload to the shared
// server, once per test binary.
var realRun struct {
	once   sync.Once
	result result
	events []event
}

func applyRealToShared(t *testing.T) (*apiserver.Server, result, []event) {
	t.Helper()
	s := apiserver.Shared(t)
	payload := realpayload.Dir(t)
	realRun.once.Do(func() {
		realRun.result = cli(t, context.Background(), "apply", "--kubeconfig="+s.Kubeconfig, "--payload="+payload, "-o", "json")
		realRun.events = parseEvents(t, realRun.result.Stdout)
	})
	if realRun.events == nil {
		t.Fatal("the real payload was not applied to the shared server")
	}
	return s, realRun.result, realRun.events
}

// failures maps "Kind/ns/name" to the reason of every failed task.
func failures(events []event) map[string]string {
	out := map[string]string{}
	for _, e := range events {
		if e.Event == "task" && e.Action == "Failed" {
			out[e.object()] = e.Reason
		}
	}
	return out
}

// cluster is a client for reading what a server holds.
type cluster struct {
	client dynamic.Interface
	mapper meta.RESTMapper
}

func newCluster(t *testing.T, cfg *rest.Config) *cluster {
	t.Helper()
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &cluster{client: client, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}
}

func (c *cluster) resource(t *testing.T, gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool) {
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return schema.GroupVersionResource{}, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return m.Resource, true
}

// state is what a server holds of the payload: for every planned object
// that exists, its content without server-assigned fields; and, per
// resource, the names of every object payload-apply manages (so that
// duplicates would show).
func (c *cluster) state(t *testing.T, objs []planned) map[string]string {
	t.Helper()
	out := map[string]string{}
	lists := map[schema.GroupVersionResource]bool{}
	for _, p := range objs {
		gvr, ok := c.resource(t, p.gvk())
		if !ok {
			out[p.key()] = "resource type missing"
			continue
		}
		lists[gvr] = true
		u, err := c.client.Resource(gvr).Namespace(p.namespace).Get(t.Context(), p.name, metav1.GetOptions{})
		if err != nil {
			out[p.key()] = "absent"
			continue
		}
		out[p.key()] = normalize(t, u)
	}
	for gvr := range lists {
		l, err := c.client.Resource(gvr).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, u := range l.Items {
			for _, mf := range u.GetManagedFields() {
				if mf.Manager == "payload-apply" {
					names = append(names, u.GetNamespace()+"/"+u.GetName())
					break
				}
			}
		}
		sort.Strings(names)
		out["list "+gvr.String()] = strings.Join(names, " ")
	}
	return out
}

// normalize keeps what the payload decides: no status, no server metadata,
// no allocated cluster IPs.
func normalize(t *testing.T, u *unstructured.Unstructured) string {
	obj := u.DeepCopy().Object
	delete(obj, "status")
	md := obj["metadata"].(map[string]any)
	for k := range md {
		switch k {
		case "name", "namespace", "labels", "annotations", "ownerReferences":
		default:
			delete(md, k)
		}
	}
	if u.GetKind() == "Service" {
		unstructured.RemoveNestedField(obj, "spec", "clusterIP")
		unstructured.RemoveNestedField(obj, "spec", "clusterIPs")
	}
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// resourceVersions maps "Kind/ns/name" to the resourceVersion of every
// planned object that exists.
func (c *cluster) resourceVersions(t *testing.T, objs []planned) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range objs {
		gvr, ok := c.resource(t, p.gvk())
		if !ok {
			continue
		}
		u, err := c.client.Resource(gvr).Namespace(p.namespace).Get(t.Context(), p.name, metav1.GetOptions{})
		if err == nil {
			out[p.key()] = u.GetResourceVersion()
		}
	}
	return out
}

// TestApplyRealPayload applies the real payload (default profile): objects
// whose kind nothing defines fail as "resource type missing" without
// stopping anything else, and a second apply writes nothing.
func TestApplyRealPayload(t *testing.T) {
	objs := plannedObjects(t)
	s, r, events := applyRealToShared(t)
	c := newCluster(t, s.RESTConfig())

	t.Run("failures are classified and stop nothing else", func(t *testing.T) {
		if r.Code != 1 {
			t.Fatalf("exit %d, want 1 (some kinds have no CRD in the payload):\n%s", r.Code, r.Stderr)
		}
		fails := failures(events)
		tasks := map[string]event{}
		for _, e := range events {
			if e.Event == "task" {
				tasks[e.object()] = e
			}
		}
		missingKinds := map[string]int{}
		for _, p := range objs {
			_, served := c.resource(t, p.gvk())
			reason, failed := fails[p.key()]
			switch {
			case !served && tasks[p.key()].Action == "Skipped":
				// To be deleted, and its kind does not even exist.
				if !strings.HasPrefix(tasks[p.key()].Message, "already gone") {
					t.Errorf("%s: skipped: %s", p.key(), tasks[p.key()].Message)
				}
			case !served:
				missingKinds[p.kind]++
				if reason != "ResourceTypeMissing" {
					t.Errorf("%s: kind not served, but reason %q", p.key(), reason)
				}
			case failed && reason != "NamespaceMissing":
				t.Errorf("%s failed: %s", p.key(), reason)
			}
		}
		for kind, n := range missingKinds {
			t.Logf("resource type missing: %d %s", n, kind)
		}
		if len(missingKinds) == 0 {
			t.Error("no object of a kind without CRD: the test proves nothing")
		}
		// Every line on stderr names one failure, and nothing was
		// skipped for want of another node.
		if n := strings.Count(r.Stderr, "error: "); n != len(fails) {
			t.Errorf("%d error lines for %d failures", n, len(fails))
		}
		if strings.Contains(r.Stderr, "not applied: it requires") {
			t.Errorf("nodes were skipped:\n%s", r.Stderr)
		}
		if !strings.Contains(r.Stderr, "error: release-manifests/0000_10_config-operator_03_servicemonitor.yaml#0: ServiceMonitor.monitoring.coreos.com/openshift-config-operator/config-operator: apply: resource type missing:") {
			t.Errorf("no resource type missing line for the config operator's ServiceMonitor:\n%.2000s", r.Stderr)
		}
		// The components' steps are tasks too (the ingress placement).
		var steps int
		for _, e := range events {
			if e.Event == "task" && e.Step != "" {
				steps++
				if e.Action != "Configured" {
					t.Errorf("step %s: %s %s", e.Step, e.Action, e.Error)
				}
			}
		}
		sum := summaryOf(t, events)
		if *sum.Done != sum.Total || sum.Total != len(objs)+steps || steps == 0 {
			t.Errorf("%d of %d tasks done, %d objects planned and %d steps", *sum.Done, sum.Total, len(objs), steps)
		}
	})

	t.Run("what is missing is said at once, grouped, before the first write", func(t *testing.T) {
		// Every object that fails for want of its kind or namespace is
		// named by a "missing" event before the first task (an object of
		// a missing kind in a missing namespace under both), and nothing
		// else is.
		missing := map[string]bool{}
		tasks := 0
		for _, e := range events {
			switch e.Event {
			case "missing":
				if tasks > 0 {
					t.Errorf("missing %s after %d tasks", e.Message, tasks)
				}
				if e.Total != len(e.Pending) || (e.Reason != "ResourceTypeMissing" && e.Reason != "NamespaceMissing") {
					t.Errorf("missing %s: %s, total %d, %d objects", e.Message, e.Reason, e.Total, len(e.Pending))
				}
				for _, p := range e.Pending {
					missing[p.Object] = true
				}
			case "task":
				tasks++
			}
		}
		failed := map[string]bool{}
		for _, e := range events {
			if e.Event == "task" && e.Action == "Failed" {
				gvk := schema.FromAPIVersionAndKind(e.APIVersion, e.Kind)
				failed[manifest.ID{Group: gvk.Group, Kind: e.Kind, Namespace: e.Namespace, Name: e.Name}.String()] = true
			}
		}
		if diff := cmp.Diff(failed, missing); diff != "" || len(failed) == 0 {
			t.Errorf("failed objects (-) and those named missing (+):\n%s", diff)
		}
	})

	t.Run("a second apply writes nothing", func(t *testing.T) {
		before := c.resourceVersions(t, objs)
		r2 := cli(t, t.Context(), "apply", "--kubeconfig="+s.Kubeconfig, "--payload="+realpayload.Dir(t), "-o", "json")
		ev := parseEvents(t, r2.Stdout)
		sum := summaryOf(t, ev)
		if sum.Requests.Writes != 0 {
			t.Errorf("%d write requests", sum.Requests.Writes)
		}
		// Reads come by list, one per kind (per namespace for
		// ConfigMaps), and by GET only for an object alone of its kind
		// and for Secrets: well under one request per four objects.
		if total := sum.Requests.Reads + sum.Requests.Writes; total >= int64(len(objs)/4) {
			t.Errorf("%d requests for %d objects, want fewer than %d: %v", total, len(objs), len(objs)/4, sum.Requests.ByVerb)
		}
		t.Logf("requests of the second apply: %v", sum.Requests.ByVerb)
		if sum.Changes["Created"]+sum.Changes["Configured"] != 0 {
			t.Errorf("changes: %v", sum.Changes)
		}
		if diff := cmp.Diff(before, c.resourceVersions(t, objs)); diff != "" {
			t.Errorf("resourceVersions changed (-before +after):\n%s", diff)
		}
		if diff := cmp.Diff(failures(events), failures(ev)); diff != "" {
			t.Errorf("failures differ (-first +second):\n%s", diff)
		}
	})

	t.Run("drift is repaired with exactly the writes it needs", func(t *testing.T) {
		deploy, cm := driftTargets(t, c, events)
		ctx := t.Context()
		deployments := c.client.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace(deploy.Namespace)
		d, err := deployments.Get(ctx, deploy.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
		image := containers[0].(map[string]any)["image"]
		containers[0].(map[string]any)["image"] = "example.com/drifted:1"
		_ = unstructured.SetNestedSlice(d.Object, containers, "spec", "template", "spec", "containers")
		if _, err := deployments.Update(ctx, d, metav1.UpdateOptions{FieldManager: "someone-else"}); err != nil {
			t.Fatal(err)
		}
		configMaps := c.client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(cm.Namespace)
		if err := configMaps.Delete(ctx, cm.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}

		r3 := cli(t, ctx, "apply", "--kubeconfig="+s.Kubeconfig, "--payload="+realpayload.Dir(t), "-o", "json")
		ev := parseEvents(t, r3.Stdout)
		sum := summaryOf(t, ev)
		var writes []string
		for verb, n := range sum.Requests.ByVerb {
			if verb == "POST" || verb == "PUT" || verb == "PATCH" || verb == "DELETE" {
				writes = append(writes, fmt.Sprintf("%d %s", n, verb))
			}
		}
		// Both are server-side applied: one PATCH each.
		if diff := cmp.Diff([]string{"2 PATCH"}, writes); diff != "" {
			t.Errorf("writes (-want +got):\n%s", diff)
		}
		changed := map[string]string{}
		for _, e := range ev {
			if e.Event == "task" && e.Action != "Unchanged" && e.Action != "Skipped" && e.Action != "Failed" {
				changed[e.object()] = e.Action
			}
		}
		want := map[string]string{deploy.object(): "Configured", cm.object(): "Created"}
		if diff := cmp.Diff(want, changed); diff != "" {
			t.Errorf("changes (-want +got):\n%s", diff)
		}
		d, err = deployments.Get(ctx, deploy.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		containers, _, _ = unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
		if got := containers[0].(map[string]any)["image"]; got != image {
			t.Errorf("%s: image %v, want %v again", deploy.object(), got, image)
		}
		if _, err := configMaps.Get(ctx, cm.Name, metav1.GetOptions{}); err != nil {
			t.Errorf("%s: %v", cm.object(), err)
		}
	})

	t.Run("drift the CVO's merge repairs, and what it leaves", func(t *testing.T) { testCVOMergeRepairs(t, s, c) })
}

// testCVOMergeRepairs: drift that the CVO's merge repairs, made with
// kubectl (an environment variable added with set env, a label's and an
// annotation's value changed, a rule added to a Role by a JSON patch), is
// shown by diff and repaired by one apply, one write per object; what the
// CVO leaves alone (a restart annotation on the pod template, a new label)
// stays; a second apply writes nothing.
func testCVOMergeRepairs(t *testing.T, s *apiserver.Server, c *cluster) {
	ctx := t.Context()
	const ns = "openshift-dns-operator"
	k := func(args ...string) {
		t.Helper()
		if out, err := s.Kubectl(ctx, args...).CombinedOutput(); err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	k("-n", ns, "set", "env", "deployment/dns-operator", "FOO=bar")
	k("label", "--overwrite", "namespace", ns, "openshift.io/cluster-monitoring=false")
	k("-n", ns, "annotate", "--overwrite", "service", "metrics", "service.beta.openshift.io/serving-cert-secret-name=other")
	k("-n", ns, "patch", "role", "dns-operator", "--type=json", `-p=[{"op":"add","path":"/rules/-","value":{"apiGroups":[""],"resources":["secrets"],"verbs":["get"]}}]`)
	// Left alone, as the CVO leaves them.
	k("-n", ns, "rollout", "restart", "deployment/dns-operator")
	k("label", "namespace", ns, "team=dns")

	kc, payload := "--kubeconfig="+s.Kubeconfig, "--payload="+realpayload.Dir(t)
	r := cli(t, ctx, "diff", kc, payload)
	// 2: the kinds and namespaces this cluster lacks fail, each named;
	// the other objects are compared.
	if r.Code != 2 || strings.Count(r.Stderr, "error: ") != strings.Count(r.Stderr, "missing: ") {
		t.Fatalf("diff: exit %d, want 2 with only kinds and namespaces missing:\n%s", r.Code, r.Stderr)
	}
	want := []string{"a/apps/Deployment/" + ns + "/dns-operator", "b/apps/Deployment/" + ns + "/dns-operator",
		"a/core/Namespace/" + ns, "b/core/Namespace/" + ns, "a/core/Service/" + ns + "/metrics", "b/core/Service/" + ns + "/metrics",
		"a/rbac.authorization.k8s.io/Role/" + ns + "/dns-operator", "b/rbac.authorization.k8s.io/Role/" + ns + "/dns-operator"}
	got := changedObjects(r.Stdout)
	sort.Strings(want)
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("diff shows (-want +got):\n%s\n%s", diff, r.Stdout)
	}
	if !strings.Contains(r.Stdout, "-        - name: FOO") || strings.Contains(r.Stdout, "-    team: dns") {
		t.Errorf("diff does not show FOO removed, or removes the label the CVO leaves:\n%s", r.Stdout)
	}

	r = cli(t, ctx, "apply", kc, payload, "-o", "json")
	ev := parseEvents(t, r.Stdout)
	changed := map[string]string{}
	for _, e := range ev {
		if e.Event == "task" && e.Action != "Unchanged" && e.Action != "Skipped" && e.Action != "Failed" {
			changed[e.object()] = e.Action
		}
	}
	wantChanged := map[string]string{"Deployment/" + ns + "/dns-operator": "Configured", "Namespace/" + ns: "Configured",
		"Service/" + ns + "/metrics": "Configured", "Role/" + ns + "/dns-operator": "Configured"}
	if diff := cmp.Diff(wantChanged, changed); diff != "" {
		t.Errorf("apply changed (-want +got):\n%s", diff)
	}
	if sum := summaryOf(t, ev); sum.Requests.ByVerb["PATCH"] != 4 || sum.Requests.Writes != 4 {
		t.Errorf("apply wrote %v, want 4 PATCH (one per object)", sum.Requests.ByVerb)
	}
	dep := c.get(t, "apps/v1", "Deployment", ns, "dns-operator")
	containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	env, _, _ := unstructured.NestedSlice(containers[0].(map[string]any), "env")
	if len(env) != 4 {
		t.Errorf("env %v, want the payload's 4 variables", env)
	}
	if _, found, _ := unstructured.NestedString(dep.Object, "spec", "template", "metadata", "annotations", "kubectl.kubernetes.io/restartedAt"); !found {
		t.Error("the restart annotation was removed")
	}
	nsObj := c.get(t, "v1", "Namespace", "", ns)
	if l := nsObj.GetLabels(); l["openshift.io/cluster-monitoring"] != "true" || l["team"] != "dns" {
		t.Errorf("namespace labels %v, want the payload's value back and team=dns kept", l)
	}
	if a := c.get(t, "v1", "Service", ns, "metrics").GetAnnotations()["service.beta.openshift.io/serving-cert-secret-name"]; a != "metrics-tls" {
		t.Errorf("service annotation %q, want metrics-tls", a)
	}
	if rules, _, _ := unstructured.NestedSlice(c.get(t, "rbac.authorization.k8s.io/v1", "Role", ns, "dns-operator").Object, "rules"); len(rules) != 2 {
		t.Errorf("role rules %v, want the payload's 2", rules)
	}

	r = cli(t, ctx, "apply", kc, payload, "-o", "json")
	if sum := summaryOf(t, parseEvents(t, r.Stdout)); sum.Requests.Writes != 0 {
		t.Errorf("apply again: %v, want no write", sum.Requests.ByVerb)
	}
}

// driftTargets picks a Deployment and a ConfigMap that the first apply
// created and that are not create-only.
func driftTargets(t *testing.T, c *cluster, events []event) (deploy, cm event) {
	t.Helper()
	for _, e := range events {
		if e.Event != "task" || e.Action != "Created" {
			continue
		}
		gvr, ok := c.resource(t, schema.FromAPIVersionAndKind(e.APIVersion, e.Kind))
		if !ok {
			continue
		}
		live, err := c.client.Resource(gvr).Namespace(e.Namespace).Get(t.Context(), e.Name, metav1.GetOptions{})
		if err != nil || live.GetAnnotations()["release.openshift.io/create-only"] == "true" {
			continue
		}
		switch {
		case e.Kind == "Deployment" && deploy.Name == "":
			deploy = e
		case e.Kind == "ConfigMap" && e.APIVersion == "v1" && cm.Name == "" && e.Name != "admin-gates" && e.Name != "admin-acks":
			// (Not the admin gates: the record's Upgradeable reads them, so
			// deleting one changes the record as well.)
			cm = e
		}
	}
	if deploy.Name == "" || cm.Name == "" {
		t.Fatalf("no Deployment (%q) or ConfigMap (%q) created by the first apply", deploy.Name, cm.Name)
	}
	return deploy, cm
}
