package manifest

import (
	"encoding/json"
	"unicode/utf8"
	"unique"

	yamlv2 "go.yaml.in/yaml/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "sigs.k8s.io/json"
)

// decodeYAMLFast decodes a YAML document into a Manifest without the JSON
// round trip of the reference path, and returns ok false whenever it cannot
// vouch for giving exactly what the reference path gives, so that the caller
// runs that path instead (which also produces the error message, if any).
//
// The reference path (library-go's ParseManifests, and decodeSlow) is:
// sigs.k8s.io/yaml.YAMLToJSON, which decodes the document with
// go.yaml.in/yaml/v2 into an interface{} tree, turns map keys into strings
// and json.Marshals the tree; then Manifest.UnmarshalJSON, which runs the
// universal decoder: it reads apiVersion and kind with encoding/json (an
// error when either is present and not a string, or apiVersion is not a
// valid group/version), then decodes the whole text with sigs.k8s.io/json
// (numbers without a '.' become int64 when they fit, others float64), and
// requires a kind; populateFromObj requires a kind and a name.
//
// Here the same go-yaml call builds the same tree, and it is converted
// directly into the tree that JSON decoding would produce:
//
//   - maps: only string keys are accepted (a number or boolean key is
//     turned into a string by YAMLToJSON with rules not repeated here);
//   - strings: only valid UTF-8 (json.Marshal replaces invalid bytes, which
//     only !!binary values can produce) is accepted;
//   - booleans and null are the same on both sides;
//   - an int becomes int64, as its decimal JSON text decodes;
//   - any other scalar (float64, uint64, ...) is encoded and decoded with
//     the very functions of the reference path (json.Marshal, then
//     sigs.k8s.io/json with int preservation), and accepted only when
//     encoding the result gives the same JSON text again (-0 and integers
//     beyond int64 do not, so they take the reference path).
//
// So every value encodes to the same JSON text as the value YAMLToJSON
// held, and json.Marshal of the tree is byte-for-byte what YAMLToJSON
// returns (Raw is not kept, see Manifest). The unexported resource id of
// library-go's Manifest is set through its exported UnmarshalJSON on a
// small object holding only apiVersion, kind, name and namespace, after
// which Obj is replaced by the full document; GVK and the id only depend
// on those four fields. TestFastDecodeMatchesReference and FuzzFastDecode
// check the equivalence: the same tree (types included), the same JSON
// text, GVK and id.
//
// Map keys are interned (unique.Make): a payload repeats a few hundred keys
// (CRD schemas above all) hundreds of thousands of times.
func decodeYAMLFast(data []byte, values map[string]any) (*Manifest, bool) {
	var tree any
	if err := yamlv2.Unmarshal(data, &tree); err != nil {
		return nil, false
	}
	top, ok := tree.(map[any]any)
	if !ok {
		return nil, false
	}
	cv := converter{values: values}
	obj, ok := cv.convertMap(top)
	if !ok {
		return nil, false
	}
	return fromTree(obj)
}

// fromTree makes the Manifest of an object tree as JSON decoding makes it,
// setting GVK and library-go's resource id the short way; ok is false when
// it cannot vouch for the result (see decodeYAMLFast), and the caller takes
// the reference path.
func fromTree(obj map[string]any) (*Manifest, bool) {
	headRaw, ok := headJSON(obj)
	if !ok {
		return nil, false
	}
	return fromHead(obj, headRaw)
}

// fromHead makes the Manifest of obj from its head JSON (headJSON).
func fromHead(obj map[string]any, headRaw []byte) (*Manifest, bool) {
	m := &Manifest{}
	if err := m.Manifest.UnmarshalJSON(headRaw); err != nil {
		return nil, false
	}
	m.Raw = nil
	m.Obj = &unstructured.Unstructured{Object: obj}
	return m, true
}

