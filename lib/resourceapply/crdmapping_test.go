package resourceapply

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

func TestCRDMappings(t *testing.T) {
	const head = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\n"
	for _, tc := range []struct {
		name string
		crd  string
		want []string // "group/version kind resource scope"
	}{
		{
			name: "namespaced, one version served of two",
			crd: head + `spec:
  group: example.com
  scope: Namespaced
  versions: [{name: v1, served: true}, {name: v1beta1, served: false}]
status: {acceptedNames: {kind: Widget, plural: widgets}}`,
			want: []string{"example.com/v1 Widget widgets namespace"},
		},
		{
			name: "cluster-scoped, two served",
			crd: head + `spec:
  group: example.com
  scope: Cluster
  versions: [{name: v1, served: true}, {name: v2, served: true}]
status: {acceptedNames: {kind: Gadget, plural: gadgetries}}`,
			want: []string{"example.com/v1 Gadget gadgetries root", "example.com/v2 Gadget gadgetries root"},
		},
		{
			name: "the accepted names win over the spec's",
			crd: head + `spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets}
  versions: [{name: v1, served: true}]
status: {acceptedNames: {kind: Widget, plural: widgetz}}`,
			want: []string{"example.com/v1 Widget widgetz namespace"},
		},
		{name: "names not accepted yet", crd: head + "spec: {group: example.com, scope: Namespaced, versions: [{name: v1, served: true}]}\n"},
		{name: "no group", crd: head + "spec: {scope: Namespaced, versions: [{name: v1, served: true}]}\nstatus: {acceptedNames: {kind: W, plural: ws}}\n"},
		{name: "an unknown scope", crd: head + "spec: {group: g, scope: Galaxy, versions: [{name: v1, served: true}]}\nstatus: {acceptedNames: {kind: W, plural: ws}}\n"},
		{name: "a version without a name", crd: head + "spec: {group: g, scope: Cluster, versions: [{served: true}]}\nstatus: {acceptedNames: {kind: W, plural: ws}}\n"},
		{name: "a version that is not an object", crd: head + "spec: {group: g, scope: Cluster, versions: [v1]}\nstatus: {acceptedNames: {kind: W, plural: ws}}\n"},
		{name: "plural of the wrong type", crd: head + "spec: {group: g, scope: Cluster, versions: [{name: v1, served: true}]}\nstatus: {acceptedNames: {kind: W, plural: 3}}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(tc.crd), &u.Object); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range crdMappings(u) {
				if m.Resource.GroupVersion() != m.GroupVersionKind.GroupVersion() {
					t.Errorf("resource %s and kind %s differ in group or version", m.Resource, m.GroupVersionKind)
				}
				got = append(got, m.GroupVersionKind.GroupVersion().String()+" "+m.GroupVersionKind.Kind+" "+m.Resource.Resource+" "+string(m.Scope.Name()))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("mappings (-want +got):\n%s", diff)
			}
		})
	}
	if crdMappings(nil) != nil {
		t.Error("a nil CRD has mappings")
	}
}

// TestLearnedMappings: what an established CRD says is the answer, without
// asking discovery, across resets, until forgotten or learnedFor old; it
// replaces a "no match" remembered before.
func TestLearnedMappings(t *testing.T) {
	widget := schema.GroupKind{Group: "example.com", Kind: "Widget"}
	under := &askingMapper{kinds: map[schema.GroupKind]bool{}}
	m := newCachedMapper(under)
	if _, err := m.RESTMapping(widget, "v1"); !meta.IsNoMatchError(err) {
		t.Fatalf("before: %v, want no match", err)
	}
	learned := &meta.RESTMapping{Resource: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"},
		GroupVersionKind: widget.WithVersion("v1"), Scope: meta.RESTScopeNamespace}
	if !m.learn([]*meta.RESTMapping{learned}) {
		t.Fatal("nothing learned")
	}
	if m.learn(nil) {
		t.Error("learned from nothing")
	}
	asked := under.asked
	m.Reset()
	for range 3 {
		got, err := m.RESTMapping(widget, "v1")
		if err != nil || got != learned {
			t.Fatalf("after learning: %v, %v", got, err)
		}
	}
	if under.asked != asked {
		t.Errorf("discovery asked %d times for a learned kind", under.asked-asked)
	}
	if _, err := m.RESTMapping(widget, "v2"); !meta.IsNoMatchError(err) {
		t.Errorf("a version not learned: %v, want discovery's no match", err)
	}

	// Forgotten (its CRD deleted): discovery answers again.
	m.forget(widget)
	if _, err := m.RESTMapping(widget, "v1"); !meta.IsNoMatchError(err) {
		t.Errorf("forgotten: %v, want discovery's no match", err)
	}

	// Too old: discovery answers.
	m.learn([]*meta.RESTMapping{learned})
	m.mu.Lock()
	k := mappingKey{gk: widget, version: "v1"}
	l := m.learned[k]
	l.at = time.Now().Add(-learnedFor - time.Second)
	m.learned[k] = l
	m.mu.Unlock()
	m.Reset()
	if _, err := m.RESTMapping(widget, "v1"); !meta.IsNoMatchError(err) {
		t.Errorf("learned %s ago: %v, want discovery asked", learnedFor, err)
	}
	if len(m.learned) != 0 {
		t.Errorf("an expired mapping is kept: %v", m.learned)
	}
}
