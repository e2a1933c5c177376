package profiles

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"
	"github.com/openshift/api/features"
)

func profileFS(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, body := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(body)}
	}
	return fsys
}

func def(name, spec string) string {
	return "apiVersion: payload-apply/v1alpha1\nkind: ClusterProfile\nmetadata:\n  name: " + name + "\nspec:\n" + spec
}

func TestEmbeddedProfiles(t *testing.T) {
	set, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"hypershift", "ibm-cloud-managed", "self-managed-high-availability", "single-node-developer"}, set.Names()); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	type facts struct {
		Gate       features.ClusterProfileName
		HyperShift bool
		Topology   Topology
		Overlays   []string
	}
	want := map[string]facts{
		"self-managed-high-availability": {features.SelfManaged, false, Topology{"HighlyAvailable", "HighlyAvailable"}, nil},
		"single-node-developer":          {features.SelfManaged, false, Topology{"SingleReplica", "SingleReplica"}, []string{"single-node-developer"}},
		"ibm-cloud-managed":              {features.Hypershift, false, Topology{"External", "HighlyAvailable"}, []string{"ibm-cloud-managed"}},
		"hypershift":                     {features.Hypershift, true, Topology{"External", "HighlyAvailable"}, []string{"hypershift"}},
	}
	for name, w := range want {
		t.Run(name, func(t *testing.T) {
			p, err := set.Profile(name)
			if err != nil {
				t.Fatal(err)
			}
			got := facts{Gate: p.FeatureGateProfile.ClusterProfileName(), HyperShift: p.HyperShift, Topology: p.DefaultTopology}
			for _, o := range p.Overlays {
				got.Overlays = append(got.Overlays, o.Path)
			}
			if diff := cmp.Diff(w, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if p.Description == "" || p.Origins["spec.description"] != EmbeddedLabel+name+".yaml" {
				t.Errorf("description %q from %q", p.Description, p.Origins["spec.description"])
			}
		})
	}
}

