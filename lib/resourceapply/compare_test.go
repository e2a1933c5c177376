package resourceapply

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// parse decodes one YAML document the way payloads are decoded.
func parse(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	ms, err := manifest.Parse("test.yaml", []byte(strings.TrimSpace(doc)+"\n"), manifest.ParseOptions{})
	if err != nil || len(ms) != 1 {
		t.Fatalf("parse: %v (%d documents)", err, len(ms))
	}
	return ms[0].Obj
}

const requiredDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: op
  namespace: ns
  annotations: {a: "1"}
spec:
  replicas: 1
  selector: {matchLabels: {app: op}}
  template:
    metadata: {labels: {app: op}, creationTimestamp: null}
    spec:
      hostNetwork: false
      containers:
      - name: op
        image: quay.io/op:1
        ports: [{containerPort: 8443, name: https}]
        resources: {}
`

// liveDeployment is requiredDeployment as the server returns it: defaults
// filled in, server metadata, and the fields payload-apply owns.
const liveDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: op
  namespace: ns
  uid: 1234
  resourceVersion: "42"
  generation: 1
  creationTimestamp: "2026-11-21T00:00:00Z"
  annotations: {a: "1", deployment.kubernetes.io/revision: "1"}
  managedFields:
  - manager: payload-apply
    operation: Apply
    apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata: {f:annotations: {f:a: {}}}
      f:spec:
        f:replicas: {}
        f:selector: {}
        f:template:
          f:metadata: {f:labels: {f:app: {}}}
          f:spec:
            f:containers:
              k:{"name":"op"}:
                .: {}
                f:image: {}
                f:name: {}
                f:ports:
                  k:{"containerPort":8443,"protocol":"TCP"}:
                    .: {}
                    f:containerPort: {}
                    f:name: {}
  - manager: kube-controller-manager
    operation: Update
    subresource: status
    fieldsType: FieldsV1
    fieldsV1: {f:status: {f:replicas: {}}}
spec:
  replicas: 1.0
  progressDeadlineSeconds: 600
  selector: {matchLabels: {app: op}}
  strategy: {type: RollingUpdate}
  template:
    metadata: {labels: {app: op}}
    spec:
      containers:
      - name: op
        image: quay.io/op:1
        imagePullPolicy: IfNotPresent
        ports: [{containerPort: 8443, name: https, protocol: TCP}]
        resources: {}
      restartPolicy: Always
status: {replicas: 0}
`

func TestInSync(t *testing.T) {
	cases := []struct {
		name     string
		required string
		live     func(*unstructured.Unstructured)
		want     bool
		where    string
	}{
		{name: "live has defaults and server metadata", required: requiredDeployment, want: true},
		{name: "a field differs", required: requiredDeployment, live: func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, int64(3), "spec", "replicas")
		}, where: "spec.replicas: differs"},
		{name: "a list element differs", required: requiredDeployment, live: func(u *unstructured.Unstructured) {
			c, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			c[0].(map[string]any)["image"] = "quay.io/op:2"
			_ = unstructured.SetNestedSlice(u.Object, c, "spec", "template", "spec", "containers")
		}, where: "spec.template.spec.containers[0].image: differs"},
		{name: "a list the CVO replaces has another length", required: strings.Replace(requiredDeployment, "image: quay.io/op:1", "image: quay.io/op:1\n        args: [a]", 1), live: func(u *unstructured.Unstructured) {
			c, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			c[0].(map[string]any)["args"] = []any{"a", "b"}
			_ = unstructured.SetNestedSlice(u.Object, c, "spec", "template", "spec", "containers")
		}, where: "spec.template.spec.containers[0].args: 1 items, live has 2"},
		{name: "a container another manager added", required: requiredDeployment, live: func(u *unstructured.Unstructured) {
			c, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			_ = unstructured.SetNestedSlice(u.Object, append(c, map[string]any{"name": "sidecar", "image": "x"}), "spec", "template", "spec", "containers")
			addManager(t, u, "kubectl-edit", `{f:spec: {f:template: {f:spec: {f:containers: {'k:{"name":"sidecar"}': {.: {}, f:image: {}, f:name: {}}}}}}}`)
		}, where: "spec.template.spec.containers[sidecar]: set by kubectl-edit, which the CVO's merge removes"},
		{name: "an annotation is missing", required: requiredDeployment, live: func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{"deployment.kubernetes.io/revision": "1"})
		}, where: "metadata.annotations.a: missing"},
		{name: "a field we own left the payload", required: strings.Replace(requiredDeployment, "  replicas: 1\n", "", 1), where: "spec.replicas: owned but no longer in the payload"},
		{name: "a keyed list element we own left the payload", required: strings.Replace(requiredDeployment, "ports: [{containerPort: 8443, name: https}]", "ports: []", 1), live: func(u *unstructured.Unstructured) {
			c, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			c[0].(map[string]any)["ports"] = []any{}
			_ = unstructured.SetNestedSlice(u.Object, c, "spec", "template", "spec", "containers")
		}, where: `spec.template.spec.containers[{"name":"op"}].ports[{"containerPort":8443,"protocol":"TCP"}]: owned but no longer in the payload`},
		{name: "status is not compared", required: requiredDeployment + "status: {replicas: 5}\n", want: true},
		{name: "numbers compare by value", required: requiredDeployment, live: func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, 1.0, "spec", "replicas")
		}, want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			required := parse(t, tc.required)
			live := parse(t, liveDeployment)
			if tc.live != nil {
				tc.live(live)
			}
			got, where := InSync(required, live, DefaultFieldManager)
			if got != tc.want || where != tc.where {
				t.Errorf("InSync = %v, %q; want %v, %q", got, where, tc.want, tc.where)
			}
		})
	}
	t.Run("fields of other managers do not matter", func(t *testing.T) {
		live := parse(t, liveDeployment)
		if ok, where := InSync(parse(t, requiredDeployment), live, "someone-else"); !ok {
			t.Errorf("InSync = false (%s)", where)
		}
	})
}

