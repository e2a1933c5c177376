package nodetuning

import (
	"fmt"
	"strings"
)

// Paths on the node.
const (
	scriptDir             = "/usr/local/bin"
	hugepagesScript       = "hugepages-allocation.sh"
	offlineScript         = "set-cpus-offline.sh"
	clearIRQBalanceScript = "clear-irqbalance-banned-cpus.sh"
	rpsScript             = "set-rps-mask.sh"
	cpusetScript          = "cpuset-configure.sh"
	ovsDpdkScriptName     = "ovs-dpdk-cpus-configure.sh"

	crioRuntimesConfig        = "/etc/crio/crio.conf.d/99-runtimes.conf"
	crioPinningConfig         = "/etc/crio/crio.conf.d/99-workload-pinning.conf"
	crioDefaultPinningConfig  = "/etc/crio/crio.conf.d/01-workload-pinning-default.conf"
	kubeletPinningConfig      = "/etc/kubernetes/openshift-workload-pinning"
	kubeletMixedCPUsConfig    = "/etc/kubernetes/openshift-workload-mixed-cpus"
	rpsSysctlConfig           = "/etc/sysctl.d/99-default-rps-mask.conf"
	rpsUdevRules              = "/etc/udev/rules.d/99-netdev-physical-rps.rules"
	ovsSlice                  = "ovs.slice"
	ovsSliceDropIn            = "01-use-ovs-slice.conf"
	ovnDynamicAffinityMarker  = "/var/lib/ovn-ic/etc/enable_dynamic_cpu_affinity"
	stalldSysconfig           = "/etc/sysconfig/stalld-backend"
	stalldDropIn              = "/etc/systemd/system/stalld.service.d/stalld-backend.conf"
	unitTunedOneShot          = "ocp-tuned-one-shot.service"
	mixedCPUsContainersLimit  = 256
	crioMinInjectedGOMAXPROCS = 4
)

// crioAnnotations are the pod annotations the high-performance runtime
// handler honours.
var crioAnnotations = []string{"cpu-load-balancing.crio.io", "cpu-quota.crio.io", "irq-load-balancing.crio.io", "cpu-c-states.crio.io", "cpu-freq-governor.crio.io"}

