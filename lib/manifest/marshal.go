package manifest

import (
	yamlv2 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/yaml"
)

// MarshalYAML returns obj as YAML, byte for byte what sigs.k8s.io/yaml's
// Marshal returns (keys sorted, as kubectl prints), at about a third of its
// cost.
//
// sigs.k8s.io/yaml encodes obj as JSON, parses that JSON with go-yaml v2
// and encodes the result with go-yaml v2. For an object tree of the kinds
// JSON decoding makes (maps with string keys, slices, strings, booleans,
// nil, int64) the parse gives back the same tree, up to int64 becoming
// int, which go-yaml encodes alike; so MarshalYAML encodes obj with go-yaml
// v2 directly. Anything else takes the long way: floats, whose JSON text
// go-yaml may read back as another type; other Go types; strings with
// characters that JSON leaves as they are and YAML does not read as
// themselves (DEL, C1 controls, NEL, which YAML reads as a line break, the
// byte order mark, U+FFFE and U+FFFF: sigs.k8s.io/yaml fails on most of
// them); keys too long for a YAML simple key.
// TestMarshalYAMLMatches and FuzzMarshalYAML check the equivalence.
func MarshalYAML(obj map[string]any) ([]byte, error) {
	if !plainTree(obj) {
		return yaml.Marshal(obj)
	}
	return yamlv2.Marshal(obj)
}

// plainTree reports whether v holds only what MarshalYAML encodes
// directly.
func plainTree(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if len(k) > maxPlainKey || !plainString(k) || !plainTree(e) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range t {
			if !plainTree(e) {
				return false
			}
		}
		return true
	case string:
		return plainString(t)
	case bool, nil, int64:
		return true
	}
	return false
}

// maxPlainKey is well below go-yaml's limit of 1024 characters for a
// simple key.
const maxPlainKey = 1000

// plainString reports whether s holds only characters that come out of
// json.Marshal either escaped or as characters YAML reads as themselves.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x7f {
			continue
		}
		for _, r := range s[i:] {
			switch {
			case r < 0x7f:
			case r >= 0xa0 && r <= 0xd7ff && r != 0x2028 && r != 0x2029:
			case r >= 0xe000 && r <= 0xfffd && r != 0xfeff:
			case r >= 0x10000 && r <= 0x10ffff:
			default:
				return false
			}
		}
		return true
	}
	return true
}
