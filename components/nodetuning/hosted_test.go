package nodetuning_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/payload-apply/payload-apply/components/nodetuning"
	"github.com/payload-apply/payload-apply/internal/golden"
	"github.com/payload-apply/payload-apply/lib/component"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/plan"
)

// renderHosted runs the hook for a hosted control plane.
func renderHosted(t *testing.T, naming string, extra []*manifest.Manifest) *component.Output {
	t.Helper()
	in := &component.Input{Extra: extra, HostedControlPlane: true}
	out, err := nodetuning.Hook{Naming: nodetuning.Naming(naming)}.Render(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestHostedGolden renders the source ConfigMap of testdata/hosted in both
// naming modes: the step's placement and the ConfigMaps and RuntimeClass it
// writes, as render shows them.
func TestHostedGolden(t *testing.T) {
	for _, naming := range []string{"seed", "upstream"} {
		t.Run(naming, func(t *testing.T) {
			out := renderHosted(t, naming, readManifests(t, "testdata/hosted/pp-config.yaml"))
			if len(out.Add) != 0 || len(out.Remove) != 0 || len(out.Steps) != 1 {
				t.Fatalf("Add %d, Remove %d, Steps %d: want one step and nothing else", len(out.Add), len(out.Remove), len(out.Steps))
			}
			s := out.Steps[0]
			golden.AssertTestdata(t, "step.txt", fmt.Sprintf("name: %s\nfile: %s\nafter: %v\n", s.Step.Name(), s.File, s.After))
			golden.AssertTestdata(t, "preview.yaml", yamlStream(t, s.Preview))
		})
	}
}

// TestHostedNaming checks the names, labels, annotations and data keys of
// both modes against the seed's static diagram and the upstream operator.
func TestHostedNaming(t *testing.T) {
	type cm struct {
		Name        string
		Key         string
		Labels      map[string]string
		Annotations map[string]string
	}
	common := func(extra ...string) map[string]string {
		l := map[string]string{
			"hypershift.openshift.io/performanceProfileName": "manual",
			"hypershift.openshift.io/nodePool":               "nodepool1",
		}
		for _, k := range extra {
			l[k] = "true"
		}
		return l
	}
	ann := map[string]string{"hypershift.openshift.io/nodePool": "clusters/nodepool1"}
	want := map[string][]cm{
		"seed": {
			{"tuned-manual", "tuned", common("hypershift.openshift.io/tuned-config"), ann},
			{"mc-manual", "config", common("hypershift.openshift.io/nto-generated-machine-config"), ann},
			{"kc-manual", "config", common("hypershift.openshift.io/nto-generated-kubelet-config"), ann},
			{"manual-status", "status", common("hypershift.openshift.io/nto-generated-performance-profile-status"), ann},
		},
		"upstream": {
			{"tuned-pp-config-nodepool1", "tuning", common("hypershift.openshift.io/tuned-config"), ann},
			{"machineconfig-pp-config-nodepool1", "config", common("hypershift.openshift.io/nto-generated-machine-config"), ann},
			{"kubeletconfig-pp-config-nodepool1", "config", common("hypershift.openshift.io/nto-generated-machine-config", "hypershift.openshift.io/kubeletconfig-config"), ann},
			{"status-pp-config-nodepool1", "status", common("hypershift.openshift.io/nto-generated-performance-profile-status"), ann},
		},
	}
	for naming, want := range want {
		t.Run(naming, func(t *testing.T) {
			out := renderHosted(t, naming, readManifests(t, "testdata/hosted/pp-config.yaml"))
			var got []cm
			for _, m := range out.Steps[0].Preview {
				if m.GVK.Kind != "ConfigMap" {
					if m.GVK.Kind != "RuntimeClass" || m.Obj.GetName() != "performance-manual" {
						t.Errorf("unexpected %s", m.ID())
					}
					continue
				}
				data := m.Obj.Object["data"].(map[string]any)
				if len(data) != 1 {
					t.Errorf("%s: data keys %v, want one", m.ID(), data)
				}
				var key string
				for k := range data {
					key = k
				}
				got = append(got, cm{m.Obj.GetName(), key, m.Obj.GetLabels(), m.Obj.GetAnnotations()})
				refs := m.Obj.GetOwnerReferences()
				if len(refs) != 1 || refs[0].Kind != "ConfigMap" || refs[0].Name != "pp-config-nodepool1" || refs[0].UID != "" ||
					refs[0].Controller == nil || !*refs[0].Controller {
					t.Errorf("%s: owner references %+v: want the source ConfigMap as controller, uid left out", m.ID(), refs)
				}
				if m.Obj.GetNamespace() != "clusters-hosted" {
					t.Errorf("%s: not in the source's namespace", m.ID())
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestHostedSourceKeys: the profile may come under tuning, tuned or config,
// and the NodePool label may be left out (the annotation names it).
func TestHostedSourceKeys(t *testing.T) {
	base, err := os.ReadFile("testdata/hosted/pp-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range nodetuning.SourceKeys() {
		t.Run(key, func(t *testing.T) {
			text := strings.Replace(string(base), "  tuning: |", "  "+key+": |", 1)
			text = strings.Replace(text, "    hypershift.openshift.io/nodePool: nodepool1\n", "", 1)
			ms, err := manifest.Parse("extra/pp-config.yaml", []byte(text), manifest.ParseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			out := renderHosted(t, "seed", []*manifest.Manifest{&ms[0]})
			if got := out.Steps[0].Preview[0].Obj.GetLabels()[nodetuning.LabelNodePool]; got != "nodepool1" {
				t.Errorf("nodePool label %q, want the name from the annotation", got)
			}
		})
	}
}

// TestHostedFindings: a bare PerformanceProfile on a hosted control plane,
// and a source ConfigMap on a standalone one, are applied as they are, with
// a warning.
func TestHostedFindings(t *testing.T) {
	hosted := renderHosted(t, "seed", readManifests(t, "testdata/profiles/minimal.yaml"))
	standalone := renderStandalone(t, "testdata/hosted/pp-config.yaml")
	var got []string
	for _, f := range append(hosted.Findings, standalone.Findings...) {
		got = append(got, f.String())
	}
	want := []string{
		"extra/minimal.yaml#0: warning: PerformanceProfile/minimal: a hosted control plane takes PerformanceProfiles from ConfigMaps labelled hypershift.openshift.io/performanceprofile-config=true: this one is applied as it is and not rendered",
		"extra/pp-config.yaml#0: warning: ConfigMap/clusters-hosted/pp-config-nodepool1: labelled hypershift.openshift.io/performanceprofile-config=true, but the profile is not a hosted control plane: applied as it is, its PerformanceProfile is not rendered",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if len(hosted.Add)+len(hosted.Steps)+len(standalone.Add)+len(standalone.Steps) != 0 {
		t.Error("rendered something")
	}
}

// TestPlan runs the hook inside plan.Build with the embedded payload: the
// standalone objects land after their CRDs; the hosted outputs are only
// previews, never plan objects, and the step comes after its source.
func TestPlan(t *testing.T) {
	read := func(path string) *fstest.MapFile {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return &fstest.MapFile{Data: data}
	}
	index := func(ms []*manifest.Manifest) map[string]int {
		idx := map[string]int{}
		for i, m := range ms {
			idx[m.GVK.Kind+"/"+m.Obj.GetName()] = i
		}
		return idx
	}

	t.Run("standalone", func(t *testing.T) {
		p, err := plan.Build(context.Background(), plan.Options{ExtraManifests: fstest.MapFS{
			"pool.yaml": read("testdata/scenarios/default/extra/pool.yaml"),
			"pp.yaml":   read("testdata/scenarios/default/extra/profile.yaml"),
		}})
		if err != nil {
			t.Fatal(err)
		}
		idx := index(p.Objects)
		for _, pair := range [][2]string{
			{"CustomResourceDefinition/machineconfigs.machineconfiguration.openshift.io", "MachineConfig/50-performance-manual"},
			{"CustomResourceDefinition/kubeletconfigs.machineconfiguration.openshift.io", "KubeletConfig/performance-manual"},
			{"CustomResourceDefinition/tuneds.tuned.openshift.io", "Tuned/openshift-node-performance-manual"},
			{"Namespace/openshift-cluster-node-tuning-operator", "Tuned/openshift-node-performance-manual"},
		} {
			before, okB := idx[pair[0]]
			after, okA := idx[pair[1]]
			if !okB || !okA || before >= after {
				t.Errorf("%s (%d, %v) must come before %s (%d, %v)", pair[0], before, okB, pair[1], after, okA)
			}
		}
		if _, ok := idx["PerformanceProfile/manual"]; !ok {
			t.Error("the PerformanceProfile left the plan")
		}
		steps := 0
		for _, s := range p.Steps {
			if strings.HasPrefix(s.Step.Name(), "nodetuning") {
				steps++
			}
		}
		if steps != 0 || len(p.Rendered()) != len(p.Objects) {
			t.Errorf("%d node tuning steps, %d rendered of %d objects", steps, len(p.Rendered()), len(p.Objects))
		}
		for _, f := range p.Findings {
			if strings.Contains(f.Message, "nodetuning") || strings.Contains(f.Message, "no CRD") {
				t.Errorf("finding: %s", f)
			}
		}
	})

	t.Run("hosted", func(t *testing.T) {
		p, err := plan.Build(context.Background(), plan.Options{Profile: "hypershift", Components: plan.Components{HyperShiftNaming: nodetuning.NamingSeed},
			ExtraManifests: fstest.MapFS{"pp-config.yaml": read("testdata/hosted/pp-config.yaml")}})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := index(p.Objects)["ConfigMap/tuned-manual"]; ok {
			t.Error("the embedded ConfigMaps are plan objects: the apply engine would apply them")
		}
		rendered := index(p.Rendered())
		source, ok := rendered["ConfigMap/pp-config-nodepool1"]
		if !ok {
			t.Fatal("the source ConfigMap is not rendered")
		}
		for _, name := range []string{"ConfigMap/tuned-manual", "ConfigMap/mc-manual", "ConfigMap/kc-manual", "ConfigMap/manual-status", "RuntimeClass/performance-manual"} {
			if i, ok := rendered[name]; !ok || i <= source {
				t.Errorf("%s rendered at %d (%v), want after the source at %d", name, i, ok, source)
			}
		}
		if len(p.Steps) != 1 {
			t.Fatalf("%d steps, want 1", len(p.Steps))
		}
		want := manifest.ID{Kind: "ConfigMap", Namespace: "clusters-hosted", Name: "pp-config-nodepool1"}
		if diff := cmp.Diff([]manifest.ID{want}, p.Steps[0].After); diff != "" {
			t.Errorf("After (-want +got):\n%s", diff)
		}
	})
}
