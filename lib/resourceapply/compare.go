package resourceapply

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ignoredMetadata are metadata fields the server sets or that do not say
// anything about the desired state.
var ignoredMetadata = map[string]bool{
	"name": true, "namespace": true, "creationTimestamp": true, "resourceVersion": true, "uid": true,
	"generation": true, "managedFields": true, "selfLink": true, "deletionTimestamp": true,
	"deletionGracePeriodSeconds": true, "generateName": true,
}

// InSync reports whether applying required to live would change nothing:
// every field required sets (less status and server-set metadata) has the
// same value in live, every field that fieldManager owns in live through
// server-side apply is still in required (so nothing would be removed),
// and no other manager set a field where the cluster-version operator's
// merge would take it out again (merge rules: an environment variable
// added to a container, a field added to a custom resource's spec; see
// docs/apply.md). When it is not, the string says where they first differ.
//
// Values compare semantically: numbers by value (1 and 1.0 are equal), and a
// field that required sets to null, false, 0, "", {} or [] matches a field
// live leaves out (the server drops empty values). Lists match element by
// element, by key where the CVO's merge matches them by key (containers
// and environment variables by name, volume mounts by path), by value where
// it only adds what is missing (tolerations), else by index with the same
// length. A false "not in sync" only costs a write that changes nothing; a
// false "in sync" would skip a write, so the comparison errs on the side
// of writing.
func InSync(required, live *unstructured.Unstructured, fieldManager string) (bool, string) {
	d := compare(required, live, fieldManager)
	switch {
	case d.apply != "":
		return false, d.apply
	case len(d.removals) > 0:
		r := d.removals[0]
		who := r.manager
		if who == "" {
			who = "another writer"
		}
		return false, r.String() + ": set by " + who + ", which the CVO's merge removes"
	}
	return true, ""
}

// drift is what applying required to a live object would change.
type drift struct {
	// apply says where required's fields differ from live's, or which
	// field the Manager owned left required: a server-side apply is
	// needed. Empty: none is.
	apply string
	// removals are what other managers set where the CVO's merge would
	// not leave it.
	removals []removal
}

func (d drift) inSync() bool { return d.apply == "" && len(d.removals) == 0 }

// compare says what applying required to live would change.
func compare(required, live *unstructured.Unstructured, fieldManager string) drift {
	d := drift{removals: removals(required, live, fieldManager)}
	if ok, where := applied(required, live, fieldManager); !ok {
		d.apply = where
	}
	return d
}

// applied reports whether live holds every field of required with its
// value, and nothing fieldManager applied that required no longer sets.
func applied(required, live *unstructured.Unstructured, fieldManager string) (bool, string) {
	ru := mergeRules(required)
	for k, rv := range required.Object {
		switch k {
		case "apiVersion", "kind", "status":
			continue
		case "metadata":
			rm, _ := rv.(map[string]any)
			lm, _ := live.Object["metadata"].(map[string]any)
			mr := ru.child("metadata", true)
			for mk, mv := range rm {
				if ignoredMetadata[mk] {
					continue
				}
				if ok, where := subsetRule(mv, lookup(lm, mk), mr.child(mk, true)); !ok {
					return false, "metadata." + mk + where
				}
			}
			continue
		}
		lv, found := live.Object[k]
		if !found {
			if isEmpty(rv) {
				continue
			}
			return false, k + ": missing"
		}
		if ok, where := subsetRule(rv, lv, ru.child(k, true)); !ok {
			return false, k + where
		}
	}
	fields := ownedFields(live, fieldManager)
	if fields == nil {
		return true, ""
	}
	if ok, where := ownedInRequired(fields, required.Object, ""); !ok {
		return false, where + ": owned but no longer in the payload"
	}
	return true, ""
}

func lookup(m map[string]any, k string) any {
	if m == nil {
		return nil
	}
	return m[k]
}

// subset reports whether every field of r has the same value in l; when
// not, the string says where, below path.
func subset(r, l any, path string) (bool, string) {
	ok, where := subsetRule(r, l, nil)
	return ok, path + where
}

// subsetRule is subset with lists matched as the merge rule ru says. The
// string says where they differ, relative to r (".a[2].b: differs"): built
// only on the way back from a difference.
func subsetRule(r, l any, ru *rule) (bool, string) {
	if r == nil {
		return true, ""
	}
	if l == nil {
		if isEmpty(r) {
			return true, ""
		}
		return false, ": missing"
	}
	switch rv := r.(type) {
	case map[string]any:
		lv, ok := l.(map[string]any)
		if !ok {
			return false, ": not an object"
		}
		for k, v := range rv {
			if ok, where := subsetRule(v, lv[k], ru.child(k, true)); !ok {
				return false, "." + k + where
			}
		}
		return true, ""
	case []any:
		lv, ok := l.([]any)
		if !ok {
			return false, ": not a list"
		}
		return subsetList(rv, lv, ru)
	}
	if rn, ok := number(r); ok {
		if ln, ok := number(l); ok && rn == ln {
			return true, ""
		}
		return false, ": differs"
	}
	if reflect.DeepEqual(r, l) {
		return true, ""
	}
	return false, ": differs"
}

