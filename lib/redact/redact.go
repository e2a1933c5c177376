// Package redact keeps secrets out of what payload-apply prints: Secret
// data in logged request and response bodies, in errors and in output, and
// known credentials (bearer tokens, client keys) anywhere.
//
// Two mechanisms work together. Structural redaction (Body, SecretObject)
// replaces the values of data and stringData of every Secret it can parse,
// whatever they are, so it also covers values the tool never knew (a live
// Secret read from the cluster). Value redaction (Values) replaces known
// secret strings, in their raw and base64 forms, wherever they appear, so it
// also covers text that cannot be parsed: an error message echoing a value,
// a truncated body.
//
// May import: nothing.
// Cluster I/O: none.
package redact

import (
	"encoding/base64"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Mask replaces every redacted value.
const Mask = "<redacted>"

// MinLen is the shortest value Values redacts: shorter ones ("true", "1")
// would mask ordinary words everywhere. Structural redaction masks values
// of any length.
const MinLen = 6

// Values is a set of secret strings to mask wherever they appear. The zero
// value is empty and ready; it is safe for concurrent use.
type Values struct {
	mu       sync.RWMutex
	set      map[string]bool
	replacer *strings.Replacer // nil when stale
}

// Add adds secret strings and their base64 encodings (standard, raw and
// URL alphabets). Values shorter than MinLen are ignored; multi-line values
// (PEM keys) also add each line of at least MinLen characters, so a key
// printed line by line is masked too.
func (v *Values) Add(secrets ...string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.set == nil {
		v.set = map[string]bool{}
	}
	add := func(s string) {
		s = strings.TrimSpace(s)
		if len(s) < MinLen || v.set[s] {
			return
		}
		v.set[s] = true
		v.replacer = nil
	}
	for _, s := range secrets {
		forms := []string{s, base64.StdEncoding.EncodeToString([]byte(s)), base64.RawStdEncoding.EncodeToString([]byte(s)),
			base64.URLEncoding.EncodeToString([]byte(s))}
		if q, err := json.Marshal(s); err == nil {
			forms = append(forms, strings.Trim(string(q), `"`)) // as JSON escapes it
		}
		for _, f := range forms {
			add(f)
		}
		if strings.Contains(s, "\n") {
			for line := range strings.SplitSeq(s, "\n") {
				add(line)
			}
		}
	}
}

// AddBase64 adds a value given base64-encoded (a Secret's data): the
// encoded form and, when it decodes, the decoded one.
func (v *Values) AddBase64(encoded string) {
	v.Add(encoded)
	if raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(encoded)); err == nil {
		v.Add(string(raw))
	}
}

// Len returns the number of strings masked (each form counts).
func (v *Values) Len() int {
	if v == nil {
		return 0
	}
	v.mu.RLock()
	defer v.mu.RUnlock()
	return len(v.set)
}

// String returns s with every known secret replaced by Mask. A nil Values
// returns s unchanged.
func (v *Values) String(s string) string {
	if v == nil {
		return s
	}
	v.mu.RLock()
	r := v.replacer
	n := len(v.set)
	v.mu.RUnlock()
	if n == 0 {
		return s
	}
	if r == nil {
		v.mu.Lock()
		if v.replacer == nil {
			// Longest first, so that a value containing another is masked whole.
			all := make([]string, 0, len(v.set))
			for s := range v.set {
				all = append(all, s)
			}
			sort.Slice(all, func(i, j int) bool {
				if len(all[i]) != len(all[j]) {
					return len(all[i]) > len(all[j])
				}
				return all[i] < all[j]
			})
			pairs := make([]string, 0, 2*len(all))
			for _, s := range all {
				pairs = append(pairs, s, Mask)
			}
			v.replacer = strings.NewReplacer(pairs...)
		}
		r = v.replacer
		v.mu.Unlock()
	}
	return r.Replace(s)
}

// IsSecret reports whether obj (a decoded Kubernetes object) is a core
// Secret.
func IsSecret(obj map[string]any) bool {
	kind, _ := obj["kind"].(string)
	apiVersion, _ := obj["apiVersion"].(string)
	return kind == "Secret" && (apiVersion == "v1" || apiVersion == "")
}