// crioConfig is the CRI-O drop-in that defines the runtime handler the
// RuntimeClass uses: the default runtime with the annotations through which
// pods ask for per-pod tuning, exec'd processes on the container's first
// CPU (unless the profile's annotation disables it), infrastructure
// containers on the reserved CPUs (reserved is the profile's text, as
// written) and, with mixed CPUs, the shared CPUs.
func crioConfig(pp *PerformanceProfile, mixed bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# CRI-O runtime handler %q of RuntimeClass %s, from PerformanceProfile %s.\n", RuntimeHandler, RuntimeClassName(pp.Name), pp.Name)
	b.WriteString("[crio.runtime]\n")
	fmt.Fprintf(&b, "infra_ctr_cpuset = %q\n", pp.Spec.CPU.Reserved)
	if mixed {
		fmt.Fprintf(&b, "shared_cpuset = %q\n", pp.Spec.CPU.Shared)
	}
	fmt.Fprintf(&b, "min_injected_gomaxprocs = %d\n", crioMinInjectedGOMAXPROCS)
	b.WriteString("\n# Pods of the RuntimeClass get the runtime's hooks for these annotations.\n")
	fmt.Fprintf(&b, "[crio.runtime.runtimes.%s]\n", RuntimeHandler)
	b.WriteString("inherit_default_runtime = true\n")
	if pp.Annotations[AnnotationExecCPUAffinity] != "disable" {
		b.WriteString("exec_cpu_affinity = \"first\"\n")
	}
	b.WriteString("default_annotations = {\"run.oci.systemd.subgroup\" = \"\"}\n")
	annotations := crioAnnotations
	if mixed {
		annotations = append(annotations[:len(annotations):len(annotations)], "cpu-shared.crio.io")
	}
	quoted := make([]string, len(annotations))
	for i, a := range annotations {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	fmt.Fprintf(&b, "allowed_annotations = [%s]\n", strings.Join(quoted, ", "))
	return b.String()
}

// The workload partitioning files pin the management workloads
// (target.workload.openshift.io/management) to a CPU set: the kubelet's
// and CRI-O's. Their bytes are the formats' own, as the installer and the
// node tuning operator write them, so that the files of a bootstrap render
// and of the running operator do not differ.

// kubeletPinning is /etc/kubernetes/openshift-workload-pinning for cpus.
func kubeletPinning(cpus string) string {
	return fmt.Sprintf("\n{\n  \"management\": {\n    \"cpuset\": %q\n  }\n}\n", cpus)
}

// crioPinning is CRI-O's management workload drop-in for cpus.
func crioPinning(cpus string) string {
	return fmt.Sprintf("\n[crio.runtime.workloads.management]\n"+
		"activation_annotation = \"target.workload.openshift.io/management\"\n"+
		"annotation_prefix = \"resources.workload.openshift.io\"\n"+
		"resources = { \"cpushares\" = 0, \"cpuset\" = %q }\n", cpus)
}

// rpsSysctl sets the default receive packet steering mask (virtual devices
// get it when created) to the reserved CPUs.
func rpsSysctl(mask string) string {
	return "# Packets received by virtual devices (the host side of pods' veth pairs)\n" +
		"# are processed on the reserved CPUs.\n" +
		"net.core.rps_default_mask = " + mask + "\n"
}

// rpsRules starts update-rps@DEVPATH.service for every receive queue of a
// physical device as it appears, and for SR-IOV devices as they move.
const rpsRules = `# Physical devices' receive queues get the RPS mask of update-rps@.service.
SUBSYSTEM=="queues", ACTION=="add", ENV{DEVPATH}=="/devices/pci*/queues/rx*", TAG+="systemd", PROGRAM="/bin/systemd-escape --path --template=update-rps@.service $env{DEVPATH}", ENV{SYSTEMD_WANTS}="%c"
SUBSYSTEM=="net", ACTION=="move", ENV{DEVPATH}!="/devices/virtual/net/*", TAG+="systemd", PROGRAM="/bin/systemd-escape --path --template=update-rps@.service $env{DEVPATH}", ENV{SYSTEMD_WANTS}="%c"
`

// ovsSliceUnit is the slice OVS runs in, outside the reserved-CPU
// confinement of system.slice.
const ovsSliceUnit = `[Unit]
Description=Open vSwitch, on every CPU (ovnkube-node sets its affinity)

[Slice]
`

// ovsSliceDropInText moves an OVS service into ovs.slice.
const ovsSliceDropInText = "[Service]\nSlice=" + ovsSlice + "\n"

// ovsVswitchdDropIn moves ovs-vswitchd into ovs.slice and, with OVS-DPDK
// CPUs, delegates its cgroup so that the partition can be made inside it.
func ovsVswitchdDropIn(ovsDpdk string) string {
	if ovsDpdk == "" {
		return ovsSliceDropInText
	}
	return fmt.Sprintf("[Service]\nSlice=%s\nDelegate=cpuset cpu pids\nEnvironment=OVS_DPDK_CPUS=%s\n", ovsSlice, ovsDpdk)
}

// ovnMarkerText turns on ovnkube-node's dynamic CPU affinity of the OVS
// services: it acts when the file exists and is not empty.
const ovnMarkerText = `# ovnkube-node manages the CPU affinity of the OVS services while this file
# exists and is not empty. Written by payload-apply from a
# PerformanceProfile; to turn it off, empty or remove the file.
`

// stalldSysconfigText makes stalld use the sched_debug backend.
const stalldSysconfigText = "BE=\"-b sched_debug\"\n"

// stalldDropInText gives stalld its sysconfig file.
const stalldDropInText = "[Service]\nEnvironmentFile=" + stalldSysconfig + "\n"

// mixedCPUsConfig tells the kubelet how many containers may share the
// shared CPUs.
func mixedCPUsConfig() string {
	return fmt.Sprintf("{\n  \"shared_cpus\": {\n     \"containers_limit\": %d\n  }\n}", mixedCPUsContainersLimit)
}
