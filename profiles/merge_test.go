package profiles

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	// No golden files here: the import only registers -update, so that
	// go test -update over several packages accepts the flag here too.
	_ "github.com/payload-apply/payload-apply/internal/golden"
)

func tree(t *testing.T, s string) map[string]any {
	t.Helper()
	var out map[string]any
	if err := yaml.Unmarshal([]byte(s), &out); err != nil {
		t.Fatalf("bad test YAML: %v", err)
	}
	if out == nil {
		out = map[string]any{}
	}
	return out
}

// cloudProfileRules carry the NamespacedCloudProfile seed's lists over to
// Rules: each list is keyed by the field its entries are named by.
var cloudProfileRules = Rules{
	Root: "spec",
	ListKeys: map[string]string{
		"kubernetes.versions":      "version",
		"machineImages":            "name",
		"machineImages[].versions": "version",
		"machineTypes":             "name",
		"volumeTypes":              "name",
	},
}

// The seed's CloudProfile and NamespacedCloudProfile (versions quoted: YAML
// reads an unquoted 15.4 as a number).
const seedParent = `
type: aws
kubernetes:
  versions:
  - version: "1.27.1"
  - version: "1.26.3"
  - version: "1.25.8"
  - version: "1.24.6"
  - version: "1.28.6"
    expirationDate: "2023-02-02T01:02:03Z"
machineImages:
- name: suse-chost
  versions:
  - version: "15.4"
  - version: "14.4"
  - version: "13.6"
machineTypes:
- name: m5.large
  cpu: "4"
  gpu: "0"
  memory: 8Gi
volumeTypes:
- name: gp3
  class: standard
  usable: true
`

const seedChild = `
kubernetes:
  versions:
  - version: "1.28.6"
    expirationDate: "2024-06-06T01:02:03Z"
machineImages:
- name: suse-chost
  versions:
  - version: "16.4"
    expirationDate: "2023-08-8T23:59:59Z"
machineTypes:
- name: m5.xlarge
  cpu: "8"
  gpu: "0"
  memory: 16Gi
volumeTypes:
- name: ab6
  class: premium
  usable: true
`

// seedRendered is the seed's rendered CloudProfile under the rule DESIGN.md
// fixes: parent order kept, the child's new entries appended. The seed's own
// rendering is not consistent about this: it appends m5.xlarge after
// m5.large, but lists the child's suse-chost 16.4 and volume type ab6 before
// the parent's entries. The override of 1.28.6 stays at the parent's
// position in both.
const seedRendered = `
type: aws
kubernetes:
  versions:
  - version: "1.27.1"
  - version: "1.26.3"
  - version: "1.25.8"
  - version: "1.24.6"
  - version: "1.28.6"
    expirationDate: "2024-06-06T01:02:03Z"
machineImages:
- name: suse-chost
  versions:
  - version: "15.4"
  - version: "14.4"
  - version: "13.6"
  - version: "16.4"
    expirationDate: "2023-08-8T23:59:59Z"
machineTypes:
- name: m5.large
  cpu: "4"
  gpu: "0"
  memory: 8Gi
- name: m5.xlarge
  cpu: "8"
  gpu: "0"
  memory: 16Gi
volumeTypes:
- name: gp3
  class: standard
  usable: true
- name: ab6
  class: premium
  usable: true
`