// headJSON returns the JSON of obj's apiVersion, kind, name and namespace,
// from which library-go's UnmarshalJSON sets GVK and the resource id as it
// would from the whole object; ok is false when it cannot vouch for that.
func headJSON(obj map[string]any) ([]byte, bool) {
	// What the universal decoder and populateFromObj check.
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if apiVersion == "" || kind == "" || ambiguousTypeKeys(obj) {
		return nil, false
	}
	if _, err := schema.ParseGroupVersion(apiVersion); err != nil {
		return nil, false
	}
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		return nil, false
	}
	name, _ := md["name"].(string)
	if name == "" {
		return nil, false
	}
	head := map[string]any{"apiVersion": apiVersion, "kind": kind}
	headMeta := map[string]any{"name": name}
	if ns, ok := md["namespace"].(string); ok {
		headMeta["namespace"] = ns
	}
	head["metadata"] = headMeta
	headRaw, err := json.Marshal(head)
	if err != nil {
		return nil, false
	}
	return headRaw, true
}

// ambiguousTypeKeys reports whether obj has a top-level key other than
// "apiVersion" and "kind" that encoding/json would still match to them (it
// matches struct fields case-insensitively): the universal decoder reads
// those too, and may fail on them.
func ambiguousTypeKeys(obj map[string]any) bool {
	for k := range obj {
		if len(k) < 4 || k == "apiVersion" || k == "kind" {
			continue
		}
		if equalFoldASCIIOrOther(k, "apiVersion") || equalFoldASCIIOrOther(k, "kind") {
			return true
		}
	}
	return false
}

// equalFoldASCIIOrOther is a conservative case-insensitive comparison: true
// when the names are equal ignoring ASCII case, or when k has any non-ASCII
// byte (encoding/json folds a few non-ASCII letters such as the Kelvin sign
// onto ASCII ones).
func equalFoldASCIIOrOther(k, name string) bool {
	for i := 0; i < len(k); i++ {
		if k[i] >= utf8.RuneSelf {
			return true
		}
	}
	if len(k) != len(name) {
		return false
	}
	for i := 0; i < len(k); i++ {
		a, b := k[i], name[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}

// converter turns go-yaml's tree into the universal decoder's. values
// holds the boxed short strings met so far (in one file), so that the many
// repetitions of "string", "object", "true" share one interface value
// instead of allocating one each: the objects are not changed in place by
// anyone, and a boxed string is immutable anyway.
type converter struct {
	values map[string]any
}

// maxSharedValue bounds the strings converter shares.
const maxSharedValue = 32

func (c converter) convertMap(in map[any]any) (map[string]any, bool) {
	out := make(map[string]any, len(in))
	for k, v := range in {
		ks, ok := k.(string)
		if !ok || !utf8.ValidString(ks) {
			return nil, false
		}
		cv, ok := c.convertValue(v)
		if !ok {
			return nil, false
		}
		out[unique.Make(ks).Value()] = cv
	}
	return out, true
}

func (c converter) convertValue(v any) (any, bool) {
	switch t := v.(type) {
	case string:
		if !utf8.ValidString(t) {
			return nil, false
		}
		if len(t) > maxSharedValue || c.values == nil {
			return t, true
		}
		if shared, ok := c.values[t]; ok {
			return shared, true
		}
		c.values[t] = v
		return v, true
	case bool, nil:
		return t, true
	case int:
		return int64(t), true
	case map[any]any:
		return c.convertMap(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			var ok bool
			if out[i], ok = c.convertValue(e); !ok {
				return nil, false
			}
		}
		return out, true
	}
	// Rare scalars: take them through the reference path's own encoder and
	// decoder, and accept the result only when it encodes the same way.
	text, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	var out any
	if err := kjson.UnmarshalCaseSensitivePreserveInts(text, &out); err != nil {
		return nil, false
	}
	again, err := json.Marshal(out)
	if err != nil || string(again) != string(text) {
		return nil, false
	}
	return out, true
}
