package resourceapply

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// errUnsupported says that keepTyped met a Go type whose encoding it does
// not model (an inlined pointer or map, an interface, an array, an
// unexported field): the caller encodes the object instead.
var errUnsupported = errors.New("type not modelled")

// keepTyped returns what prune(orig, known) returns when known is the
// unstructured encoding of v (orig decoded into its Go type by the
// unstructured converter), without encoding v: the same fields are kept
// and the same paths are recorded in dropped. It walks orig and reads v's
// fields in place, which costs a fraction of the encoding and its maps.
//
// The model follows runtime.DefaultUnstructuredConverter's encoding: a type
// with its own unstructured or JSON encoding is encoded (and pruned as
// before); a nil map, slice or pointer encodes as null; a struct writes
// each field by its JSON name in field order, skipping "-", empty
// omitempty and zero omitzero fields, and writing inlined structs' fields
// into the same map (a later field of the same name wins).
func keepTyped(orig any, v reflect.Value, path *fieldPath, dropped *[]string) (any, error) {
	if entry := value.TypeReflectEntryOf(v.Type()); entry.CanConvertToUnstructured() {
		known, err := entry.ToUnstructured(v)
		if err != nil {
			return nil, err
		}
		return prune(orig, known, path.with(""), dropped), nil
	}
	switch v.Kind() {
	case reflect.String, reflect.Bool, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		// A scalar: prune keeps orig whole.
		return orig, nil
	case reflect.Pointer:
		if v.IsNil() {
			return orig, nil
		}
		return keepTyped(orig, v.Elem(), path, dropped)
	case reflect.Map:
		return keepMap(orig, v, path, dropped)
	case reflect.Slice:
		o, ok := orig.([]any)
		if v.IsNil() || v.Type().Elem().Kind() == reflect.Uint8 || !ok || len(o) != v.Len() {
			// Encoded as null or a string, or not the list it came
			// from: prune keeps orig whole.
			return orig, nil
		}
		out := make([]any, len(o))
		for i := range o {
			var err error
			path.pushIndex(i)
			out[i], err = keepTyped(o[i], v.Index(i), path, dropped)
			path.pop()
			if err != nil {
				return nil, err
			}
		}
		return out, nil
	case reflect.Struct:
		return keepStruct(orig, v, path, dropped)
	}
	return nil, errUnsupported
}

func keepMap(orig any, v reflect.Value, path *fieldPath, dropped *[]string) (any, error) {
	o, ok := orig.(map[string]any)
	if v.IsNil() || !ok {
		return orig, nil
	}
	kt := v.Type().Key()
	if kt.Kind() != reflect.String {
		return nil, errUnsupported
	}
	out := make(map[string]any, len(o))
	for key, ov := range o {
		ev := v.MapIndex(reflect.ValueOf(key).Convert(kt))
		if !ev.IsValid() {
			if !isEmpty(ov) {
				*dropped = append(*dropped, path.with(key))
			}
			continue
		}
		path.push(key)
		kv, err := keepTyped(ov, ev, path, dropped)
		path.pop()
		if err != nil {
			return nil, err
		}
		out[key] = kv
	}
	return out, nil
}

func keepStruct(orig any, v reflect.Value, path *fieldPath, dropped *[]string) (any, error) {
	o, ok := orig.(map[string]any)
	if !ok {
		// Encoded as a map: prune keeps a non-map orig whole.
		return orig, nil
	}
	fields, err := fieldsOf(v.Type())
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(o))
	for key, ov := range o {
		fv, written := fields.written(v, key)
		if !written {
			if !isEmpty(ov) {
				*dropped = append(*dropped, path.with(key))
			}
			continue
		}
		path.push(key)
		kv, err := keepTyped(ov, fv, path, dropped)
		path.pop()
		if err != nil {
			return nil, err
		}
		out[key] = kv
	}
	return out, nil
}

// fieldPath is the path to the value keepTyped is at, joined only when a
// field is dropped: "spec.template.spec.containers[0]".
type fieldPath struct{ parts []string }

func (p *fieldPath) push(key string) { p.parts = append(p.parts, key) }

// pushIndex enters a list's i-th item.
func (p *fieldPath) pushIndex(i int) { p.parts = append(p.parts, "["+strconv.Itoa(i)+"]") }

func (p *fieldPath) pop() { p.parts = p.parts[:len(p.parts)-1] }

// with returns the path joined, with key (if any) as its last field.
func (p *fieldPath) with(key string) string {
	var b strings.Builder
	for _, part := range append(p.parts, key) {
		if part == "" {
			continue
		}
		if b.Len() > 0 && part[0] != '[' {
			b.WriteByte('.')
		}
		b.WriteString(part)
	}
	return b.String()
}

// typedField is a field a struct's encoding may write under a name: its
// index path (through inlined structs) and when it is left out.
type typedField struct {
	index     []int
	omitempty bool
	omitzero  func(reflect.Value) bool
}

// structFields are a struct type's fields by encoded name, in the order
// the encoding writes them.
type structFields map[string][]typedField

// written returns the value the encoding of v writes under name, the last
// field of that name that is not left out.
func (s structFields) written(v reflect.Value, name string) (reflect.Value, bool) {
	cands := s[name]
	for i := len(cands) - 1; i >= 0; i-- {
		f := cands[i]
		fv := v.FieldByIndex(f.index)
		if f.omitempty && zeroForOmitempty(fv) || f.omitzero != nil && f.omitzero(fv) {
			continue
		}
		return fv, true
	}
	return reflect.Value{}, false
}

var fieldCache sync.Map // reflect.Type → structFields or error

// fieldsOf returns t's encoded fields, or errUnsupported when its encoding
// is not modelled.
func fieldsOf(t reflect.Type) (structFields, error) {
	if c, ok := fieldCache.Load(t); ok {
		if err, bad := c.(error); bad {
			return nil, err
		}
		return c.(structFields), nil
	}
	s := structFields{}
	err := addFields(s, t, nil, 0)
	if err != nil {
		fieldCache.Store(t, err)
		return nil, err
	}
	fieldCache.Store(t, s)
	return s, nil
}

func addFields(s structFields, t reflect.Type, prefix []int, depth int) error {
	if depth > 8 {
		return errUnsupported
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			return errUnsupported
		}
		// As the converter names fields: the tag's name, else the Go
		// name, except that an unnamed embedded struct is inlined.
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" && !f.Anonymous {
			name = f.Name
		}
		idx := append(append([]int(nil), prefix...), i)
		tf := typedField{index: idx}
		for _, o := range strings.Split(opts, ",") {
			switch o {
			case "omitempty":
				tf.omitempty = true
			case "omitzero":
				tf.omitzero = value.OmitZeroFunc(f.Type)
			}
		}
		switch {
		case name == "-":
		case name == "":
			// Inlined: only a plain struct, never left out, is modelled.
			if f.Type.Kind() != reflect.Struct || tf.omitzero != nil {
				return errUnsupported
			}
			if value.TypeReflectEntryOf(f.Type).CanConvertToUnstructured() {
				return errUnsupported
			}
			if err := addFields(s, f.Type, idx, depth+1); err != nil {
				return err
			}
		default:
			s[name] = append(s[name], tf)
		}
	}
	return nil
}

// zeroForOmitempty says whether the unstructured converter leaves out an
// omitempty field holding v.
func zeroForOmitempty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Map, reflect.Slice:
		return v.IsNil() || v.Len() == 0
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	}
	return false
}
