//go:build e2e

package resourceapply

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"

	"github.com/payload-apply/payload-apply/test/apiserver"
)

// TestLearnedMappingsMatchDiscovery: the mappings learned from the CRDs an
// apply saw established are what discovery says once it has them, for a
// namespaced kind with a version not served and a cluster-scoped kind
// with two versions and an irregular plural.
func TestLearnedMappingsMatchDiscovery(t *testing.T) {
	s := apiserver.Shared(t)
	e := newEnv(t, s)
	group := e.ns + ".example.com"
	crds := []string{`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.GROUP}
spec:
  group: GROUP
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
  - {name: v1beta1, served: false, storage: false, schema: {openAPIV3Schema: {type: object}}}
`, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgetries.GROUP}
spec:
  group: GROUP
  names: {kind: Gadget, plural: gadgetries, singular: gadget, listKind: GadgetList}
  scope: Cluster
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
  - {name: v2, served: true, storage: false, schema: {openAPIV3Schema: {type: object}}}
`}
	for _, crd := range crds {
		c, err := e.apply(strings.ReplaceAll(crd, "GROUP", group))
		mustAction(t, c, err, Created)
	}
	gvks := []schema.GroupVersionKind{
		{Group: group, Version: "v1", Kind: "Widget"},
		{Group: group, Version: "v1", Kind: "Gadget"},
		{Group: group, Version: "v2", Kind: "Gadget"},
	}
	e.mgr.mapper.mu.Lock()
	learned := map[schema.GroupVersionKind]*meta.RESTMapping{}
	for k, l := range e.mgr.mapper.learned {
		if k.gk.Group == group {
			learned[k.gk.WithVersion(k.version)] = l.mapping
		}
	}
	e.mgr.mapper.mu.Unlock()
	if len(learned) != len(gvks) {
		t.Fatalf("learned %d mappings, want %d (the served versions): %v", len(learned), len(gvks), learned)
	}

	dc, err := discovery.NewDiscoveryClientForConfig(s.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	disco := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	type view struct{ Resource, Kind, Scope string }
	for _, gvk := range gvks {
		var want *meta.RESTMapping
		// Discovery lags the CRD's establishing a little.
		for deadline := time.Now().Add(10 * time.Second); ; disco.Reset() {
			if want, err = disco.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("discovery: %s: %v", gvk, err)
		}
		got := learned[gvk]
		if got == nil {
			t.Errorf("%s not learned", gvk)
			continue
		}
		if diff := cmp.Diff(view{want.Resource.String(), want.GroupVersionKind.String(), string(want.Scope.Name())},
			view{got.Resource.String(), got.GroupVersionKind.String(), string(got.Scope.Name())}); diff != "" {
			t.Errorf("%s: learned differs from discovery (-discovery +learned):\n%s", gvk, diff)
		}
	}
	if _, ok := learned[schema.GroupVersionKind{Group: group, Version: "v1beta1", Kind: "Widget"}]; ok {
		t.Error("a version not served was learned")
	}
}
