package manifest

import (
	"fmt"
	"strings"
	"unicode"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// FieldError is one problem with one field of an object: the field's
// path ("metadata.namespace", "metadata.annotations[x]"; empty for the
// object as a whole) and what is wrong.
type FieldError struct {
	Field, Message string
}

// Error prints "field: message".
func (e FieldError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

// CheckObject returns what the API server refuses in any object, whatever
// its kind, before its type's own rules: it must be able to route the
// object (apiVersion and kind: strings without white space, a kind name,
// no client-side List), name it (metadata.name, and metadata.namespace a
// string and a DNS label) and store its labels and annotations (maps of
// strings, with keys and values the server accepts). Parse refuses a
// document with such problems; they would otherwise pass silently (a
// numeric annotation value hides every annotation from library-go, so the
// object is excluded from every profile; a numeric namespace reads as
// none).
func CheckObject(obj map[string]any) []FieldError {
	var out []FieldError
	bad := func(field, format string, args ...any) {
		out = append(out, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	apiVersion, ok := obj["apiVersion"].(string)
	switch {
	case !ok:
		bad("apiVersion", "must be a string, not %s", describe(obj["apiVersion"]))
	case strings.ContainsFunc(apiVersion, unicode.IsSpace):
		bad("apiVersion", "%q has white space in it: the server serves no such API", apiVersion)
	default:
		if gv, err := schema.ParseGroupVersion(apiVersion); err != nil {
			bad("apiVersion", "%q: %v", apiVersion, err)
		} else if gv.Version == "" {
			bad("apiVersion", "%q has no version", apiVersion)
		}
	}
	kind, ok := obj["kind"].(string)
	switch {
	case !ok:
		bad("kind", "must be a string, not %s", describe(obj["kind"]))
	case strings.ContainsFunc(kind, unicode.IsSpace):
		bad("kind", "%q has white space in it: the server serves no such kind", kind)
	case !isKindName(kind):
		bad("kind", "%q is not a kind any API serves (letters, digits and dashes, starting with a letter)", kind)
	case isList(obj):
		bad("kind", "%s is a client-side list (kubectl expands it; the API server has no resource for it): give each of its items as a document of its own", kind)
	}
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		bad("metadata", "must be an object, not %s", describe(obj["metadata"]))
		return out
	}
	name, ok := md["name"].(string)
	switch {
	case !ok:
		bad("metadata.name", "must be a string, not %s", describe(md["name"]))
	default:
		for _, msg := range path.IsValidPathSegmentName(name) {
			bad("metadata.name", "%q: %s", name, msg)
		}
	}
	if ns, present := md["namespace"]; present && ns != nil {
		s, ok := ns.(string)
		switch {
		case !ok:
			bad("metadata.namespace", "must be a string, not %s", describe(ns))
		case s != "":
			for _, msg := range apivalidation.ValidateNamespaceName(s, false) {
				bad("metadata.namespace", "%q: %s", s, msg)
			}
		}
	}
	if labels, ok := stringMap(md, "labels", bad); ok {
		out = appendFieldErrors(out, metav1validation.ValidateLabels(labels, field.NewPath("metadata", "labels")))
	}
	if ann, ok := stringMap(md, "annotations", bad); ok {
		out = appendFieldErrors(out, apivalidation.ValidateAnnotations(ann, field.NewPath("metadata", "annotations")))
	}
	return out
}

// stringMap returns md[key] as a map of strings, reporting each value that
// is not a string (the server refuses the object: "cannot unmarshal number
// into Go struct field ObjectMeta.metadata.annotations of type string").
func stringMap(md map[string]any, key string, bad func(field, format string, args ...any)) (map[string]string, bool) {
	v, present := md[key]
	if !present || v == nil {
		return nil, false
	}
	m, ok := v.(map[string]any)
	if !ok {
		bad("metadata."+key, "must be a map of strings, not %s", describe(v))
		return nil, false
	}
	out := make(map[string]string, len(m))
	good := true
	for k, e := range m {
		s, ok := e.(string)
		if !ok {
			bad(fmt.Sprintf("metadata.%s[%s]", key, k), "must be a string, not %s (quote it)", describe(e))
			good = false
			continue
		}
		out[k] = s
	}
	return out, good
}

// isList reports a client-side list: kind List, or any kind ending in List
// that has items.
func isList(obj map[string]any) bool {
	kind, _ := obj["kind"].(string)
	if kind == "List" {
		return true
	}
	_, items := obj["items"]
	return strings.HasSuffix(kind, "List") && items
}

// isKindName reports a name a kind can have: its lower case is a DNS-1035
// label, as the API server requires of a CustomResourceDefinition's kind
// (built-in kinds are letters and digits).
func isKindName(kind string) bool {
	if kind == "" || !unicode.IsLetter(rune(kind[0])) {
		return false
	}
	for _, r := range kind {
		if !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-')) {
			return false
		}
	}
	return true
}

// describe names a value's YAML type in words.
func describe(v any) string {
	switch t := v.(type) {
	case nil:
		return "null (or missing)"
	case string:
		return fmt.Sprintf("the string %q", t)
	case bool:
		return fmt.Sprintf("the boolean %v", t)
	case int64, int, float64, int32:
		return fmt.Sprintf("the number %v", t)
	case map[string]any:
		return "a map"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%T", v)
}

// appendFieldErrors adds the server's field errors.
func appendFieldErrors(out []FieldError, errs field.ErrorList) []FieldError {
	for _, e := range errs {
		out = append(out, FieldError{Field: strings.TrimPrefix(e.Field, "<nil>."), Message: strings.TrimPrefix(e.Error(), e.Field+": ")})
	}
	return out
}
