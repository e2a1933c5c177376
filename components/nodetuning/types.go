package nodetuning

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersionKind is the kind of the profiles the component reads.
var GroupVersionKind = schema.GroupVersionKind{Group: "performance.openshift.io", Version: "v2", Kind: "PerformanceProfile"}

// PerformanceProfile is performance.openshift.io/v2 PerformanceProfile as the
// payload's CRD defines it: the admin's description of low-latency nodes.
type PerformanceProfile struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PerformanceProfileSpec    `json:"spec"`
	Status *PerformanceProfileStatus `json:"status,omitempty"`
}

// The annotations of a PerformanceProfile the render reads (NTO's
// documented annotations).
const (
	// AnnotationKubeletConfig holds a JSON KubeletConfiguration that the
	// rendered KubeletConfig starts from; the fields the profile sets win.
	AnnotationKubeletConfig = "kubeletconfig.experimental"
	// AnnotationEnableRPS "true" or "enable" sets the receive packet
	// steering mask of virtual network devices to the reserved CPUs ("false"
	// or "disable", or no annotation: no RPS).
	AnnotationEnableRPS = "performance.openshift.io/enable-rps"
	// AnnotationEnablePhysicalRPS "true" applies that mask to physical
	// devices too (with RPS enabled).
	AnnotationEnablePhysicalRPS = "performance.openshift.io/enable-physical-dev-rps"
	// AnnotationExecCPUAffinity "disable" leaves CRI-O's exec_cpu_affinity
	// unset for the high-performance runtime (default "first").
	AnnotationExecCPUAffinity = "performance.openshift.io/exec-cpu-affinity"
	// AnnotationDRA "true" (a Go boolean) hands CPU and memory allocation to
	// dynamic resource allocation: the kubelet's CPU, memory and topology
	// managers are set to none.
	AnnotationDRA = "performance.openshift.io/dra-resource-management"
	// AnnotationOvsDpdkLoadBalancing "disable" takes the ovsDpdk CPUs out of
	// the scheduler's load balancing (an isolated cpuset partition).
	AnnotationOvsDpdkLoadBalancing = "performance.openshift.io/cpu-load-balancing-ovs-dpdk"
	// AnnotationPause "true" pauses NTO's reconcile of an existing
	// profile's objects; the render ignores it (a finding says so).
	AnnotationPause = "performance.openshift.io/pause-reconcile"
)

// PerformanceProfileSpec is what the profile asks for.
type PerformanceProfileSpec struct {
	// CPU partitions the node's CPUs. Required.
	CPU *CPU `json:"cpu,omitempty"`
	// HardwareTuning caps the CPU frequency of the isolated and reserved
	// CPUs.
	HardwareTuning *HardwareTuning `json:"hardwareTuning,omitempty"`
	// HugePages are allocated at boot.
	HugePages *HugePages `json:"hugepages,omitempty"`
	// MachineConfigLabel labels the MachineConfig (and selects the Tuned's
	// nodes). Nil: machineconfiguration.openshift.io/role=<role of NodeSelector>.
	MachineConfigLabel map[string]string `json:"machineConfigLabel,omitempty"`
	// MachineConfigPoolSelector selects the pool of the KubeletConfig.
	// Nil: the labels of the MachineConfigPool whose node selector matches
	// NodeSelector.
	MachineConfigPoolSelector map[string]string `json:"machineConfigPoolSelector,omitempty"`
	// NodeSelector picks the nodes; the RuntimeClass schedules onto them.
	// Required.
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// RealTimeKernel switches the MachineConfig to the realtime kernel.
	RealTimeKernel *RealTimeKernel `json:"realTimeKernel,omitempty"`
	// KernelPageSize is "4k" (the default) or "64k" (aarch64 only: the
	// 64k-pages kernel).
	KernelPageSize *string `json:"kernelPageSize,omitempty"`
	// AdditionalKernelArgs are appended to the kernel arguments, in order.
	AdditionalKernelArgs []string `json:"additionalKernelArgs,omitempty"`
	// NUMA sets the topology manager policy.
	NUMA *NUMA `json:"numa,omitempty"`
	// Net sets the queue count of network devices to the reserved CPU count.
	Net *Net `json:"net,omitempty"`
	// GloballyDisableIrqLoadBalancing keeps device interrupts off the
	// isolated CPUs.
	GloballyDisableIrqLoadBalancing *bool `json:"globallyDisableIrqLoadBalancing,omitempty"`
	// WorkloadHints choose latency against power.
	WorkloadHints *WorkloadHints `json:"workloadHints,omitempty"`
}

