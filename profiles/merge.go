package profiles

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
)

// Rules say how a child definition's fields combine with what its ancestors
// set, following the NamespacedCloudProfile rules:
//
//   - maps merge by key, recursively;
//   - lists named in ListKeys merge by the key field of their entries: the
//     parent's entries keep their order, an entry whose key the parent has is
//     merged into it in place, and the child's new entries are appended in the
//     child's order;
//   - every other value (scalars, other lists) is the child's when the child
//     sets it (a null is "not set");
//   - a Protected field that an ancestor has set may not be changed: the child
//     may restate it, but a merge that would change it is a *ProtectedError;
//   - a keyed list must be given as a list: any other value is an error (it
//     would drop the ancestors' entries).
//
// Paths in ListKeys and Protected are dot-separated field names relative to
// the merged tree; "[]" after a list's name stands for each of its entries:
// "overlays" is the list, "overlays[]" one entry, "machineImages[].versions"
// a list inside each entry. The zero Rules merge maps by key and let the
// child win everywhere else.
type Rules struct {
	// Root prefixes every path in errors and Merged.Origins ("spec").
	Root string
	// ListKeys maps the path of a keyed list to the field that keys its
	// entries. Every entry must be a map with a non-empty string key, unique
	// within the list.
	ListKeys map[string]string
	// Protected maps a path to why a child may not change it; the reason is
	// part of the error.
	Protected map[string]string
}

// Layer is one definition's fields, as decoded from YAML or JSON into
// map[string]any, []any, string, bool, float64 and nil.
type Layer struct {
	// File is where the fields come from; errors and origins name it.
	File string
	// Name names the definition in errors ("profile \"crc\"").
	Name string
	// Fields are the definition's fields.
	Fields map[string]any
}

// Merged is the outcome of Rules.Merge.
type Merged struct {
	// Fields are the merged fields. They share no maps or slices with the
	// layers.
	Fields map[string]any
	// Origins maps the path of every leaf value (scalars, maps without fields
	// and lists that are not keyed) and of every keyed-list entry to the File
	// of the layer that set it: "spec.description", `spec.labels["a.b/c"]`,
	// "spec.overlays[crc]", "spec.overlays[crc].path".
	Origins map[string]string
}

// ProtectedError reports a child that changes a protected field an ancestor set.
type ProtectedError struct {
	// File and Name are the child's.
	File, Name string
	// Path is the field, with the Root prefix.
	Path string
	// SetBy is the file of the ancestor that set the field.
	SetBy string
	// Reason is the Rules.Protected entry.
	Reason string
	// Was and Want are the ancestor's value and the value the merge would give.
	Was, Want any
}

// Error prints "FILE: profile "x": PATH is protected (REASON): set to V by FILE, cannot become W".
func (e *ProtectedError) Error() string {
	return fmt.Sprintf("%s: %s: %s is protected (%s): set to %s by %s, cannot become %s",
		e.File, e.Name, e.Path, e.Reason, show(e.Was), e.SetBy, show(e.Want))
}

func show(v any) string {
	switch t := v.(type) {
	case string:
		return fmt.Sprintf("%q", t)
	case map[string]any, []any:
		return fmt.Sprintf("%v", t)
	}
	return fmt.Sprint(v)
}

// Merge merges layers, root first: layers[0] is the root ancestor and each
// later layer a child of the one before. Errors (malformed keyed lists,
// protected changes) name the layer's file; every one found is joined.
func (r Rules) Merge(layers []Layer) (*Merged, error) {
	out := &Merged{Fields: map[string]any{}, Origins: map[string]string{}}
	var errs []error
	for _, l := range layers {
		m := &merger{rules: r, layer: l, origins: out.Origins}
		v := m.value("", r.Root, out.Fields, l.Fields)
		if fields, ok := v.(map[string]any); ok {
			out.Fields = fields
		}
		errs = append(errs, m.errs...)
	}
	return out, errors.Join(errs...)
}

type merger struct {
	rules   Rules
	layer   Layer
	origins map[string]string // nil: do not record (dry runs for protected checks)
	errs    []error
}

func (m *merger) errorf(path, format string, args ...any) {
	m.errs = append(m.errs, fmt.Errorf("%s: %s: %s: %s", m.layer.File, m.layer.Name, path, fmt.Sprintf(format, args...)))
}

// value returns base with child merged in. schema is the rule path, path
// the concrete one.
func (m *merger) value(schema, path string, base, child any) any {
	if child == nil {
		return base
	}
	if reason, ok := m.rules.Protected[schema]; ok && base != nil {
		dry := &merger{rules: m.rules, layer: m.layer}
		want := dry.merge(schema, path, copyValue(base), child)
		m.errs = append(m.errs, dry.errs...)
		if len(dry.errs) == 0 && !reflect.DeepEqual(want, base) {
			m.errs = append(m.errs, &ProtectedError{File: m.layer.File, Name: m.layer.Name, Path: path,
				SetBy: m.originOf(path), Reason: reason, Was: base, Want: want})
		}
		return base
	}
	return m.merge(schema, path, base, child)
}

