package nodetuning

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/payload-apply/payload-apply/lib/quantity"
)

// The kubelet settings the KubeletConfig defaults (NTO's values).
const (
	defaultKubeReserved    = "500Mi"
	defaultSystemReserved  = "500Mi"
	defaultEvictionMemory  = "100Mi"
	defaultEvictionNodefs  = "10%"
	defaultEvictionImagefs = "15%"
	defaultEvictionInodes  = "5%"
	evictionMemory         = "memory.available"
)

// kubeletConfiguration builds the kubelet configuration of a profile the way
// NTO does: it starts from the kubeletconfig.experimental annotation (JSON,
// decoded into the kubelet's own type, so unknown fields are dropped as the
// kubelet would), then sets the CPU manager (static, reconciled every 5 s,
// the reserved CPUs plus the ovsDpdk CPUs, plus the shared CPUs with mixed
// CPUs), the topology manager policy, and, unless the annotation set them,
// the hard eviction thresholds, kube and system reserved memory, and for
// the restricted and single-numa-node policies the static memory manager
// with their sum reserved on NUMA node 0; single-numa-node also asks for
// whole physical cores. With dynamic resource allocation (annotation
// performance.openshift.io/dra-resource-management) it only turns the CPU,
// memory and topology managers off.
func kubeletConfiguration(pp *PerformanceProfile, cpus cpuSets, opts *Options) (*kubeletconfigv1beta1.KubeletConfiguration, error) {
	kc := &kubeletconfigv1beta1.KubeletConfiguration{}
	if v, ok := pp.Annotations[AnnotationKubeletConfig]; ok {
		if err := json.Unmarshal([]byte(v), kc); err != nil {
			return nil, fmt.Errorf("metadata.annotations[%q]: not a KubeletConfiguration in JSON: %w", AnnotationKubeletConfig, err)
		}
	}
	kc.TypeMeta = metav1.TypeMeta{APIVersion: kubeletconfigv1beta1.SchemeGroupVersion.String(), Kind: "KubeletConfiguration"}

	if draManaged(pp) {
		if opts.mixedCPUs(pp) {
			return nil, fmt.Errorf("metadata.annotations[%q]: dynamic resource allocation and mixed CPUs exclude each other", AnnotationDRA)
		}
		kc.CPUManagerPolicy = "none"
		kc.CPUManagerPolicyOptions = map[string]string{}
		kc.TopologyManagerPolicy = kubeletconfigv1beta1.NoneTopologyManagerPolicy
		kc.MemoryManagerPolicy = kubeletconfigv1beta1.NoneMemoryManagerPolicy
		return kc, nil
	}

	kc.CPUManagerPolicy = "static"
	kc.CPUManagerReconcilePeriod = metav1.Duration{Duration: 5 * time.Second}
	kc.TopologyManagerPolicy = kubeletconfigv1beta1.BestEffortTopologyManagerPolicy
	kc.EvictionHard = withDefaults(kc.EvictionHard, map[string]string{
		evictionMemory:      defaultEvictionMemory,
		"nodefs.available":  defaultEvictionNodefs,
		"imagefs.available": defaultEvictionImagefs,
		"nodefs.inodesFree": defaultEvictionInodes,
	})
	kc.KubeReserved = withDefaults(kc.KubeReserved, map[string]string{string(corev1.ResourceMemory): defaultKubeReserved})
	kc.SystemReserved = withDefaults(kc.SystemReserved, map[string]string{string(corev1.ResourceMemory): defaultSystemReserved})

	reserved := cpus.reserved.Union(cpus.ovsDpdk)
	if opts.mixedCPUs(pp) {
		reserved = reserved.Union(cpus.shared)
	}
	kc.ReservedSystemCPUs = reserved.String()

	if n := pp.Spec.NUMA; n != nil && n.TopologyPolicy != nil {
		policy := *n.TopologyPolicy
		kc.TopologyManagerPolicy = policy
		if policy == kubeletconfigv1beta1.RestrictedTopologyManagerPolicy || policy == kubeletconfigv1beta1.SingleNumaNodeTopologyManagerPolicy {
			kc.MemoryManagerPolicy = "Static"
			if kc.ReservedMemory == nil {
				sum, err := ReservedMemory(kc.KubeReserved[string(corev1.ResourceMemory)], kc.SystemReserved[string(corev1.ResourceMemory)], kc.EvictionHard[evictionMemory])
				if err != nil {
					return nil, fmt.Errorf("metadata.annotations[%q]: %w", AnnotationKubeletConfig, err)
				}
				kc.ReservedMemory = []kubeletconfigv1beta1.MemoryReservation{{
					NumaNode: 0,
					Limits:   corev1.ResourceList{corev1.ResourceMemory: sum},
				}}
			}
			if policy == kubeletconfigv1beta1.SingleNumaNodeTopologyManagerPolicy {
				if kc.CPUManagerPolicyOptions == nil {
					kc.CPUManagerPolicyOptions = map[string]string{}
				}
				if _, ok := kc.CPUManagerPolicyOptions["full-pcpus-only"]; !ok {
					kc.CPUManagerPolicyOptions["full-pcpus-only"] = "true"
				}
			}
		}
	}
	return kc, nil
}

