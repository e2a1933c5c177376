package resourceapply

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// addManager adds a managedFields entry of manager (an Update, as kubectl
// edit, set or patch make) owning fieldsV1, given in YAML.
func addManager(_ *testing.T, u *unstructured.Unstructured, manager, fieldsV1 string, subresource ...string) {
	var fields map[string]any
	if err := yaml.Unmarshal([]byte(fieldsV1), &fields); err != nil {
		panic(err)
	}
	e := map[string]any{"manager": manager, "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": fields}
	if len(subresource) > 0 {
		e["subresource"] = subresource[0]
	}
	md := u.Object["metadata"].(map[string]any)
	entries, _ := md["managedFields"].([]any)
	md["managedFields"] = append(entries, e)
}

// container returns the first container of a Deployment.
func container(u *unstructured.Unstructured) map[string]any {
	c, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	return c[0].(map[string]any)
}

// setContainer sets a field of the first container of a Deployment.
func setContainer(u *unstructured.Unstructured, field string, v any) {
	c, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	c[0].(map[string]any)[field] = v
	_ = unstructured.SetNestedSlice(u.Object, c, "spec", "template", "spec", "containers")
}

const withEnv = `
        env: [{name: A, value: "1"}, {name: POD, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]`

func TestRemovals(t *testing.T) {
	envDeployment := strings.Replace(requiredDeployment, "image: quay.io/op:1", "image: quay.io/op:1"+withEnv, 1)
	liveEnv := func(u *unstructured.Unstructured, extra ...any) {
		env := []any{map[string]any{"name": "A", "value": "1"},
			map[string]any{"name": "POD", "valueFrom": map[string]any{"fieldRef": map[string]any{"apiVersion": "v1", "fieldPath": "metadata.name"}}}}
		setContainer(u, "env", append(env, extra...))
	}
	cases := []struct {
		name     string
		required string
		live     func(*unstructured.Unstructured)
		// want are the paths removed, with their managers.
		want []string
	}{
		{name: "an environment variable kubectl set env added", required: envDeployment, live: func(u *unstructured.Unstructured) {
			liveEnv(u, map[string]any{"name": "FOO", "value": "bar"})
			addManager(t, u, "kubectl-set", `{f:spec: {f:template: {f:spec: {f:containers: {'k:{"name":"op"}': {f:env: {.: {}, 'k:{"name":"FOO"}': {.: {}, f:name: {}, f:value: {}}}}}}}}}`)
		}, want: []string{"spec.template.spec.containers[op].env[FOO] kubectl-set"}},
		{name: "defaults the server filled in are no drift", required: envDeployment, live: func(u *unstructured.Unstructured) {
			liveEnv(u)
			setContainer(u, "terminationMessagePath", "/dev/termination-log")
			_ = unstructured.SetNestedField(u.Object, "ClusterFirst", "spec", "template", "spec", "dnsPolicy")
		}},
		{name: "the CVO's defaults set by another manager are no drift", required: envDeployment, live: func(u *unstructured.Unstructured) {
			liveEnv(u)
			_ = unstructured.SetNestedField(u.Object, "ClusterFirst", "spec", "template", "spec", "dnsPolicy")
			_ = unstructured.SetNestedField(u.Object, int64(30), "spec", "template", "spec", "terminationGracePeriodSeconds")
			addManager(t, u, "cluster-version-operator", `{f:spec: {f:template: {f:spec: {f:dnsPolicy: {}, f:terminationGracePeriodSeconds: {}, f:containers: {'k:{"name":"op"}': {f:env: {'k:{"name":"POD"}': {f:valueFrom: {f:fieldRef: {f:apiVersion: {}}}}}}}}}}}`)
		}},
		{name: "a field the CVO resets, set by another manager", required: requiredDeployment, live: func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "Default", "spec", "template", "spec", "dnsPolicy")
			_ = unstructured.SetNestedField(u.Object, true, "spec", "paused")
			addManager(t, u, "kubectl-edit", `{f:spec: {f:paused: {}, f:template: {f:spec: {f:dnsPolicy: {}}}}}`)
		}, want: []string{"spec.template.spec.dnsPolicy kubectl-edit", "spec.paused kubectl-edit"}},
		{name: "replicas scaled when the manifest sets none: the CVO's 1", required: strings.Replace(requiredDeployment, "  replicas: 1\n", "", 1), live: func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, int64(3), "spec", "replicas")
			addManager(t, u, "kubectl", `{f:spec: {f:replicas: {}}}`, "scale")
		}, want: []string{"spec.replicas kubectl"}},
		{name: "replicas scaled to 1 when the manifest sets none", required: strings.Replace(requiredDeployment, "  replicas: 1\n", "", 1), live: func(u *unstructured.Unstructured) {
			addManager(t, u, "kubectl", `{f:spec: {f:replicas: {}}}`, "scale")
		}},
		{name: "labels, annotations, the pod template's annotations and a toleration stay", required: requiredDeployment, live: func(u *unstructured.Unstructured) {
			u.SetLabels(map[string]string{"team": "x"})
			_ = unstructured.SetNestedField(u.Object, "2026-01-01T00:00:00Z", "spec", "template", "metadata", "annotations", "kubectl.kubernetes.io/restartedAt")
			_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"key": "k", "operator": "Exists"}}, "spec", "template", "spec", "tolerations")
			_ = unstructured.SetNestedField(u.Object, "node-1", "spec", "template", "spec", "nodeSelector", "kubernetes.io/hostname")
			addManager(t, u, "kubectl-rollout", `{f:metadata: {f:labels: {f:team: {}}}, f:spec: {f:template: {f:metadata: {f:annotations: {f:kubectl.kubernetes.io/restartedAt: {}}}, f:spec: {f:tolerations: {}, f:nodeSelector: {}}}}}`)
		}},
		{name: "a volume, a mount, a limit and a probe another manager added", required: requiredDeployment, live: func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "extra", "emptyDir": map[string]any{}}}, "spec", "template", "spec", "volumes")
			setContainer(u, "volumeMounts", []any{map[string]any{"name": "extra", "mountPath": "/x"}})
			setContainer(u, "resources", map[string]any{"limits": map[string]any{"cpu": "1"}})
			setContainer(u, "livenessProbe", map[string]any{"tcpSocket": map[string]any{"port": int64(1)}})
			addManager(t, u, "kubectl-edit", `{f:spec: {f:template: {f:spec: {f:volumes: {'k:{"name":"extra"}': {.: {}}}, f:containers: {'k:{"name":"op"}': {f:livenessProbe: {}, f:volumeMounts: {'k:{"mountPath":"/x"}': {.: {}}}, f:resources: {f:limits: {f:cpu: {}}}}}}}}}`)
		}, want: []string{"spec.template.spec.volumes[extra] kubectl-edit", "spec.template.spec.containers[op].volumeMounts[/x] kubectl-edit",
			"spec.template.spec.containers[op].resources.limits.cpu kubectl-edit", "spec.template.spec.containers[op].livenessProbe kubectl-edit"}},
		{name: "an extra field in a custom resource's spec", required: `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
spec: {a: 1}
`, live: func(u *unstructured.Unstructured) {
			u.Object["apiVersion"], u.Object["kind"] = "example.com/v1", "Widget"
			u.Object["spec"] = map[string]any{"a": int64(1), "b": int64(2), "defaulted": true}
			u.Object["other"] = "kept: the manifest does not set it"
			addManager(t, u, "someone", `{f:spec: {f:b: {}}, f:other: {}}`)
		}, want: []string{"spec.b someone"}},
		{name: "caBundle the service CA operator injects", required: `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: v, annotations: {service.beta.openshift.io/inject-cabundle: "true"}}
webhooks: [{name: a.example.com, clientConfig: {service: {name: s, namespace: n}}, admissionReviewVersions: [v1], sideEffects: None}]
`, live: func(u *unstructured.Unstructured) {
			u.Object = map[string]any{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
				"metadata": map[string]any{"name": "v", "annotations": map[string]any{"service.beta.openshift.io/inject-cabundle": "true"}},
				"webhooks": []any{map[string]any{"name": "a.example.com", "admissionReviewVersions": []any{"v1"}, "sideEffects": "None",
					"clientConfig":  map[string]any{"caBundle": "Q0E=", "service": map[string]any{"name": "s", "namespace": "n", "port": int64(443)}},
					"failurePolicy": "Fail", "timeoutSeconds": int64(10)}}}
			addManager(t, u, "service-ca-operator", `{f:webhooks: {'k:{"name":"a.example.com"}': {f:clientConfig: {f:caBundle: {}}}}}`)
		}},
		{name: "an aggregated ClusterRole's rules", required: `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: r}
aggregationRule: {clusterRoleSelectors: [{matchLabels: {a: b}}]}
`, live: func(u *unstructured.Unstructured) {
			u.Object = map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": "r"},
				"aggregationRule": map[string]any{"clusterRoleSelectors": []any{map[string]any{"matchLabels": map[string]any{"a": "b"}}}},
				"rules":           []any{map[string]any{"verbs": []any{"get"}}}}
			addManager(t, u, "clusterrole-aggregation-controller", `{f:rules: {}}`)
		}},
		{name: "a CRD's spec: another manager's field goes, the server's defaults stay", required: `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ws.example.com}
spec: {group: example.com, names: {kind: W, plural: ws}, scope: Cluster, versions: [{name: v1, served: true, storage: true}]}
`, live: func(u *unstructured.Unstructured) {
			u.Object = map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": map[string]any{"name": "ws.example.com"},
				"spec": map[string]any{"group": "example.com", "scope": "Cluster", "conversion": map[string]any{"strategy": "None"},
					"names":    map[string]any{"kind": "W", "plural": "ws", "singular": "w", "listKind": "WList"},
					"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true, "deprecated": true}}}}
			addManager(t, u, "kubectl-edit", `{f:spec: {f:versions: {'k:{"name":"v1"}': {f:deprecated: {}}}}}`)
		}, want: []string{"spec.versions[0].deprecated kubectl-edit"}},
		{name: "a CronJob's concurrencyPolicy, and the default", required: `
apiVersion: batch/v1
kind: CronJob
metadata: {name: c, namespace: ns}
spec: {schedule: "@daily", jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: x}]}}}}}
`, live: func(u *unstructured.Unstructured) {
			u.Object = map[string]any{"apiVersion": "batch/v1", "kind": "CronJob", "metadata": map[string]any{"name": "c", "namespace": "ns"},
				"spec": map[string]any{"schedule": "@daily", "concurrencyPolicy": "Forbid", "successfulJobsHistoryLimit": int64(3), "suspend": false,
					"jobTemplate": map[string]any{"spec": map[string]any{"backoffLimit": int64(6), "template": map[string]any{"spec": map[string]any{
						"restartPolicy": "Never", "dnsPolicy": "ClusterFirst", "containers": []any{map[string]any{"name": "c", "image": "x"}}}}}}}}
			addManager(t, u, "kubectl-edit", `{f:spec: {f:concurrencyPolicy: {}, f:successfulJobsHistoryLimit: {}, f:suspend: {}}}`)
		}, want: []string{"spec.concurrencyPolicy kubectl-edit"}},
		{name: "an ImageStream's other tags stay", required: `
apiVersion: image.openshift.io/v1
kind: ImageStream
metadata: {name: is, namespace: ns}
spec: {tags: [{name: a, from: {kind: DockerImage, name: x}}]}
`, live: func(u *unstructured.Unstructured) {
			u.Object = map[string]any{"apiVersion": "image.openshift.io/v1", "kind": "ImageStream", "metadata": map[string]any{"name": "is", "namespace": "ns"},
				"spec": map[string]any{"tags": []any{map[string]any{"name": "a", "from": map[string]any{"kind": "DockerImage", "name": "x"}},
					map[string]any{"name": "b", "from": map[string]any{"kind": "DockerImage", "name": "y"}}}}}
			addManager(t, u, "someone", `{f:spec: {f:tags: {'k:{"name":"b"}': {.: {}}}}}`)
		}},
		{name: "an SCC's users another manager added", required: `
apiVersion: security.openshift.io/v1
kind: SecurityContextConstraints
metadata: {name: s}
users: [a]
`, live: func(u *unstructured.Unstructured) {
			u.Object = map[string]any{"apiVersion": "security.openshift.io/v1", "kind": "SecurityContextConstraints", "metadata": map[string]any{"name": "s"},
				"users": []any{"a", "b"}, "allowPrivilegeEscalation": true, "groups": []any{"g"}}
			addManager(t, u, "oc-adm-policy", `{f:users: {}, f:groups: {}}`)
		}, want: []string{"users[1] oc-adm-policy", "groups oc-adm-policy"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			required := parse(t, tc.required)
			live := parse(t, liveDeployment)
			if tc.live != nil {
				tc.live(live)
			}
			var got []string
			for _, r := range removals(required, live, DefaultFieldManager) {
				got = append(got, r.String()+" "+r.manager)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("removals (-want +got):\n%s", diff)
			}
		})
	}
}

