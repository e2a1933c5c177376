package plan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/payload-apply/payload-apply/internal/golden"
	"github.com/payload-apply/payload-apply/lib/component"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/overlay"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/profiles"
)

// crcOptions are the options of the user-defined crc profile in
// testdata/crc: parent single-node-developer, plus an overlay of its own.
func crcOptions(t testing.TB) Options {
	t.Helper()
	set, err := profiles.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if set, err = set.WithDir(os.DirFS("testdata/crc/profiles"), "testdata/crc/profiles/"); err != nil {
		t.Fatal(err)
	}
	return Options{
		Profiles:      set,
		Profile:       "crc",
		ExtraOverlays: []overlay.Source{{FS: os.DirFS("testdata/crc/overlays"), Label: "testdata/crc/overlays/"}},
	}
}

// TestBuildGolden renders the embedded payload for every reference profile
// and for crc: the YAML, the --list lines and the --explain lines.
func TestBuildGolden(t *testing.T) {
	cases := map[string]Options{"crc": crcOptions(t)}
	for _, p := range []string{"self-managed-high-availability", "single-node-developer", "ibm-cloud-managed", "hypershift"} {
		cases[p] = Options{Profile: p}
	}
	for name, opts := range cases {
		t.Run(name, func(t *testing.T) {
			p, err := Build(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			for file, write := range map[string]func(*bytes.Buffer) error{
				"render.yaml": func(b *bytes.Buffer) error { return p.WriteYAML(b) },
				"list.tsv":    func(b *bytes.Buffer) error { return p.WriteList(b) },
				"explain.tsv": func(b *bytes.Buffer) error { return p.WriteExplain(b) },
			} {
				var b bytes.Buffer
				if err := write(&b); err != nil {
					t.Fatal(err)
				}
				golden.AssertTestdata(t, file, b.Bytes())
			}
		})
	}
}

// TestCRCInheritsSingleNodeDeveloper: crc gets everything
// single-node-developer gets, overlays included, plus its own overlay's
// change, and records its own name in the cluster-profile ConfigMap.
func TestCRCInheritsSingleNodeDeveloper(t *testing.T) {
	snd, err := Build(context.Background(), Options{Profile: "single-node-developer"})
	if err != nil {
		t.Fatal(err)
	}
	crc, err := Build(context.Background(), crcOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"crc", "single-node-developer"}, crc.ProfileChain); diff != "" {
		t.Errorf("chain (-want +got):\n%s", diff)
	}
	var overlays []string
	for _, o := range crc.Overlays {
		overlays = append(overlays, o.File)
	}
	if diff := cmp.Diff([]string{"embedded:overlays/single-node-developer/kustomization.yaml", "testdata/crc/overlays/crc/kustomization.yaml"}, overlays); diff != "" {
		t.Errorf("overlays, root first (-want +got):\n%s", diff)
	}

	// The expected crc objects: single-node-developer's, with the crc
	// overlay's change, crc's cluster-profile ConfigMap, and the CVO's
	// {{.ClusterProfile}} template rendered for crc.
	want := map[string]*unstructured.Unstructured{}
	for _, m := range snd.Objects {
		u := m.Obj.DeepCopy()
		switch m.ID().String() {
		case "Deployment.apps/openshift-ingress-operator/ingress-operator":
			containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			if err := unstructured.SetNestedField(containers[0].(map[string]any), "40Mi", "resources", "requests", "memory"); err != nil {
				t.Fatal(err)
			}
			if err := unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers"); err != nil {
				t.Fatal(err)
			}
		case "Deployment.apps/openshift-cluster-version/cluster-version-operator":
			containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			for _, e := range containers[0].(map[string]any)["env"].([]any) {
				if env := e.(map[string]any); env["name"] == "CLUSTER_PROFILE" {
					env["value"] = "crc"
				}
			}
			if err := unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers"); err != nil {
				t.Fatal(err)
			}
		case "ConfigMap/openshift-config/cluster-profile":
			u.SetLabels(map[string]string{"crc.dev/edition": "openshift"})
			if err := unstructured.SetNestedField(u.Object, "crc", "data", "profile"); err != nil {
				t.Fatal(err)
			}
		}
		want[m.Position()+" "+m.ID().String()] = u
	}
	got := map[string]*unstructured.Unstructured{}
	for _, m := range crc.Objects {
		got[m.Position()+" "+m.ID().String()] = m.Obj
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("crc objects by FILE#DOC and ID (-want +got):\n%s", diff)
	}

	// The same apply order: the overlays keep every object's place.
	var wantOrder, gotOrder []string
	for _, m := range snd.Objects {
		wantOrder = append(wantOrder, m.Position())
	}
	for _, m := range crc.Objects {
		gotOrder = append(gotOrder, m.Position())
	}
	if diff := cmp.Diff(wantOrder, gotOrder); diff != "" {
		t.Errorf("apply order (-want +got):\n%s", diff)
	}
}

