package diff

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(y), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

func TestCompare(t *testing.T) {
	cmA := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\ndata:\n  k: v1\n"
	cmA2 := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n  resourceVersion: \"7\"\n  uid: x\n  managedFields: [{manager: m}]\ndata:\n  k: v2\n"
	cmB := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  namespace: ns\n"
	crd := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: w.example.com\nspec: {}\nstatus:\n  conditions: []\n"
	crdLive := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: w.example.com\n  generation: 3\n  creationTimestamp: \"2026-01-01T00:00:00Z\"\nspec: {}\nstatus:\n  conditions: [{type: Established}]\n"
	dep := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  namespace: ns\n"

	from := []Object{
		{Obj: obj(t, cmA), File: "x/0000_50_a_cm.yaml", RunLevel: 50, Component: "a"},
		{Obj: obj(t, crdLive), RunLevel: 10, Component: "crds"},
		{Obj: obj(t, dep), RunLevel: 60, Component: "z"},
	}
	to := []Object{
		{Obj: obj(t, cmA2), File: "x/0000_50_a_cm.yaml", RunLevel: 50, Component: "a"},
		{Obj: obj(t, cmB), RunLevel: 50, Component: "a"},
		{Obj: obj(t, crd), RunLevel: 10, Component: "crds"},
	}
	r, err := Compare(from, to, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range r.Entries {
		got = append(got, string(e.Action)+" "+Header(e.ID))
	}
	want := []string{
		"unchanged apiextensions.k8s.io/CustomResourceDefinition/w.example.com",
		"change core/ConfigMap/ns/a",
		"create core/ConfigMap/ns/b",
		"delete apps/Deployment/ns/d",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if s := r.Summary(); s.String() != "1 to create, 1 to change, 1 to delete, 1 unchanged" || !s.Differs() {
		t.Errorf("summary = %s", s)
	}
	var text bytes.Buffer
	if err := r.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	wantText := `# 50/a
--- a/core/ConfigMap/ns/a
+++ b/core/ConfigMap/ns/a
@@ -1,6 +1,6 @@
 apiVersion: v1
 data:
-  k: v1
+  k: v2
 kind: ConfigMap
 metadata:
   name: a
--- /dev/null
+++ b/core/ConfigMap/ns/b
@@ -0,0 +1,5 @@
+apiVersion: v1
+kind: ConfigMap
+metadata:
+  name: b
+  namespace: ns
# 60/z
--- a/apps/Deployment/ns/d
+++ /dev/null
@@ -1,5 +0,0 @@
-apiVersion: apps/v1
-kind: Deployment
-metadata:
-  name: d
-  namespace: ns
Summary: 1 to create, 1 to change, 1 to delete, 1 unchanged
`
	if diff := cmp.Diff(wantText, text.String()); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`"create": 1`, `"action": "delete"`, `"group": "apps"`, `"runLevel": 50`} {
		if !strings.Contains(js.String(), w) {
			t.Errorf("JSON lacks %s:\n%s", w, js.String())
		}
	}
	var colored bytes.Buffer
	_ = r.WriteText(&colored, true)
	if !strings.Contains(colored.String(), "\x1b[31m-  k: v1\x1b[0m") {
		t.Errorf("no colour on removed lines:\n%q", colored.String())
	}
}

func TestSecretsMasked(t *testing.T) {
	secret := func(data string) *unstructured.Unstructured {
		return obj(t, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: ns\n  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: '{\"data\":{\"password\":\"c2VjcmV0\"}}'\ndata:\n"+data)
	}
	r, err := Compare(
		[]Object{{Obj: secret("  password: c2VjcmV0\n  token: dG9rZW4=\n  same: c2FtZQ==\n")}},
		[]Object{{Obj: secret("  password: bmV3c2VjcmV0\n  same: c2FtZQ==\n  added: YWRkZWQ=\n")}},
		Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	_ = r.WriteText(&b, false)
	out := b.String()
	for _, secret := range []string{"c2VjcmV0", "dG9rZW4=", "c2FtZQ==", "bmV3c2VjcmV0", "YWRkZWQ=", "last-applied"} {
		if strings.Contains(out, secret) {
			t.Errorf("output leaks %q:\n%s", secret, out)
		}
	}
	for _, want := range []string{"-  password: '*** (before)'", "+  password: '*** (after)'", "-  token: '***'", "+  added: '***'", "   same: '***'"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// A live diff passes the live object itself as both sides when nothing
// would change: it is unchanged, masked, and left as given.
func TestCompareSameObject(t *testing.T) {
	s := obj(t, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: ns\ndata:\n  password: c2VjcmV0\n")
	cm := obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: ns\n  uid: x\ndata:\n  k: v\n")
	r, err := Compare([]Object{{Obj: s}, {Obj: cm}}, []Object{{Obj: s}, {Obj: cm}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range r.Entries {
		if e.Action != Unchanged || e.Diff != "" {
			t.Errorf("%s: %s, diff %q; want unchanged, no diff", Header(e.ID), e.Action, e.Diff)
		}
		if e.ID.Kind == "Secret" {
			if got, _, _ := unstructured.NestedString(e.To.Object, "data", "password"); got != "***" {
				t.Errorf("Secret data shown as %q, want ***", got)
			}
		}
	}
	if got, _, _ := unstructured.NestedString(s.Object, "data", "password"); got != "c2VjcmV0" {
		t.Errorf("input Secret changed: %q", got)
	}
	if cm.GetUID() != "x" {
		t.Errorf("input ConfigMap changed: %v", cm.Object)
	}
}

// TestSecretsInListsMasked: a Secret inside a List, however it is nested,
// is masked like a Secret on its own, with changes still shown.
func TestSecretsInListsMasked(t *testing.T) {
	secret := func(indent, data string) string {
		return strings.ReplaceAll("- apiVersion: v1\n  kind: Secret\n  metadata: {name: s, namespace: ns}\n  data: "+data+"\n", "\n", "\n"+indent)
	}
	tests := []struct {
		name     string
		from, to string
		leaks    []string
		want     []string
	}{
		{name: "List",
			from:  "apiVersion: v1\nkind: List\nmetadata: {name: l}\nitems:\n" + secret("", "{password: UGxhbnRlZE9uZQ==, same: U2FtZVZhbHVl}"),
			to:    "apiVersion: v1\nkind: List\nmetadata: {name: l}\nitems:\n" + secret("", "{password: UGxhbnRlZFR3bw==, same: U2FtZVZhbHVl}"),
			leaks: []string{"UGxhbnRlZE9uZQ==", "UGxhbnRlZFR3bw==", "U2FtZVZhbHVl"},
			want:  []string{"'*** (before)'", "'*** (after)'", "same: '***'"}},
		{name: "SecretList created",
			to:    "apiVersion: v1\nkind: SecretList\nmetadata: {name: l}\nitems:\n" + secret("", "{token: VG9rZW5WYWx1ZQ==}"),
			leaks: []string{"VG9rZW5WYWx1ZQ=="},
			want:  []string{"token: '***'"}},
		{name: "List in a List deleted",
			from:  "apiVersion: v1\nkind: List\nmetadata: {name: l}\nitems:\n- apiVersion: v1\n  kind: List\n  items:\n  " + secret("  ", "{key: TmVzdGVkVmFsdWU=}"),
			leaks: []string{"TmVzdGVkVmFsdWU="},
			want:  []string{"key: '***'"}},
		{name: "stringData in a List",
			from:  "apiVersion: v1\nkind: List\nmetadata: {name: l}\nitems:\n- apiVersion: v1\n  kind: Secret\n  metadata: {name: s}\n  stringData: {pw: PlantedStringDataOne}\n",
			to:    "apiVersion: v1\nkind: List\nmetadata: {name: l}\nitems:\n- apiVersion: v1\n  kind: Secret\n  metadata: {name: s}\n  stringData: {pw: PlantedStringDataTwo}\n",
			leaks: []string{"PlantedStringDataOne", "PlantedStringDataTwo"},
			want:  []string{"pw: '*** (before)'", "pw: '*** (after)'"}},
		{name: "Template objects",
			to:    "apiVersion: template.openshift.io/v1\nkind: Template\nmetadata: {name: t}\nobjects:\n" + secret("", "{cert: Q2VydFZhbHVl}"),
			leaks: []string{"Q2VydFZhbHVl"},
			want:  []string{"cert: '***'"}},
		{name: "data not a map, in a List",
			to:    "apiVersion: v1\nkind: List\nmetadata: {name: l}\nitems:\n" + secret("", "NotAMapValue"),
			leaks: []string{"NotAMapValue"},
			want:  []string{"data: '***'"}},
		{name: "secret appended to a List",
			from:  "apiVersion: v1\nkind: List\nmetadata: {name: l}\nitems: []\n",
			to:    "apiVersion: v1\nkind: List\nmetadata: {name: l}\nitems:\n" + secret("", "{k: QXBwZW5kZWQ=}"),
			leaks: []string{"QXBwZW5kZWQ="},
			want:  []string{"k: '***'"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var from, to []Object
			if tc.from != "" {
				from = []Object{{Obj: obj(t, tc.from)}}
			}
			if tc.to != "" {
				to = []Object{{Obj: obj(t, tc.to)}}
			}
			r, err := Compare(from, to, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			_ = r.WriteText(&b, false)
			out := b.String()
			for _, s := range tc.leaks {
				if strings.Contains(out, s) {
					t.Errorf("output leaks %q:\n%s", s, out)
				}
			}
			for _, s := range tc.want {
				if !strings.Contains(out, s) {
					t.Errorf("output lacks %q:\n%s", s, out)
				}
			}
		})
	}
}
