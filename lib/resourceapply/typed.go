package resourceapply

import (
	"errors"
	"fmt"
	"sort"
	"strconv"

	configv1 "github.com/openshift/api/config/v1"
	securityv1 "github.com/openshift/api/security/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// newTypedScheme returns the Go types the cluster-version operator decodes
// manifests into before applying them: every built-in Kubernetes kind,
// SecurityContextConstraints, ClusterOperator and ClusterVersion. Other
// kinds (custom resources) are applied as the manifest has them.
func newTypedScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := securityv1.Install(s); err != nil {
		return nil, err
	}
	s.AddKnownTypes(configv1.GroupVersion, &configv1.ClusterOperator{}, &configv1.ClusterVersion{})
	return s, nil
}

// roundTrip returns obj as its Go type encodes it, or nil when the scheme
// does not know the kind: fields the type does not have are gone, and
// fields without omitempty are present with their zero value (null for a
// nil slice or pointer).
func (m *Manager) roundTrip(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	gvk := obj.GroupVersionKind()
	if m.scheme == nil || !m.scheme.Recognizes(gvk) {
		return nil, nil
	}
	t, err := m.decodeTyped(obj)
	if err != nil {
		return nil, err
	}
	out, err := runtime.DefaultUnstructuredConverter.ToUnstructured(t)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", gvk, err)
	}
	u := &unstructured.Unstructured{Object: out}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// decodeTyped decodes obj into a new value of its Go type, which the
// scheme must know.
func (m *Manager) decodeTyped(obj *unstructured.Unstructured) (runtime.Object, error) {
	gvk := obj.GroupVersionKind()
	t, err := m.scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, t); err != nil {
		return nil, fmt.Errorf("decode as %s: %w", gvk, err)
	}
	return t, nil
}

// known returns obj without the fields its Go type does not have, as the
// CVO (which decodes manifests of built-in kinds into their types) would
// apply it, and the paths it dropped ("userNames" of a legacy
// ClusterRoleBinding). Values are the manifest's own: nothing is added.
// A CustomResourceDefinition's schemas lose the fields JSONSchemaProps does
// not have. Kinds the scheme does not know come back unchanged.
func (m *Manager) known(obj *unstructured.Unstructured) (*unstructured.Unstructured, []string, error) {
	if obj.GroupVersionKind().GroupKind() == crdGK {
		var dropped []string
		out := pruneCRDSchemas(obj, &dropped)
		sort.Strings(dropped)
		return out, dropped, nil
	}
	gvk := obj.GroupVersionKind()
	if m.scheme == nil || !m.scheme.Recognizes(gvk) {
		return obj, nil, nil
	}
	// By the Go type alone when the object plainly has its shape, else
	// by decoding and encoding it.
	var dropped []string
	kept, err := keepByType(obj.Object, m.scheme.AllKnownTypes()[gvk], &fieldPath{}, &dropped)
	if errors.Is(err, errUnsupported) {
		return m.knownByRoundTrip(obj)
	}
	if err != nil {
		return obj, nil, fmt.Errorf("encode %s: %w", gvk, err)
	}
	pruned, _ := kept.(map[string]any)
	sort.Strings(dropped)
	return &unstructured.Unstructured{Object: pruned}, dropped, nil
}

// knownByRoundTrip is known for a kind the scheme knows, by encoding the
// decoded object and keeping what the encoding has: the reference
// keepByType is measured against, and its fallback.
func (m *Manager) knownByRoundTrip(obj *unstructured.Unstructured) (*unstructured.Unstructured, []string, error) {
	rt, err := m.roundTrip(obj)
	if err != nil || rt == nil {
		return obj, nil, err
	}
	var dropped []string
	pruned, _ := prune(obj.Object, rt.Object, "", &dropped).(map[string]any)
	sort.Strings(dropped)
	return &unstructured.Unstructured{Object: pruned}, dropped, nil
}