// TestOverlaysKeepFileAndRunLevel checks every object an embedded overlay
// changed against its source: same file, document, line and file name, so
// the same run level, component and task-graph node.
func TestOverlaysKeepFileAndRunLevel(t *testing.T) {
	for _, profile := range []string{"single-node-developer", "ibm-cloud-managed", "hypershift"} {
		t.Run(profile, func(t *testing.T) {
			p, err := Build(context.Background(), Options{Profile: profile})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.OverlayChanges) == 0 {
				t.Fatal("the overlay changed nothing")
			}
			node := map[*manifest.Manifest]string{}
			for _, n := range p.Graph.Nodes {
				for _, task := range n.Tasks {
					if task.Manifest != nil {
						level, component, _ := payload.ParseFileName(task.Manifest.OriginalFilename)
						node[task.Manifest] = fmt.Sprintf("%02d/%s", level, component)
					}
				}
			}
			for _, c := range p.OverlayChanges {
				switch c.Action {
				case overlay.Modified:
					type place struct {
						File, OriginalFilename string
						Doc, Line              int
					}
					src, obj := c.Source, c.Object
					if diff := cmp.Diff(place{src.File, src.OriginalFilename, src.Doc, src.Line}, place{obj.File, obj.OriginalFilename, obj.Doc, obj.Line}); diff != "" {
						t.Errorf("%s (-want +got):\n%s", src, diff)
					}
					level, component, _ := payload.ParseFileName(src.OriginalFilename)
					if got, want := node[obj], fmt.Sprintf("%02d/%s", level, component); got != want {
						t.Errorf("%s: placed at %q, want %q", obj, got, want)
					}
				case overlay.Deleted:
					for _, m := range p.Objects {
						if m.ID() == c.Source.ID() {
							t.Errorf("%s: deleted by %s but still planned", c.Source, c.Overlay)
						}
					}
				}
			}
		})
	}
}

