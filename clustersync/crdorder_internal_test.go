package clustersync

import (
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/payload"
)

// TestCRDAfter: in the update and reconcile orders, an object whose kind's
// CustomResourceDefinition comes after it (later in its node, or in a node
// run after its own) is found; one whose definition comes first, in a
// parallel node, or in no node of the payload, is not.
func TestCRDAfter(t *testing.T) {
	crd := func(kind, plural string) string {
		return "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: " + plural + ".example.com}\n" +
			"spec: {group: example.com, names: {kind: " + kind + ", plural: " + plural + "}, scope: Cluster, versions: [{name: v1, served: true, storage: true}]}\n"
	}
	obj := func(kind string) string {
		return "apiVersion: example.com/v1\nkind: " + kind + "\nmetadata: {name: x}\n"
	}
	files := map[string]string{
		"0000_05_a_01_widget.yaml":  obj("Widget"), // its CRD at 70: after it
		"0000_70_z_00_crd.yaml":     crd("Widget", "widgets"),
		"0000_10_b_00_crd.yaml":     crd("Gadget", "gadgets"), // before its object
		"0000_20_b_01_gadget.yaml":  obj("Gadget"),
		"0000_30_c_01_thing.yaml":   obj("Thing"), // later in its own node
		"0000_30_c_02_crd.yaml":     crd("Thing", "things"),
		"0000_40_d_01_doohick.yaml": obj("Doohick"), // same run level, another component: parallel
		"0000_40_e_00_crd.yaml":     crd("Doohick", "doohicks"),
		"0000_50_f_01_other.yaml":   obj("Other"), // no CRD in the payload
	}
	var ms []*manifest.Manifest
	for name, doc := range files {
		parsed, err := manifest.Parse(name, []byte(doc), manifest.ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range parsed {
			ms = append(ms, &parsed[i])
		}
	}
	for _, order := range []payload.Order{payload.OrderUpdate, payload.OrderReconcile} {
		g, err := payload.NewTaskGraph(ms, payload.GraphOptions{Order: order})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for i, crd := range crdAfter(g) {
			got = append(got, g.Tasks[i-1].Manifest.File+" -> "+crd.Manifest.File)
		}
		sort.Strings(got)
		want := []string{"0000_30_c_01_thing.yaml -> 0000_30_c_02_crd.yaml"}
		if order == payload.OrderUpdate {
			want = append([]string{"0000_05_a_01_widget.yaml -> 0000_70_z_00_crd.yaml"}, want...)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s order (-want +got):\n%s", order, diff)
		}
	}
}
