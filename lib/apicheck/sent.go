package apicheck

import (
	"fmt"
	"sort"
	"sync"

	configv1 "github.com/openshift/api/config/v1"
	securityv1 "github.com/openshift/api/security/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// cvoTypes are the kinds outside Kubernetes that the cluster-version
// operator (and so apply) decodes into their Go types before sending them:
// SecurityContextConstraints, ClusterOperator and ClusterVersion. Their
// objects are sent as the type encodes them: fields it lacks dropped,
// fields it always has present (a ClusterOperator's spec).
var cvoTypes = sync.OnceValue(func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := securityv1.Install(s); err != nil {
		return nil
	}
	s.AddKnownTypes(configv1.GroupVersion, &configv1.ClusterOperator{}, &configv1.ClusterVersion{})
	return s
})

// asSent returns u as apply sends it when the CVO decodes its kind into a
// Go type, with the paths of the fields that drops; u itself otherwise.
func asSent(u *unstructured.Unstructured) (*unstructured.Unstructured, []string, error) {
	s := cvoTypes()
	gvk := u.GroupVersionKind()
	if s == nil || !s.Recognizes(gvk) {
		return u, nil, nil
	}
	t, err := s.New(gvk)
	if err != nil {
		return u, nil, nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, t); err != nil {
		return nil, nil, fmt.Errorf("does not decode as %s: %w", gvk.Kind, err)
	}
	out, err := runtime.DefaultUnstructuredConverter.ToUnstructured(t)
	if err != nil {
		return nil, nil, fmt.Errorf("does not encode as %s: %w", gvk.Kind, err)
	}
	sent := &unstructured.Unstructured{Object: out}
	sent.SetGroupVersionKind(gvk)
	var dropped []string
	droppedPaths(u.Object, out, "", &dropped)
	sort.Strings(dropped)
	return sent, dropped, nil
}

// droppedPaths records the fields of orig (with a value) that known lacks.
func droppedPaths(orig, known any, path string, out *[]string) {
	switch o := orig.(type) {
	case map[string]any:
		k, ok := known.(map[string]any)
		if !ok {
			return
		}
		for key, v := range o {
			kv, present := k[key]
			p := key
			if path != "" {
				p = path + "." + key
			}
			if !present {
				if !emptyValue(v) {
					*out = append(*out, p)
				}
				continue
			}
			droppedPaths(v, kv, p, out)
		}
	case []any:
		k, ok := known.([]any)
		if !ok || len(k) != len(o) {
			return
		}
		for i := range o {
			droppedPaths(o[i], k[i], fmt.Sprintf("%s[%d]", path, i), out)
		}
	}
}

// emptyValue reports a value a Go type's omitempty leaves out: null,
// false, zero, "", and empty maps and lists.
func emptyValue(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case bool:
		return !t
	case string:
		return t == ""
	case int64:
		return t == 0
	case int:
		return t == 0
	case float64:
		return t == 0
	case map[string]any:
		for _, e := range t {
			if !emptyValue(e) {
				return false
			}
		}
		return true
	case []any:
		return len(t) == 0
	}
	return false
}