func TestRulesMerge(t *testing.T) {
	profileRules := SpecRules()
	tests := []struct {
		name    string
		rules   Rules
		layers  []string // root first; files are "0.yaml", "1.yaml", ...
		want    string
		origins map[string]string // a subset of Merged.Origins to check
		wantErr []string          // substrings, one per joined error
	}{{
		name:   "seed rendering example",
		rules:  cloudProfileRules,
		layers: []string{seedParent, seedChild},
		want:   seedRendered,
		origins: map[string]string{
			"spec.type": "0.yaml",
			"spec.kubernetes.versions[1.27.1].version":                     "0.yaml",
			"spec.kubernetes.versions[1.28.6]":                             "0.yaml",
			"spec.kubernetes.versions[1.28.6].expirationDate":              "1.yaml",
			"spec.machineImages[suse-chost]":                               "0.yaml",
			"spec.machineImages[suse-chost].versions[16.4]":                "1.yaml",
			"spec.machineImages[suse-chost].versions[15.4]":                "0.yaml",
			"spec.machineTypes[m5.xlarge].memory":                          "1.yaml",
			"spec.volumeTypes[gp3].usable":                                 "0.yaml",
			"spec.volumeTypes[ab6].class":                                  "1.yaml",
			"spec.machineImages[suse-chost].versions[13.6]":                "0.yaml",
			"spec.kubernetes.versions[1.24.6].version":                     "0.yaml",
			"spec.machineTypes[m5.large].cpu":                              "0.yaml",
			"spec.machineImages[suse-chost].versions[16.4].expirationDate": "1.yaml",
		},
	}, {
		name:  "seed example carried over to profile fields",
		rules: profileRules,
		layers: []string{`
description: parent
featureGateProfile: SelfManaged
defaultTopology: {controlPlaneTopology: HighlyAvailable, infrastructureTopology: HighlyAvailable}
overlays: [{name: base-a}, {name: base-b}, {name: base-c, path: shared/c}]
labels: {tier: production, team: core}
`, `
description: child
defaultTopology: {infrastructureTopology: SingleReplica}
overlays: [{name: base-b}, {name: extra-z}, {name: extra-y}]
labels: {tier: dev, owner: me}
`},
		want: `
description: child
featureGateProfile: SelfManaged
defaultTopology: {controlPlaneTopology: HighlyAvailable, infrastructureTopology: SingleReplica}
overlays: [{name: base-a}, {name: base-b}, {name: base-c, path: shared/c}, {name: extra-z}, {name: extra-y}]
labels: {tier: dev, team: core, owner: me}
`,
		origins: map[string]string{
			"spec.description":                            "1.yaml",
			"spec.defaultTopology.controlPlaneTopology":   "0.yaml",
			"spec.defaultTopology.infrastructureTopology": "1.yaml",
			"spec.overlays[base-b]":                       "0.yaml",
			"spec.overlays[extra-z]":                      "1.yaml",
			"spec.labels.tier":                            "1.yaml",
			"spec.labels.team":                            "0.yaml",
		},
	}, {
		name:   "maps merge by key, recursively",
		layers: []string{`{a: {p: 1, q: 2}, b: 1}`, `{a: {q: 3, r: 4}}`},
		want:   `{a: {p: 1, q: 3, r: 4}, b: 1}`,
		origins: map[string]string{
			"a.p": "0.yaml", "a.q": "1.yaml", "a.r": "1.yaml", "b": "0.yaml",
		},
	}, {
		name:   "label keys with dots and slashes",
		layers: []string{`{labels: {"example.com/tier": prod}}`, `{labels: {"example.com/tier": dev}}`},
		want:   `{labels: {"example.com/tier": dev}}`,
		origins: map[string]string{
			`labels["example.com/tier"]`: "1.yaml",
		},
	}, {
		name:   "child scalar wins, null keeps the parent's",
		layers: []string{`{a: 1, b: parent, c: true}`, `{a: 2, b: null, c: false}`},
		want:   `{a: 2, b: parent, c: false}`,
	}, {
		name:    "lists that are not keyed are replaced",
		layers:  []string{`{args: [a, b, c]}`, `{args: [d]}`},
		want:    `{args: [d]}`,
		origins: map[string]string{"args": "1.yaml"},
	}, {
		name:    "a child value of another type replaces the parent's",
		layers:  []string{`{a: {x: 1}}`, `{a: flat}`},
		want:    `{a: flat}`,
		origins: map[string]string{"a": "1.yaml"},
	}, {
		name:   "keyed list: parent order, matches merged in place, new entries in the child's order",
		rules:  Rules{ListKeys: map[string]string{"l": "k"}},
		layers: []string{`{l: [{k: c, v: 1}, {k: a, v: 1}, {k: b, v: 1}]}`, `{l: [{k: z}, {k: a, v: 2}, {k: d}]}`},
		want:   `{l: [{k: c, v: 1}, {k: a, v: 2}, {k: b, v: 1}, {k: z}, {k: d}]}`,
		origins: map[string]string{
			"l[c]": "0.yaml", "l[a]": "0.yaml", "l[a].v": "1.yaml", "l[z]": "1.yaml",
		},
	}, {
		name:  "three generations: each appends after its parent",
		rules: profileRules,
		layers: []string{
			`{overlays: [{name: root}], description: root}`,
			`{overlays: [{name: mid}]}`,
			`{overlays: [{name: leaf}, {name: root}], description: leaf}`,
		},
		want: `{overlays: [{name: root}, {name: mid}, {name: leaf}], description: leaf}`,
		origins: map[string]string{
			"spec.overlays[root]": "0.yaml", "spec.overlays[mid]": "1.yaml", "spec.overlays[leaf]": "2.yaml", "spec.description": "2.yaml",
		},
	}, {
		name:   "protected field restated unchanged",
		rules:  profileRules,
		layers: []string{`{featureGateProfile: Hypershift, hypershift: true}`, `{featureGateProfile: Hypershift, hypershift: true}`},
		want:   `{featureGateProfile: Hypershift, hypershift: true}`,
		origins: map[string]string{
			"spec.featureGateProfile": "0.yaml", "spec.hypershift": "0.yaml",
		},
	}, {
		name:    "protected field an ancestor did not set",
		rules:   profileRules,
		layers:  []string{`{description: root}`, `{featureGateProfile: Hypershift}`},
		want:    `{description: root, featureGateProfile: Hypershift}`,
		origins: map[string]string{"spec.featureGateProfile": "1.yaml"},
	}, {
		name:    "protected scalar changed",
		rules:   profileRules,
		layers:  []string{`{featureGateProfile: SelfManaged}`, `{featureGateProfile: Hypershift, description: x}`},
		want:    `{featureGateProfile: SelfManaged, description: x}`,
		wantErr: []string{`1.yaml: layer 1: spec.featureGateProfile is protected (the ancestors' manifests were selected for its feature gates): set to "SelfManaged" by 0.yaml, cannot become "Hypershift"`},
	}, {
		name:    "protected bool changed",
		rules:   profileRules,
		layers:  []string{`{hypershift: true}`, `{}`, `{hypershift: false}`},
		want:    `{hypershift: true}`,
		wantErr: []string{`2.yaml: layer 2: spec.hypershift is protected`},
	}, {
		name:    "inherited overlay redirected",
		rules:   profileRules,
		layers:  []string{`{overlays: [{name: base}]}`, `{overlays: [{name: base, path: mine}, {name: extra}]}`},
		want:    `{overlays: [{name: base}, {name: extra}]}`,
		wantErr: []string{`1.yaml: layer 1: spec.overlays[base] is protected (a derived profile may append overlays but not change inherited ones): set to map[name:base] by 0.yaml, cannot become map[name:base path:mine]`},
	}, {
		// Found by FuzzMerge (testdata/fuzz/FuzzMerge/9c5f385669ca110d):
		// a scalar replaced the inherited overlays without an error.
		name:    "keyed list given as something else",
		rules:   profileRules,
		layers:  []string{`{overlays: [{name: A}]}`, `{overlays: "00"}`, `{overlays: {name: B}}`},
		want:    `{overlays: [{name: A}]}`,
		wantErr: []string{`1.yaml: layer 1: spec.overlays: want a list of entries keyed by "name", not "00"`, `2.yaml: layer 2: spec.overlays: want a list of entries keyed by "name", not map[name:B]`},
	}, {
		name:   "keyed entry without its key, and a key listed twice",
		rules:  profileRules,
		layers: []string{`{overlays: [{path: x}, {name: a}, {name: a}]}`},
		want:   `{overlays: [{name: a}]}`,
		wantErr: []string{
			`0.yaml: layer 0: spec.overlays[0]: a spec.overlays entry needs a non-empty string "name"`,
			`0.yaml: layer 0: spec.overlays[2]: name "a" is listed twice`,
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			layers := make([]Layer, len(tc.layers))
			for i, l := range tc.layers {
				layers[i] = Layer{File: string(rune('0'+i)) + ".yaml", Name: "layer " + string(rune('0'+i)), Fields: tree(t, l)}
			}
			got, err := tc.rules.Merge(layers)
			var gotErr []string
			if err != nil {
				for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
					gotErr = append(gotErr, e.Error())
				}
			}
			if len(gotErr) != len(tc.wantErr) {
				t.Fatalf("errors: got %q, want %d matching %q", gotErr, len(tc.wantErr), tc.wantErr)
			}
			for i := range gotErr {
				if !strings.Contains(gotErr[i], tc.wantErr[i]) {
					t.Errorf("error %d:\n got %s\nwant %s", i, gotErr[i], tc.wantErr[i])
				}
			}
			if diff := cmp.Diff(tree(t, tc.want), got.Fields); diff != "" {
				t.Errorf("merged fields (-want +got):\n%s", diff)
			}
			for path, file := range tc.origins {
				if got.Origins[path] != file {
					t.Errorf("origin of %s: got %q, want %q (all: %v)", path, got.Origins[path], file, got.Origins)
				}
			}
		})
	}
}

