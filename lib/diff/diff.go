package diff

import (
	"crypto/sha256"
	"fmt"
	"reflect"
	"sort"

	udiff "github.com/aymanbagabas/go-udiff"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/redact"
)

// Action is what going from the old set to the new one does to an object.
type Action string

// Actions, in the order the summary lists them.
const (
	Create    Action = "create"
	Change    Action = "change"
	Delete    Action = "delete"
	Unchanged Action = "unchanged"
)

// Object is one side of a comparison: the object and where it sits in the
// apply order.
type Object struct {
	Obj *unstructured.Unstructured
	// File is the source file (for messages); RunLevel and Component place
	// the object in the output (RunLevel -1 and Component "" when unknown).
	File      string
	RunLevel  int
	Component string
}

// Entry is the outcome for one object.
type Entry struct {
	ID     manifest.ID `json:"-"`
	Action Action      `json:"action"`
	// From and To are the normalized objects (nil on the missing side; one
	// object when Compare was given the same object on both sides).
	From *unstructured.Unstructured `json:"-"`
	To   *unstructured.Unstructured `json:"-"`
	// Diff is the unified diff of the YAML of From and To ("" when unchanged).
	Diff      string `json:"diff,omitempty"`
	File      string `json:"file,omitempty"`
	RunLevel  int    `json:"runLevel"`
	Component string `json:"component,omitempty"`
}

// Header returns the object's path in diff headers:
// <group>/<Kind>/<namespace>/<name>, "core" for the legacy group and no
// namespace segment for cluster-scoped objects.
func Header(id manifest.ID) string {
	group := id.Group
	if group == "" {
		group = "core"
	}
	if id.Namespace == "" {
		return group + "/" + id.Kind + "/" + id.Name
	}
	return group + "/" + id.Kind + "/" + id.Namespace + "/" + id.Name
}

// Result is a whole comparison, entries in output order: by run level,
// component, then identity.
type Result struct {
	Entries []Entry
}

// Summary counts the entries by action.
type Summary struct {
	Create    int `json:"create"`
	Change    int `json:"change"`
	Delete    int `json:"delete"`
	Unchanged int `json:"unchanged"`
}

// Summary counts the entries by action.
func (r *Result) Summary() Summary {
	var s Summary
	for _, e := range r.Entries {
		switch e.Action {
		case Create:
			s.Create++
		case Change:
			s.Change++
		case Delete:
			s.Delete++
		default:
			s.Unchanged++
		}
	}
	return s
}

// String prints "N to create, M to change, K to delete, U unchanged".
func (s Summary) String() string {
	return fmt.Sprintf("%d to create, %d to change, %d to delete, %d unchanged", s.Create, s.Change, s.Delete, s.Unchanged)
}

// Differs reports whether anything would change.
func (s Summary) Differs() bool { return s.Create+s.Change+s.Delete > 0 }

// Options tune Compare.
type Options struct {
	// Context is the number of unchanged lines around each hunk (default 3).
	Context int
	// KeepStatus keeps status in the comparison (offline diffs of payloads
	// whose manifests carry status, such as ClusterOperators).
	KeepStatus bool
}

// Compare matches from and to by identity and diffs each pair. An object
// only in to is created, only in from deleted. The inputs are not modified.
func Compare(from, to []Object, opts Options) (*Result, error) {
	if opts.Context == 0 {
		opts.Context = 3
	}
	type pair struct {
		from, to *Object
	}
	pairs := map[manifest.ID]*pair{}
	var order []manifest.ID
	get := func(o *Object) *pair {
		id := idOf(o.Obj)
		p, ok := pairs[id]
		if !ok {
			p = &pair{}
			pairs[id] = p
			order = append(order, id)
		}
		return p
	}
	for i := range from {
		get(&from[i]).from = &from[i]
	}
	for i := range to {
		get(&to[i]).to = &to[i]
	}
	r := &Result{}
	for _, id := range order {
		p := pairs[id]
		e := Entry{ID: id}
		place := p.to
		if place == nil {
			place = p.from
		}
		e.File, e.RunLevel, e.Component = place.File, place.RunLevel, place.Component
		var fromObj, toObj *unstructured.Unstructured
		if p.from != nil {
			fromObj = Normalize(p.from.Obj, opts.KeepStatus)
		}
		switch {
		case p.to != nil && p.from != nil && p.to.Obj == p.from.Obj:
			// One object on both sides (a live diff's unchanged objects).
			toObj = fromObj
		case p.to != nil:
			toObj = Normalize(p.to.Obj, opts.KeepStatus)
		}
		maskSecrets(fromObj, toObj)
		e.From, e.To = fromObj, toObj
		if fromObj != nil && toObj != nil && reflect.DeepEqual(fromObj.Object, toObj.Object) {
			// Equal values print equal YAML: no need to print them.
			e.Action = Unchanged
			r.Entries = append(r.Entries, e)
			continue
		}
		fromText, err := yamlText(fromObj)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
		toText, err := yamlText(toObj)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
		switch {
		case fromObj == nil:
			e.Action = Create
		case toObj == nil:
			e.Action = Delete
		case fromText == toText:
			e.Action = Unchanged
		default:
			e.Action = Change
		}
		if e.Action != Unchanged {
			h := Header(id)
			fromLabel, toLabel := "a/"+h, "b/"+h
			if fromObj == nil {
				fromLabel = "/dev/null"
			}
			if toObj == nil {
				toLabel = "/dev/null"
			}
			d, err := udiff.ToUnified(fromLabel, toLabel, fromText, udiff.Lines(fromText, toText), opts.Context)
			if err != nil {
				return nil, fmt.Errorf("%s: diff: %w", id, err)
			}
			e.Diff = d
		}
		r.Entries = append(r.Entries, e)
	}
	sort.SliceStable(r.Entries, func(i, j int) bool {
		a, b := r.Entries[i], r.Entries[j]
		if (a.RunLevel < 0) != (b.RunLevel < 0) {
			return b.RunLevel < 0
		}
		if a.RunLevel != b.RunLevel {
			return a.RunLevel < b.RunLevel
		}
		if a.Component != b.Component {
			return a.Component < b.Component
		}
		return Header(a.ID) < Header(b.ID)
	})
	return r, nil
}

