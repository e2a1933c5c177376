package nodetuning

import "k8s.io/apimachinery/pkg/api/resource"

// Kubelet defaults the KubeletConfig sets, in MiB: memory kept for the
// kubelet and the system, and the hard eviction threshold for memory.
const (
	kubeReservedMiB   = 500
	systemReservedMiB = 500
	evictionMiB       = 100
)

// mebibytes prints a memory size the way the kubelet's examples do ("500Mi").
func mebibytes(n int64) string {
	return resource.NewQuantity(n<<20, resource.BinarySI).String()
}

// kubeletConfig renders the KubeletConfig performance-<p>: the static CPU
// manager with the reserved CPUs, the topology manager policy, eviction
// thresholds and reserved memory, and for the restricted and
// single-numa-node policies the static memory manager with the reserved
// memory on NUMA node 0 (the only node every machine has). single-numa-node
// also asks the CPU manager for whole physical cores.
func kubeletConfig(pp *PerformanceProfile, cpus cpuSets) map[string]any {
	policy := pp.Spec.topologyPolicy()
	kc := map[string]any{
		"apiVersion":                "kubelet.config.k8s.io/v1beta1",
		"kind":                      "KubeletConfiguration",
		"cpuManagerPolicy":          "static",
		"cpuManagerReconcilePeriod": "5s",
		"reservedSystemCPUs":        cpus.reserved.String(),
		"topologyManagerPolicy":     policy,
		"evictionHard": map[string]any{
			"memory.available":  mebibytes(evictionMiB),
			"nodefs.available":  "10%",
			"imagefs.available": "15%",
			"nodefs.inodesFree": "5%",
		},
		"kubeReserved":   map[string]any{"memory": mebibytes(kubeReservedMiB)},
		"systemReserved": map[string]any{"memory": mebibytes(systemReservedMiB)},
	}
	if policy == "restricted" || policy == "single-numa-node" {
		kc["memoryManagerPolicy"] = "Static"
		kc["reservedMemory"] = []any{map[string]any{
			"numaNode": int64(0),
			"limits":   map[string]any{"memory": mebibytes(kubeReservedMiB + systemReservedMiB + evictionMiB)},
		}}
	}
	if policy == "single-numa-node" {
		kc["cpuManagerPolicyOptions"] = map[string]any{"full-pcpus-only": "true"}
	}
	return map[string]any{
		"apiVersion": "machineconfiguration.openshift.io/v1",
		"kind":       "KubeletConfig",
		"metadata":   metadata(pp, KubeletConfigName(pp.Name), "", nil),
		"spec": map[string]any{
			"machineConfigPoolSelector": map[string]any{"matchLabels": stringMap(machineConfigPoolSelector(&pp.Spec))},
			"kubeletConfig":             kc,
		},
	}
}
