package gencomplete

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestWrite: a kind nothing serves gets a CRD whose schema requires what
// every object to apply sets (the delete manifest's missing spec aside),
// namespaced when its objects are; a namespace no Namespace creates gets
// one, in the profiles that lack it; built-in kinds, kinds the payload's
// CRDs define and created namespaces get nothing.
func TestWrite(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "out")
	const ha, sno = `include.release.openshift.io/self-managed-high-availability: "true"`, `include.release.openshift.io/single-node-developer: "true"`
	files := map[string]string{
		"release-manifests/0000_10_a_00_ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: a, annotations: {" + ha + "}}\n",
		"release-manifests/0000_10_a_01_sm.yaml": "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: m, namespace: a, annotations: {" + ha + ", " + sno + "}}\nspec: {}\n" +
			"---\napiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: old, namespace: a, annotations: {" + ha + `, release.openshift.io/delete: "true"}}` + "\n",
		"release-manifests/0000_10_a_02_cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: b, annotations: {" + ha + "}}\n",
		"release-manifests/0000_10_a_03_crd.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: ws.example.com, annotations: {" + ha + "}}\nspec: {group: example.com, names: {kind: W, plural: ws}, scope: Cluster, versions: [{name: v1, served: true, storage: true}]}\n",
		"release-manifests/0000_10_a_04_w.yaml":   "apiVersion: example.com/v1\nkind: W\nmetadata: {name: w, annotations: {" + ha + "}}\n",
		"release-manifests/release-metadata":      `{"kind": "cincinnati-metadata-v0", "version": "4.22.0", "previous": []}`,
		"release-manifests/image-references":      `{"kind": "ImageStream", "apiVersion": "image.openshift.io/v1", "metadata": {"name": "4.22.0"}, "spec": {"tags": []}}`,
	}
	for name, data := range files {
		if err := os.MkdirAll(filepath.Join(src, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	added, err := Write(t.Context(), src, dst)
	if err != nil {
		t.Fatal(err)
	}
	want := &Added{
		Kinds:      []Kind{{GroupKind: schema.GroupKind{Group: "monitoring.coreos.com", Kind: "ServiceMonitor"}, Versions: []string{"v1"}, Namespaced: true, Required: []string{"spec"}, Objects: 2}},
		Namespaces: []string{"a", "b"},
	}
	if diff := cmp.Diff(want, added); diff != "" {
		t.Errorf("added (-want +got):\n%s", diff)
	}
	crds, _ := os.ReadFile(filepath.Join(dst, "release-manifests", CRDFile))
	ns, _ := os.ReadFile(filepath.Join(dst, "release-manifests", NamespaceFile))
	for _, want := range []string{"name: servicemonitors.monitoring.coreos.com", "scope: Namespaced", "- spec", sno} {
		if !strings.Contains(string(crds), want) {
			t.Errorf("the CRD lacks %q:\n%s", want, crds)
		}
	}
	// a: created for high availability only, so made for single-node.
	if docs := strings.Split(string(ns), "---\n"); len(docs) != 2 || strings.Contains(docs[0], "high-availability") || !strings.Contains(docs[0], "single-node") {
		t.Errorf("namespaces:\n%s", ns)
	}
	if _, err := os.Stat(filepath.Join(dst, "release-manifests", "0000_10_a_04_w.yaml")); err != nil {
		t.Errorf("the payload's files are not copied: %v", err)
	}
}
