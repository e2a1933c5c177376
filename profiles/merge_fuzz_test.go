package profiles

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// specOf returns the spec of a profile file, or the whole document when it
// has none, as merge layers see it.
func specOf(data []byte) (map[string]any, bool) {
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil || doc == nil {
		return nil, false
	}
	if spec, ok := doc["spec"].(map[string]any); ok {
		return spec, true
	}
	return doc, true
}

// FuzzMerge merges a fuzzed child spec into a fuzzed parent spec with the
// profile rules (the built-in profiles, paired, as seeds). It must not
// panic, change its inputs or share maps with them; when it succeeds the
// parent's protected fields are kept (the feature-gate profile, hypershift,
// and every inherited overlay, unchanged and in order), and merging the
// child a second time changes nothing; its errors name the child's file.
func FuzzMerge(f *testing.F) {
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		f.Fatalf("no built-in profiles here: %v", err)
	}
	var seeds [][]byte
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, data)
	}
	for _, p := range seeds {
		for _, c := range seeds {
			f.Add(p, c)
		}
	}
	f.Add(seeds[0], []byte("featureGateProfile: Hypershift\noverlays:\n- name: x\n- name: x\n- {}\n"))
	f.Add([]byte("overlays: [{name: a, path: p}]\nlabels: {a: b}"), []byte("overlays: [{name: a, path: q}, {name: b}]\nlabels: null\nhypershift: true"))

	f.Fuzz(func(t *testing.T, parentData, childData []byte) {
		parent, ok1 := specOf(parentData)
		child, ok2 := specOf(childData)
		if !ok1 || !ok2 {
			return
		}
		parentCopy, childCopy := copyValue(parent), copyValue(child)
		base, err := SpecRules().Merge([]Layer{{File: "parent.yaml", Name: "parent", Fields: parent}})
		if err != nil {
			return
		}
		layers := []Layer{{File: "parent.yaml", Name: "parent", Fields: parent}, {File: "child.yaml", Name: "child", Fields: child}}
		merged, err := SpecRules().Merge(layers)
		if !reflect.DeepEqual(parent, parentCopy) || !reflect.DeepEqual(child, childCopy) {
			t.Fatal("Merge changed its inputs")
		}
		if err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(line, "child.yaml: ") {
					t.Fatalf("error line does not name the child's file: %q", line)
				}
			}
			return
		}
		for _, field := range []string{"featureGateProfile", "hypershift"} {
			if was, ok := base.Fields[field]; ok && !reflect.DeepEqual(merged.Fields[field], was) {
				t.Fatalf("protected %s changed from %v to %v", field, was, merged.Fields[field])
			}
		}
		if was, ok := base.Fields["overlays"].([]any); ok {
			now, _ := merged.Fields["overlays"].([]any)
			if len(now) < len(was) || !reflect.DeepEqual(now[:len(was)], was) {
				t.Fatalf("inherited overlays changed:\n%v\nbecame\n%v", was, now)
			}
		}
		again, err := SpecRules().Merge(append(layers, Layer{File: "child.yaml", Name: "child", Fields: child}))
		if err != nil {
			t.Fatalf("merging the child again: %v", err)
		}
		if !reflect.DeepEqual(again.Fields, merged.Fields) {
			t.Fatalf("merging the child again changed the result:\n%v\nthen\n%v", merged.Fields, again.Fields)
		}
		// The result shares nothing with the layers.
		scribble(merged.Fields)
		if !reflect.DeepEqual(parent, parentCopy) || !reflect.DeepEqual(child, childCopy) {
			t.Fatal("the merged fields share maps or lists with the layers")
		}
	})
}

// scribble changes every map and list in v in place.
func scribble(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			scribble(e)
			t[k] = "scribbled"
		}
		t["scribbled"] = true
	case []any:
		for i, e := range t {
			scribble(e)
			t[i] = "scribbled"
		}
	}
}