func TestRulesMergeProtectedErrorType(t *testing.T) {
	_, err := SpecRules().Merge([]Layer{
		{File: "parent.yaml", Name: `profile "p"`, Fields: map[string]any{"featureGateProfile": "SelfManaged"}},
		{File: "child.yaml", Name: `profile "c"`, Fields: map[string]any{"featureGateProfile": "Hypershift"}},
	})
	var pe *ProtectedError
	if !errors.As(err, &pe) {
		t.Fatalf("got %v, want a *ProtectedError", err)
	}
	want := &ProtectedError{File: "child.yaml", Name: `profile "c"`, Path: "spec.featureGateProfile", SetBy: "parent.yaml",
		Reason: SpecRules().Protected["featureGateProfile"], Was: "SelfManaged", Want: "Hypershift"}
	if diff := cmp.Diff(want, pe); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRulesMergeDoesNotAliasLayers(t *testing.T) {
	parent := map[string]any{"labels": map[string]any{"a": "1"}, "args": []any{"x"}}
	child := map[string]any{"labels": map[string]any{"b": "2"}}
	got, err := Rules{}.Merge([]Layer{{File: "p", Fields: parent}, {File: "c", Fields: child}})
	if err != nil {
		t.Fatal(err)
	}
	got.Fields["labels"].(map[string]any)["c"] = "3"
	got.Fields["args"].([]any)[0] = "changed"
	want := map[string]any{"labels": map[string]any{"a": "1"}, "args": []any{"x"}}
	if diff := cmp.Diff(want, parent); diff != "" {
		t.Errorf("parent layer changed (-want +got):\n%s", diff)
	}
}