// ReservedMemory adds the memory kept for the kubelet, the system and the
// hard eviction threshold (quantities such as "500Mi"), the memory the
// static memory manager reserves. A value that is not a quantity, or is
// out of quantity.Parse's bounds, is an error naming it; so is a sum beyond
// what a byte count holds (an int64, as the kubelet reads it).
func ReservedMemory(kube, system, eviction string) (resource.Quantity, error) {
	sum := resource.NewQuantity(0, resource.DecimalSI)
	for _, v := range []struct{ name, value string }{
		{"kubeReserved.memory", kube}, {"systemReserved.memory", system}, {"evictionHard[" + evictionMemory + "]", eviction},
	} {
		q, err := quantity.Parse(v.value)
		if err != nil {
			return resource.Quantity{}, fmt.Errorf("%s %q: %w", v.name, v.value, err)
		}
		sum.Add(q)
	}
	if !byteRange(*sum) {
		return resource.Quantity{}, fmt.Errorf("the reserved memory (kubeReserved + systemReserved + evictionHard[%s]) is out of range for a memory size", evictionMemory)
	}
	return *sum, nil
}

// byteRange reports whether q lies within what an int64 byte count holds.
func byteRange(q resource.Quantity) bool {
	return q.CmpInt64(math.MaxInt64) <= 0 && q.CmpInt64(math.MinInt64) >= 0
}

// withDefaults returns m with the defaults it lacks.
func withDefaults(m, defaults map[string]string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	for k, v := range defaults {
		if _, ok := m[k]; !ok {
			m[k] = v
		}
	}
	return m
}

// draManaged reports the dynamic resource allocation annotation (a Go
// boolean; anything else is false, as NTO reads it).
func draManaged(pp *PerformanceProfile) bool {
	v, ok := pp.Annotations[AnnotationDRA]
	if !ok {
		return false
	}
	switch v {
	case "1", "t", "T", "true", "TRUE", "True":
		return true
	}
	return false
}

// kubeletConfig renders the KubeletConfig performance-<p> for the pool
// selector.
func kubeletConfig(pp *PerformanceProfile, kc *kubeletconfigv1beta1.KubeletConfiguration, poolSelector map[string]string) (map[string]any, error) {
	raw, err := json.Marshal(kc)
	if err != nil {
		return nil, fmt.Errorf("kubelet configuration: %w", err)
	}
	var config map[string]any
	if err := json.Unmarshal(raw, &config); err != nil {
		return nil, fmt.Errorf("kubelet configuration: %w", err)
	}
	return map[string]any{
		"apiVersion": "machineconfiguration.openshift.io/v1",
		"kind":       "KubeletConfig",
		"metadata":   metadata(pp, KubeletConfigName(pp.Name), "", nil),
		"spec": map[string]any{
			"machineConfigPoolSelector": map[string]any{"matchLabels": stringMap(poolSelector)},
			"kubeletConfig":             config,
		},
	}, nil
}
