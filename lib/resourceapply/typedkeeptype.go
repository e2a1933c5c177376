package resourceapply

import (
	"math"
	"reflect"

	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// keepByType returns what prune(orig, known) returns when known is the
// unstructured encoding of orig decoded into a value of type t, without
// decoding or encoding it: the same fields are kept and the same paths are
// recorded in dropped. The decoded value's shape follows from orig and t;
// which of its fields the encoding writes, from t's JSON names, omitempty
// and inline (fieldsOf). Only a value of a type with its own decoding (a quantity, a
// time, an int-or-string) is decoded, on its own. When orig is not plainly
// of t's shape (a value the decoding would refuse or convert with loss) or
// t's decoding is not modelled, it returns errUnsupported: the caller
// decodes the object then, which gives the decoding's own error.
//
// The model follows runtime.DefaultUnstructuredConverter's decoding: null
// is the zero value; a string, bool or number goes to a field of its kind
// (an integral float to an integer); a map to a struct by field name,
// ignoring names the struct lacks; a map or list item by item.
func keepByType(orig any, t reflect.Type, path *fieldPath, dropped *[]string) (any, error) {
	if orig == nil {
		// The zero value, which keeps null as it is.
		return nil, nil
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if value.TypeReflectEntryOf(t).CanConvertToUnstructured() || !scalarFits(orig, t) {
			return nil, errUnsupported
		}
		return orig, nil
	}
	if entry := value.TypeReflectEntryOf(t); entry.CanConvertFromUnstructured() {
		// A type with its own decoding: decode this value alone.
		v := reflect.New(t).Elem()
		if err := entry.FromUnstructured(reflect.ValueOf(orig), v); err != nil {
			return nil, errUnsupported
		}
		return keepEncoded(orig, v, path, dropped)
	} else if entry.CanConvertToUnstructured() {
		// A pointer to a type with its own decoding (*IntOrString): the
		// pointed-to value is decoded, the pointer encoded.
		if t.Kind() != reflect.Pointer || !value.TypeReflectEntryOf(t.Elem()).CanConvertFromUnstructured() {
			return nil, errUnsupported
		}
		v := reflect.New(t).Elem()
		v.Set(reflect.New(t.Elem()))
		if err := value.TypeReflectEntryOf(t.Elem()).FromUnstructured(reflect.ValueOf(orig), v.Elem()); err != nil {
			return nil, errUnsupported
		}
		return keepEncoded(orig, v, path, dropped)
	}
	switch t.Kind() {
	case reflect.Pointer:
		return keepByType(orig, t.Elem(), path, dropped)
	case reflect.Map:
		o, ok := orig.(map[string]any)
		if !ok || t.Key().Kind() != reflect.String {
			return nil, errUnsupported
		}
		out := make(map[string]any, len(o))
		for key, ov := range o {
			path.push(key)
			kv, err := keepByType(ov, t.Elem(), path, dropped)
			path.pop()
			if err != nil {
				return nil, err
			}
			out[key] = kv
		}
		return out, nil
	case reflect.Slice:
		o, ok := orig.([]any)
		if !ok || t.Elem().Kind() == reflect.Uint8 {
			return nil, errUnsupported
		}
		out := make([]any, len(o))
		for i := range o {
			var err error
			path.pushIndex(i)
			out[i], err = keepByType(o[i], t.Elem(), path, dropped)
			path.pop()
			if err != nil {
				return nil, err
			}
		}
		return out, nil
	case reflect.Struct:
		return keepStructByType(orig, t, path, dropped)
	}
	return nil, errUnsupported
}

func keepStructByType(orig any, t reflect.Type, path *fieldPath, dropped *[]string) (any, error) {
	o, ok := orig.(map[string]any)
	if !ok {
		return nil, errUnsupported
	}
	fields, err := fieldsOf(t)
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(o))
	for key, ov := range o {
		// Every field of this name is decoded from ov; the encoding
		// writes the last one that is not left out.
		cands := fields[key]
		written := -1
		for i := len(cands) - 1; i >= 0 && written < 0; i-- {
			f := cands[i]
			ft := t.FieldByIndex(f.index).Type
			empty, err := emptyOnceDecoded(ov, ft)
			if err != nil {
				return nil, err
			}
			switch {
			case f.omitzero != nil && ov != nil:
				// Whether it is zero needs the decoded value.
				return nil, errUnsupported
			case f.omitzero != nil || f.omitempty && empty:
			default:
				written = i
			}
		}
		if written < 0 {
			if !isEmpty(ov) {
				*dropped = append(*dropped, path.with(key))
			}
			continue
		}
		path.push(key)
		kv, err := keepByType(ov, t.FieldByIndex(cands[written].index).Type, path, dropped)
		path.pop()
		if err != nil {
			return nil, err
		}
		out[key] = kv
	}
	return out, nil
}

// emptyOnceDecoded says whether orig decoded into a value of type t is
// empty as the converter's omitempty means it, or
// errUnsupported when orig does not plainly fit t.
func emptyOnceDecoded(orig any, t reflect.Type) (bool, error) {
	if t.Kind() == reflect.Struct {
		// Never empty, whatever it holds.
		return false, nil
	}
	if orig == nil {
		return true, nil
	}
	switch t.Kind() {
	case reflect.String:
		s, ok := orig.(string)
		return s == "", okOrUnsupported(ok)
	case reflect.Bool:
		b, ok := orig.(bool)
		return !b, okOrUnsupported(ok)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		switch n := orig.(type) {
		case int64:
			return n == 0, nil
		case float64:
			return n == 0, nil
		}
		return false, errUnsupported
	case reflect.Map:
		m, ok := orig.(map[string]any)
		return len(m) == 0, okOrUnsupported(ok)
	case reflect.Slice:
		l, ok := orig.([]any)
		return len(l) == 0, okOrUnsupported(ok)
	case reflect.Pointer:
		return false, nil
	}
	return false, errUnsupported
}

func okOrUnsupported(ok bool) error {
	if ok {
		return nil
	}
	return errUnsupported
}

// scalarFits says whether the converter decodes orig into a value of the
// scalar kind of t exactly: a string or bool to its kind, an integer or an
// integral float to an integer kind it fits, a number to a float kind.
func scalarFits(orig any, t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String:
		_, ok := orig.(string)
		return ok
	case reflect.Bool:
		_, ok := orig.(bool)
		return ok
	case reflect.Float32, reflect.Float64:
		switch orig.(type) {
		case int64, float64:
			return true
		}
		return false
	}
	var n int64
	switch x := orig.(type) {
	case int64:
		n = x
	case float64:
		if x != math.Trunc(x) || x < math.MinInt64 || x >= math.MaxInt64 {
			return false
		}
		n = int64(x)
	default:
		return false
	}
	switch t.Kind() {
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int, reflect.Int64:
		return !reflect.Zero(t).OverflowInt(n)
	default:
		return n >= 0 && !reflect.Zero(t).OverflowUint(uint64(n))
	}
}
