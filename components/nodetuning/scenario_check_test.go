package nodetuning_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/payload-apply/payload-apply/internal/ntoequiv"
)

// profileWant is what one profile must render to, object by object.
type profileWant struct {
	// name is the profile's name.
	name string
	// nodeRole is the role of the node selector (RuntimeClass scheduling).
	nodeRole string
	// mcLabels are the MachineConfig's labels without the profile label;
	// the Tuned recommends the profile for them.
	mcLabels map[string]string
	// kernelType is the MachineConfig's kernel.
	kernelType string
	// files are the MachineConfig's files, in order, by path.
	files []string
	// units are its units, in order; enabled all but the template unit.
	units []string
	// fileHas are lines some files (or units, by name) must hold, and
	// fileLacks lines they must not.
	fileHas, fileLacks map[string][]string
	// poolSelector is the KubeletConfig's machineConfigPoolSelector.
	poolSelector map[string]string
	// kubelet are fields of the kubelet configuration (JSON values).
	kubelet map[string]any
	// kubeletAbsent are kubelet fields that must not be set.
	kubeletAbsent []string
	// cmdline is the kernel command line TuneD composes, by host.
	cmdline map[string]string
	// tuned are effective options on the Intel realtime host,
	// "section.key" -> value; absent: the option must not be set.
	tuned map[string]string
	// absent are effective options that must not be set there.
	absent []string
}

// baseFiles are the files of every profile's MachineConfig without RPS,
// workload partitioning, OVS-DPDK CPUs and mixed CPUs.
var baseFiles = []string{
	"/usr/local/bin/hugepages-allocation.sh", "/usr/local/bin/set-cpus-offline.sh", "/usr/local/bin/clear-irqbalance-banned-cpus.sh",
	"/etc/crio/crio.conf.d/99-runtimes.conf", "/usr/local/bin/cpuset-configure.sh",
	"/etc/systemd/system/ovs.slice", "/etc/systemd/system/openvswitch.service.d/01-use-ovs-slice.conf",
	"/etc/systemd/system/ovsdb-server.service.d/01-use-ovs-slice.conf", "/etc/systemd/system/ovs-vswitchd.service.d/01-use-ovs-slice.conf",
	"/var/lib/ovn-ic/etc/enable_dynamic_cpu_affinity", "/etc/sysconfig/stalld-backend", "/etc/systemd/system/stalld.service.d/stalld-backend.conf",
}

// pinnedFiles are baseFiles with the workload partitioning files, which
// come right after CRI-O's runtime handler.
var pinnedFiles = slices.Concat(baseFiles[:4], []string{"/etc/crio/crio.conf.d/99-workload-pinning.conf", "/etc/kubernetes/openshift-workload-pinning"}, baseFiles[4:])