// TestProfileInheritance carries the seed's rendering example over to
// profile fields: the parent's overlays keep their order and come first, the
// child's are appended, maps merge by key and the child's scalars win.
func TestProfileInheritance(t *testing.T) {
	fsys := profileFS(map[string]string{
		"crc.yaml": def("crc", `  parent: single-node-developer
  description: CodeReady Containers.
  defaultTopology:
    infrastructureTopology: HighlyAvailable
  overlays:
  - name: crc-z
  - name: single-node-developer
  - name: crc-a
    path: crc/a
  labels:
    example.com/tier: dev
    example.com/owner: crc
`),
		"base.yaml": def("base", `  labels:
    example.com/tier: production
    example.com/team: core
`),
	})
	embedded, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	set, err := embedded.WithDir(fsys, "testdata/")
	if err != nil {
		t.Fatal(err)
	}
	got, err := set.Profile("crc")
	if err != nil {
		t.Fatal(err)
	}
	snd := EmbeddedLabel + "single-node-developer.yaml"
	f := false
	want := &Profile{
		Name:               "crc",
		Parent:             "single-node-developer",
		Chain:              []string{"crc", "single-node-developer"},
		File:               "testdata/crc.yaml",
		Description:        "CodeReady Containers.",
		FeatureGateProfile: GateProfileSelfManaged,
		DefaultTopology:    Topology{ControlPlaneTopology: configv1.SingleReplicaTopologyMode, InfrastructureTopology: configv1.HighlyAvailableTopologyMode},
		Overlays: []Overlay{
			{OverlayRef{Name: "single-node-developer", Path: "single-node-developer", Description: "One replica of every operator Deployment, and a short revision history."}, snd},
			{OverlayRef{Name: "crc-z", Path: "crc-z"}, "testdata/crc.yaml"},
			{OverlayRef{Name: "crc-a", Path: "crc/a"}, "testdata/crc.yaml"},
		},
		Labels: map[string]string{"example.com/tier": "dev", "example.com/owner": "crc"},
		Spec: Spec{
			Parent:             "single-node-developer",
			Description:        "CodeReady Containers.",
			FeatureGateProfile: GateProfileSelfManaged,
			HyperShift:         &f,
			DefaultTopology:    Topology{ControlPlaneTopology: configv1.SingleReplicaTopologyMode, InfrastructureTopology: configv1.HighlyAvailableTopologyMode},
			Overlays: []OverlayRef{
				{Name: "single-node-developer", Description: "One replica of every operator Deployment, and a short revision history."},
				{Name: "crc-z"},
				{Name: "crc-a", Path: "crc/a"},
			},
			Labels: map[string]string{"example.com/tier": "dev", "example.com/owner": "crc"},
		},
		Origins: map[string]string{
			"spec.parent":                                      "testdata/crc.yaml",
			"spec.description":                                 "testdata/crc.yaml",
			"spec.featureGateProfile":                          snd,
			"spec.hypershift":                                  snd,
			"spec.defaultTopology.controlPlaneTopology":        snd,
			"spec.defaultTopology.infrastructureTopology":      "testdata/crc.yaml",
			"spec.overlays[single-node-developer]":             snd,
			"spec.overlays[single-node-developer].name":        snd,
			"spec.overlays[single-node-developer].description": snd,
			"spec.overlays[crc-z]":                             "testdata/crc.yaml",
			"spec.overlays[crc-z].name":                        "testdata/crc.yaml",
			"spec.overlays[crc-a]":                             "testdata/crc.yaml",
			"spec.overlays[crc-a].name":                        "testdata/crc.yaml",
			"spec.overlays[crc-a].path":                        "testdata/crc.yaml",
			`spec.labels["example.com/tier"]`:                  "testdata/crc.yaml",
			`spec.labels["example.com/owner"]`:                 "testdata/crc.yaml",
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		wantErr []string // substrings, in order, one per joined error
	}{{
		name:    "unknown parent",
		files:   map[string]string{"a.yaml": def("a", "  parent: nope\n")},
		wantErr: []string{`dir/a.yaml: profile "a": unknown parent "nope" (known: a, hypershift, ibm-cloud-managed, self-managed-high-availability, single-node-developer)`},
	}, {
		name: "cycle",
		files: map[string]string{
			"a.yaml": def("a", "  parent: b\n"),
			"b.yaml": def("b", "  parent: c\n"),
			"c.yaml": def("c", "  parent: a\n"),
		},
		wantErr: []string{
			`dir/a.yaml: profile "a": parent cycle a -> b -> c -> a`,
			`dir/b.yaml: profile "b": parent cycle b -> c -> a -> b`,
			`dir/c.yaml: profile "c": parent cycle c -> a -> b -> c`,
		},
	}, {
		name:    "self parent",
		files:   map[string]string{"a.yaml": def("a", "  parent: a\n")},
		wantErr: []string{`dir/a.yaml: profile "a": parent cycle a -> a`},
	}, {
		name: "protected feature-gate profile",
		files: map[string]string{"a.yaml": def("a", `  parent: hypershift
  featureGateProfile: SelfManaged
`)},
		wantErr: []string{`dir/a.yaml: profile "a": spec.featureGateProfile is protected (the ancestors' manifests were selected for its feature gates): set to "Hypershift" by embedded:profiles/hypershift.yaml, cannot become "SelfManaged"`},
	}, {
		name: "protected hypershift flag, two levels down",
		files: map[string]string{
			"a.yaml": def("a", "  parent: hypershift\n"),
			"b.yaml": def("b", "  parent: a\n  hypershift: false\n"),
		},
		wantErr: []string{`dir/b.yaml: profile "b": spec.hypershift is protected (the ancestors' manifests and overlays are written for one kind of control plane): set to true by embedded:profiles/hypershift.yaml, cannot become false`},
	}, {
		name: "inherited overlay redirected",
		files: map[string]string{"a.yaml": def("a", `  parent: single-node-developer
  overlays:
  - name: single-node-developer
    path: my-own
`)},
		wantErr: []string{`dir/a.yaml: profile "a": spec.overlays[single-node-developer] is protected`},
	}, {
		name:    "name defined twice",
		files:   map[string]string{"x.yaml": def("hypershift", "  description: again\n")},
		wantErr: []string{`dir/x.yaml: profile "hypershift" is already defined in embedded:profiles/hypershift.yaml`},
	}, {
		name:    "unknown field",
		files:   map[string]string{"a.yaml": def("a", "  overlay: []\n")},
		wantErr: []string{`dir/a.yaml: error unmarshaling JSON: while decoding JSON: json: unknown field "overlay"`},
	}, {
		name:    "alias bomb",
		files:   map[string]string{"a.yaml": def("a", "  labels: {x: y}\n") + "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"},
		wantErr: []string{`dir/a.yaml: error converting YAML to JSON: yaml: document contains excessive aliasing`},
	}, {
		name:    "not UTF-8",
		files:   map[string]string{"a.yaml": def("a", "  description: \"\xff\"\n")},
		wantErr: []string{`dir/a.yaml: error converting YAML to JSON: yaml: invalid leading UTF-8 octet`},
	}, {
		name:    "above the size limit",
		files:   map[string]string{"a.yaml": def("a", "  description: "+strings.Repeat("x", MaxFileSize)+"\n")},
		wantErr: []string{`dir/a.yaml: file is larger than the limit of 1048576 bytes`},
	}, {
		name: "bad values",
		files: map[string]string{"a.yaml": def("a", `  featureGateProfile: Managed
  defaultTopology:
    infrastructureTopology: External
  overlays:
  - path: x
  - name: up
    path: ../x
  labels:
    "bad key!": v
`)},
		wantErr: []string{
			`dir/a.yaml: profile "a": spec.featureGateProfile "Managed": want SelfManaged or Hypershift`,
			`dir/a.yaml: profile "a": spec.defaultTopology.infrastructureTopology "External": want HighlyAvailable or SingleReplica`,
			`dir/a.yaml: profile "a": spec.overlays[0]: name is required`,
			`dir/a.yaml: profile "a": spec.overlays[up].path "../x": must be a clean slash-separated path`,
			`dir/a.yaml: profile "a": spec.labels["bad key!"]: key:`,
		},
	}, {
		name:    "wrong kind",
		files:   map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"},
		wantErr: []string{`dir/a.yaml: is v1 ConfigMap, want payload-apply/v1alpha1 ClusterProfile`},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			embedded, err := Embedded()
			if err != nil {
				t.Fatal(err)
			}
			_, err = embedded.WithDir(profileFS(tc.files), "dir/")
			if err == nil {
				t.Fatalf("no error, want %q", tc.wantErr)
			}
			got := errorLines(err)
			if len(got) != len(tc.wantErr) {
				t.Fatalf("got %d errors %q, want %d", len(got), got, len(tc.wantErr))
			}
			for i := range got {
				if !strings.Contains(got[i], tc.wantErr[i]) {
					t.Errorf("error %d:\n got %s\nwant %s", i, got[i], tc.wantErr[i])
				}
			}
		})
	}
}

