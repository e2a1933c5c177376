package nodetuning

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
)

// Decode converts an object (as parsed from YAML) into a PerformanceProfile.
// The kind must be performance.openshift.io/v2 PerformanceProfile. Every
// field of spec is checked against its Go type first, so that a wrong type
// or a number out of its field's range (a hugepage count or NUMA node above
// a 32-bit integer, a fraction) is an error naming the field with its list
// indexes, never a value that wraps around; unknown fields are errors too.
// The status, if any, is not read.
func Decode(obj map[string]any) (*PerformanceProfile, error) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if gv := GroupVersionKind.GroupVersion().String(); apiVersion != gv || kind != GroupVersionKind.Kind {
		return nil, fmt.Errorf("is %s %s, want %s %s", apiVersion, kind, GroupVersionKind.GroupVersion(), GroupVersionKind.Kind)
	}
	if spec, ok := obj["spec"]; ok {
		if errs := checkTypes("spec", spec, reflect.TypeOf(PerformanceProfileSpec{}), 0); len(errs) > 0 {
			return nil, errors.Join(errs...)
		}
	}
	// The status is the operator's report (a profile copied from a live
	// cluster has one, with fields of its own); the render does not read it.
	spec := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "status" {
			spec[k] = v
		}
	}
	pp := &PerformanceProfile{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(spec, pp, true); err != nil {
		return nil, err
	}
	return pp, nil
}

// maxTypeDepth bounds the nesting checkTypes follows; the profile's types
// are five levels deep.
const maxTypeDepth = 16

// checkTypes checks that value (from an unstructured object) fits the Go
// type t and returns one error per misfit, each naming the field path.
// Fields t does not have are left to the strict converter.
func checkTypes(path string, value any, t reflect.Type, depth int) []error {
	if value == nil {
		return nil
	}
	if depth > maxTypeDepth {
		return []error{fmt.Errorf("%s: nested deeper than %d", path, maxTypeDepth)}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	misfit := func(want string) []error {
		return []error{fmt.Errorf("%s: is %s, want %s", path, describe(value), want)}
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := value.(map[string]any)
		if !ok {
			return misfit("an object")
		}
		fields := jsonFields(t)
		var errs []error
		for _, k := range sortedKeys(m) {
			if f, ok := fields[k]; ok {
				errs = append(errs, checkTypes(path+"."+k, m[k], f, depth+1)...)
			}
		}
		return errs
	case reflect.Slice:
		l, ok := value.([]any)
		if !ok {
			return misfit("a list")
		}
		var errs []error
		for i, e := range l {
			errs = append(errs, checkTypes(fmt.Sprintf("%s[%d]", path, i), e, t.Elem(), depth+1)...)
		}
		return errs
	case reflect.Map:
		m, ok := value.(map[string]any)
		if !ok {
			return misfit("an object")
		}
		var errs []error
		for _, k := range sortedKeys(m) {
			errs = append(errs, checkTypes(fmt.Sprintf("%s[%q]", path, k), m[k], t.Elem(), depth+1)...)
		}
		return errs
	case reflect.String:
		if _, ok := value.(string); !ok {
			return misfit("a string")
		}
	case reflect.Bool:
		if _, ok := value.(bool); !ok {
			return misfit("a boolean")
		}
	case reflect.Int32, reflect.Int64:
		n, ok := integer(value)
		if !ok {
			return misfit("an integer")
		}
		if t.Kind() == reflect.Int32 && (n < math.MinInt32 || n > math.MaxInt32) {
			return []error{fmt.Errorf("%s: %d is out of range: want a 32-bit integer (%d to %d)", path, n, math.MinInt32, math.MaxInt32)}
		}
	}
	return nil
}

// integer returns a whole number of an unstructured value.
func integer(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		if n != math.Trunc(n) || n < math.MinInt64 || n >= math.MaxInt64 {
			return 0, false
		}
		return int64(n), true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

// describe names the kind of an unstructured value for messages.
func describe(v any) string {
	switch t := v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64:
		return fmt.Sprintf("the number %v", t)
	case int64, int, int32:
		return fmt.Sprintf("the number %v", t)
	}
	return fmt.Sprintf("%T", v)
}

// jsonFields maps the JSON names of a struct's fields to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		out[name] = f.Type
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
