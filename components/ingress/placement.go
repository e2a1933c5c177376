package ingress

import (
	"fmt"

	configv1 "github.com/openshift/api/config/v1"
)

// Node role labels the default node selectors use.
const (
	osLabel           = "kubernetes.io/os"
	masterRoleLabel   = "node-role.kubernetes.io/master"
	workerRoleLabel   = "node-role.kubernetes.io/worker"
	defaultReplicasHA = 2
)

// Placement is where the default IngressController's routers go.
type Placement struct {
	// DefaultPlacement is the Ingress config's status.defaultPlacement: the
	// value it holds, or the installer's choice when it holds none.
	DefaultPlacement configv1.DefaultPlacement
	// Effective is the placement the rules act on: DefaultPlacement, except
	// that ControlPlane with an External control plane counts as Workers.
	Effective configv1.DefaultPlacement
	// Topology is the topology Replicas follows: infrastructureTopology, or
	// controlPlaneTopology when Effective is ControlPlane.
	Topology configv1.TopologyMode
	// Replicas is 1 for a SingleReplica Topology, else 2.
	Replicas int32
	// NodeSelector is kubernetes.io/os: linux plus the master role
	// (ControlPlane) or the worker role (Workers).
	NodeSelector map[string]string
	// RenderDefault is false when the control plane is External: there is
	// no control-plane node to host routers and the hosting platform owns
	// ingress, so no default IngressController is rendered.
	RenderDefault bool
	// Warnings are the seed's documented failure modes met on the way.
	Warnings []string
}

// InstallerPlacement is the installer's rule for status.defaultPlacement:
// ControlPlane for a single control-plane node on platform None (no load
// balancer, so *.apps must keep pointing at that node when workers join),
// Workers everywhere else.
func InstallerPlacement(platform configv1.PlatformType, controlPlane configv1.TopologyMode) configv1.DefaultPlacement {
	if platform == configv1.NonePlatformType && controlPlane == configv1.SingleReplicaTopologyMode {
		return configv1.DefaultPlacementControlPlane
	}
	return configv1.DefaultPlacementWorkers
}

// Decide applies the design's rules. platform is the Infrastructure's
// platform type; ingress may be nil (no Ingress config given).
func Decide(infra *configv1.Infrastructure, platform configv1.PlatformType, ingress *configv1.Ingress) Placement {
	cp := infra.Status.ControlPlaneTopology
	p := Placement{RenderDefault: cp != configv1.ExternalTopologyMode}
	if ingress != nil {
		p.DefaultPlacement = ingress.Status.DefaultPlacement
	}
	if p.DefaultPlacement == "" {
		p.DefaultPlacement = InstallerPlacement(platform, cp)
	}
	p.Effective = p.DefaultPlacement
	if p.Effective == configv1.DefaultPlacementControlPlane && cp == configv1.ExternalTopologyMode {
		p.Effective = configv1.DefaultPlacementWorkers
		p.Warnings = append(p.Warnings, fmt.Sprintf("Ingress/cluster: status.defaultPlacement %s cannot be used with controlPlaneTopology %s: routers are placed as for %s",
			configv1.DefaultPlacementControlPlane, configv1.ExternalTopologyMode, configv1.DefaultPlacementWorkers))
	}
	p.Topology = infra.Status.InfrastructureTopology
	role := workerRoleLabel
	if p.Effective == configv1.DefaultPlacementControlPlane {
		p.Topology = cp
		role = masterRoleLabel
	}
	p.Replicas = defaultReplicasHA
	if p.Topology == configv1.SingleReplicaTopologyMode {
		p.Replicas = 1
	}
	p.NodeSelector = map[string]string{osLabel: "linux", role: ""}
	return p
}
