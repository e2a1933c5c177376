package genpayload

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// raw is a scalar written as it is: template text such as
// '{{.ReleaseImage}}' that must reach the template engine untouched.
type raw string

// writeDocument writes obj as a block-style YAML document: keys sorted,
// sequences at the indentation of their key (as kubectl and most payload
// files have them), multi-line strings as literal blocks.
func writeDocument(b *bytes.Buffer, obj map[string]any) {
	writeMap(b, obj, 0, false)
}

func pad(b *bytes.Buffer, n int) {
	for i := 0; i < n; i++ {
		b.WriteByte(' ')
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// writeMap writes the entries of m at indent; with inline the first entry
// follows a "- " already written.
func writeMap(b *bytes.Buffer, m map[string]any, indent int, inline bool) {
	for i, k := range sortedKeys(m) {
		if i > 0 || !inline {
			pad(b, indent)
		}
		b.WriteString(k)
		b.WriteByte(':')
		writeValue(b, m[k], indent)
	}
}

// writeValue writes what follows "key:" for a key at indent.
func writeValue(b *bytes.Buffer, v any, indent int) {
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 {
			b.WriteString(" {}\n")
			return
		}
		b.WriteByte('\n')
		writeMap(b, t, indent+2, false)
	case []any:
		if len(t) == 0 {
			b.WriteString(" []\n")
			return
		}
		b.WriteByte('\n')
		writeList(b, t, indent)
	case string:
		if strings.Contains(t, "\n") {
			b.WriteString(" |-\n")
			for _, line := range strings.Split(t, "\n") {
				if line != "" {
					pad(b, indent+2)
					b.WriteString(line)
				}
				b.WriteByte('\n')
			}
			return
		}
		b.WriteByte(' ')
		writeScalar(b, t)
		b.WriteByte('\n')
	default:
		b.WriteByte(' ')
		writeScalar(b, v)
		b.WriteByte('\n')
	}
}

func writeList(b *bytes.Buffer, l []any, indent int) {
	for _, e := range l {
		pad(b, indent)
		b.WriteByte('-')
		switch t := e.(type) {
		case map[string]any:
			if len(t) == 0 {
				b.WriteString(" {}\n")
				continue
			}
			b.WriteByte(' ')
			writeMap(b, t, indent+2, true)
		default:
			b.WriteByte(' ')
			writeScalar(b, e)
			b.WriteByte('\n')
		}
	}
}

func writeScalar(b *bytes.Buffer, v any) {
	switch t := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(t))
	case int:
		b.WriteString(strconv.Itoa(t))
	case raw:
		b.WriteString(string(t))
	case string:
		if plain(t) {
			b.WriteString(t)
			return
		}
		b.WriteByte('"')
		for _, r := range t {
			switch r {
			case '"', '\\':
				b.WriteByte('\\')
				b.WriteRune(r)
			case '\n':
				b.WriteString(`\n`)
			case '\t':
				b.WriteString(`\t`)
			default:
				b.WriteRune(r)
			}
		}
		b.WriteByte('"')
	default:
		// Not produced by the generator; keep the output YAML anyway.
		b.WriteString(strconv.Quote(fmt.Sprint(v)))
	}
}

// yaml11Words are plain scalars that YAML 1.1 does not read as strings.
var yaml11Words = map[string]bool{"y": true, "n": true, "yes": true, "no": true, "true": true, "false": true,
	"on": true, "off": true, "null": true, "~": true}

// plain reports whether s can be written without quotes and read back as
// the same string by a YAML 1.1 parser. A bare "=" is allowed on purpose:
// the real payload has one, and parsers must keep it a string.
func plain(s string) bool {
	if s == "=" {
		return true
	}
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' || s[len(s)-1] == ':' || yaml11Words[strings.ToLower(s)] {
		return false
	}
	if c := s[0]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '/') {
		return false
	}
	if strings.Contains(s, ": ") || strings.Contains(s, " #") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(" ._/:=,()-", c) >= 0) {
			return false
		}
	}
	return true
}