func (m *merger) merge(schema, path string, base, child any) any {
	if key, ok := m.rules.ListKeys[schema]; ok {
		if _, isList := child.([]any); !isList {
			// Anything else in place of a keyed list would drop the
			// entries the ancestors listed, protected ones included.
			m.errorf(path, "want a list of entries keyed by %q, not %s", key, show(child))
			return base
		}
	}
	switch c := child.(type) {
	case map[string]any:
		b, ok := base.(map[string]any)
		if !ok && base != nil {
			m.clear(path)
		}
		out := make(map[string]any, len(b)+len(c))
		for k, v := range b {
			out[k] = v
		}
		if len(c) == 0 && len(b) == 0 {
			m.record(path)
		}
		for _, k := range sortedKeys(c) {
			v := m.value(joinSchema(schema, k), joinPath(path, k), b[k], c[k])
			if v != nil {
				out[k] = v
			}
		}
		return out
	case []any:
		if key, ok := m.rules.ListKeys[schema]; ok {
			return m.keyed(schema, path, key, base, c)
		}
	}

	if reflect.DeepEqual(base, child) {
		// Restated: the value keeps the origin of whoever set it first.
		return base
	}
	m.clear(path)
	m.record(path)
	return copyValue(child)
}

// keyed merges a keyed list: the parent's order, matching entries merged in
// place, new entries appended in the child's order.
func (m *merger) keyed(schema, path, key string, base any, child []any) any {
	b, ok := base.([]any)
	if !ok && base != nil {
		m.clear(path)
	}
	out := append([]any(nil), b...)
	index := map[string]int{}
	for i, e := range out {
		if k, ok := entryKey(e, key); ok {
			index[k] = i
		}
	}
	seen := map[string]bool{}
	for i, e := range child {
		k, ok := entryKey(e, key)
		if !ok {
			m.errorf(fmt.Sprintf("%s[%d]", path, i), "a %s entry needs a non-empty string %q", path, key)
			continue
		}
		if seen[k] {
			m.errorf(fmt.Sprintf("%s[%d]", path, i), "%s %q is listed twice", key, k)
			continue
		}
		seen[k] = true
		entryPath := fmt.Sprintf("%s[%s]", path, k)
		if j, ok := index[k]; ok {
			out[j] = m.value(schema+"[]", entryPath, out[j], e)
			continue
		}
		m.record(entryPath)
		index[k] = len(out)
		out = append(out, m.value(schema+"[]", entryPath, nil, e))
	}
	return out
}

func entryKey(e any, key string) (string, bool) {
	mp, ok := e.(map[string]any)
	if !ok {
		return "", false
	}
	s, ok := mp[key].(string)
	return s, ok && s != ""
}

func (m *merger) record(path string) {
	if m.origins != nil {
		m.origins[path] = m.layer.File
	}
}

// clear forgets the origins of path and everything under it: the value is
// replaced as a whole.
func (m *merger) clear(path string) {
	if m.origins == nil {
		return
	}
	for p := range m.origins {
		if p == path || strings.HasPrefix(p, path+".") || strings.HasPrefix(p, path+"[") {
			delete(m.origins, p)
		}
	}
}

// originOf returns the file that set path, or the file of the nearest
// enclosing value that has one.
func (m *merger) originOf(path string) string {
	if m.origins == nil {
		return ""
	}
	if f, ok := m.origins[path]; ok {
		return f
	}
	var files []string
	for p, f := range m.origins {
		if strings.HasPrefix(p, path+".") || strings.HasPrefix(p, path+"[") {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	files = uniq(files)
	return strings.Join(files, ", ")
}

func uniq(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

var simpleKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// joinPath appends a map key to a concrete path: ".key", or `["key"]` for
// keys that are not plain words (label keys with dots and slashes).
func joinPath(path, k string) string {
	if !simpleKey.MatchString(k) {
		return fmt.Sprintf("%s[%q]", path, k)
	}
	if path == "" {
		return k
	}
	return path + "." + k
}

func joinSchema(schema, k string) string {
	if schema == "" {
		return k
	}
	return schema + "." + k
}

func sortedKeys(mp map[string]any) []string {
	keys := make([]string, 0, len(mp))
	for k := range mp {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// copyValue deep-copies maps and slices so that merged trees never alias a
// layer.
func copyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = copyValue(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = copyValue(e)
		}
		return out
	}
	return v
}
