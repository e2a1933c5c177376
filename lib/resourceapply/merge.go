package resourceapply

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// What the cluster-version operator's merge leaves on the cluster
// (docs/apply.md, "What the CVO writes"). Server-side apply with forced
// conflicts already makes every field the manifest sets hold the
// manifest's value; what it does not do, and the CVO's merge does, is take
// out what other managers added inside the fields the CVO sets whole (an
// environment variable added with kubectl set env, a container, a
// volume, a limit, a field of a custom resource's spec) and reset the
// fields the CVO owns when the manifest is silent (a Deployment's
// replicas, a pod's dnsPolicy). A rule tree per kind (mergeRules) says
// where; Apply removes what another field manager set there, with a JSON
// patch whose test operations make it remove only what it saw, and lets
// the server default what it removed.

// rule is what the CVO's merge does with one field, when the manifest does
// not set it or sets it to a value that holds less than the live one. A nil
// rule: the live value stays (the CVO leaves it, or merges it).
type rule struct {
	// drop: the CVO removes the field when the manifest does not set it
	// (a nil pointer field it copies, a default it fills in).
	drop bool
	// own: the manifest's value is the whole value: drop, and the same
	// for everything under it unless fields says otherwise.
	own bool
	// given: the fields the manifest sets are own, the others stay (the
	// CVO's generic merge of a custom resource's top-level fields).
	given bool
	// fields are the rules of an object's fields.
	fields map[string]*rule
	// key matches list elements by these fields (else by index); keep
	// leaves the elements the manifest lacks (the CVO appends the missing
	// ones): without key, elements match by value.
	key  []string
	keep bool
	// elem is the rule of list elements.
	elem *rule
	// dflt is the value the CVO fills in when the manifest leaves the field
	// out, the server's default: a live value equal to it is no drift,
	// whoever set it.
	dflt any
}

// ownRule is own with no exceptions.
var ownRule = &rule{own: true}

// withDefaults are the rules with a default at or below them (mergeRules'
// trees): below the others, only another manager's fields can be drift.
var withDefaults = map[*rule]bool{}

// noteDefaults fills withDefaults for the tree of r.
func noteDefaults(r *rule) bool {
	if r == nil {
		return false
	}
	if has, seen := withDefaults[r]; seen {
		return has
	}
	has := r.dflt != nil
	for _, c := range r.fields {
		has = noteDefaults(c) || has
	}
	has = noteDefaults(r.elem) || has
	withDefaults[r] = has
	return has
}

// child is the rule of field name; set says whether the manifest sets it.
func (r *rule) child(name string, set bool) *rule {
	if r == nil {
		return nil
	}
	if c, ok := r.fields[name]; ok {
		return c
	}
	if r.own || (r.given && set) {
		return ownRule
	}
	return nil
}

// element is the rule of list elements.
func (r *rule) element() *rule {
	if r == nil {
		return nil
	}
	if r.elem != nil {
		return r.elem
	}
	if r.own {
		return ownRule
	}
	return nil
}

// dropsExtra reports whether list elements the manifest lacks are removed.
func (r *rule) dropsExtra() bool { return r != nil && !r.keep && (r.own || r.key != nil) }

// removes reports whether a live value of this field is removed when the
// manifest does not set it.
func (r *rule) removes(live any) bool {
	if r == nil || !(r.drop || r.own) {
		return false
	}
	return r.dflt == nil || !sameValue(live, r.dflt)
}

// step is one step of a path into an object: a field, or a list element
// (with its value, to find it among managed fields by its key).
type step struct {
	name  string
	index int
	elem  any
	// label names the element in messages: its key, else its index.
	label string
}

// removal is a field or list element another manager set where the CVO's
// merge would not leave it.
type removal struct {
	path  []step
	value any
	// manager is the field manager that set it.
	manager string
	// dflt is what the server fills in again, when a rule knows it.
	dflt any
}

// String prints the path as field.field[key].field.
func (r removal) String() string { return pathString(r.path) }