func idOf(o *unstructured.Unstructured) manifest.ID {
	gvk := o.GroupVersionKind()
	return manifest.ID{Group: gvk.Group, Kind: gvk.Kind, Namespace: o.GetNamespace(), Name: o.GetName()}
}

func yamlText(o *unstructured.Unstructured) (string, error) {
	if o == nil {
		return "", nil
	}
	b, err := manifest.MarshalYAML(o.Object)
	return string(b), err
}

// serverFields are metadata fields only the server sets.
var serverFields = []string{"managedFields", "resourceVersion", "uid", "generation", "creationTimestamp", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"}

// Normalize returns a copy of o without the fields only the server owns
// (metadata.managedFields, resourceVersion, uid, generation,
// creationTimestamp, selfLink, deletion fields, and status unless keepStatus)
// and without the last-applied annotation kubectl writes.
func Normalize(o *unstructured.Unstructured, keepStatus bool) *unstructured.Unstructured {
	if o == nil {
		return nil
	}
	c := o.DeepCopy()
	if meta, ok := c.Object["metadata"].(map[string]any); ok {
		for _, f := range serverFields {
			delete(meta, f)
		}
		if ann, ok := meta["annotations"].(map[string]any); ok {
			delete(ann, "kubectl.kubernetes.io/last-applied-configuration")
			if len(ann) == 0 {
				delete(meta, "annotations")
			}
		}
	}
	if !keepStatus {
		delete(c.Object, "status")
	}
	return c
}

// maskSecrets replaces the values of Secret data and stringData with "***"
// on both sides, marking values that differ as "*** (before)" and "***
// (after)" so a change still shows, as kubectl diff does. Only the hash of a
// value is compared; no value survives. Secrets inside lists (a List's
// items, a Template's objects, lists in lists: redact.IsList) are masked
// the same way, paired by position.
func maskSecrets(from, to *unstructured.Unstructured) {
	var f, t map[string]any
	if from != nil {
		f = from.Object
	}
	if to != nil {
		t = to.Object
	}
	maskPair(f, t)
}

// maskPair masks the Secrets of one object on both sides (either may be
// nil), and those nested in lists.
func maskPair(from, to map[string]any) {
	if (from != nil && redact.IsSecret(from)) || (to != nil && redact.IsSecret(to)) {
		for _, field := range []string{"data", "stringData"} {
			maskField(from, to, field)
		}
		return
	}
	if (from == nil || !redact.IsList(from)) && (to == nil || !redact.IsList(to)) {
		return
	}
	for _, key := range []string{"items", "objects"} {
		maskNested(value(from, key), value(to, key))
	}
}

func value(m map[string]any, key string) any {
	if m == nil {
		return nil
	}
	return m[key]
}

// maskNested walks two values in step (lists by index, maps by key),
// masking every Secret found on either side.
func maskNested(from, to any) {
	fm, _ := from.(map[string]any)
	tm, _ := to.(map[string]any)
	if fm != nil || tm != nil {
		if (fm != nil && (redact.IsSecret(fm) || redact.IsList(fm))) || (tm != nil && (redact.IsSecret(tm) || redact.IsList(tm))) {
			maskPair(fm, tm)
			return
		}
		for k, v := range fm {
			maskNested(v, value(tm, k))
		}
		for k, v := range tm {
			if _, ok := fm[k]; !ok {
				maskNested(nil, v)
			}
		}
		return
	}
	fl, _ := from.([]any)
	tl, _ := to.([]any)
	for i := 0; i < max(len(fl), len(tl)); i++ {
		var a, b any
		if i < len(fl) {
			a = fl[i]
		}
		if i < len(tl) {
			b = tl[i]
		}
		maskNested(a, b)
	}
}

// maskField masks one of a Secret's value maps on both sides: each value
// becomes "***", or "*** (before)" and "*** (after)" when the two sides
// differ. A field that is not a map (invalid, but it may hold a value) is
// masked whole.
func maskField(from, to map[string]any, field string) {
	fv, tv := value(from, field), value(to, field)
	fm, fok := fv.(map[string]any)
	tm, tok := tv.(map[string]any)
	if (fv != nil && !fok) || (tv != nil && !tok) {
		differ := hash(fv) != hash(tv)
		if fv != nil {
			from[field] = mask(differ && tv != nil, "before")
		}
		if tv != nil {
			to[field] = mask(differ && fv != nil, "after")
		}
		return
	}
	changed := map[string]bool{}
	for k, v := range fm {
		if w, ok := tm[k]; ok && hash(w) != hash(v) {
			changed[k] = true
		}
	}
	for k := range fm {
		fm[k] = mask(changed[k], "before")
	}
	for k := range tm {
		tm[k] = mask(changed[k], "after")
	}
}

func mask(changed bool, side string) string {
	if changed {
		return "*** (" + side + ")"
	}
	return "***"
}

func hash(v any) [32]byte {
	return sha256.Sum256([]byte(fmt.Sprint(v)))
}
