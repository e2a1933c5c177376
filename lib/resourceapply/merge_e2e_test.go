//go:build e2e

package resourceapply

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/payload-apply/payload-apply/test/apiserver"
)

var (
	deployments  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	clusterRoles = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	webhooks     = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}
	gadgets      = schema.GroupVersionResource{Group: "merge.example.com", Version: "v1", Resource: "gadgets"}
)

// mergeDeployment has no replicas: the CVO's merge holds it at 1.
const mergeDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: op, namespace: NS, labels: {app: op}, annotations: {owner: payload}}
spec:
  selector: {matchLabels: {app: op}}
  template:
    metadata: {labels: {app: op}}
    spec:
      containers:
      - name: op
        image: quay.io/op:1
        env: [{name: A, value: "1"}, {name: POD, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
        ports: [{containerPort: 8443, name: https}]
        livenessProbe: {httpGet: {path: /healthz, port: 8443}}
`

const mergeClusterRole = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: NS-merge}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]
`

// mergeWebhook leaves every field the server defaults out.
const mergeWebhook = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: NS-merge}
webhooks:
- name: check.merge.example.com
  clientConfig: {service: {name: s, namespace: NS}}
  rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}]
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Ignore
`

const gadgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.merge.example.com}
spec:
  group: merge.example.com
  names: {kind: Gadget, plural: gadgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              mode: {type: string, default: fast}
              extra: {type: string}
          other: {type: string}
`

const mergeGadget = `
apiVersion: merge.example.com/v1
kind: Gadget
metadata: {name: g, namespace: NS}
spec: {size: 1}
`

