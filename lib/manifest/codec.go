package manifest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The parsed form: a compact binary encoding of parsed manifests, so that
// a payload parsed once (a cached release) is not parsed again. Decoding
// it is about twenty times faster than parsing the YAML it came from.
//
//	file     = magic count manifest*
//	manifest = string(File) uvarint(Doc) uvarint(Line) byte(short) value(head) uvarint(len(rest)) rest
//	rest     = value(body)
//	value    = tagNil | tagFalse | tagTrue | tagInt varint | tagFloat 8 bytes
//	         | tagString string | tagMap uvarint (string value)* | tagList uvarint value*
//	string   = uvarint(len) bytes
//
// short is 1 when the head alone makes the manifest's GVK and resource id
// the short way (see decodeYAMLFast), 0 when the whole object must take the
// reference path. The decoder makes them from the decoded head again, so a
// form can never give a manifest whose identity differs from its object. head holds the object's apiVersion, kind and metadata, body the other
// top-level keys; a reader that needs only the head (what selection reads,
// what Load keeps of an excluded object) skips the body unread. Objects hold
// only what JSON decoding makes (map[string]any, []any, string, int64,
// float64, bool, nil); anything else is not encoded.
const (
	tagNil byte = iota
	tagFalse
	tagTrue
	tagInt
	tagFloat
	tagString
	tagMap
	tagList
)

var codecMagic = []byte("PAM\x02")

// headKeys are the top-level keys of an object's head.
var headKeys = [...]string{"apiVersion", "kind", "metadata"}

// EncodeParsed returns the parsed form of ms.
func EncodeParsed(ms []Manifest) ([]byte, error) {
	b := append([]byte{}, codecMagic...)
	b = binary.AppendUvarint(b, uint64(len(ms)))
	for i := range ms {
		m := &ms[i]
		if m.Obj == nil {
			return nil, fmt.Errorf("%s: no object", m.Position())
		}
		b = appendString(b, m.File)
		b = binary.AppendUvarint(b, uint64(m.Doc))
		b = binary.AppendUvarint(b, uint64(m.Line))
		if _, short := headJSON(m.Obj.Object); short {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
		head, body := map[string]any{}, map[string]any{}
		for k, v := range m.Obj.Object {
			if k == headKeys[0] || k == headKeys[1] || k == headKeys[2] {
				head[k] = v
			} else {
				body[k] = v
			}
		}
		var err error
		if b, err = appendValue(b, head); err != nil {
			return nil, fmt.Errorf("%s: %w", m.Position(), err)
		}
		rest, err := appendValue(nil, body)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Position(), err)
		}
		b = binary.AppendUvarint(b, uint64(len(rest)))
		b = append(b, rest...)
	}
	return b, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, tagNil), nil
	case bool:
		if x {
			return append(b, tagTrue), nil
		}
		return append(b, tagFalse), nil
	case int64:
		return binary.AppendVarint(append(b, tagInt), x), nil
	case float64:
		return binary.LittleEndian.AppendUint64(append(b, tagFloat), math.Float64bits(x)), nil
	case string:
		return appendString(append(b, tagString), x), nil
	case map[string]any:
		b = binary.AppendUvarint(append(b, tagMap), uint64(len(x)))
		var err error
		for k, v := range x {
			b = appendString(b, k)
			if b, err = appendValue(b, v); err != nil {
				return nil, err
			}
		}
		return b, nil
	case []any:
		b = binary.AppendUvarint(append(b, tagList), uint64(len(x)))
		var err error
		for _, v := range x {
			if b, err = appendValue(b, v); err != nil {
				return nil, err
			}
		}
		return b, nil
	}
	return nil, fmt.Errorf("value of type %T", v)
}

// errParsedForm is what every malformed input gives.
var errParsedForm = errors.New("not a valid parsed form")