// IsList reports whether obj holds other objects: a List (kind "List" or
// any kind ending in "List", such as SecretList) with items, or an
// OpenShift Template with objects. Secrets inside such an object are
// Secrets too: kubectl and the API server's list forms carry them whole.
func IsList(obj map[string]any) bool {
	kind, _ := obj["kind"].(string)
	switch {
	case strings.HasSuffix(kind, "List"):
		_, ok := obj["items"]
		return ok
	case kind == "Template":
		_, ok := obj["objects"]
		return ok
	}
	return false
}

// Secrets returns obj when it is a Secret, and every Secret nested in it
// through lists (IsList; lists in lists too), in document order.
func Secrets(obj map[string]any) []map[string]any {
	if IsSecret(obj) {
		return []map[string]any{obj}
	}
	if !IsList(obj) {
		return nil
	}
	var out []map[string]any
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			if IsSecret(t) {
				out = append(out, t)
				return
			}
			for _, e := range t {
				walk(e)
			}
		case []any:
			for _, e := range t {
				walk(e)
			}
		}
	}
	for _, k := range []string{"items", "objects"} {
		walk(obj[k])
	}
	return out
}

// SecretValues returns the values of a Secret's data (as given, base64)
// and stringData, for Values.AddBase64 and Values.Add: of obj when it is a
// Secret, and of every Secret nested in it when it is a list (see
// Secrets). Non-string values (invalid, but an error may echo them)
// contribute every string inside them to stringData.
func SecretValues(obj map[string]any) (data, stringData []string) {
	for _, secret := range Secrets(obj) {
		if m, ok := secret["data"].(map[string]any); ok {
			for _, val := range m {
				if s, ok := val.(string); ok {
					data = append(data, s)
				} else {
					stringData = appendStrings(stringData, val)
				}
			}
		} else {
			stringData = appendStrings(stringData, secret["data"])
		}
		stringData = appendStrings(stringData, secret["stringData"])
	}
	return data, stringData
}

// AddSecret adds the values of obj when it is a Secret, or holds Secrets
// (see Secrets).
func (v *Values) AddSecret(obj map[string]any) {
	data, stringData := SecretValues(obj)
	for _, d := range data {
		v.AddBase64(d)
	}
	v.Add(stringData...)
}

// HasSecret reports whether obj is a Secret or holds one (see Secrets).
func HasSecret(obj map[string]any) bool {
	return len(Secrets(obj)) > 0
}

func appendStrings(out []string, val any) []string {
	switch t := val.(type) {
	case string:
		return append(out, t)
	case map[string]any:
		for _, e := range t {
			out = appendStrings(out, e)
		}
	case []any:
		for _, e := range t {
			out = appendStrings(out, e)
		}
	}
	return out
}

// SecretObject masks, in place, the values of data and stringData of obj
// and of every object nested in it (List items, an admission review, a
// watch event) that is a Secret. It reports whether it masked anything.
func SecretObject(obj any) bool {
	masked := false
	switch t := obj.(type) {
	case map[string]any:
		if IsSecret(t) {
			for _, field := range []string{"data", "stringData"} {
				switch m := t[field].(type) {
				case map[string]any:
					for k := range m {
						m[k] = Mask
						masked = true
					}
				case nil:
				default:
					t[field] = Mask
					masked = true
				}
			}
		}
		for k, e := range t {
			if k == "data" || k == "stringData" {
				if IsSecret(t) {
					continue
				}
			}
			if SecretObject(e) {
				masked = true
			}
		}
	case []any:
		for _, e := range t {
			if SecretObject(e) {
				masked = true
			}
		}
	}
	return masked
}

// Body returns a request or response body fit to log: when it is JSON,
// with every Secret's data and stringData masked; when it cannot be parsed
// (truncated, YAML, protobuf) and mentions a Secret, a note of its length
// instead of its content. Known values are then masked by v (which may be
// nil).
func Body(body string, v *Values) string {
	trimmed := strings.TrimSpace(body)
	var obj any
	if err := json.Unmarshal([]byte(trimmed), &obj); err == nil {
		if SecretObject(obj) {
			var b strings.Builder
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(obj); err == nil {
				body = strings.TrimSuffix(b.String(), "\n")
			}
		}
		return v.String(body)
	}
	if mentionsSecret(body) {
		return "<" + strconv.Itoa(len(body)) + " bytes concerning a Secret, not shown>"
	}
	return v.String(body)
}

// mentionsSecret reports whether text that could not be parsed may hold a
// Secret: it names the kind or the resource.
func mentionsSecret(s string) bool {
	return strings.Contains(s, "Secret") || strings.Contains(s, "secrets") || strings.Contains(s, "stringData")
}
