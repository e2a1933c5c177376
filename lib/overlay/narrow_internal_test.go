package overlay

import (
	"fmt"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

func TestNarrowing(t *testing.T) {
	obj := func(text string) *manifest.Manifest {
		t.Helper()
		ms, err := manifest.Parse("f.yaml", []byte(text), manifest.ParseOptions{})
		if err != nil || len(ms) != 1 {
			t.Fatalf("parse %q: %v", text, err)
		}
		return &ms[0]
	}
	deployment := obj("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: op, namespace: ns1}\n")
	noNamespace := obj("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: op2}\n")
	crd := obj("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: things.example.com}\n")
	cm := obj("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: op, namespace: ns1}\n")
	list := obj("apiVersion: v1\nkind: ConfigMapList\nmetadata: {name: l}\nitems: []\n")
	local := obj("apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: ns1, annotations: {config.kubernetes.io/local-config: \"true\"}}\n")
	all := map[string]*manifest.Manifest{"deployment": deployment, "noNamespace": noNamespace, "crd": crd, "cm": cm, "list": list, "local": local}
	files := map[string]string{
		"smp.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: op}\ndata: {a: b}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: other}\n",
		"json.yaml":   "- op: add\n  path: /a\n  value: 1\n",
		"noname.yaml": "apiVersion: v1\nkind: ConfigMap\n",
	}
	read := func(p string) ([]byte, error) {
		data, ok := files[p]
		if !ok {
			return nil, fmt.Errorf("%s: no such file", p)
		}
		return []byte(data), nil
	}
	files["rename.yaml"] = "- op: replace\n  path: /metadata/namespace\n  value: x\n"
	files["move.yaml"] = "- op: move\n  from: /kind\n  path: /spec/kind\n"
	files["labels.yaml"] = "- op: add\n  path: /metadata/labels/a\n  value: b\n"
	tests := []struct {
		name          string
		kustomization string
		want          []string // nil: no narrowing
		perObject     bool
	}{
		{"by group and kind", "patches:\n- path: smp.yaml\n  target: {group: apps, kind: Deployment}\n", []string{"deployment", "noNamespace", "list", "local"}, true},
		{"by namespace", "patches:\n- path: labels.yaml\n  target: {kind: Deployment, namespace: ns1}\n", []string{"deployment", "list", "local"}, true},
		{"the default namespace matches objects without one", "patches:\n- path: x.yaml\n  target: {kind: Deployment, namespace: default}\n", []string{"noNamespace", "list", "local"}, false},
		{"cluster-scoped objects match kustomize's mark", "patches:\n- path: x.yaml\n  target: {namespace: _non_namespaceable_}\n", []string{"deployment", "noNamespace", "crd", "cm", "list", "local"}, false},
		{"name regex", "patches:\n- path: x.yaml\n  target: {name: 'op|things\\..*'}\n", []string{"deployment", "crd", "cm", "list", "local"}, false},
		{"label selectors are ignored", "patches:\n- path: x.yaml\n  target: {kind: ConfigMap, labelSelector: 'a=b'}\n", []string{"cm", "list", "local"}, false},
		{"untargeted strategic merge patches by kind and name", "patches:\n- path: smp.yaml\n", []string{"cm", "list", "local"}, false},
		{"inline strategic merge patch", "kind: Kustomization\npatches:\n- patch: |\n    kind: Deployment\n    metadata: {name: op2}\n", []string{"noNamespace", "list", "local"}, false},
		{"renaming JSON 6902", "patches:\n- path: rename.yaml\n  target: {kind: Deployment}\n", []string{"deployment", "noNamespace", "list", "local"}, false},
		{"moving the kind", "patches:\n- path: move.yaml\n  target: {kind: Deployment}\n", []string{"deployment", "noNamespace", "list", "local"}, false},
		{"options", "patches:\n- path: smp.yaml\n  target: {kind: Deployment}\n  options: {allowNameChange: true}\n", []string{"deployment", "noNamespace", "list", "local"}, false},
		{"unreadable patch", "patches:\n- path: missing.yaml\n  target: {kind: Deployment}\n", []string{"deployment", "noNamespace", "list", "local"}, false},
		{"untargeted JSON 6902", "patches:\n- path: json.yaml\n", nil, false},
		{"patch without a name", "patches:\n- path: noname.yaml\n", nil, false},
		{"other fields", "namespace: x\npatches:\n- path: x.yaml\n  target: {kind: Deployment}\n", nil, false},
		{"a component", "kind: Component\npatches:\n- path: x.yaml\n  target: {kind: Deployment}\n", nil, false},
		{"resources", "resources: [a.yaml]\npatches:\n- path: x.yaml\n  target: {kind: Deployment}\n", nil, false},
		{"bad regex", "patches:\n- path: x.yaml\n  target: {name: '('}\n", nil, false},
		{"no patches", "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var k map[string]any
			if err := yaml.Unmarshal([]byte(tc.kustomization), &k); err != nil {
				t.Fatal(err)
			}
			n := narrowingOf(k, read)
			if (n == nil) != (tc.want == nil) {
				t.Fatalf("narrowing %v, want narrowing: %v", n, tc.want != nil)
			}
			if n == nil {
				return
			}
			if n.perObject != tc.perObject {
				t.Errorf("perObject %v, want %v", n.perObject, tc.perObject)
			}
			want := map[string]bool{}
			for _, w := range tc.want {
				want[w] = true
			}
			for name, m := range all {
				if got := n.mayTouch(m); got != want[name] {
					t.Errorf("%s: mayTouch %v, want %v", name, got, want[name])
				}
			}
		})
	}
}
