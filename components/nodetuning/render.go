package nodetuning

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Names and labels of the rendered objects.
const (
	// TunedNamespace is the namespace of the rendered Tuned.
	TunedNamespace = "openshift-cluster-node-tuning-operator"
	// RuntimeHandler is the CRI-O runtime handler the RuntimeClass names; the
	// MachineConfig configures it.
	RuntimeHandler = "high-performance"
	// ProfileLabel names the source profile on every rendered object, in
	// place of an owner reference (the profile's UID is not known offline).
	// The node tuning operator's own render uses the same label.
	ProfileLabel = "performance.openshift.io/weak-owner-reference-name"
)

// MachineConfigName is the name of a profile's MachineConfig: 50-performance-<p>.
func MachineConfigName(profile string) string { return "50-" + componentName(profile) }

// KubeletConfigName is the name of a profile's KubeletConfig: performance-<p>.
func KubeletConfigName(profile string) string { return componentName(profile) }

// TunedName is the name of a profile's Tuned and of its main TuneD profile:
// openshift-node-performance-<p>.
func TunedName(profile string) string { return tunedName(profile) }

// RuntimeClassName is the name of a profile's RuntimeClass: performance-<p>.
func RuntimeClassName(profile string) string { return componentName(profile) }

func componentName(profile string) string { return "performance-" + profile }
func tunedName(profile string) string     { return "openshift-node-performance-" + profile }

// tunedVendorName names a TuneD profile of the set: rt, amd-x86, arm-aarch64
// or intel-x86.
func tunedVendorName(profile, part string) string {
	return "openshift-node-performance-" + part + "-" + profile
}

// Pool is the MachineConfigPool a profile's nodes belong to.
type Pool struct {
	// Name is the pool's name ("master", "worker", ...).
	Name string
	// Labels are the pool's labels; the KubeletConfig selects the pool by
	// them unless the profile names a pool selector.
	Labels map[string]string
	// NodeSelector is the pool's spec.nodeSelector.
	NodeSelector *metav1.LabelSelector
}

// Options are the cluster facts a render depends on. The zero value renders
// for a cluster without workload partitioning, with the KubeletConfig's pool
// selector taken from the profile or its node selector's role.
type Options struct {
	// Pool is the profile's MachineConfigPool, or nil (on a hosted control
	// plane, where there are none).
	Pool *Pool
	// WorkloadPartitioning is true when the cluster pins its management
	// workloads (Infrastructure status.cpuPartitioning AllNodes, or the
	// legacy single-node signal): the MachineConfig then pins them to the
	// reserved CPUs.
	WorkloadPartitioning bool
	// MixedCPUsFeatureGate is the MixedCPUsAllocation feature gate: with it,
	// spec.cpu.shared and the mixedCpus hint take effect.
	MixedCPUsFeatureGate bool
}

func (o *Options) mixedCPUs(pp *PerformanceProfile) bool {
	return o.MixedCPUsFeatureGate && pp.Spec.mixedCPUs()
}

// Objects are what a profile renders to, as objects ready to marshal.
type Objects struct {
	// MachineConfig is machineconfiguration.openshift.io/v1 MachineConfig
	// 50-performance-<p>.
	MachineConfig map[string]any
	// KubeletConfig is machineconfiguration.openshift.io/v1 KubeletConfig
	// performance-<p>.
	KubeletConfig map[string]any
	// Tuned is tuned.openshift.io/v1 Tuned openshift-node-performance-<p>
	// in TunedNamespace.
	Tuned map[string]any
	// RuntimeClass is node.k8s.io/v1 RuntimeClass performance-<p>.
	RuntimeClass map[string]any
}

// List returns the objects in the order they are written: MachineConfig,
// KubeletConfig, Tuned, RuntimeClass.
func (o *Objects) List() []map[string]any {
	return []map[string]any{o.MachineConfig, o.KubeletConfig, o.Tuned, o.RuntimeClass}
}

// InvalidError is a profile that does not validate.
type InvalidError struct {
	// Name is the profile's name.
	Name string
	// Errors are the problems, in field order; never empty.
	Errors []FieldError
}

