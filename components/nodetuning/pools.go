package nodetuning

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/payload-apply/payload-apply/lib/component"
	"github.com/payload-apply/payload-apply/lib/manifest"
)

// The kinds the render reads besides profiles.
var (
	machineConfigPoolGVK = schema.GroupVersionKind{Group: "machineconfiguration.openshift.io", Version: "v1", Kind: "MachineConfigPool"}
	machineConfigGVK     = schema.GroupVersionKind{Group: "machineconfiguration.openshift.io", Version: "v1", Kind: "MachineConfig"}
)

// The built-in pools. A cluster always has them; when the manifests do not
// define them (at bootstrap, the Machine Config Operator creates them
// later) the render assumes them as the operator creates them: labelled
// pools.operator.machineconfiguration.openshift.io/<name> (no role label),
// selecting nodes by node-role.kubernetes.io/<name>.
var builtinPools = []string{"master", "worker"}

func builtinPool(name string) *Pool {
	return &Pool{
		Name:   name,
		Labels: map[string]string{"pools.operator.machineconfiguration.openshift.io/" + name: ""},
		NodeSelector: &metav1.LabelSelector{
			MatchLabels: map[string]string{"node-role.kubernetes.io/" + name: ""},
		},
	}
}

// cluster is what the standalone render knows of the cluster.
type cluster struct {
	// pools are the MachineConfigPools of the manifests, then the built-in
	// pools they lack, as profiles choose among them.
	pools []*Pool
	// pinnedPools name the pools that get a bootstrap pinning
	// MachineConfig: the built-in pools (and arbiter on an arbiter cluster),
	// then the manifests' pools. Empty without workload partitioning.
	pinnedPools []string
	// partitioning is true with workload partitioning on all nodes.
	partitioning bool
	// legacy names the MachineConfig that signals legacy single-node
	// workload partitioning, when that is what turned it on.
	legacy *manifest.Manifest
}

// readCluster reads the pools and workload partitioning of a standalone
// render: MachineConfigPools and MachineConfigs from the manifests (payload
// and extra), Infrastructure from the cluster facts. As NTO's render does,
// workload partitioning is on with status.cpuPartitioning AllNodes, or on a
// single-node control plane when a MachineConfig writes the kubelet's
// pinning file (the legacy way to ask for it).
func readCluster(all []*manifest.Manifest, facts *component.ClusterConfig) (*cluster, []error) {
	c := &cluster{}
	var errs []error
	var given []string
	for _, m := range all {
		if m.GVK != machineConfigPoolGVK {
			continue
		}
		p, err := decodePool(m)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %s: %w", m.Position(), ref(m), err))
			continue
		}
		c.pools = append(c.pools, p)
		given = append(given, p.Name)
	}
	var missing []*Pool
	for _, name := range builtinPools {
		if !slices.ContainsFunc(c.pools, func(p *Pool) bool { return strings.ToLower(p.Name) == name }) {
			missing = append(missing, builtinPool(name))
		}
	}
	c.pools = append(missing, c.pools...)

	var infra configv1.InfrastructureStatus
	if facts != nil && facts.Infrastructure != nil {
		infra = facts.Infrastructure.Status
	}
	c.partitioning = infra.CPUPartitioning == configv1.CPUPartitioningAllNodes
	if !c.partitioning && infra.ControlPlaneTopology == configv1.SingleReplicaTopologyMode {
		for _, m := range all {
			if m.GVK == machineConfigGVK && writesFile(m, kubeletPinningConfig) {
				c.partitioning, c.legacy = true, m
				break
			}
		}
	}
	if c.partitioning {
		names := append([]string{}, builtinPools...)
		if infra.ControlPlaneTopology == configv1.HighlyAvailableArbiterMode {
			names = append(names, "arbiter")
		}
		for _, n := range append(names, given...) {
			if !slices.Contains(c.pinnedPools, n) {
				c.pinnedPools = append(c.pinnedPools, n)
			}
		}
	}
	return c, errs
}

// decodePool reads a MachineConfigPool's name, labels and node selector.
func decodePool(m *manifest.Manifest) (*Pool, error) {
	p := &Pool{Name: m.Obj.GetName(), Labels: m.Obj.GetLabels()}
	sel, found, err := unstructured.NestedFieldNoCopy(m.Obj.Object, "spec", "nodeSelector")
	if err != nil || !found || sel == nil {
		return p, nil
	}
	obj, ok := sel.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("spec.nodeSelector: is %s, want a label selector", describe(sel))
	}
	p.NodeSelector = &metav1.LabelSelector{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj, p.NodeSelector, true); err != nil {
		return nil, fmt.Errorf("spec.nodeSelector: %w", err)
	}
	if _, err := metav1.LabelSelectorAsSelector(p.NodeSelector); err != nil {
		return nil, fmt.Errorf("spec.nodeSelector: %w", err)
	}
	return p, nil
}

// writesFile reports whether a MachineConfig writes the file at path.
func writesFile(m *manifest.Manifest, path string) bool {
	files, _, _ := unstructured.NestedSlice(m.Obj.Object, "spec", "config", "storage", "files")
	for _, f := range files {
		if fm, ok := f.(map[string]any); ok && fm["path"] == path {
			return true
		}
	}
	return false
}

// selectPool returns the one pool whose node selector matches the
// profile's node selector, as NTO selects it; none or several are errors
// naming the pools.
func (c *cluster) selectPool(nodeSelector map[string]string) (*Pool, error) {
	var match []*Pool
	var names []string
	for _, p := range c.pools {
		names = append(names, p.Name)
		if p.NodeSelector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(p.NodeSelector)
		if err != nil {
			continue // reported by readCluster
		}
		if sel.Matches(labels.Set(nodeSelector)) {
			match = append(match, p)
		}
	}
	switch len(match) {
	case 1:
		return match[0], nil
	case 0:
		sort.Strings(names)
		return nil, fmt.Errorf("spec.nodeSelector %s: no MachineConfigPool selects these nodes (pools: %s): give the pool in --extra-manifests",
			labelString(nodeSelector), strings.Join(names, ", "))
	}
	var found []string
	for _, p := range match {
		found = append(found, p.Name)
	}
	return nil, fmt.Errorf("spec.nodeSelector %s: more than one MachineConfigPool selects these nodes: %s", labelString(nodeSelector), strings.Join(found, ", "))
}

// labelString prints labels as {"key": "value", ...}, sorted.
func labelString(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%q: %q", k, m[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