func errorLines(err error) []string {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range j.Unwrap() {
			out = append(out, errorLines(e)...)
		}
		return out
	}
	return []string{err.Error()}
}

func TestResolve(t *testing.T) {
	set, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		flag       string
		cluster    map[string]string
		want       string
		wantSource Source
		wantErr    string
	}{
		{name: "nothing: the default", want: Default, wantSource: SourceDefault},
		{name: "no ConfigMap key: the default", cluster: map[string]string{"other": "x"}, want: Default, wantSource: SourceDefault},
		{name: "empty ConfigMap value: the default", cluster: map[string]string{"profile": " "}, want: Default, wantSource: SourceDefault},
		{name: "the cluster's ConfigMap", cluster: map[string]string{"profile": "single-node-developer"}, want: "single-node-developer", wantSource: SourceCluster},
		{name: "the flag wins over the cluster", flag: "hypershift", cluster: map[string]string{"profile": "single-node-developer"}, want: "hypershift", wantSource: SourceFlag},
		{name: "unknown flag", flag: "crc", wantSource: SourceFlag,
			wantErr: `--profile: unknown profile "crc" (known: hypershift, ibm-cloud-managed, self-managed-high-availability, single-node-developer)`},
		{name: "unknown cluster profile", cluster: map[string]string{"profile": "crc"}, wantSource: SourceCluster,
			wantErr: `ConfigMap openshift-config/cluster-profile: unknown profile "crc" (known: hypershift, ibm-cloud-managed, self-managed-high-availability, single-node-developer)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, src, err := set.Resolve(tc.flag, tc.cluster)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if got != tc.want || src != tc.wantSource {
				t.Errorf("got %q from %q, want %q from %q", got, src, tc.want, tc.wantSource)
			}
		})
	}
}

func TestFromConfigMap(t *testing.T) {
	tests := []struct {
		name string
		data map[string]string
		want string
	}{
		{name: "no ConfigMap", data: nil, want: ""},
		{name: "no profile key", data: map[string]string{}, want: ""},
		{name: "profile key", data: map[string]string{"profile": "crc\n"}, want: "crc"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := FromConfigMap(tc.data); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestProfileDefaults: what no definition in the chain sets has its default
// value and the origin "default".
func TestProfileDefaults(t *testing.T) {
	set, err := Load(profileFS(map[string]string{"bare.yaml": def("bare", "  description: nothing else\n")}), "dir/")
	if err != nil {
		t.Fatal(err)
	}
	p, err := set.Profile("bare")
	if err != nil {
		t.Fatal(err)
	}
	f := false
	want := Spec{
		Description:        "nothing else",
		FeatureGateProfile: GateProfileSelfManaged,
		HyperShift:         &f,
		DefaultTopology:    Topology{ControlPlaneTopology: configv1.HighlyAvailableTopologyMode, InfrastructureTopology: configv1.HighlyAvailableTopologyMode},
	}
	if diff := cmp.Diff(want, p.Spec); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	wantOrigins := map[string]string{
		"spec.description":                            "dir/bare.yaml",
		"spec.featureGateProfile":                     DefaultOrigin,
		"spec.hypershift":                             DefaultOrigin,
		"spec.defaultTopology.controlPlaneTopology":   DefaultOrigin,
		"spec.defaultTopology.infrastructureTopology": DefaultOrigin,
	}
	if diff := cmp.Diff(wantOrigins, p.Origins); diff != "" {
		t.Errorf("origins (-want +got):\n%s", diff)
	}
	if p.FeatureGateProfile.ClusterProfileName() != features.SelfManaged || p.HyperShift || p.Labels == nil {
		t.Errorf("typed fields: %+v", p)
	}
}
