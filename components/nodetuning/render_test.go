package nodetuning_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/payload-apply/payload-apply/components/nodetuning"
	"github.com/payload-apply/payload-apply/internal/golden"
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

// TestRenderGolden renders each profile of testdata/profiles standalone: the
// four objects, and the MachineConfig's files decoded.
func TestRenderGolden(t *testing.T) {
	for _, name := range []string{"manual", "minimal", "power"} {
		t.Run(name, func(t *testing.T) {
			out := renderStandalone(t, "testdata/profiles/"+name+".yaml")
			golden.AssertTestdata(t, "objects.yaml", yamlStream(t, out.Add))
			golden.AssertTestdata(t, "files.txt", ignitionFiles(t, out.Add))
		})
	}
}

// TestRenderManual checks the key fields of NTO's "manual" example one by
// one, beside the golden file.
func TestRenderManual(t *testing.T) {
	out := renderStandalone(t, "testdata/profiles/manual.yaml")
	var kinds []string
	byKind := map[string]*unstructured.Unstructured{}
	for _, m := range out.Add {
		kinds = append(kinds, m.GVK.Kind)
		byKind[m.GVK.Kind] = m.Obj
		if m.File != "generated/0000_81_cluster-node-tuning-operator_50-performance-manual.yaml" {
			t.Errorf("%s: File = %s", m.ID(), m.File)
		}
	}
	if diff := cmp.Diff([]string{"MachineConfig", "KubeletConfig", "Tuned", "RuntimeClass"}, kinds); diff != "" {
		t.Fatalf("kinds (-want +got):\n%s", diff)
	}
	str := func(kind string, fields ...string) string {
		s, _, _ := unstructured.NestedString(byKind[kind].Object, fields...)
		return s
	}

	mc := byKind["MachineConfig"]
	if mc.GetName() != "50-performance-manual" || mc.GetLabels()["machineconfiguration.openshift.io/role"] != "worker-cnf" {
		t.Errorf("MachineConfig name %s, labels %v", mc.GetName(), mc.GetLabels())
	}
	if got := str("MachineConfig", "spec", "kernelType"); got != "realtime" {
		t.Errorf("kernelType = %q, want realtime", got)
	}
	args, _, _ := unstructured.NestedStringSlice(mc.Object, "spec", "kernelArguments")
	for _, want := range []string{"default_hugepagesz=1G", "hugepagesz=2M", "hugepages=128", "isolcpus=managed_irq,1", "nohz_full=1", "rcu_nocbs=1", "systemd.cpu_affinity=0"} {
		if !slices.Contains(args, want) {
			t.Errorf("kernelArguments %v lack %s", args, want)
		}
	}
	if slices.Contains(args, "hugepagesz=1G") {
		t.Errorf("kernelArguments %v allocate the NUMA-pinned 1G page on the command line", args)
	}
	units, _, _ := unstructured.NestedSlice(mc.Object, "spec", "config", "systemd", "units")
	unitText := map[string]string{}
	for _, u := range units {
		u := u.(map[string]any)
		unitText[u["name"].(string)] = u["contents"].(string)
	}
	if text := unitText["hugepages-allocation-1048576kB-NUMA0.service"]; !strings.Contains(text, "HUGEPAGES_COUNT=1\n") || !strings.Contains(text, "NUMA_NODE=0\n") {
		t.Errorf("no unit allocating one 1G page on NUMA node 0; units: %v", unitText)
	}
	if text := unitText["set-cpus-offline.service"]; !strings.Contains(text, "OFFLINE_CPUS=2,3\n") {
		t.Errorf("no unit taking CPUs 2,3 offline; units: %v", unitText)
	}

	kc := byKind["KubeletConfig"]
	if kc.GetName() != "performance-manual" {
		t.Errorf("KubeletConfig name %s", kc.GetName())
	}
	for field, want := range map[string]string{
		"cpuManagerPolicy":      "static",
		"reservedSystemCPUs":    "0",
		"topologyManagerPolicy": "single-numa-node",
		"memoryManagerPolicy":   "Static",
	} {
		if got := str("KubeletConfig", "spec", "kubeletConfig", field); got != want {
			t.Errorf("kubeletConfig.%s = %q, want %q", field, got, want)
		}
	}
	if got := str("KubeletConfig", "spec", "machineConfigPoolSelector", "matchLabels", "machineconfiguration.openshift.io/role"); got != "worker-cnf" {
		t.Errorf("machineConfigPoolSelector role = %q", got)
	}
	reserved, _, _ := unstructured.NestedSlice(kc.Object, "spec", "kubeletConfig", "reservedMemory")
	if diff := cmp.Diff([]any{map[string]any{"numaNode": int64(0), "limits": map[string]any{"memory": "1100Mi"}}}, reserved); diff != "" {
		t.Errorf("reservedMemory (-want +got):\n%s", diff)
	}

	tu := byKind["Tuned"]
	if tu.GetName() != "openshift-node-performance-manual" || tu.GetNamespace() != "openshift-cluster-node-tuning-operator" {
		t.Errorf("Tuned %s/%s", tu.GetNamespace(), tu.GetName())
	}

	rc := byKind["RuntimeClass"]
	if rc.GetName() != "performance-manual" || str("RuntimeClass", "handler") != "high-performance" {
		t.Errorf("RuntimeClass %s handler %q", rc.GetName(), str("RuntimeClass", "handler"))
	}
	sel, _, _ := unstructured.NestedStringMap(rc.Object, "scheduling", "nodeSelector")
	if diff := cmp.Diff(map[string]string{"node-role.kubernetes.io/worker-cnf": ""}, sel); diff != "" {
		t.Errorf("RuntimeClass nodeSelector (-want +got):\n%s", diff)
	}
}

// TestRenderDeterministic renders the same profile twice.
func TestRenderDeterministic(t *testing.T) {
	a := yamlStream(t, renderStandalone(t, "testdata/profiles/power.yaml").Add)
	b := yamlStream(t, renderStandalone(t, "testdata/profiles/power.yaml").Add)
	if a != b {
		t.Error("two renders of one profile differ")
	}
}

// TestRenderKeepsProfiles: the profiles are admin intent and stay in the
// plan; the hook removes nothing.
func TestRenderKeepsProfiles(t *testing.T) {
	out := renderStandalone(t, "testdata/profiles/manual.yaml")
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