func TestKnown(t *testing.T) {
	s, err := newTypedScheme()
	if err != nil {
		t.Fatal(err)
	}
	m := &Manager{scheme: s}
	t.Run("fields the Go type lacks are dropped, values kept", func(t *testing.T) {
		crb := parse(t, `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: x}
roleRef: {kind: ClusterRole, name: role}
subjects: [{kind: ServiceAccount, name: sa, namespace: ns}]
userNames: ["system:serviceaccount:ns:sa"]
`)
		got, dropped, err := m.known(crb)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"userNames"}, dropped); diff != "" {
			t.Errorf("dropped (-want +got):\n%s", diff)
		}
		want := crb.DeepCopy()
		delete(want.Object, "userNames")
		if diff := cmp.Diff(want.Object, got.Object); diff != "" {
			t.Errorf("object (-want +got):\n%s", diff)
		}
	})
	t.Run("omitempty zero values are not added", func(t *testing.T) {
		svc := parse(t, `
apiVersion: v1
kind: Service
metadata: {name: s, namespace: ns}
spec: {ports: [{port: 80, name: http}], selector: {a: b}}
`)
		got, dropped, err := m.known(svc)
		if err != nil || len(dropped) > 0 {
			t.Fatalf("known: %v, dropped %v", err, dropped)
		}
		if diff := cmp.Diff(svc.Object, got.Object); diff != "" {
			t.Errorf("object changed (-want +got):\n%s", diff)
		}
	})
	t.Run("custom resources are left alone", func(t *testing.T) {
		cr := parse(t, `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
whatever: {x: 1}
`)
		got, dropped, _ := m.known(cr)
		if len(dropped) > 0 || !cmp.Equal(cr.Object, got.Object) {
			t.Errorf("custom resource changed: dropped %v", dropped)
		}
	})
	t.Run("CRD schemas lose what JSONSchemaProps lacks", func(t *testing.T) {
		crd := parse(t, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Cluster
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
              upstreams:
                type: array
                items:
                  anyOf:
                  - not: {required: [address]}
                  - optional: [port]
                    properties: {port: {type: integer, default: 53}}
`)
		got, dropped, err := m.known(crd)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.upstreams.items.anyOf[1].optional"}
		if diff := cmp.Diff(want, dropped); diff != "" {
			t.Errorf("dropped (-want +got):\n%s", diff)
		}
		if _, found, _ := unstructured.NestedFieldNoCopy(crd.Object, "spec", "versions"); !found {
			t.Fatal("input changed")
		}
		v, _, _ := unstructured.NestedSlice(got.Object, "spec", "versions")
		item := v[0].(map[string]any)["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)["properties"].(map[string]any)["spec"].(map[string]any)["properties"].(map[string]any)["upstreams"].(map[string]any)["items"].(map[string]any)["anyOf"].([]any)[1].(map[string]any)
		if _, ok := item["optional"]; ok {
			t.Error("optional is still there")
		}
		if _, ok := item["properties"]; !ok {
			t.Error("properties were dropped")
		}
	})
	t.Run("created from the Go type: required null fields are there", func(t *testing.T) {
		scc := parse(t, `
apiVersion: security.openshift.io/v1
kind: SecurityContextConstraints
metadata: {name: x}
allowHostNetwork: true
users: [a]
`)
		rt, err := m.roundTrip(scc)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"allowedCapabilities", "defaultAddCapabilities", "priority"} {
			if v, ok := rt.Object[f]; !ok || v != nil {
				t.Errorf("%s = %v, %v; want null", f, v, ok)
			}
		}
		co, err := m.roundTrip(parse(t, "apiVersion: config.openshift.io/v1\nkind: ClusterOperator\nmetadata: {name: x}\n"))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := co.Object["spec"]; !ok {
			t.Error("ClusterOperator without spec")
		}
	})
}
