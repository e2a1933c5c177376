package apicheck_test

import (
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/payload-apply/payload-apply/lib/apicheck"
	"github.com/payload-apply/payload-apply/lib/manifest"
)

// widgetCRD defines Widget (namespaced, status subresource) with a schema
// that has every kind of rule the server applies.
const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer, minimum: 1}
              color: {type: string, enum: [red, blue]}
              shape: {type: string, default: round}
              code: {type: string, pattern: '^[a-z]+$'}
              port: {x-kubernetes-int-or-string: true}
              free: {type: object, x-kubernetes-preserve-unknown-fields: true}
              items:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items: {type: object, required: [name], properties: {name: {type: string}}}
          status:
            type: object
            properties:
              ready: {type: boolean}
  - name: v0
    served: false
    storage: false
    schema:
      openAPIV3Schema: {type: object}
`

// parse decodes the documents of text as objects held in memory (as
// overlays and components make them), without Parse's own refusals.
func parse(t *testing.T, file, text string) []*manifest.Manifest {
	t.Helper()
	var out []*manifest.Manifest
	for i, doc := range strings.Split(text, "\n---\n") {
		obj := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("%s#%d: %v", file, i, err)
		}
		m, err := manifest.FromObject(file, i, obj)
		if err != nil {
			t.Fatalf("%s#%d: %v", file, i, err)
		}
		out = append(out, m)
	}
	return out
}

func TestCheck(t *testing.T) {
	crd := parse(t, "crd.yaml", widgetCRD)
	const widget = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: ns}\n"
	tests := []struct {
		name string
		doc  string
		want []string // "field: message" substrings of the errors, in order; nil: no error
		warn []string
	}{
		{name: "good widget", doc: widget + "spec: {size: 3, color: red, port: http, free: {any: [thing]}, items: [{name: a}, {name: b}]}\n"},
		{name: "status is ignored", doc: widget + "spec: {size: 3}\nstatus: {ready: 7}\n"},
		{name: "good deployment", doc: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: ns}\nspec:\n  replicas: 2\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec: {containers: [{name: c, image: x, resources: {limits: {cpu: 100m}}}]}\n"},

		{name: "namespace a number", doc: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: 42}\n",
			want: []string{"metadata.namespace: must be a string, not the number 42"}},
		{name: "namespace a map", doc: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: {a: b}}\n",
			want: []string{"metadata.namespace: must be a string, not a map"}},
		{name: "namespace not a DNS label", doc: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: Bad_NS}\n",
			want: []string{`metadata.namespace: "Bad_NS": a lowercase RFC 1123 label`}},
		{name: "spaces in apiVersion", doc: "apiVersion: 'apps /v1'\nkind: Deployment\nmetadata: {name: d}\n",
			want: []string{`apiVersion: "apps /v1" has white space in it`}},
		{name: "spaces in kind", doc: "apiVersion: v1\nkind: 'Config Map'\nmetadata: {name: c}\n",
			want: []string{`kind: "Config Map" has white space in it`}},
		{name: "kind with a dot", doc: "apiVersion: v1\nkind: Config.Map\nmetadata: {name: c}\n",
			want: []string{`kind: "Config.Map" is not a kind any API serves`}},
		{name: "annotation a number", doc: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, annotations: {replicas: 3}}\n",
			want: []string{"metadata.annotations[replicas]: must be a string, not the number 3 (quote it)"}},
		{name: "annotation a boolean", doc: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, annotations: {include.release.openshift.io/x: true}}\n",
			want: []string{"metadata.annotations[include.release.openshift.io/x]: must be a string, not the boolean true"}},
		{name: "label a number", doc: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, labels: {tier: 1}}\n",
			want: []string{"metadata.labels[tier]: must be a string, not the number 1"}},
		{name: "label value too long", doc: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, labels: {tier: " + strings.Repeat("x", 64) + "}}\n",
			want: []string{"metadata.labels: Invalid value"}},
		{name: "annotations a list", doc: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, annotations: [a, b]}\n",
			want: []string{"metadata.annotations: must be a map of strings, not a list"}},
		{name: "name with a slash", doc: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a/b}\n",
			want: []string{`metadata.name: "a/b": may not contain '/'`}},
		{name: "kind List", doc: "apiVersion: v1\nkind: List\nmetadata: {name: l}\nitems: []\n",
			want: []string{"kind: List is a client-side list"}},
		{name: "kind ConfigMapList", doc: "apiVersion: v1\nkind: ConfigMapList\nmetadata: {name: l}\nitems: [{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}]\n",
			want: []string{"kind: ConfigMapList is a client-side list"}},
		{name: "replicas a string", doc: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: ns}\nspec: {replicas: three}\n",
			want: []string{"spec.replicas: must be of type int32, not string"}},
		{name: "containers a map", doc: "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec: {containers: {name: c}}\n",
			want: []string{"spec.containers: must be of type []v1.Container, not object"}},
		{name: "quantity that does not parse", doc: "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec: {containers: [{name: c, image: x, resources: {limits: {cpu: 2 cores}}}]}\n",
			want: []string{"does not decode as Pod"}},
		{name: "unknown field of a built-in kind", doc: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndatas: {a: b}\n",
			warn: []string{"datas: field not declared in the ConfigMap type: apply drops it"}},

		{name: "widget without its required size", doc: widget + "spec: {color: red}\n",
			want: []string{"spec.size: Required value"}},
		{name: "widget size a string", doc: widget + "spec: {size: three}\n",
			want: []string{`spec.size: Invalid value: "string": spec.size in body must be of type integer`}},
		{name: "widget size below its minimum", doc: widget + "spec: {size: 0}\n",
			want: []string{"spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1"}},
		{name: "widget color not in the enum", doc: widget + "spec: {size: 1, color: green}\n",
			want: []string{`spec.color: Unsupported value: "green"`}},
		{name: "widget code against its pattern", doc: widget + "spec: {size: 1, code: ABC}\n",
			want: []string{"spec.code: Invalid value: \"ABC\": spec.code in body should match"}},
		{name: "widget with an unknown field", doc: widget + "spec: {size: 1, colour: red}\n",
			want: []string{"spec.colour: field not declared in the schema of Widget"}},
		{name: "widget with a duplicate list key", doc: widget + "spec: {size: 1, items: [{name: a}, {name: a}]}\n",
			want: []string{`spec.items[1]: Duplicate value: {"name":"a"}`}},
		{name: "widget of a version not served", doc: "apiVersion: example.com/v0\nkind: Widget\nmetadata: {name: w, namespace: ns}\n",
			want: []string{"apiVersion: version v0 of Widget is not served"}},
		{name: "widget of an unknown version", doc: "apiVersion: example.com/v9\nkind: Widget\nmetadata: {name: w, namespace: ns}\n",
			want: []string{"apiVersion: version v9 of Widget is not in its CustomResourceDefinition"}},
		{name: "widget without a namespace", doc: "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 1}\n",
			want: []string{"metadata.namespace: required: Widget is namespaced"}},
		{name: "widget name not a DNS subdomain", doc: "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: W_1, namespace: ns}\nspec: {size: 1}\n",
			want: []string{`metadata.name: "W_1": a lowercase RFC 1123 subdomain`}},

		{name: "kind nothing defines", doc: "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\nspec: {anything: [goes]}\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs := parse(t, "x.yaml", tc.doc)
			c := apicheck.NewChecker(append(crd, objs...), nil)
			var errs, warns []string
			for _, p := range c.Check(objs[0]) {
				if p.Severity == apicheck.Error {
					errs = append(errs, p.String())
				} else {
					warns = append(warns, p.String())
				}
			}
			match(t, "error", errs, tc.want)
			match(t, "warning", warns, tc.warn)
		})
	}
}

func match(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%ss %q, want %d matching %q", what, got, len(want), want)
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("%s %d: %q, want it to contain %q", what, i, got[i], want[i])
		}
	}
}

func TestFindings(t *testing.T) {
	objs := parse(t, "release-manifests/0000_50_x_d.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: ns}\nspec: {replicas: three}\n")
	c := apicheck.NewChecker(objs, nil)
	if fs := c.Findings(objs[0]); len(fs) != 0 {
		t.Errorf("findings for a good object: %v", fs)
	}
	fs := c.Findings(objs[1])
	want := "release-manifests/0000_50_x_d.yaml#1: error: Deployment.apps/ns/d: spec.replicas: must be of type int32, not string"
	if len(fs) != 1 || fs[0].String() != want {
		t.Errorf("findings %v, want %q", fs, want)
	}
}

// TestCheckByPurpose: what a manifest is for decides what is checked. An
// object annotated for deletion needs only its identity (a ServiceMonitor
// the CVO deletes has no spec, which the monitoring CRD requires); a
// create-only object, and a ClusterOperator, is checked as a create: an
// undeclared field is dropped (a warning), where server-side apply
// refuses it; a ClusterOperator is sent as its Go type, with its spec.
func TestCheckByPurpose(t *testing.T) {
	const crds = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: servicemonitors.monitoring.coreos.com}
spec:
  group: monitoring.coreos.com
  names: {kind: ServiceMonitor, plural: servicemonitors}
  scope: Namespaced
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, required: [spec], properties: {spec: {type: object}}}}}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: clusteroperators.config.openshift.io}
spec:
  group: config.openshift.io
  names: {kind: ClusterOperator, plural: clusteroperators}
  scope: Cluster
  versions:
  - {name: v1, served: true, storage: true, subresources: {status: {}}, schema: {openAPIV3Schema: {type: object, required: [spec], properties: {spec: {type: object}, status: {type: object}}}}}
`
	const sm = "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: m, namespace: ns%s}\n"
	const co = "apiVersion: config.openshift.io/v1\nkind: ClusterOperator\nmetadata: {name: dns}\n"
	tests := []struct {
		name, doc string
		want      string // the one error; "" none
	}{
		{name: "applied: spec is required", doc: fmt.Sprintf(sm, ""), want: "spec: Required value"},
		{name: "deleted: identity only", doc: fmt.Sprintf(sm, `, annotations: {release.openshift.io/delete: "true"}`)},
		{name: "deleted: its identity is still checked", doc: "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: m, namespace: Bad_NS, annotations: {release.openshift.io/delete: \"true\"}}\n",
			want: `metadata.namespace: "Bad_NS": a lowercase RFC 1123 label`},
		{name: "a ClusterOperator is created with its spec", doc: co + "status: {versions: [{name: operator, version: 0.0.1-snapshot}]}\n"},
		{name: "applied: an undeclared field is refused", doc: fmt.Sprintf(sm, "") + "spec: {}\nextra: 1\n", want: "extra: field not declared in the schema of ServiceMonitor"},
		{name: "create-only: an undeclared field is dropped on create", doc: fmt.Sprintf(sm, `, annotations: {release.openshift.io/create-only: "true"}`) + "spec: {}\nextra: 1\n"},
		{name: "create-only: the schema's rules hold", doc: fmt.Sprintf(sm, `, annotations: {release.openshift.io/create-only: "true"}`), want: "spec: Required value"},
		{name: "a ClusterOperator is created: an undeclared field is dropped", doc: co + "spec: {}\nextra: 1\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs := append(parse(t, "crds.yaml", crds), parse(t, "obj.yaml", tc.doc)...)
			var errs []string
			for _, p := range apicheck.NewChecker(objs, nil).Check(objs[len(objs)-1]) {
				if p.Severity == apicheck.Error {
					errs = append(errs, p.String())
				}
			}
			switch {
			case tc.want == "" && len(errs) > 0:
				t.Errorf("errors %q, want none", errs)
			case tc.want != "" && (len(errs) != 1 || !strings.Contains(errs[0], tc.want)):
				t.Errorf("errors %q, want one: %s", errs, tc.want)
			}
		})
	}
}