func pathString(path []step) string {
	var b strings.Builder
	for _, s := range path {
		if s.name != "" {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.name)
			continue
		}
		b.WriteByte('[')
		if s.label != "" {
			b.WriteString(s.label)
		} else {
			b.WriteString(strconv.Itoa(s.index))
		}
		b.WriteByte(']')
	}
	return b.String()
}

// pointer is the path as an RFC 6901 JSON pointer.
func pointer(path []step) string {
	var b strings.Builder
	for _, s := range path {
		b.WriteByte('/')
		if s.name == "" {
			b.WriteString(strconv.Itoa(s.index))
			continue
		}
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(s.name))
	}
	return b.String()
}

// removals returns what other managers than fieldManager set in live
// where the CVO's merge of required would take it out, in the order a JSON
// patch can remove them (later list elements first).
func removals(required, live *unstructured.Unstructured, fieldManager string) []removal {
	w := walker{keepCABundle: live.GetAnnotations()[injectCABundleAnnotation] == "true", live: live, fieldManager: fieldManager}
	ru := mergeRules(required)
	for k, lv := range live.Object {
		switch k {
		case "apiVersion", "kind", "status":
			continue
		}
		rv, set := required.Object[k]
		w.walk(rv, set, lv, ru.child(k, set), []step{{name: k}})
	}
	if len(w.out) == 0 {
		return nil
	}
	// Later list elements first (and, for a stable order, the rest by
	// path, last first).
	slices.SortFunc(w.out, func(a, b removal) int { return comparePaths(b.path, a.path) })
	var out []removal
	for _, c := range w.out {
		for _, o := range w.foreign() {
			if _, _, found := lookupPath(o.fields, c.path); found {
				c.manager = o.manager
				break
			}
		}
		// What nobody set is the server's default, and stays; but a
		// value other than the default the CVO knows was set by
		// someone (a write to the scale subresource leaves replicas
		// owned by nobody).
		if c.manager != "" || c.dflt != nil {
			out = append(out, c)
		}
	}
	return out
}

// injectCABundleAnnotation asks the service CA operator to write the
// caBundle fields of a webhook configuration, CRD or APIService: the CVO
// leaves them to it.
const injectCABundleAnnotation = "service.beta.openshift.io/inject-cabundle"

type walker struct {
	out          []removal
	keepCABundle bool
	live         *unstructured.Unstructured
	fieldManager string
	// owners are the fields other managers own, read when first needed.
	owners []fieldSet
	read   bool
}

// foreign returns the fields other managers own in the live object.
func (w *walker) foreign() []fieldSet {
	if !w.read {
		w.owners, w.read = foreignFields(w.live, w.fieldManager), true
	}
	return w.owners
}

// comparePaths orders paths as a walk in key and index order meets them.
func comparePaths(a, b []step) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := strings.Compare(a[i].name, b[i].name); c != 0 {
			return c
		}
		if c := a[i].index - b[i].index; c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}

// setWhole reports whether another manager set the value at path as a
// whole (it owns the value itself, not only fields under it).
func (w *walker) setWhole(path []step) bool {
	for _, o := range w.foreign() {
		node, whole, found := lookupPath(o.fields, path)
		if found && (whole || len(node) == 0 || node["."] != nil) {
			return true
		}
	}
	return false
}

