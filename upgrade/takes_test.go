package upgrade

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

const include = "    include.release.openshift.io/self-managed-high-availability: \"true\"\n"

func ns(name string, del bool) string {
	d := ""
	if del {
		d = "    release.openshift.io/delete: \"true\"\n"
	}
	return "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + name + "\n  annotations:\n" + include + d
}

func crd(del bool) string {
	d := ""
	if del {
		d = "    release.openshift.io/delete: \"true\"\n"
	}
	return "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.x.io\n  annotations:\n" + include + d +
		"spec:\n  group: x.io\n  scope: Namespaced\n  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}\n" +
		"  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]\n"
}

func widget(name string) string {
	return "apiVersion: x.io/v1\nkind: Widget\nmetadata:\n  name: " + name + "\n  namespace: other\n  annotations:\n" + include
}

func TestTakes(t *testing.T) {
	a := build(t, release("4.22.0", map[string]string{
		"0000_10_x_00_ns.yaml":  ns("ns", false),
		"0000_10_x_01_a.yaml":   cm("x", "a", "1"),
		"0000_10_x_02_old.yaml": cm("x", "old", "1"),
		"0000_10_x_03_crd.yaml": crd(false),
		"0000_10_x_04_w.yaml":   widget("w1"),
		"0000_10_x_05_w.yaml":   widget("w-old"),
	}))
	b := build(t, release("4.22.1", map[string]string{
		"0000_10_x_00_ns.yaml":  ns("ns", true),
		"0000_10_x_01_a.yaml":   cm("x", "a", "2"),
		"0000_10_x_03_crd.yaml": crd(true),
		"0000_10_x_04_w.yaml":   widget("w1"),
	}))
	c := Compare(a.Objects, b.Objects)
	user := manifest.ID{Kind: "Secret", Namespace: "ns", Name: "users"}
	held := Held{
		{Kind: "Namespace", Name: "ns"}: {IDs: []manifest.ID{{Kind: "ConfigMap", Namespace: "ns", Name: "a"}, user}, More: 2},
	}
	takes := Takes(c, a.Objects, b.Objects, held)
	if len(takes) != 2 {
		t.Fatalf("%d takes, want the Namespace's and the CRD's: %+v", len(takes), takes)
	}
	type got struct {
		Scope                   string
		Wanted, Orphans, Others []string
		More                    int
	}
	var g []got
	for _, tk := range takes {
		x := got{Scope: tk.Scope(), Wanted: names(tk.Wanted), Orphans: names(tk.Orphans), More: tk.More}
		for _, id := range tk.Others {
			x.Others = append(x.Others, id.Ref())
		}
		g = append(g, x)
	}
	want := []got{
		{Scope: "Namespace/ns (every object in it)", Wanted: []string{"a"}, Orphans: []string{"old"}, Others: []string{"Secret/ns/users"}, More: 2},
		{Scope: "CustomResourceDefinition/widgets.x.io (every object of kind Widget.x.io)", Wanted: []string{"w1"}, Orphans: []string{"w-old"}},
	}
	if diff := cmp.Diff(want, g); diff != "" {
		t.Errorf("takes (-want +got):\n%s", diff)
	}
	if len(c.Orphans) != 0 {
		t.Errorf("orphans %v: the objects a delete takes are not left on the cluster", names(c.Orphans))
	}
	v := TakesVerdicts(takes)
	for i, w := range []string{
		"Namespace/ns (release-manifests/0000_10_x_00_ns.yaml#0) deletes Namespace/ns (every object in it), and applies 1 object: ConfigMap/ns/a",
		"deletes Namespace/ns (every object in it), and with it the running release's 1 object: ConfigMap/ns/old (which it drops, and would otherwise leave on the cluster) and 3 objects: Secret/ns/users and 2 more, which no release applies",
	} {
		if v[i].Passed || !strings.Contains(v[i].Message, w) {
			t.Errorf("verdict %s: %+v, want blocking with %q", v[i].Name, v[i], w)
		}
	}
	if v := TakesVerdicts(nil); !v[0].Passed || !v[1].Passed {
		t.Errorf("no takes: %+v, want both passed", v)
	}
}