func TestClusterProfileConfigMap(t *testing.T) {
	ns := func(file string) fstest.MapFS {
		return fstest.MapFS{"manifests/" + file: &fstest.MapFile{Data: []byte(`apiVersion: v1
kind: Namespace
metadata:
  name: openshift-config
  annotations:
    include.release.openshift.io/self-managed-high-availability: "true"
`)}}
	}
	tests := []struct {
		name     string
		payload  fstest.MapFS
		wantList string
		wantErr  string
	}{{
		name:    "after the namespace, in its run level and component",
		payload: ns("0000_10_config-operator_01_openshift-config-ns.yaml"),
		wantList: "10\tconfig-operator\tmanifests/0000_10_config-operator_01_openshift-config-ns.yaml\tv1\tNamespace\t\topenshift-config\n" +
			"10\tconfig-operator\tgenerated/0000_10_config-operator_99_cluster-profile.yaml\tv1\tConfigMap\topenshift-config\tcluster-profile\n",
	}, {
		name:    "run level 03 of config-operator when no object creates the namespace",
		payload: fstest.MapFS{"manifests/0000_50_x_00.yaml": &fstest.MapFile{Data: []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n  annotations: {include.release.openshift.io/self-managed-high-availability: \"true\"}\n")}},
		// The CVO's manifests/ come first, then the rest by name.
		wantList: "50\tx\tmanifests/0000_50_x_00.yaml\tv1\tNamespace\t\tx\n" +
			"03\tconfig-operator\tgenerated/0000_03_config-operator_99_cluster-profile.yaml\tv1\tConfigMap\topenshift-config\tcluster-profile\n",
	}, {
		name: "a payload that ships the ConfigMap itself",
		payload: func() fstest.MapFS {
			fsys := ns("0000_03_config_00_ns.yaml")
			fsys["manifests/0000_03_config_01_cm.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-profile\n  namespace: openshift-config\n  annotations: {include.release.openshift.io/self-managed-high-availability: \"true\"}\n")}
			return fsys
		}(),
		wantErr: "generated/0000_03_config_99_cluster-profile.yaml#0: ConfigMap/openshift-config/cluster-profile is also defined in manifests/0000_03_config_01_cm.yaml#0 (both included)",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Build(context.Background(), Options{Payload: tc.payload})
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if err != nil {
				return
			}
			var b bytes.Buffer
			if err := p.WriteList(&b); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantList, b.String()); diff != "" {
				t.Errorf("render --list (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildProfileInEffect(t *testing.T) {
	tests := []struct {
		name        string
		flag        string
		cluster     map[string]string
		wantProfile string
		wantSource  profiles.Source
		wantErr     string
	}{
		{name: "default", wantProfile: profiles.Default, wantSource: profiles.SourceDefault},
		{name: "from the cluster", cluster: map[string]string{"profile": "hypershift"}, wantProfile: "hypershift", wantSource: profiles.SourceCluster},
		{name: "the flag wins", flag: "ibm-cloud-managed", cluster: map[string]string{"profile": "hypershift"}, wantProfile: "ibm-cloud-managed", wantSource: profiles.SourceFlag},
		{name: "unknown in the cluster", cluster: map[string]string{"profile": "crc"},
			wantErr: `ConfigMap openshift-config/cluster-profile: unknown profile "crc" (known: hypershift, ibm-cloud-managed, self-managed-high-availability, single-node-developer)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Build(context.Background(), Options{Profile: tc.flag, ClusterProfileData: tc.cluster})
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if err != nil {
				return
			}
			if p.Profile != tc.wantProfile || p.ProfileSource != tc.wantSource {
				t.Errorf("got %s from %s, want %s from %s", p.Profile, p.ProfileSource, tc.wantProfile, tc.wantSource)
			}
			cm := p.Generated[0].Obj
			if got, _, _ := unstructured.NestedString(cm.Object, "data", "profile"); got != tc.wantProfile {
				t.Errorf("cluster-profile ConfigMap says %q, want %q", got, tc.wantProfile)
			}
		})
	}
}

func TestValidateOverlays(t *testing.T) {
	profile := func(name, overlays string) string {
		return "apiVersion: payload-apply/v1alpha1\nkind: ClusterProfile\nmetadata:\n  name: " + name +
			"\nspec:\n  parent: single-node-developer\n  overlays:\n" + overlays
	}
	tests := []struct {
		name     string
		profiles map[string]string
		overlays map[string]string
		want     []string
	}{{
		name:     "crc",
		profiles: map[string]string{"crc.yaml": profile("crc", "  - name: crc\n")},
		overlays: map[string]string{
			"crc/kustomization.yaml": "patches:\n- patch: '[{\"op\": \"add\", \"path\": \"/metadata/labels\", \"value\": {\"crc\": \"yes\"}}]'\n  target: {kind: Deployment}\n",
		},
	}, {
		name:     "a patch for an object the profile does not include",
		profiles: map[string]string{"p.yaml": profile("p", "  - name: p\n")},
		overlays: map[string]string{
			"p/kustomization.yaml": "patches:\n- path: cvo.yaml\n",
			"p/cvo.yaml":           "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: nope, namespace: openshift-cluster-version}\nspec: {replicas: 3}\n",
		},
		// Once per problem, not once per feature set.
		want: []string{`dir/p/kustomization.yaml: error: profile p, feature set CustomNoUpgrade: kustomize build: no resource matches strategic merge patch "Deployment.v1.apps/nope.openshift-cluster-version"`},
	}, {
		name:     "an overlay reading outside its directory, and one no profile applies",
		profiles: map[string]string{"p.yaml": profile("p", "  - name: p\n")},
		overlays: map[string]string{
			"p/kustomization.yaml":        "resources: [../spare]\n",
			"spare/kustomization.yaml":    "resources: []\n",
			"nested/x/kustomization.yaml": "resources: []\n",
		},
		want: []string{
			`dir/nested/x/kustomization.yaml: warning: no profile applies this overlay`,
			`dir/p/kustomization.yaml: error: profile p, feature set CustomNoUpgrade: resources[0] "../spare": refers outside the overlay directory p: an overlay may only read files under its own directory`,
			`dir/spare/kustomization.yaml: warning: no profile applies this overlay`,
		},
	}, {
		name:     "an overlay that is nowhere",
		profiles: map[string]string{"p.yaml": profile("p", "  - name: gone\n")},
		want:     []string{`dir/p.yaml: error: profile p, feature set CustomNoUpgrade: profile p: overlay "gone": no gone/kustomization.yaml in embedded:overlays or dir`},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set, err := profiles.Embedded()
			if err != nil {
				t.Fatal(err)
			}
			if set, err = set.WithDir(mapFS(tc.profiles), "dir/"); err != nil {
				t.Fatal(err)
			}
			findings, err := Validate(context.Background(), Options{Profiles: set, ExtraOverlays: []overlay.Source{{FS: mapFS(tc.overlays), Label: "dir/"}}}, ValidateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range findings {
				got = append(got, f.String())
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got findings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("finding %d:\n got %s\nwant %s", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// TestValidateEmbedded: the reference payload, profiles and overlays are
// clean, every overlay built over every feature set's selection.
func TestValidateEmbedded(t *testing.T) {
	findings, err := Validate(context.Background(), Options{}, ValidateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		t.Errorf("%s", f)
	}
}

func mapFS(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, body := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(body)}
	}
	return fsys
}

// TestEmbeddedOverlaysOnAnotherPayload: the embedded overlays select what
// they patch with targets, so a payload without those objects (another
// release, a test payload) still renders for every reference profile.
func TestEmbeddedOverlaysOnAnotherPayload(t *testing.T) {
	fsys := fstest.MapFS{"manifests/0000_10_x_ns.yaml": &fstest.MapFile{Data: []byte(`apiVersion: v1
kind: Namespace
metadata:
  name: x
  annotations:
    include.release.openshift.io/hypershift: "true"
    include.release.openshift.io/ibm-cloud-managed: "true"
    include.release.openshift.io/self-managed-high-availability: "true"
    include.release.openshift.io/single-node-developer: "true"
`)}}
	for _, profile := range []string{"self-managed-high-availability", "single-node-developer", "ibm-cloud-managed", "hypershift"} {
		t.Run(profile, func(t *testing.T) {
			p, err := Build(context.Background(), Options{Payload: fsys, Profile: profile})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Objects) != 2 || len(p.OverlayChanges) != 0 {
				t.Errorf("got %d objects and %d overlay changes, want the namespace and the cluster-profile ConfigMap, unchanged", len(p.Objects), len(p.OverlayChanges))
			}
		})
	}
}

// stepHook adds one step placed at file, after the objects named after.
type stepHook struct {
	file  string
	after []manifest.ID
}

type testStep struct{}

func (testStep) Name() string { return "test/step" }
func (testStep) Run(context.Context, *component.Cluster) error {
	return nil
}

func (stepHook) Name() string { return "test" }
func (h stepHook) Render(context.Context, *component.Input) (*component.Output, error) {
	return &component.Output{Steps: []component.StepSpec{{Step: testStep{}, File: h.file, After: h.after}}}, nil
}

// TestBuildPlacesSteps checks that steps are tasks of the graph at their
// File, after their objects, and not objects: Objects and render --list
// leave them out.
func TestBuildPlacesSteps(t *testing.T) {
	profileCM := manifest.ID{Kind: "ConfigMap", Namespace: "openshift-config", Name: "cluster-profile"}
	hooks := append(DefaultHooks(Components{}), stepHook{file: "generated/0000_03_config-operator_99_zz.step", after: []manifest.ID{profileCM}})
	p, err := Build(context.Background(), Options{Hooks: hooks})
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, n := range p.Graph.Nodes {
		for _, task := range n.Tasks {
			if task.IsStep() {
				var after []string
				for _, a := range task.After {
					after = append(after, a.Describe())
				}
				level, component, _ := payload.ParseFileName(task.StepFile)
				steps = append(steps, fmt.Sprintf("%02d/%s %s after %v", level, component, task.Step.Name(), after))
			}
		}
	}
	want := []string{
		"03/config-operator test/step after [ConfigMap/openshift-config/cluster-profile]",
		"05/config-operator ingress/default-placement after [Ingress.config.openshift.io/cluster]",
	}
	if diff := cmp.Diff(want, steps); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if len(p.Objects) != len(p.Graph.Tasks)-2 {
		t.Errorf("%d objects for %d tasks with 2 steps", len(p.Objects), len(p.Graph.Tasks))
	}
	for _, m := range p.Objects {
		if m == nil {
			t.Fatal("a step is among the objects")
		}
	}
	var list bytes.Buffer
	if err := p.WriteList(&list); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(list.String(), ".step") || strings.Count(list.String(), "\n") != len(p.Objects) {
		t.Errorf("render --list lists steps:\n%s", list.String())
	}

	_, err = Build(context.Background(), Options{Hooks: []component.Hook{stepHook{file: "generated/0000_01_x_y.step", after: []manifest.ID{profileCM}}}})
	var soe *payload.StepOrderError
	if !errors.As(err, &soe) {
		t.Errorf("a step placed before its object: err = %v, want a StepOrderError", err)
	}
}

// TestValidateExtraManifests: validate checks --extra-manifests as render
// takes them: a broken file is an error at its file#doc, an invalid
// PerformanceProfile the node tuning component's error, a valid one nothing.
func TestValidateExtraManifests(t *testing.T) {
	valid, err := os.ReadFile("../components/nodetuning/testdata/profiles/minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	overlapping := regexp.MustCompile(`isolated: "[^"]*"`).ReplaceAllString(string(valid), `isolated: "0-3"`)
	overlapping = regexp.MustCompile(`reserved: "[^"]*"`).ReplaceAllString(overlapping, `reserved: "0-1"`)
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"valid profile", map[string]string{"pp.yaml": string(valid)}, nil},
		{"broken YAML", map[string]string{"broken.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: b\n"},
			[]string{"extra/broken.yaml#0: error: yaml: line 3: did not find expected ',' or '}'"}},
		{"invalid profile", map[string]string{"pp.yaml": overlapping},
			[]string{`payload: error: component nodetuning: extra/pp.yaml#0: PerformanceProfile/minimal: spec.cpu.isolated "0-3`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			findings, err := Validate(context.Background(), Options{ExtraManifests: mapFS(tc.files)}, ValidateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(findings) != len(tc.want) {
				t.Fatalf("findings %v, want %d", findings, len(tc.want))
			}
			for i, f := range findings {
				if !strings.HasPrefix(f.String(), tc.want[i]) {
					t.Errorf("finding %q, want it to start with %q", f, tc.want[i])
				}
			}
		})
	}
}

// TestOverrides: an unmanaged override excludes its object, as the CVO
// excludes it (library-go Include); a managed one, and one naming the
// object in another namespace, change nothing. Plan.Unmanaged and
// --explain name the object; --cluster-config's ClusterVersion gives the
// overrides when the options give none.
func TestOverrides(t *testing.T) {
	base, err := Build(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var target *manifest.Manifest
	for _, m := range base.Objects {
		if m.GVK.Kind == "Deployment" {
			target = m
			break
		}
	}
	id := target.ID()
	override := func(ns string, unmanaged bool) configv1.ComponentOverride {
		return configv1.ComponentOverride{Group: id.Group, Kind: id.Kind, Namespace: ns, Name: id.Name, Unmanaged: unmanaged}
	}
	cv := &configv1.ClusterVersion{Spec: configv1.ClusterVersionSpec{Overrides: []configv1.ComponentOverride{override(id.Namespace, true)}}}
	cases := []struct {
		name      string
		opts      Options
		unmanaged bool
	}{
		{name: "unmanaged", opts: Options{Overrides: []configv1.ComponentOverride{override(id.Namespace, true)}}, unmanaged: true},
		{name: "managed", opts: Options{Overrides: []configv1.ComponentOverride{override(id.Namespace, false)}}},
		{name: "another namespace", opts: Options{Overrides: []configv1.ComponentOverride{override("elsewhere", true)}}},
		{name: "from --cluster-config", opts: Options{ClusterConfig: &component.ClusterConfig{Infrastructure: &configv1.Infrastructure{}, ClusterVersion: cv}}, unmanaged: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Build(context.Background(), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			included := false
			for _, m := range p.Objects {
				included = included || m.ID() == id
			}
			var unmanaged []manifest.ID
			for _, m := range p.Unmanaged() {
				unmanaged = append(unmanaged, m.ID())
			}
			var explain bytes.Buffer
			if err := p.WriteExplain(&explain); err != nil {
				t.Fatal(err)
			}
			line := fmt.Sprintf("unmanaged\t%s\t%s\tClusterVersion spec.overrides: unmanaged: true; left as it is\n", target.Position(), id)
			if tc.unmanaged {
				if included || len(unmanaged) != 1 || unmanaged[0] != id || !strings.Contains(explain.String(), line) || len(p.Objects) != len(base.Objects)-1 {
					t.Errorf("included %v, unmanaged %v, %d of %d objects, explain has the line: %v", included, unmanaged, len(p.Objects), len(base.Objects), strings.Contains(explain.String(), line))
				}
				return
			}
			if !included || len(unmanaged) != 0 || len(p.Objects) != len(base.Objects) {
				t.Errorf("included %v, unmanaged %v, %d of %d objects", included, unmanaged, len(p.Objects), len(base.Objects))
			}
		})
	}
}