// prune keeps the parts of orig that known has too; a null or empty value
// of orig that known leaves out (omitempty) is dropped silently, anything
// else it leaves out is recorded in dropped.
func prune(orig, known any, path string, dropped *[]string) any {
	switch o := orig.(type) {
	case map[string]any:
		k, ok := known.(map[string]any)
		if !ok {
			return o
		}
		out := make(map[string]any, len(o))
		for key, v := range o {
			kv, present := k[key]
			if !present {
				if !isEmpty(v) {
					*dropped = append(*dropped, join(path, key))
				}
				continue
			}
			out[key] = prune(v, kv, join(path, key), dropped)
		}
		return out
	case []any:
		k, ok := known.([]any)
		if !ok || len(k) != len(o) {
			return o
		}
		out := make([]any, len(o))
		for i := range o {
			out[i] = prune(o[i], k[i], fmt.Sprintf("%s[%d]", path, i), dropped)
		}
		return out
	}
	return orig
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// schemaFields are the fields of a CustomResourceDefinition's validation
// schema (apiextensions.k8s.io/v1 JSONSchemaProps). The server drops any
// other field of a schema when it decodes the CRD, so applying one would
// look like drift on every run.
var schemaFields = map[string]bool{
	"id": true, "$schema": true, "$ref": true, "description": true, "type": true, "format": true, "title": true,
	"default": true, "maximum": true, "exclusiveMaximum": true, "minimum": true, "exclusiveMinimum": true,
	"maxLength": true, "minLength": true, "pattern": true, "maxItems": true, "minItems": true, "uniqueItems": true,
	"multipleOf": true, "enum": true, "maxProperties": true, "minProperties": true, "required": true, "items": true,
	"allOf": true, "oneOf": true, "anyOf": true, "not": true, "properties": true, "additionalProperties": true,
	"patternProperties": true, "dependencies": true, "additionalItems": true, "definitions": true,
	"externalDocs": true, "example": true, "nullable": true,
	"x-kubernetes-preserve-unknown-fields": true, "x-kubernetes-embedded-resource": true,
	"x-kubernetes-int-or-string": true, "x-kubernetes-list-map-keys": true, "x-kubernetes-list-type": true,
	"x-kubernetes-map-type": true, "x-kubernetes-validations": true,
}

// pruneCRDSchemas drops the fields JSONSchemaProps does not have from every
// version's schema of a CustomResourceDefinition (a copy), and records
// their paths.
func pruneCRDSchemas(obj *unstructured.Unstructured, dropped *[]string) *unstructured.Unstructured {
	if !eachSchema(obj, func(s map[string]any, _ int) bool { return !schemaClean(s) }) {
		// Nothing to drop (the usual case): no copy.
		return obj
	}
	out := obj.DeepCopy()
	eachSchema(out, func(s map[string]any, i int) bool {
		path := &fieldPath{parts: []string{"spec", "versions", "[" + strconv.Itoa(i) + "]", "schema", "openAPIV3Schema"}}
		pruneSchema(s, path, dropped, true)
		return false
	})
	return out
}

// eachSchema calls fn with each version's schema of a
// CustomResourceDefinition (in place, not a copy) and its version's index
// until fn returns true, and says whether it did.
func eachSchema(obj *unstructured.Unstructured, fn func(s map[string]any, i int) bool) bool {
	versions, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "versions")
	list, _ := versions.([]any)
	for i, v := range list {
		vm, ok := v.(map[string]any)
		if !ok {
			continue
		}
		sv, _, _ := unstructured.NestedFieldNoCopy(vm, "schema", "openAPIV3Schema")
		if s, ok := sv.(map[string]any); ok && fn(s, i) {
			return true
		}
	}
	return false
}

// schemaClean says whether pruneSchema would leave s as it is.
func schemaClean(s map[string]any) bool {
	var dropped []string
	pruneSchema(s, &fieldPath{}, &dropped, false)
	return len(dropped) == 0
}

// pruneSchema records the fields of one schema node that JSONSchemaProps
// does not have, deleting them when del is set, and recurses into the
// fields that hold schemas.
func pruneSchema(s map[string]any, path *fieldPath, dropped *[]string, del bool) {
	for k, v := range s {
		if !schemaFields[k] {
			*dropped = append(*dropped, path.with(k))
			if del {
				delete(s, k)
			}
			continue
		}
		path.push(k)
		switch k {
		case "properties", "patternProperties", "definitions", "dependencies":
			if m, ok := v.(map[string]any); ok {
				for name, sub := range m {
					if sm, ok := sub.(map[string]any); ok {
						path.push(name)
						pruneSchema(sm, path, dropped, del)
						path.pop()
					}
				}
			}
		case "items", "additionalProperties", "additionalItems", "not":
			switch x := v.(type) {
			case map[string]any:
				pruneSchema(x, path, dropped, del)
			case []any:
				pruneSchemaList(x, path, dropped, del)
			}
		case "allOf", "oneOf", "anyOf":
			if l, ok := v.([]any); ok {
				pruneSchemaList(l, path, dropped, del)
			}
		}
		path.pop()
	}
}

func pruneSchemaList(l []any, path *fieldPath, dropped *[]string, del bool) {
	for i, sub := range l {
		if sm, ok := sub.(map[string]any); ok {
			path.pushIndex(i)
			pruneSchema(sm, path, dropped, del)
			path.pop()
		}
	}
}