// DecodeParsed returns the manifests EncodeParsed encoded, each exactly as
// parsing gave it (object tree, GVK, file, document, line). When keep is
// set, a manifest it refuses (it sees the object's apiVersion, kind and
// metadata only) keeps just those, as payload.Load keeps an object its
// selection excludes, and the rest is not decoded. Malformed input
// (truncated, bad tags or lengths, objects deeper than limits.MaxDepth) is
// an error, never a panic. The strings of the objects are slices of data.
func DecodeParsed(data string, limits Limits, keep func(*Manifest) bool) ([]Manifest, error) {
	limits = limits.withDefaults()
	if len(data) < len(codecMagic) || data[:len(codecMagic)] != string(codecMagic) {
		return nil, errParsedForm
	}
	d := &decoder{s: data, i: len(codecMagic), maxDepth: limits.MaxDepth}
	n, ok := d.count()
	if !ok {
		return nil, errParsedForm
	}
	out := make([]Manifest, 0, n)
	for j := 0; j < n; j++ {
		file, ok := d.str()
		doc, ok2 := d.uvarint()
		line, ok3 := d.uvarint()
		if !ok || !ok2 || !ok3 || doc > math.MaxInt32 || line > math.MaxInt32 || d.i >= len(d.s) || d.s[d.i] > 1 {
			return nil, errParsedForm
		}
		short := d.s[d.i] == 1
		d.i++
		v, ok := d.value(1)
		obj, isMap := v.(map[string]any)
		restLen, ok2 := d.count()
		if !ok || !isMap || !ok2 {
			return nil, errParsedForm
		}
		rest := d.i + restLen
		var m *Manifest
		if short {
			if m, ok = fromTree(obj); !ok {
				return nil, errParsedForm
			}
			m.File, m.OriginalFilename, m.Doc, m.Line = file, baseName(file), int(doc), int(line)
		}
		if !short || keep == nil || keep(m) {
			body, ok := d.value(1)
			bodyMap, isMap := body.(map[string]any)
			if !ok || !isMap || d.i != rest {
				return nil, errParsedForm
			}
			for k, v := range bodyMap {
				obj[k] = v
			}
			if !short {
				var err error
				if m, err = FromObject(file, int(doc), obj); err != nil {
					return nil, fmt.Errorf("%s#%d: %w", file, doc, err)
				}
				m.Obj.Object = obj
				m.File, m.OriginalFilename, m.Doc, m.Line = file, baseName(file), int(doc), int(line)
				if keep != nil && !keep(m) {
					head := map[string]any{}
					for _, k := range headKeys {
						if v, ok := obj[k]; ok {
							head[k] = v
						}
					}
					m.Obj.Object = head
				}
			}
		}
		d.i = rest
		m.File, m.OriginalFilename, m.Doc, m.Line = file, baseName(file), int(doc), int(line)
		out = append(out, *m)
	}
	if d.i != len(d.s) {
		return nil, errParsedForm
	}
	return out, nil
}

type decoder struct {
	s        string
	i        int
	maxDepth int
}

func (d *decoder) uvarint() (uint64, bool) {
	if d.i < len(d.s) && d.s[d.i] < 0x80 { // most lengths and counts: one byte
		d.i++
		return uint64(d.s[d.i-1]), true
	}
	v, n := binary.Uvarint([]byte(d.s[d.i:min(len(d.s), d.i+binary.MaxVarintLen64)]))
	if n <= 0 {
		return 0, false
	}
	d.i += n
	return v, true
}

// count reads a length that must fit in what is left (every element takes
// at least one byte).
func (d *decoder) count() (int, bool) {
	v, ok := d.uvarint()
	if !ok || v > uint64(len(d.s)-d.i) {
		return 0, false
	}
	return int(v), true
}

func (d *decoder) str() (string, bool) {
	n, ok := d.count()
	if !ok {
		return "", false
	}
	s := d.s[d.i : d.i+n]
	d.i += n
	return s, true
}

func (d *decoder) value(depth int) (any, bool) {
	if d.i >= len(d.s) || depth > d.maxDepth {
		return nil, false
	}
	tag := d.s[d.i]
	d.i++
	switch tag {
	case tagNil:
		return nil, true
	case tagFalse:
		return false, true
	case tagTrue:
		return true, true
	case tagInt:
		v, n := binary.Varint([]byte(d.s[d.i:min(len(d.s), d.i+binary.MaxVarintLen64)]))
		if n <= 0 {
			return nil, false
		}
		d.i += n
		return v, true
	case tagFloat:
		if len(d.s)-d.i < 8 {
			return nil, false
		}
		v := math.Float64frombits(binary.LittleEndian.Uint64([]byte(d.s[d.i : d.i+8])))
		d.i += 8
		return v, true
	case tagString:
		return d.str()
	case tagMap:
		n, ok := d.count()
		if !ok {
			return nil, false
		}
		m := make(map[string]any, n)
		for j := 0; j < n; j++ {
			k, ok := d.str()
			if !ok {
				return nil, false
			}
			v, ok := d.value(depth + 1)
			if !ok {
				return nil, false
			}
			m[k] = v
		}
		return m, true
	case tagList:
		n, ok := d.count()
		if !ok {
			return nil, false
		}
		l := make([]any, n)
		for j := range l {
			v, ok := d.value(depth + 1)
			if !ok {
				return nil, false
			}
			l[j] = v
		}
		return l, true
	}
	return nil, false
}