// CPU partitions the CPUs: sets such as "0-3,8".
type CPU struct {
	// Reserved CPUs run housekeeping and the kubelet. Required.
	Reserved string `json:"reserved,omitempty"`
	// Isolated CPUs run latency-sensitive workloads. Required.
	Isolated string `json:"isolated,omitempty"`
	// BalanceIsolated false removes the isolated CPUs from the scheduler's
	// load balancing. Nil: true.
	BalanceIsolated *bool `json:"balanceIsolated,omitempty"`
	// Offlined CPUs are taken offline at boot.
	Offlined string `json:"offlined,omitempty"`
	// Shared CPUs are shared among guaranteed pods beside their exclusive
	// CPUs (with the mixedCpus workload hint).
	Shared string `json:"shared,omitempty"`
	// OvsDpdk CPUs run OVS-DPDK poll mode threads, isolated from the
	// operating system and Kubernetes.
	OvsDpdk string `json:"ovsDpdk,omitempty"`
}

// HardwareTuning sets CPU frequency limits in kHz.
type HardwareTuning struct {
	// IsolatedCpuFreq is the maximum frequency of the isolated CPUs.
	IsolatedCpuFreq *int64 `json:"isolatedCpuFreq,omitempty"`
	// ReservedCpuFreq is the maximum frequency of the reserved CPUs.
	ReservedCpuFreq *int64 `json:"reservedCpuFreq,omitempty"`
}

// HugePages are the huge pages to allocate at boot.
type HugePages struct {
	// DefaultHugePagesSize is the kernel's default huge page size; required
	// when Pages is not empty.
	DefaultHugePagesSize string `json:"defaultHugepagesSize,omitempty"`
	// Pages are the pages by size, and optionally NUMA node.
	Pages []HugePage `json:"pages,omitempty"`
}

// HugePage is a count of pages of one size, on one NUMA node or spread over
// all of them.
type HugePage struct {
	// Size is a huge page size such as "2M" or "1G".
	Size string `json:"size,omitempty"`
	// Count is the number of pages.
	Count int32 `json:"count,omitempty"`
	// Node is the NUMA node; nil spreads the pages (kernel arguments), set
	// allocates them on that node at boot (a systemd unit).
	Node *int32 `json:"node,omitempty"`
}

// RealTimeKernel selects the kernel.
type RealTimeKernel struct {
	// Enabled installs the realtime kernel.
	Enabled *bool `json:"enabled,omitempty"`
}

// NUMA holds the topology settings.
type NUMA struct {
	// TopologyPolicy is the kubelet's topology manager policy: none,
	// best-effort (the default), restricted or single-numa-node.
	TopologyPolicy *string `json:"topologyPolicy,omitempty"`
}

// Net sets network queues.
type Net struct {
	// UserLevelNetworking sets the devices' combined channels to the number
	// of reserved CPUs.
	UserLevelNetworking *bool `json:"userLevelNetworking,omitempty"`
	// Devices limits that to the matching devices; empty: all devices.
	Devices []Device `json:"devices,omitempty"`
}

