package upgrade

import (
	"sort"

	configv1 "github.com/openshift/api/config/v1"

	"github.com/payload-apply/payload-apply/lib/clusterversion"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/plan"
)

// Implicit is a capability B enables implicitly, and the object that
// brings it: the object A runs and B assigns to a capability the cluster
// has not enabled.
type Implicit struct {
	Capability configv1.ClusterVersionCapability
	Object     manifest.ID
	// From and To are the capabilities A's and B's manifests name.
	From, To []configv1.ClusterVersionCapability
}

// ImplicitlyEnabled returns the capabilities an update from plan a to
// plan b enables implicitly, by the CVO's rule
// (GetImplicitlyEnabledCapabilities): for every manifest of B that B's
// selection leaves out only because of capabilities, when A included a
// manifest of the same object, the capabilities B's manifest names that
// A's did not, that are not enabled and not implicitly enabled already,
// become implicitly enabled: enabled capabilities never become disabled
// under objects the cluster runs. caps are the cluster's capabilities.
// The result is sorted by capability, then object.
func ImplicitlyEnabled(a, b *plan.Plan, caps clusterversion.Capabilities) []Implicit {
	if b.Selector == nil || b.Selector.Capabilities == nil || b.Selection == nil || a.Selection == nil {
		return nil
	}
	included := map[manifest.ID]*manifest.Manifest{}
	for _, m := range a.Selection.Included {
		included[m.ID()] = m
	}
	known := map[configv1.ClusterVersionCapability]bool{}
	for _, c := range append(append([]configv1.ClusterVersionCapability(nil), caps.Enabled...), caps.ImplicitlyEnabled...) {
		known[c] = true
	}
	noCaps := *b.Selector
	noCaps.Capabilities = nil
	var out []Implicit
	seen := map[configv1.ClusterVersionCapability]bool{}
	for _, e := range b.Selection.Entries {
		m := e.Manifest
		if e.Included || !noCaps.Include(m).Included {
			continue
		}
		old, ok := included[m.ID()]
		if !ok {
			continue
		}
		before := map[configv1.ClusterVersionCapability]bool{}
		for _, c := range old.Manifest.GetManifestCapabilities() {
			before[c] = true
		}
		for _, c := range m.Manifest.GetManifestCapabilities() {
			if before[c] || known[c] || seen[c] {
				continue
			}
			seen[c] = true
			out = append(out, Implicit{Capability: c, Object: m.ID(), From: old.Manifest.GetManifestCapabilities(), To: m.Manifest.GetManifestCapabilities()})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Capability != out[j].Capability {
			return out[i].Capability < out[j].Capability
		}
		return out[i].Object.String() < out[j].Object.String()
	})
	return out
}

// Capabilities lists the capabilities of implicits.
func Capabilities(implicits []Implicit) []configv1.ClusterVersionCapability {
	var out []configv1.ClusterVersionCapability
	for _, i := range implicits {
		out = append(out, i.Capability)
	}
	return out
}