// checkProfile asserts a profile's four objects.
func checkProfile(t *testing.T, objs map[string]*unstructured.Unstructured, w profileWant) {
	t.Helper()
	mc := objs["MachineConfig/50-performance-"+w.name]
	kc := objs["KubeletConfig/performance-"+w.name]
	tu := objs["Tuned/openshift-node-performance-"+w.name]
	rc := objs["RuntimeClass/performance-"+w.name]
	if mc == nil || kc == nil || tu == nil || rc == nil {
		t.Fatalf("%s: objects missing", w.name)
	}
	ownerLabel := map[string]string{"performance.openshift.io/weak-owner-reference-name": w.name}
	for _, o := range []*unstructured.Unstructured{kc, tu, rc} {
		if diff := cmp.Diff(ownerLabel, o.GetLabels()); diff != "" {
			t.Errorf("%s/%s labels (-want +got):\n%s", o.GetKind(), o.GetName(), diff)
		}
	}

	// MachineConfig.
	labels := map[string]string{"performance.openshift.io/weak-owner-reference-name": w.name}
	for k, v := range w.mcLabels {
		labels[k] = v
	}
	if diff := cmp.Diff(labels, mc.GetLabels()); diff != "" {
		t.Errorf("MachineConfig labels (-want +got):\n%s", diff)
	}
	if got, _, _ := unstructured.NestedString(mc.Object, "spec", "kernelType"); got != w.kernelType {
		t.Errorf("kernelType %q, want %q", got, w.kernelType)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(mc.Object, "spec", "kernelArguments"); found {
		t.Error("MachineConfig has kernelArguments: they belong to the Tuned's [bootloader]")
	}
	files, paths, units, names := machineConfigContent(t, mc)
	if diff := cmp.Diff(w.files, paths); diff != "" {
		t.Errorf("MachineConfig files (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(w.units, names); diff != "" {
		t.Errorf("MachineConfig units (-want +got):\n%s", diff)
	}
	for _, p := range paths {
		want := int64(0o644)
		if strings.HasSuffix(p, ".sh") {
			want = 0o700
		}
		if files[p].mode != want {
			t.Errorf("%s: mode %o, want %o", p, files[p].mode, want)
		}
	}
	for n, u := range units {
		if u.enabled != !strings.HasSuffix(n, "@.service") {
			t.Errorf("unit %s: enabled %t", n, u.enabled)
		}
	}
	content := func(p string) []string {
		if u, ok := units[p]; ok {
			return strings.Split(u.text, "\n")
		}
		f, ok := files[p]
		if !ok {
			t.Errorf("no file or unit %s", p)
		}
		return strings.Split(f.text, "\n")
	}
	for p, lines := range w.fileHas {
		for _, l := range lines {
			if !slices.Contains(content(p), l) {
				t.Errorf("%s lacks the line %q:\n%s", p, l, strings.Join(content(p), "\n"))
			}
		}
	}
	for p, lines := range w.fileLacks {
		for _, l := range lines {
			if slices.Contains(content(p), l) {
				t.Errorf("%s has the line %q", p, l)
			}
		}
	}

	// KubeletConfig.
	sel, _, _ := unstructured.NestedStringMap(kc.Object, "spec", "machineConfigPoolSelector", "matchLabels")
	if diff := cmp.Diff(w.poolSelector, sel); diff != "" {
		t.Errorf("KubeletConfig pool selector (-want +got):\n%s", diff)
	}
	config, _, _ := unstructured.NestedMap(kc.Object, "spec", "kubeletConfig")
	for field, want := range w.kubelet {
		if diff := cmp.Diff(jsonOf(t, want), jsonOf(t, config[field])); diff != "" {
			t.Errorf("kubeletConfig.%s (-want +got):\n%s", field, diff)
		}
	}
	for _, field := range w.kubeletAbsent {
		if v, ok := config[field]; ok && v != nil && v != "" {
			t.Errorf("kubeletConfig.%s = %v, want it unset", field, v)
		}
	}

	// Tuned.
	if tu.GetNamespace() != "openshift-cluster-node-tuning-operator" {
		t.Errorf("Tuned namespace %s", tu.GetNamespace())
	}
	rec, _, _ := unstructured.NestedSlice(tu.Object, "spec", "recommend")
	wantRec := []any{map[string]any{"profile": "openshift-node-performance-" + w.name, "priority": int64(20), "machineConfigLabels": anyMap(w.mcLabels)}}
	if diff := cmp.Diff(wantRec, rec); diff != "" {
		t.Errorf("Tuned recommend (-want +got):\n%s", diff)
	}
	profiles, err := ntoequiv.TunedProfiles(tu.Object)
	if err != nil {
		t.Fatal(err)
	}
	var pnames []string
	for n := range profiles {
		pnames = append(pnames, n)
	}
	slices.Sort(pnames)
	wantNames := []string{"amd-x86-", "arm-aarch64-", "", "intel-x86-", "rt-"}
	for i, p := range wantNames {
		wantNames[i] = "openshift-node-performance-" + p + w.name
	}
	slices.Sort(wantNames)
	if diff := cmp.Diff(wantNames, pnames); diff != "" {
		t.Errorf("TuneD profiles (-want +got):\n%s", diff)
	}
	for host, want := range w.cmdline {
		r := resolveTuned(t, tu, hostNamed(t, host))
		if diff := cmp.Diff([]string{"openshift-node", "cpu-partitioning"}, r.External); diff != "" {
			t.Errorf("%s: includes (-want +got):\n%s", host, diff)
		}
		if got := ntoequiv.Cmdline(r); got != want {
			t.Errorf("%s: kernel command line\n got %s\nwant %s", host, got, want)
		}
	}
	r := resolveTuned(t, tu, hostNamed(t, "intel-rt"))
	for key, want := range w.tuned {
		section, option, _ := strings.Cut(key, ".")
		if got, ok := r.Merged.Get(section, option); !ok || got != want {
			t.Errorf("[%s] %s = %q (set %t), want %q", section, option, got, ok, want)
		}
	}
	for _, key := range w.absent {
		section, option, _ := strings.Cut(key, ".")
		if got, ok := r.Merged.Get(section, option); ok {
			t.Errorf("[%s] %s = %q, want it unset", section, option, got)
		}
	}

	// RuntimeClass.
	if h, _, _ := unstructured.NestedString(rc.Object, "handler"); h != "high-performance" {
		t.Errorf("RuntimeClass handler %q", h)
	}
	ns, _, _ := unstructured.NestedStringMap(rc.Object, "scheduling", "nodeSelector")
	if diff := cmp.Diff(map[string]string{"node-role.kubernetes.io/" + w.nodeRole: ""}, ns); diff != "" {
		t.Errorf("RuntimeClass nodeSelector (-want +got):\n%s", diff)
	}
}

// checkPinning asserts the bootstrap workload partitioning MachineConfig of
// a pool: the kubelet's and CRI-O's management files with an empty CPU set,
// byte for byte as the formats write them.
func checkPinning(t *testing.T, objs map[string]*unstructured.Unstructured, pool string) {
	t.Helper()
	mc := objs["MachineConfig/01-"+pool+"-cpu-partitioning"]
	if mc == nil {
		t.Fatalf("no pinning MachineConfig for pool %s", pool)
	}
	if diff := cmp.Diff(map[string]string{"machineconfiguration.openshift.io/role": pool}, mc.GetLabels()); diff != "" {
		t.Errorf("%s labels (-want +got):\n%s", mc.GetName(), diff)
	}
	files, paths, _, units := machineConfigContent(t, mc)
	want := map[string]string{
		"/etc/kubernetes/openshift-workload-pinning":             "\n{\n  \"management\": {\n    \"cpuset\": \"\"\n  }\n}\n",
		"/etc/crio/crio.conf.d/01-workload-pinning-default.conf": "\n[crio.runtime.workloads.management]\nactivation_annotation = \"target.workload.openshift.io/management\"\nannotation_prefix = \"resources.workload.openshift.io\"\nresources = { \"cpushares\" = 0, \"cpuset\" = \"\" }\n",
	}
	if diff := cmp.Diff([]string{"/etc/kubernetes/openshift-workload-pinning", "/etc/crio/crio.conf.d/01-workload-pinning-default.conf"}, paths); diff != "" {
		t.Errorf("%s files (-want +got):\n%s", mc.GetName(), diff)
	}
	for p, text := range want {
		if files[p].text != text || files[p].mode != 0o644 {
			t.Errorf("%s: %s = %q (mode %o), want %q", mc.GetName(), p, files[p].text, files[p].mode, text)
		}
	}
	if len(units) != 0 {
		t.Errorf("%s units %v", mc.GetName(), units)
	}
}

func jsonOf(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func anyMap(m map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}
