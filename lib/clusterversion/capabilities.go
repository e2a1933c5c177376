package clusterversion

import (
	"sort"

	configv1 "github.com/openshift/api/config/v1"
)

// Capabilities are a cluster's capabilities as the record keeps them.
type Capabilities struct {
	// Known are the capabilities the release knows.
	Known []configv1.ClusterVersionCapability
	// Enabled are the capabilities enabled, the implicitly enabled ones
	// included.
	Enabled []configv1.ClusterVersionCapability
	// ImplicitlyEnabled are enabled because objects the cluster runs need
	// them, not because spec.capabilities asks for them.
	ImplicitlyEnabled []configv1.ClusterVersionCapability
}

// Status is the record's status.capabilities: both lists sorted.
func (c Capabilities) Status() configv1.ClusterVersionCapabilitiesStatus {
	return configv1.ClusterVersionCapabilitiesStatus{EnabledCapabilities: sorted(c.Enabled), KnownCapabilities: sorted(c.Known)}
}

// Baseline returns what a capabilities spec enables by itself: its
// baseline set (vCurrent when the spec or its baseline is empty) plus its
// additional capabilities.
func Baseline(spec *configv1.ClusterVersionCapabilitiesSpec) []configv1.ClusterVersionCapability {
	set := configv1.ClusterVersionCapabilitySetCurrent
	if spec != nil && spec.BaselineCapabilitySet != "" {
		set = spec.BaselineCapabilitySet
	}
	out := append([]configv1.ClusterVersionCapability(nil), configv1.ClusterVersionCapabilitySets[set]...)
	if spec != nil {
		out = union(out, spec.AdditionalEnabledCapabilities)
	}
	return sorted(out)
}

// FromRecord returns the capabilities a record says the cluster has: what
// its spec enables plus every capability its status lists as enabled
// (enabled capabilities never become disabled); those the spec does not
// enable are implicitly enabled (the CVO's categorizeEnabledCapabilities).
func FromRecord(spec *configv1.ClusterVersionCapabilitiesSpec, status configv1.ClusterVersionCapabilitiesStatus) Capabilities {
	base := Baseline(spec)
	c := Capabilities{Known: sorted(configv1.KnownClusterVersionCapabilities), Enabled: union(base, status.EnabledCapabilities)}
	c.ImplicitlyEnabled = sorted(difference(status.EnabledCapabilities, base))
	c.Known = union(c.Known, status.KnownCapabilities)
	return c
}

// WithImplicit returns c with more implicitly enabled capabilities.
func (c Capabilities) WithImplicit(more []configv1.ClusterVersionCapability) Capabilities {
	c.Enabled = union(c.Enabled, more)
	c.ImplicitlyEnabled = union(c.ImplicitlyEnabled, more)
	return c
}

func union(a, b []configv1.ClusterVersionCapability) []configv1.ClusterVersionCapability {
	seen := map[configv1.ClusterVersionCapability]bool{}
	var out []configv1.ClusterVersionCapability
	for _, c := range append(append([]configv1.ClusterVersionCapability(nil), a...), b...) {
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return sorted(out)
}

func difference(a, b []configv1.ClusterVersionCapability) []configv1.ClusterVersionCapability {
	drop := map[configv1.ClusterVersionCapability]bool{}
	for _, c := range b {
		drop[c] = true
	}
	var out []configv1.ClusterVersionCapability
	for _, c := range a {
		if !drop[c] {
			out = append(out, c)
		}
	}
	return out
}

func sorted(cs []configv1.ClusterVersionCapability) []configv1.ClusterVersionCapability {
	if len(cs) == 0 {
		return nil
	}
	out := append([]configv1.ClusterVersionCapability(nil), cs...)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