// subsetList matches the elements of list r in l: by key when ru has one
// (elements l has beyond r's are for removals to judge), by value when ru
// keeps what r lacks, else by index, with the same length.
func subsetList(r, l []any, ru *rule) (bool, string) {
	switch {
	case ru != nil && ru.key != nil:
		el := ru.element()
		for j, i := range matchRequired(r, l, ru.key) {
			if i < 0 {
				return false, fmt.Sprintf("[%d]: missing", j)
			}
			if ok, where := subsetRule(r[j], l[i], el); !ok {
				return false, fmt.Sprintf("[%d]%s", j, where)
			}
		}
		return true, ""
	case ru != nil && ru.keep:
		for j := range r {
			if !containsSubset(l, r[j]) {
				return false, fmt.Sprintf("[%d]: missing", j)
			}
		}
		return true, ""
	}
	if len(r) != len(l) {
		return false, fmt.Sprintf(": %d items, live has %d", len(r), len(l))
	}
	el := ru.element()
	for i := range r {
		if ok, where := subsetRule(r[i], l[i], el); !ok {
			return false, fmt.Sprintf("[%d]%s", i, where)
		}
	}
	return true, ""
}

// containsSubset reports whether some element of l holds every field of want.
func containsSubset(l []any, want any) bool {
	for _, el := range l {
		if ok, _ := subset(want, el, ""); ok {
			return true
		}
	}
	return false
}

// isEmpty reports null, false, 0, "", [] and objects whose fields are all
// empty.
func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case string:
		return x == ""
	case map[string]any:
		for _, v := range x {
			if !isEmpty(v) {
				return false
			}
		}
		return true
	case []any:
		return len(x) == 0
	}
	if n, ok := number(v); ok {
		return n == 0
	}
	return false
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// ownedFields returns the fieldsV1 set that fieldManager owns in live
// through Apply on the main resource, or nil. It reads live's managed
// fields as they are (GetManagedFields would convert every entry to its
// Go type and back, for each object compared); the set is live's own:
// not to be changed.
func ownedFields(live *unstructured.Unstructured, fieldManager string) map[string]any {
	md, _ := live.Object["metadata"].(map[string]any)
	entries, _ := md["managedFields"].([]any)
	for _, it := range entries {
		e, ok := it.(map[string]any)
		if !ok {
			continue
		}
		manager, _ := e["manager"].(string)
		operation, _ := e["operation"].(string)
		subresource, _ := e["subresource"].(string)
		if manager != fieldManager || operation != "Apply" || subresource != "" || e["fieldsV1"] == nil {
			continue
		}
		fields, ok := e["fieldsV1"].(map[string]any)
		if !ok {
			return nil
		}
		return fields
	}
	return nil
}

// ownedInRequired reports whether every path of a fieldsV1 set is present
// in required: "f:name" is a field of an object, "k:{...}" an element of a
// list found by its key fields, "v:value" an element of a set, "i:N" an
// element by index; "." marks the node itself.
func ownedInRequired(fields map[string]any, r any, path string) (bool, string) {
	for key, sub := range fields {
		if key == "." {
			continue
		}
		subFields, _ := sub.(map[string]any)
		switch {
		case strings.HasPrefix(key, "f:"):
			name := key[2:]
			if path == "" && name == "status" {
				continue
			}
			rm, ok := r.(map[string]any)
			if !ok {
				return false, path + "." + name
			}
			rv, found := rm[name]
			if !found {
				return false, strings.TrimPrefix(path+"."+name, ".")
			}
			if len(subFields) > 0 {
				if ok, where := ownedInRequired(subFields, rv, path+"."+name); !ok {
					return false, where
				}
			}
		case strings.HasPrefix(key, "k:"):
			var keyFields map[string]any
			if err := json.Unmarshal([]byte(key[2:]), &keyFields); err != nil {
				return false, path + "[" + key[2:] + "]"
			}
			el, ok := findKeyed(r, keyFields)
			if !ok {
				return false, strings.TrimPrefix(path+"["+key[2:]+"]", ".")
			}
			if len(subFields) > 0 {
				if ok, where := ownedInRequired(subFields, el, path+"["+key[2:]+"]"); !ok {
					return false, where
				}
			}
		case strings.HasPrefix(key, "v:"):
			var want any
			if err := json.Unmarshal([]byte(key[2:]), &want); err != nil {
				return false, path + "[" + key[2:] + "]"
			}
			if !containsValue(r, want) {
				return false, strings.TrimPrefix(path+"["+key[2:]+"]", ".")
			}
		case strings.HasPrefix(key, "i:"):
			i, err := strconv.Atoi(key[2:])
			list, ok := r.([]any)
			if err != nil || !ok || i < 0 || i >= len(list) {
				return false, strings.TrimPrefix(fmt.Sprintf("%s[%s]", path, key[2:]), ".")
			}
			if len(subFields) > 0 {
				if ok, where := ownedInRequired(subFields, list[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
					return false, where
				}
			}
		}
	}
	return true, ""
}

// findKeyed returns the element of list r whose fields match key; a key
// field the element leaves out matches (the server defaulted it, as with a
// port's protocol).
func findKeyed(r any, key map[string]any) (any, bool) {
	list, ok := r.([]any)
	if !ok {
		return nil, false
	}
	for _, el := range list {
		m, ok := el.(map[string]any)
		if !ok {
			continue
		}
		match := true
		for k, want := range key {
			got, found := m[k]
			if !found {
				continue
			}
			if ok, _ := subset(got, want, ""); !ok {
				match = false
				break
			}
		}
		if match {
			return el, true
		}
	}
	return nil, false
}

func containsValue(r any, want any) bool {
	list, ok := r.([]any)
	if !ok {
		return false
	}
	for _, el := range list {
		if ok, _ := subset(el, want, ""); ok {
			if ok2, _ := subset(want, el, ""); ok2 {
				return true
			}
		}
	}
	return false
}