// TestCVOMerge: drift another field manager makes where the CVO's merge
// would repair it is shown by Diff and repaired by one Apply, after which
// Apply writes nothing; what the CVO leaves alone is left alone, with no
// write.
func TestCVOMerge(t *testing.T) {
	e := newEnv(t, apiserver.Shared(t))
	for _, doc := range []string{mergeDeployment, mergeClusterRole, mergeWebhook, gadgetCRD} {
		if _, err := e.apply(doc); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.apply(mergeGadget); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for gvr, name := range map[schema.GroupVersionResource]string{clusterRoles: e.ns + "-merge", webhooks: e.ns + "-merge"} {
			_ = e.client.Resource(gvr).Delete(t.Context(), name, metav1.DeleteOptions{})
		}
	})
	dep := func() *unstructured.Unstructured { return e.get(deployments, e.ns, "op") }
	env := func() []any {
		c, _, _ := unstructured.NestedSlice(dep().Object, "spec", "template", "spec", "containers")
		v, _, _ := unstructured.NestedSlice(c[0].(map[string]any), "env")
		return v
	}
	cases := []struct {
		name    string
		doc     string
		gvr     schema.GroupVersionResource
		objName string
		// drift is what another manager does: a patch of type pt.
		manager, patch string
		pt             types.PatchType
		subresource    string
		// repaired reports whether the object is as the CVO's merge
		// leaves it; kept, when set, whether the drift is left alone.
		repaired func() bool
		kept     bool
	}{
		{name: "an environment variable kubectl set env adds", doc: mergeDeployment, gvr: deployments, objName: "op",
			manager: "kubectl-set", pt: types.StrategicMergePatchType,
			patch:    `{"spec":{"template":{"spec":{"containers":[{"name":"op","env":[{"name":"FOO","value":"bar"}]}]}}}}`,
			repaired: func() bool { return len(env()) == 2 }},
		{name: "an environment variable's value changed", doc: mergeDeployment, gvr: deployments, objName: "op",
			manager: "kubectl-set", pt: types.StrategicMergePatchType,
			patch: `{"spec":{"template":{"spec":{"containers":[{"name":"op","env":[{"name":"A","value":"2"}]}]}}}}`,
			repaired: func() bool {
				v := env()
				return len(v) == 2 && v[0].(map[string]any)["value"] == "1"
			}},
		{name: "a label's value changed", doc: mergeDeployment, gvr: deployments, objName: "op",
			manager: "kubectl-label", pt: types.MergePatchType, patch: `{"metadata":{"labels":{"app":"edited"}}}`,
			repaired: func() bool { return dep().GetLabels()["app"] == "op" }},
		{name: "an annotation's value changed", doc: mergeDeployment, gvr: deployments, objName: "op",
			manager: "kubectl-annotate", pt: types.MergePatchType, patch: `{"metadata":{"annotations":{"owner":"someone"}}}`,
			repaired: func() bool { return dep().GetAnnotations()["owner"] == "payload" }},
		{name: "a volume another manager adds", doc: mergeDeployment, gvr: deployments, objName: "op",
			manager: "kubectl-edit", pt: types.StrategicMergePatchType,
			patch: `{"spec":{"template":{"spec":{"volumes":[{"name":"extra","emptyDir":{}}]}}}}`,
			repaired: func() bool {
				v, found, _ := unstructured.NestedSlice(dep().Object, "spec", "template", "spec", "volumes")
				return !found || len(v) == 0
			}},
		{name: "a rule another manager adds to a ClusterRole", doc: mergeClusterRole, gvr: clusterRoles, objName: e.ns + "-merge",
			manager: "kubectl-patch", pt: types.JSONPatchType,
			patch: `[{"op":"add","path":"/rules/-","value":{"apiGroups":[""],"resources":["secrets"],"verbs":["get"]}}]`,
			repaired: func() bool {
				v, _, _ := unstructured.NestedSlice(e.get(clusterRoles, "", e.ns+"-merge").Object, "rules")
				return len(v) == 1
			}},
		{name: "a field another manager adds to a custom resource's spec", doc: mergeGadget, gvr: gadgets, objName: "g",
			manager: "kubectl-edit", pt: types.MergePatchType, patch: `{"spec":{"extra":"x"}}`,
			repaired: func() bool {
				spec, _, _ := unstructured.NestedMap(e.get(gadgets, e.ns, "g").Object, "spec")
				return spec["extra"] == nil && spec["mode"] == "fast"
			}},
		{name: "replicas scaled when the manifest sets none: back to 1, as the CVO does", doc: mergeDeployment, gvr: deployments, objName: "op",
			manager: "kubectl", pt: types.MergePatchType, patch: `{"spec":{"replicas":3}}`, subresource: "scale",
			repaired: func() bool {
				n, _, _ := unstructured.NestedInt64(dep().Object, "spec", "replicas")
				return n == 1
			}},
		{name: "left alone: a restart annotation, a label, a toleration, a node selector", doc: mergeDeployment, gvr: deployments, objName: "op",
			manager: "kubectl-rollout", pt: types.StrategicMergePatchType, kept: true,
			patch: `{"metadata":{"labels":{"team":"x"}},"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"now"}},` +
				`"spec":{"tolerations":[{"key":"k","operator":"Exists"}],"nodeSelector":{"disk":"ssd"}}}}}`,
			repaired: func() bool {
				d := dep()
				a, _, _ := unstructured.NestedString(d.Object, "spec", "template", "metadata", "annotations", "kubectl.kubernetes.io/restartedAt")
				tol, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "tolerations")
				return a == "now" && d.GetLabels()["team"] == "x" && len(tol) == 1
			}},
		{name: "left alone: another field of a custom resource", doc: mergeGadget, gvr: gadgets, objName: "g",
			manager: "kubectl-edit", pt: types.MergePatchType, patch: `{"other":"x"}`, kept: true,
			repaired: func() bool { return e.get(gadgets, e.ns, "g").Object["other"] == "x" }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ri := e.client.Resource(tc.gvr)
			var sub []string
			if tc.subresource != "" {
				sub = []string{tc.subresource}
			}
			var err error
			if tc.gvr == clusterRoles || tc.gvr == webhooks {
				_, err = ri.Patch(t.Context(), tc.objName, tc.pt, []byte(tc.patch), metav1.PatchOptions{FieldManager: tc.manager}, sub...)
			} else {
				_, err = ri.Namespace(e.ns).Patch(t.Context(), tc.objName, tc.pt, []byte(tc.patch), metav1.PatchOptions{FieldManager: tc.manager}, sub...)
			}
			if err != nil {
				t.Fatalf("the drift: %v", err)
			}
			diff := func(want Action) Preview {
				t.Helper()
				p, err := e.mgr.Diff(t.Context(), parse(t, strings.ReplaceAll(tc.doc, "NS", e.ns)), DefaultDiffOptions())
				if err != nil || p.Action != want {
					t.Fatalf("diff: %s (%s), %v; want %s", p.Action, p.Message, err, want)
				}
				return p
			}
			if tc.kept {
				e.count.reset()
				diff(Unchanged)
				c, err := e.apply(tc.doc)
				mustAction(t, c, err, Unchanged)
				if w := e.count.writes.Load(); w != 0 || !tc.repaired() {
					t.Errorf("%d writes, the drift kept: %v; want none, and kept", w, tc.repaired())
				}
				return
			}
			if tc.repaired() {
				t.Fatal("the drift did not happen")
			}
			if p := diff(Configured); p.Merged == nil {
				t.Fatal("no merged object")
			}
			c, err := e.apply(tc.doc)
			mustAction(t, c, err, Configured)
			if !tc.repaired() {
				t.Fatalf("not repaired (%s)", c.Message)
			}
			t.Logf("repaired: %s", c.Message)
			e.count.reset()
			c, err = e.apply(tc.doc)
			mustAction(t, c, err, Unchanged)
			if w := e.count.writes.Load(); w != 0 {
				t.Errorf("apply again: %d writes, want none", w)
			}
			diff(Unchanged)
		})
	}
	t.Run("left alone: what the server defaults in a webhook", func(t *testing.T) {
		wh := e.get(webhooks, "", e.ns+"-merge")
		hooks, _, _ := unstructured.NestedSlice(wh.Object, "webhooks")
		if to, _, _ := unstructured.NestedInt64(hooks[0].(map[string]any), "timeoutSeconds"); to != 10 {
			t.Fatalf("timeoutSeconds %d: not defaulted", to)
		}
		e.count.reset()
		c, err := e.apply(strings.TrimSpace(mergeWebhook))
		mustAction(t, c, err, Unchanged)
		if w := e.count.writes.Load(); w != 0 {
			t.Errorf("%d writes", w)
		}
	})
}

