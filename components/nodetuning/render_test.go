package nodetuning_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/payload-apply/payload-apply/components/nodetuning"
	"github.com/payload-apply/payload-apply/lib/component"
)

// renderStandalone runs the hook on the profiles of a testdata file.
func renderStandalone(t *testing.T, path string) *component.Output {
	t.Helper()
	out, err := nodetuning.Hook{}.Render(context.Background(), &component.Input{Extra: readManifests(t, path)})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRenderDeterministic renders the same scenario twice.
func TestRenderDeterministic(t *testing.T) {
	a := yamlStream(t, renderScenario(t, "everything", nodetuning.FeatureGateMixedCPUs).Add)
	b := yamlStream(t, renderScenario(t, "everything", nodetuning.FeatureGateMixedCPUs).Add)
	if a != b {
		t.Error("two renders of one scenario differ")
	}
}

// TestRenderKeepsProfiles: the profiles are admin intent and stay in the
// plan; the hook removes nothing.
func TestRenderKeepsProfiles(t *testing.T) {
	out := renderScenario(t, "default")
	if len(out.Remove) != 0 || len(out.Steps) != 0 {
		t.Errorf("Remove %v, Steps %v: want none", out.Remove, out.Steps)
	}
}

// TestRenderMissingCRDs warns when the plan cannot create the kinds it
// renders (here: no payload objects at all).
func TestRenderMissingCRDs(t *testing.T) {
	out := renderStandalone(t, "testdata/profiles/minimal.yaml")
	var got []string
	for _, f := range out.Findings {
		got = append(got, f.String())
	}
	want := []string{
		"extra/minimal.yaml#0: warning: PerformanceProfile/minimal: the plan has no CRD for machineconfiguration.openshift.io/MachineConfig, so the rendered object of that kind cannot be applied",
		"extra/minimal.yaml#0: warning: PerformanceProfile/minimal: the plan has no CRD for machineconfiguration.openshift.io/KubeletConfig, so the rendered object of that kind cannot be applied",
		"extra/minimal.yaml#0: warning: PerformanceProfile/minimal: the plan has no CRD for tuned.openshift.io/Tuned, so the rendered object of that kind cannot be applied",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}