func TestJSONPatch(t *testing.T) {
	live := parse(t, liveDeployment)
	setContainer(live, "env", []any{map[string]any{"name": "A", "value": "1"}, map[string]any{"name": "B", "value": "2"}, map[string]any{"name": "C~/", "value": "3"}})
	addManager(t, live, "kubectl-set", `{f:spec: {f:template: {f:spec: {f:containers: {'k:{"name":"op"}': {f:env: {'k:{"name":"A"}': {.: {}}, 'k:{"name":"C~/"}': {.: {}}}}}}}}}`)
	required := parse(t, strings.Replace(requiredDeployment, "image: quay.io/op:1", "image: quay.io/op:1\n        env: [{name: B, value: \"2\"}]", 1))
	rs := removals(required, live, DefaultFieldManager)
	body, err := jsonPatch(rs)
	if err != nil {
		t.Fatal(err)
	}
	var ops []map[string]any
	if err := json.Unmarshal(body, &ops); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"op": "test", "path": "/spec/template/spec/containers/0/env/2", "value": map[string]any{"name": "C~/", "value": "3"}},
		{"op": "remove", "path": "/spec/template/spec/containers/0/env/2"},
		{"op": "test", "path": "/spec/template/spec/containers/0/env/0", "value": map[string]any{"name": "A", "value": "1"}},
		{"op": "remove", "path": "/spec/template/spec/containers/0/env/0"},
	}
	if diff := cmp.Diff(want, ops); diff != "" {
		t.Errorf("patch (-want +got):\n%s", diff)
	}
	after := withoutRemovals(live, rs)
	if diff := cmp.Diff([]any{map[string]any{"name": "B", "value": "2"}}, container(after)["env"]); diff != "" {
		t.Errorf("without the removals (-want +got):\n%s", diff)
	}
	if len(container(live)["env"].([]any)) != 3 {
		t.Error("withoutRemovals changed its input")
	}
	if ok, where := InSync(required, after, DefaultFieldManager); !ok {
		t.Errorf("not in sync after the removals: %s", where)
	}
	if got := pointer([]step{{name: "metadata"}, {name: "annotations"}, {name: "a/b~c"}}); got != "/metadata/annotations/a~1b~0c" {
		t.Errorf("pointer = %s", got)
	}
}
