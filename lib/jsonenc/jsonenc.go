// Package jsonenc encodes unstructured values, what JSON and YAML decode
// into (map[string]any, []any, string, bool, nil, int64, float64, and int
// and int32 as code sets them), byte for byte as encoding/json.Marshal
// does, without reflection: keys in order, HTML characters, U+2028 and
// U+2029 escaped, invalid UTF-8 as U+FFFD, numbers as Marshal prints them.
// Anything else is ErrUnsupported, for the caller to hand to
// encoding/json.
//
// It exists for hashes of a plan's objects (the record's versionHash, the
// key of the plan's checked findings), where json.Marshal's reflection and
// sorting were most of the time.
//
// May import: nothing.
// Cluster I/O: none.
package jsonenc

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// ErrUnsupported: the value holds a type this package does not encode
// (encoding/json may: a struct, a typed map); nothing was appended.
var ErrUnsupported = errors.New("jsonenc: unsupported type")

// maxDepth bounds nesting, as encoding/json's decoder does: a value made
// by decoding never exceeds it, and a deeper one is refused rather than
// exhaust the stack.
const maxDepth = 10000

// Number kinds an Encoder records (Kinds) for each number it writes, in
// order: values that print the same (int64(1) and float64(1)) are told
// apart.
const (
	KindInt64   byte = 'i'
	KindInt     byte = 'n'
	KindInt32   byte = 'm'
	KindFloat64 byte = 'f'
)

// Encoder appends values; it keeps buffers between calls, so one Encoder
// used for many values allocates little. Not safe for concurrent use.
type Encoder struct {
	keys []string
	// RecordKinds, when set, makes Append record each number's kind in
	// Kinds.
	RecordKinds bool
	// Kinds holds a number kind per number appended since the last Reset,
	// when RecordKinds is set.
	Kinds []byte
}

// Reset forgets the recorded kinds.
func (e *Encoder) Reset() { e.Kinds = e.Kinds[:0] }

// Append appends v's JSON to dst as encoding/json.Marshal would write it.
// On an error dst is returned as it was given: ErrUnsupported for a type
// it does not encode, an error naming the value for NaN or an infinity
// (json.Marshal refuses those too), or one for nesting beyond 10000.
func (e *Encoder) Append(dst []byte, v any) ([]byte, error) {
	n, k := len(dst), len(e.Kinds)
	out, err := e.value(dst, v, 0)
	if err != nil {
		e.keys, e.Kinds = e.keys[:0], e.Kinds[:k]
		return dst[:n], err
	}
	return out, nil
}

// Append is Encoder.Append with a new Encoder.
func Append(dst []byte, v any) ([]byte, error) {
	var e Encoder
	return e.Append(dst, v)
}

func (e *Encoder) value(b []byte, v any, depth int) ([]byte, error) {
	if depth > maxDepth {
		return b, errors.New("jsonenc: nested deeper than 10000")
	}
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return appendString(b, v), nil
	case bool:
		if v {
			return append(b, "true"...), nil
		}
		return append(b, "false"...), nil
	case int64:
		e.kind(KindInt64)
		return strconv.AppendInt(b, v, 10), nil
	case int:
		e.kind(KindInt)
		return strconv.AppendInt(b, int64(v), 10), nil
	case int32:
		e.kind(KindInt32)
		return strconv.AppendInt(b, int64(v), 10), nil
	case float64:
		e.kind(KindFloat64)
		return appendFloat(b, v)
	case map[string]any:
		return e.object(b, v, depth)
	case []any:
		if v == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, x := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = e.value(b, x, depth+1); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	default:
		return b, ErrUnsupported
	}
}

func (e *Encoder) kind(k byte) {
	if e.RecordKinds {
		e.Kinds = append(e.Kinds, k)
	}
}

// object writes m's members in key order. The keys are sorted on a stack
// shared by every level (e.keys): this level's are its tail.
func (e *Encoder) object(b []byte, m map[string]any, depth int) ([]byte, error) {
	if m == nil {
		return append(b, "null"...), nil
	}
	start := len(e.keys)
	for k := range m {
		e.keys = append(e.keys, k)
	}
	keys := e.keys[start:]
	slices.Sort(keys)
	b = append(b, '{')
	for i := start; i < start+len(m); i++ {
		k := e.keys[i] // e.keys may grow (and move) below this level
		if i > start {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		var err error
		if b, err = e.value(b, m[k], depth+1); err != nil {
			return b, err
		}
	}
	clear(e.keys[start:])
	e.keys = e.keys[:start]
	return append(b, '}'), nil
}

// appendFloat prints f as encoding/json does: ES6 number formatting, an
// exponent from 1e21 and below 1e-6, written without padding.
func appendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, fmt.Errorf("jsonenc: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, 64))
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 is written e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

const hexDigits = "0123456789abcdef"

// htmlSafe holds the bytes written as they are: ASCII from the space on,
// less the quote, the backslash and <, > and &.
var htmlSafe = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendString quotes s as encoding/json does with HTML escaping (what
// Marshal uses).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if htmlSafe[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