// Error prints one line per problem: "PerformanceProfile/NAME: problem".
func (e *InvalidError) Error() string {
	lines := make([]string, len(e.Errors))
	for i, fe := range e.Errors {
		lines[i] = fmt.Sprintf("%s/%s: %s", GroupVersionKind.Kind, e.Name, fe.Error())
	}
	return strings.Join(lines, "\n")
}

// Render validates a profile and renders its objects for a cluster as opts
// describe it. An invalid profile gives an *InvalidError; a profile whose
// annotations or options do not fit together gives an error naming the
// annotation. The same profile and options always give the same objects.
func Render(pp *PerformanceProfile, opts Options) (*Objects, error) {
	if errs := Validate(pp); len(errs) > 0 {
		return nil, &InvalidError{Name: pp.Name, Errors: errs}
	}
	cpus, _ := parseCPUs(pp.Spec.CPU)
	kc, err := kubeletConfiguration(pp, cpus, &opts)
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", GroupVersionKind.Kind, pp.Name, err)
	}
	if !cpus.ovsDpdk.IsEmpty() && !opts.WorkloadPartitioning && kc.CPUManagerPolicyOptions["strict-cpu-reservation"] != "true" {
		return nil, &InvalidError{Name: pp.Name, Errors: []FieldError{{Field: "spec.cpu.ovsDpdk", Value: pp.Spec.CPU.OvsDpdk,
			Detail: "needs workload partitioning (Infrastructure status.cpuPartitioning: AllNodes) or the kubelet's strict-cpu-reservation CPU manager option (annotation " + AnnotationKubeletConfig + ")"}}}
	}
	mc, err := machineConfig(pp, cpus, &opts)
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", GroupVersionKind.Kind, pp.Name, err)
	}
	kco, err := kubeletConfig(pp, kc, machineConfigPoolSelector(&pp.Spec, opts.Pool))
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", GroupVersionKind.Kind, pp.Name, err)
	}
	return &Objects{
		MachineConfig: mc,
		KubeletConfig: kco,
		Tuned:         tuned(pp, cpus),
		RuntimeClass:  runtimeClass(pp),
	}, nil
}

// machineConfigLabels returns spec.machineConfigLabel or its default, the
// node selector's role.
func machineConfigLabels(s *PerformanceProfileSpec) map[string]string {
	if s.MachineConfigLabel != nil {
		return s.MachineConfigLabel
	}
	role, _ := nodeRole(s.NodeSelector)
	return map[string]string{roleLabel: role}
}

// machineConfigPoolSelector returns the labels the KubeletConfig selects its
// pool by: spec.machineConfigPoolSelector, else the pool's labels (the
// built-in master pool is labelled
// pools.operator.machineconfiguration.openshift.io/master, not with a role),
// else the node selector's role.
func machineConfigPoolSelector(s *PerformanceProfileSpec, pool *Pool) map[string]string {
	if s.MachineConfigPoolSelector != nil {
		return s.MachineConfigPoolSelector
	}
	if pool != nil {
		return pool.Labels
	}
	role, _ := nodeRole(s.NodeSelector)
	return map[string]string{roleLabel: role}
}

// metadata returns the metadata of a rendered object.
func metadata(pp *PerformanceProfile, name, namespace string, labels map[string]string) map[string]any {
	l := map[string]any{ProfileLabel: pp.Name}
	for k, v := range labels {
		l[k] = v
	}
	md := map[string]any{"name": name, "labels": l}
	if namespace != "" {
		md["namespace"] = namespace
	}
	return md
}

// stringMap converts labels for an object built of maps.
func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func runtimeClass(pp *PerformanceProfile) map[string]any {
	return map[string]any{
		"apiVersion": "node.k8s.io/v1",
		"kind":       "RuntimeClass",
		"metadata":   metadata(pp, RuntimeClassName(pp.Name), "", nil),
		"handler":    RuntimeHandler,
		"scheduling": map[string]any{"nodeSelector": stringMap(pp.Spec.NodeSelector)},
	}
}
