package resourceapply

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// crdMappings returns the REST mappings an established
// CustomResourceDefinition serves, as discovery will list them: one per
// served version, with the kind and plural the server accepted
// (status.acceptedNames) and the CRD's scope. None when any of those is
// missing or of the wrong type: then discovery is read for them.
func crdMappings(crd *unstructured.Unstructured) []*meta.RESTMapping {
	if crd == nil {
		return nil
	}
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd.Object, "status", "acceptedNames", "kind")
	plural, _, _ := unstructured.NestedString(crd.Object, "status", "acceptedNames", "plural")
	scopeName, _, _ := unstructured.NestedString(crd.Object, "spec", "scope")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	var scope meta.RESTScope
	switch scopeName {
	case "Namespaced":
		scope = meta.RESTScopeNamespace
	case "Cluster":
		scope = meta.RESTScopeRoot
	}
	if group == "" || kind == "" || plural == "" || scope == nil {
		return nil
	}
	var out []*meta.RESTMapping
	for _, v := range versions {
		v, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		name, _ := v["name"].(string)
		served, _ := v["served"].(bool)
		if name == "" {
			return nil
		}
		if !served {
			continue
		}
		out = append(out, &meta.RESTMapping{
			Resource:         schema.GroupVersionResource{Group: group, Version: name, Resource: plural},
			GroupVersionKind: schema.GroupVersionKind{Group: group, Version: name, Kind: kind},
			Scope:            scope,
		})
	}
	return out
}
