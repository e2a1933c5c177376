package resourceapply

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// errUnsupported says that keepByType met a value or a Go type whose
// decoding or encoding it does not model: the caller encodes the decoded
// object instead (knownByRoundTrip).
var errUnsupported = errors.New("type not modelled")

// keepEncoded returns prune(orig, known) for v, a value of a type with its
// own unstructured or JSON encoding (an int-or-string, a quantity, a time),
// decoded from orig alone: known is v's encoding. Any other type is
// errUnsupported.
func keepEncoded(orig any, v reflect.Value, path *fieldPath, dropped *[]string) (any, error) {
	entry := value.TypeReflectEntryOf(v.Type())
	if !entry.CanConvertToUnstructured() {
		return nil, errUnsupported
	}
	known, err := entry.ToUnstructured(v)
	if err != nil {
		return nil, err
	}
	return prune(orig, known, path.with(""), dropped), nil
}

// fieldPath is the path to the value keepByType is at, joined only when a
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
// index path (through inlined structs) and when it is left out. The
// unstructured converter names fields by their JSON tags, skips "-",
// leaves out empty omitempty and zero omitzero fields, and writes an
// inlined struct's fields into the same map (a later field of a name
// wins).
type typedField struct {
	index     []int
	omitempty bool
	omitzero  func(reflect.Value) bool
}

// structFields are a struct type's fields by encoded name, in the order
// the encoding writes them.
type structFields map[string][]typedField

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