// Device matches network devices by interface name (shell pattern, "!"
// negates), vendor ID and device ID ("0x" and up to four hexadecimal
// digits).
type Device struct {
	// InterfaceName is a shell pattern of interface names.
	InterfaceName *string `json:"interfaceName,omitempty"`
	// VendorID is the PCI vendor ID.
	VendorID *string `json:"vendorID,omitempty"`
	// DeviceID is the PCI device (model) ID; it needs VendorID.
	DeviceID *string `json:"deviceID,omitempty"`
}

// WorkloadHints trade power for latency.
type WorkloadHints struct {
	// HighPowerConsumption keeps CPUs out of deep idle states.
	HighPowerConsumption *bool `json:"highPowerConsumption,omitempty"`
	// RealTime tunes for real-time workloads. Nil: true.
	RealTime *bool `json:"realTime,omitempty"`
	// PerPodPowerManagement lets pods choose power settings; it excludes
	// HighPowerConsumption.
	PerPodPowerManagement *bool `json:"perPodPowerManagement,omitempty"`
	// MixedCpus lets guaranteed pods use the shared CPUs (cpu.shared); it
	// takes effect when the MixedCPUsAllocation feature gate is enabled.
	MixedCpus *bool `json:"mixedCpus,omitempty"`
}

// PerformanceProfileStatus is the status the controller reports; on a hosted
// control plane it is serialized into the status ConfigMap.
type PerformanceProfileStatus struct {
	// Conditions are Available, Upgradeable, Progressing and Degraded.
	Conditions []Condition `json:"conditions,omitempty"`
	// Tuned is namespace/name of the rendered Tuned.
	Tuned string `json:"tuned,omitempty"`
	// RuntimeClass is the name of the rendered RuntimeClass.
	RuntimeClass string `json:"runtimeClass,omitempty"`
}

// Condition is one status condition. LastTransitionTime changes only when
// Status does; it is nil in render's preview.
type Condition struct {
	// Type is one of the Condition* constants.
	Type string `json:"type"`
	// Status is "True", "False" or "Unknown".
	Status string `json:"status"`
	// Reason is a CamelCase word for the status, when there is one.
	Reason string `json:"reason,omitempty"`
	// Message explains the status to a person.
	Message string `json:"message,omitempty"`
	// LastTransitionTime is when Status last changed.
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// realTimeKernel reports whether the realtime kernel is asked for.
func (s *PerformanceProfileSpec) realTimeKernel() bool {
	return s.RealTimeKernel != nil && s.RealTimeKernel.Enabled != nil && *s.RealTimeKernel.Enabled
}

// realTimeHint reports the realTime workload hint (true unless set false).
func (s *PerformanceProfileSpec) realTimeHint() bool {
	return s.WorkloadHints == nil || s.WorkloadHints.RealTime == nil || *s.WorkloadHints.RealTime
}

func (s *PerformanceProfileSpec) highPowerConsumption() bool {
	return s.WorkloadHints != nil && isTrue(s.WorkloadHints.HighPowerConsumption)
}

func (s *PerformanceProfileSpec) perPodPowerManagement() bool {
	return s.WorkloadHints != nil && isTrue(s.WorkloadHints.PerPodPowerManagement)
}

// topologyPolicy returns the topology manager policy, best-effort by default.
func (s *PerformanceProfileSpec) topologyPolicy() string {
	if s.NUMA != nil && s.NUMA.TopologyPolicy != nil {
		return *s.NUMA.TopologyPolicy
	}
	return "best-effort"
}

// kernelPageSize64k reports whether the 64k-pages kernel is asked for.
func (s *PerformanceProfileSpec) kernelPageSize64k() bool {
	return s.KernelPageSize != nil && *s.KernelPageSize == "64k"
}

// mixedCPUs reports whether the profile asks for mixed CPUs (shared CPUs
// and the mixedCpus hint).
func (s *PerformanceProfileSpec) mixedCPUs() bool {
	return s.CPU != nil && s.CPU.Shared != "" && s.WorkloadHints != nil && isTrue(s.WorkloadHints.MixedCpus)
}

func isTrue(b *bool) bool { return b != nil && *b }