// walk visits live value l under rule ru, r being the manifest's value (set
// false when the manifest lacks it), and notes what would be removed.
func (w *walker) walk(r any, set bool, l any, ru *rule, path []step) {
	if ru == nil || l == nil {
		return
	}
	if len(w.foreign()) == 0 && !withDefaults[ru] {
		// Nobody else set anything, and no default of the CVO's is
		// below: nothing here can be another writer's.
		return
	}
	if !set || r == nil {
		// The manifest does not set it.
		if w.keepCABundle && path[len(path)-1].name == "caBundle" {
			return
		}
		_, isList := l.([]any)
		_, isMap := l.(map[string]any)
		switch {
		case isList && ru.dropsExtra() && !(ru.own && w.setWhole(path)):
			// Every element is one the manifest lacks (unless another
			// manager set the list whole: then it goes whole, below).
			if ru.dflt != nil && sameValue(l, ru.dflt) {
				return
			}
			r = []any{}
		case !ru.removes(l):
			return
		case isMap && ru.own && !w.setWhole(path):
			// Nobody set it as a whole (the server filled it in): what
			// other managers set under it goes, the defaults stay.
			r = map[string]any{}
		default:
			w.out = append(w.out, removal{path: append([]step(nil), path...), value: l, dflt: ru.dflt})
			return
		}
	}
	switch lv := l.(type) {
	case map[string]any:
		rm, ok := r.(map[string]any)
		if !ok {
			return
		}
		for k, v := range lv {
			rv, set := rm[k]
			w.walk(rv, set, v, ru.child(k, set), append(path, step{name: k}))
		}
	case []any:
		rl, ok := r.([]any)
		if !ok || (ru.keep && ru.key == nil) {
			return
		}
		el := ru.element()
		for i, j := range matchElements(rl, lv, ru.key) {
			p := append(path, step{index: i, elem: lv[i], label: keyLabel(lv[i], ru.key)})
			if j < 0 {
				if ru.dropsExtra() {
					w.out = append(w.out, removal{path: append([]step(nil), p...), value: lv[i]})
				}
				continue
			}
			w.walk(rl[j], true, lv[i], el, p)
		}
	}
}

// matchElements returns, for each live element, the index of the
// manifest's element it stands for, or -1: by key (the n-th element with
// a key matches the n-th with the same key), else by index.
func matchElements(required, live []any, key []string) []int {
	out := make([]int, len(live))
	for i := range out {
		out[i] = -1
	}
	for j, i := range matchRequired(required, live, key) {
		if i >= 0 {
			out[i] = j
		}
	}
	return out
}

// matchRequired returns, for each of the manifest's elements, the index of
// the live element that stands for it, or -1 (see matchElements). Lists
// are short (containers, variables, ports): a quadratic match allocates
// nothing but the result.
func matchRequired(required, live []any, key []string) []int {
	out := make([]int, len(required))
	if key == nil {
		for j := range required {
			out[j] = -1
			if j < len(live) {
				out[j] = j
			}
		}
		return out
	}
	var taken []bool
	for j, r := range required {
		out[j] = -1
		for i, l := range live {
			if (taken == nil || !taken[i]) && sameKey(r, l, key) {
				if taken == nil {
					taken = make([]bool, len(live))
				}
				out[j], taken[i] = i, true
				break
			}
		}
	}
	return out
}

// sameKey reports whether two elements have the same key fields (absent
// and empty alike).
func sameKey(a, b any, key []string) bool {
	am, _ := a.(map[string]any)
	bm, _ := b.(map[string]any)
	for _, k := range key {
		av, bv := am[k], bm[k]
		if as, ok := av.(string); ok {
			if bs, ok := bv.(string); ok {
				if as != bs {
					return false
				}
				continue
			}
		}
		if !sameValue(av, bv) {
			return false
		}
	}
	return true
}

// keyOf prints an element's key fields.
func keyOf(el any, key []string) string {
	m, _ := el.(map[string]any)
	parts := make([]string, 0, len(key))
	for _, k := range key {
		if v := m[k]; v != nil {
			parts = append(parts, fmt.Sprint(v))
		}
	}
	return strings.Join(parts, ",")
}

// keyLabel prints an element's key fields for messages ("" without key).
func keyLabel(el any, key []string) string {
	if key == nil {
		return ""
	}
	return keyOf(el, key)
}

// sameValue reports whether a and b hold the same value (numbers by value,
// empty values as absent).
func sameValue(a, b any) bool {
	ok1, _ := subset(a, b, "")
	ok2, _ := subset(b, a, "")
	return ok1 && ok2
}

// fieldSet is the fields one manager owns.
type fieldSet struct {
	manager string
	fields  map[string]any
}

