package ingress

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"
)

// TestDecideTruthTable checks every combination of defaultPlacement,
// controlPlaneTopology, infrastructureTopology and platform against the
// design's rules, stated here independently of the code.
func TestDecideTruthTable(t *testing.T) {
	const (
		cpMode = configv1.DefaultPlacementControlPlane
		wMode  = configv1.DefaultPlacementWorkers
		single = configv1.SingleReplicaTopologyMode
		ha     = configv1.HighlyAvailableTopologyMode
		ext    = configv1.ExternalTopologyMode
	)
	for _, given := range []configv1.DefaultPlacement{"", wMode, cpMode} {
		for _, cp := range []configv1.TopologyMode{single, ha, ext} {
			for _, infraTopo := range []configv1.TopologyMode{single, ha} {
				for _, platform := range []configv1.PlatformType{configv1.NonePlatformType, configv1.AWSPlatformType} {
					name := fmt.Sprintf("placement=%s/cp=%s/infra=%s/platform=%s", orUnset(string(given)), cp, infraTopo, platform)
					t.Run(name, func(t *testing.T) {
						// The installer sets ControlPlane only for one
						// control-plane node without a load balancer.
						wantStatus := given
						if wantStatus == "" {
							wantStatus = wMode
							if platform == configv1.NonePlatformType && cp == single {
								wantStatus = cpMode
							}
						}
						// An External control plane has no node for routers.
						onControlPlane := wantStatus == cpMode && cp != ext
						wantReplicas := int32(2)
						wantRole := "node-role.kubernetes.io/worker"
						if onControlPlane {
							wantRole = "node-role.kubernetes.io/master"
							if cp == single {
								wantReplicas = 1
							}
						} else if infraTopo == single {
							wantReplicas = 1
						}
						wantWarning := wantStatus == cpMode && cp == ext

						infra := &configv1.Infrastructure{Status: configv1.InfrastructureStatus{ControlPlaneTopology: cp, InfrastructureTopology: infraTopo}}
						var ing *configv1.Ingress
						if given != "" {
							ing = &configv1.Ingress{Status: configv1.IngressStatus{DefaultPlacement: given}}
						}
						got := Decide(infra, platform, ing)
						if got.DefaultPlacement != wantStatus {
							t.Errorf("status.defaultPlacement = %s, want %s", got.DefaultPlacement, wantStatus)
						}
						if got.Replicas != wantReplicas {
							t.Errorf("replicas = %d, want %d", got.Replicas, wantReplicas)
						}
						wantSelector := map[string]string{"kubernetes.io/os": "linux", wantRole: ""}
						if diff := cmp.Diff(wantSelector, got.NodeSelector); diff != "" {
							t.Errorf("node selector (-want +got):\n%s", diff)
						}
						if got.RenderDefault != (cp != ext) {
							t.Errorf("RenderDefault = %v with control plane %s", got.RenderDefault, cp)
						}
						if (len(got.Warnings) > 0) != wantWarning {
							t.Errorf("warnings = %v, want a warning: %v", got.Warnings, wantWarning)
						}
					})
				}
			}
		}
	}
}

func orUnset(s string) string {
	if s == "" {
		return "unset"
	}
	return s
}

func TestDecideScenarios(t *testing.T) {
	tests := []struct {
		name     string
		platform configv1.PlatformType
		cp, inf  configv1.TopologyMode
		want     string
	}{
		{"SNO on platform None", configv1.NonePlatformType, "SingleReplica", "SingleReplica", "ControlPlane 1 master"},
		{"SNO with workers on None", configv1.NonePlatformType, "SingleReplica", "HighlyAvailable", "ControlPlane 1 master"},
		{"SNO in the cloud", configv1.AWSPlatformType, "SingleReplica", "SingleReplica", "Workers 1 worker"},
		{"three-node HA", configv1.AWSPlatformType, "HighlyAvailable", "HighlyAvailable", "Workers 2 worker"},
		{"HyperShift", configv1.AWSPlatformType, "External", "HighlyAvailable", "Workers 2 worker"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Decide(&configv1.Infrastructure{Status: configv1.InfrastructureStatus{ControlPlaneTopology: tc.cp, InfrastructureTopology: tc.inf}}, tc.platform, nil)
			role := "worker"
			if _, ok := p.NodeSelector["node-role.kubernetes.io/master"]; ok {
				role = "master"
			}
			got := fmt.Sprintf("%s %d %s", p.Effective, p.Replicas, role)
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if strings.Contains(tc.name, "HyperShift") && p.RenderDefault {
				t.Error("HyperShift must not render a default IngressController")
			}
		})
	}
}
