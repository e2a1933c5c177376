package component

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// Hook is one component's render step.
type Hook interface {
	// Name is a short identifier used in messages, e.g. "ingress".
	Name() string
	// Render returns what the component adds to and removes from the plan.
	// It must be deterministic: the same Input gives the same Output.
	Render(ctx context.Context, in *Input) (*Output, error)
}

// Input is what a Hook sees. Hooks must not modify it.
type Input struct {
	// Objects are the included payload objects after overlays, in apply order.
	Objects []*manifest.Manifest
	// Extra are the admin's manifests from --extra-manifests, not filtered
	// by inclusion annotations (admin intent), in file order.
	Extra []*manifest.Manifest
	// Cluster holds the cluster facts. It is never nil: without
	// --cluster-config it holds what the profile's defaults imply.
	Cluster *ClusterConfig
	// ProfileChain is the profile in effect and its ancestors, nearest first.
	ProfileChain []string
	// HostedControlPlane is true for profiles whose control plane runs
	// elsewhere (HyperShift): components render for a hosted cluster.
	HostedControlPlane bool
	// FeatureSet is the feature set in effect ("Default", "TechPreviewNoUpgrade", ...).
	FeatureSet string
	// FeatureGates are the enabled feature gates.
	FeatureGates sets.Set[string]
	// ReleaseVersion is the payload's release version ("" when unknown).
	ReleaseVersion string
}

// Profile returns the profile in effect.
func (in *Input) Profile() string {
	if len(in.ProfileChain) == 0 {
		return ""
	}
	return in.ProfileChain[0]
}

// Output is what a Hook contributes.
type Output struct {
	// Add are new objects. Each must have File set to a path that names its
	// run level and component (e.g.
	// "generated/0000_50_cluster-ingress-operator_90_default-ingresscontroller.yaml")
	// so the task graph can place it; Doc numbers documents within that File.
	Add []*manifest.Manifest
	// Remove are objects (from Objects or Extra) the component replaces or
	// drops, by identity.
	Remove []manifest.ID
	// Findings are warnings for the user (the seed's documented failure
	// modes, for example).
	Findings []manifest.Finding
	// Steps are apply-time steps the component needs (see Step).
	Steps []StepSpec
}

// GeneratedDir is the directory of the objects the tool makes itself (not
// from the payload, not from an overlay): it prefixes the File of every
// object a hook or the planner generates, as render --output-dir writes
// them and the FILE column of render --list shows them.
const GeneratedDir = "generated"

// Generated returns a manifest for an object a hook renders, with its
// position set: file is the name under GeneratedDir, doc its index there.
func Generated(file string, doc int, obj map[string]any) (*manifest.Manifest, error) {
	m, err := manifest.FromObject(GeneratedDir+"/"+file, doc, obj)
	if err != nil {
		return nil, fmt.Errorf("%s/%s#%d: %w", GeneratedDir, file, doc, err)
	}
	return m, nil
}