// foreignFields returns the fields managers other than fieldManager own in
// live (their status aside).
func foreignFields(live *unstructured.Unstructured, fieldManager string) []fieldSet {
	md, _ := live.Object["metadata"].(map[string]any)
	entries, _ := md["managedFields"].([]any)
	var out []fieldSet
	for _, it := range entries {
		e, _ := it.(map[string]any)
		manager, _ := e["manager"].(string)
		subresource, _ := e["subresource"].(string)
		fields, _ := e["fieldsV1"].(map[string]any)
		if manager == fieldManager || subresource == "status" || len(fields) == 0 {
			continue
		}
		out = append(out, fieldSet{manager: manager, fields: fields})
	}
	return out
}

// lookupPath finds path in a fieldsV1 set: every step is in it ("f:name"
// a field, "k:{...}" a list element by its key fields, "v:..." a set
// element, "i:N" an element by index), or a step above is a leaf (an
// atomic value owned whole: whole is then true).
func lookupPath(node map[string]any, path []step) (_ map[string]any, whole, found bool) {
	for _, s := range path {
		if len(node) == 0 {
			return nil, true, true
		}
		var next any
		if s.name != "" {
			next, found = node["f:"+s.name]
		} else {
			next, found = elementEntry(node, s)
		}
		if !found {
			return nil, false, false
		}
		node, _ = next.(map[string]any)
	}
	return node, false, true
}

// elementEntry finds a list element's entry in a fieldsV1 node.
func elementEntry(node map[string]any, s step) (any, bool) {
	if v, ok := node["i:"+strconv.Itoa(s.index)]; ok {
		return v, true
	}
	for k, v := range node {
		switch {
		case strings.HasPrefix(k, "k:"):
			var key map[string]any
			if json.Unmarshal([]byte(k[2:]), &key) != nil {
				continue
			}
			el, _ := s.elem.(map[string]any)
			match := el != nil
			for f, want := range key {
				if !sameValue(el[f], want) {
					match = false
					break
				}
			}
			if match {
				return v, true
			}
		case strings.HasPrefix(k, "v:"):
			var want any
			if json.Unmarshal([]byte(k[2:]), &want) == nil && sameValue(s.elem, want) {
				return v, true
			}
		}
	}
	return nil, false
}

// jsonPatch is an RFC 6902 patch removing rs, each after testing that the
// value is still the one seen.
func jsonPatch(rs []removal) ([]byte, error) {
	type op struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value,omitempty"`
	}
	ops := make([]op, 0, 2*len(rs))
	for _, r := range rs {
		p := pointer(r.path)
		ops = append(ops, op{Op: "test", Path: p, Value: r.value}, op{Op: "remove", Path: p})
	}
	return json.Marshal(ops)
}

// withoutRemovals returns a copy of obj with rs removed, as the patch
// leaves it: a field whose default a rule knows holds it (the server
// fills it in again), the others are gone.
func withoutRemovals(obj *unstructured.Unstructured, rs []removal) *unstructured.Unstructured {
	out := obj.DeepCopy()
	for _, r := range rs {
		if r.dflt != nil {
			setPath(out.Object, r.path, r.dflt)
			continue
		}
		removeAt(out.Object, r.path)
	}
	return out
}

// setPath sets the field at path (whose parent exists) to v.
func setPath(v any, path []step, to any) {
	for i, s := range path {
		switch x := v.(type) {
		case map[string]any:
			if i == len(path)-1 {
				x[s.name] = to
				return
			}
			v = x[s.name]
		case []any:
			if s.index >= len(x) {
				return
			}
			v = x[s.index]
		default:
			return
		}
	}
}

// removeAt returns v with the value at path removed.
func removeAt(v any, path []step) any {
	if len(path) == 0 {
		return v
	}
	s := path[0]
	switch x := v.(type) {
	case map[string]any:
		if len(path) == 1 {
			delete(x, s.name)
		} else if c, ok := x[s.name]; ok {
			x[s.name] = removeAt(c, path[1:])
		}
	case []any:
		if s.index >= len(x) {
			return x
		}
		if len(path) == 1 {
			return append(x[:s.index:s.index], x[s.index+1:]...)
		}
		x[s.index] = removeAt(x[s.index], path[1:])
	}
	return v
}