// TestInjectProxy: a Deployment annotated config.openshift.io/inject-proxy
// gets the cluster's proxy settings in the containers it names, as the CVO
// gives them; applying it again writes nothing (the variables are the
// manifest's as modified, not drift to remove); a container the pod
// template lacks fails the object as invalid.
func TestInjectProxy(t *testing.T) {
	e := newEnv(t, apiserver.Shared(t))
	proxies := schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "proxies"}
	if e.get(proxies, "", "cluster") == nil {
		if _, err := e.apply(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: proxies.config.openshift.io}
spec:
  group: config.openshift.io
  names: {kind: Proxy, plural: proxies}
  scope: Cluster
  versions:
  - {name: v1, served: true, storage: true, subresources: {status: {}}, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`); err != nil {
			t.Fatal(err)
		}
		if _, err := e.apply("apiVersion: config.openshift.io/v1\nkind: Proxy\nmetadata: {name: cluster}\nspec: {}\n"); err != nil {
			t.Fatal(err)
		}
		status := `{"status":{"httpProxy":"http://proxy:3128","httpsProxy":"http://proxy:3128","noProxy":".cluster.local"}}`
		if _, err := e.client.Resource(proxies).Patch(t.Context(), "cluster", types.MergePatchType, []byte(status), metav1.PatchOptions{}, "status"); err != nil {
			t.Fatal(err)
		}
	}
	doc := strings.Replace(mergeDeployment, "annotations: {owner: payload}", "annotations: {owner: payload, config.openshift.io/inject-proxy: op}", 1)
	doc = strings.Replace(doc, "name: op, namespace: NS", "name: proxied, namespace: NS", 1)
	c, err := e.apply(doc)
	mustAction(t, c, err, Created)
	dep := e.get(deployments, e.ns, "proxied")
	containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	var names []string
	for _, v := range containers[0].(map[string]any)["env"].([]any) {
		names = append(names, v.(map[string]any)["name"].(string)+"="+fmt.Sprint(v.(map[string]any)["value"]))
	}
	if got := strings.Join(names, " "); got != "A=1 POD=<nil> HTTP_PROXY=http://proxy:3128 HTTPS_PROXY=http://proxy:3128 NO_PROXY=.cluster.local" {
		t.Errorf("env %s", got)
	}
	e.count.reset()
	c, err = e.apply(doc)
	mustAction(t, c, err, Unchanged)
	if w := e.count.writes.Load(); w != 0 {
		t.Errorf("apply again: %d writes", w)
	}
	_, err = e.apply(strings.Replace(doc, "inject-proxy: op}", "inject-proxy: nope}", 1))
	if ReasonOf(err) != ReasonInvalid || !strings.Contains(err.Error(), `container "nope"`) {
		t.Errorf("a container the template lacks: %v", err)
	}
}
