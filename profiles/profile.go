package profiles

import (
	"encoding/json"
	"fmt"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/openshift/api/features"
)

// SpecRules returns the merge rules of a profile's spec. Overlays merge by name;
// labels and defaultTopology merge by key; description and the topology
// facts are the child's when it sets them. Protected, with the reason each
// one gives:
//
//   - featureGateProfile: it picks the feature gates openshift/api enables,
//     and the ancestors' manifests were selected for those gates.
//   - hypershift: the ancestors' manifests and overlays are written for one
//     kind of control plane; a child cannot turn a hosted cluster into a
//     self-managed one or back.
//   - overlays[]: a derived profile gets everything its parent gets, so it
//     may append overlays but not change or redirect an inherited one.
func SpecRules() Rules {
	return Rules{
		Root:     "spec",
		ListKeys: map[string]string{"overlays": "name"},
		Protected: map[string]string{
			"featureGateProfile": "the ancestors' manifests were selected for its feature gates",
			"hypershift":         "the ancestors' manifests and overlays are written for one kind of control plane",
			"overlays[]":         "a derived profile may append overlays but not change inherited ones",
		},
	}
}

// Profile is a profile with its ancestors merged in: what the rest of the
// tool reads. Treat it as read-only; Set returns the same value to every
// caller.
type Profile struct {
	// Name is metadata.name; Parent its spec.parent ("" for a root).
	Name, Parent string
	// Chain is Name and its ancestors, nearest first.
	Chain []string
	// File is the profile's own file.
	File string

	// Description says what clusters the profile is for.
	Description string
	// FeatureGateProfile is the feature-gate profile (SelfManaged when no
	// definition in the chain sets it).
	FeatureGateProfile GateProfile
	// HyperShift is true for HyperShift hosted clusters.
	HyperShift bool
	// DefaultTopology are the topology facts to assume without an
	// Infrastructure object (HighlyAvailable for what no definition sets).
	DefaultTopology Topology
	// Overlays in the order to apply them: the root's first, then each
	// child's. Path is never empty.
	Overlays []Overlay
	// Labels are the merged labels; never nil.
	Labels map[string]string

	// Spec is the merged spec as a file would spell it, with Parent and
	// with the defaults above filled in, for printing.
	Spec Spec
	// Origins maps each merged field ("spec.description",
	// "spec.overlays[crc]", `spec.labels["a.b/c"]`) to the file that set it,
	// or to DefaultOrigin for a default no definition in the chain sets.
	Origins map[string]string
}

// DefaultOrigin is the origin of a field that no definition sets.
const DefaultOrigin = "default"

// Overlay is one overlay a profile applies.
type Overlay struct {
	OverlayRef
	// File is the profile file that lists the overlay.
	File string
}

// ClusterProfileName returns openshift/api's name for the gate profile,
// which features.FeatureSets takes.
func (g GateProfile) ClusterProfileName() features.ClusterProfileName {
	if g == GateProfileHypershift {
		return features.Hypershift
	}
	return features.SelfManaged
}

// Profile returns the named profile merged with its ancestors, or an error
// listing the known profiles.
func (s *Set) Profile(name string) (*Profile, error) {
	p, ok := s.merged[name]
	if !ok {
		if _, known := s.defs[name]; known {
			// Its chain is broken: report how.
			_, err := s.merge(name)
			return nil, err
		}
		return nil, s.unknown(name)
	}
	return p, nil
}

// GateProfile returns the openshift/api feature-gate profile of the named
// profile.
func (s *Set) GateProfile(name string) (features.ClusterProfileName, error) {
	p, err := s.Profile(name)
	if err != nil {
		return "", err
	}
	return p.FeatureGateProfile.ClusterProfileName(), nil
}

// merge builds the Profile for name from its chain.
func (s *Set) merge(name string) (*Profile, error) {
	chain, err := s.Chain(name)
	if err != nil {
		return nil, err
	}
	layers := make([]Layer, len(chain))
	names := make([]string, len(chain))
	for i, d := range chain {
		layers[len(chain)-1-i] = Layer{File: d.File, Name: fmt.Sprintf("profile %q", d.Metadata.Name), Fields: d.fields}
		names[i] = d.Metadata.Name
	}
	merged, err := SpecRules().Merge(layers)
	if err != nil {
		return nil, err
	}
	self := chain[0]
	data, err := json.Marshal(merged.Fields)
	if err != nil {
		return nil, fmt.Errorf("%s: profile %q: encode merged spec: %w", self.File, name, err)
	}
	var spec Spec
	if err := json.Unmarshal(data, &spec); err != nil {
		return nil, fmt.Errorf("%s: profile %q: decode merged spec: %w", self.File, name, err)
	}
	spec.Parent = self.Spec.Parent

	p := &Profile{
		Name:               name,
		Parent:             self.Spec.Parent,
		Chain:              names,
		File:               self.File,
		Description:        spec.Description,
		FeatureGateProfile: spec.FeatureGateProfile,
		DefaultTopology:    spec.DefaultTopology,
		Labels:             map[string]string{},
		Spec:               spec,
		Origins:            merged.Origins,
	}
	if self.Spec.Parent != "" {
		p.Origins["spec.parent"] = self.File
	}
	if p.FeatureGateProfile == "" {
		p.FeatureGateProfile = GateProfileSelfManaged
		p.Spec.FeatureGateProfile = GateProfileSelfManaged
		p.Origins["spec.featureGateProfile"] = DefaultOrigin
	}
	if spec.HyperShift != nil {
		p.HyperShift = *spec.HyperShift
	} else {
		p.Spec.HyperShift = new(bool)
		p.Origins["spec.hypershift"] = DefaultOrigin
	}
	if p.DefaultTopology.ControlPlaneTopology == "" {
		p.DefaultTopology.ControlPlaneTopology = configv1.HighlyAvailableTopologyMode
		p.Spec.DefaultTopology.ControlPlaneTopology = configv1.HighlyAvailableTopologyMode
		p.Origins["spec.defaultTopology.controlPlaneTopology"] = DefaultOrigin
	}
	if p.DefaultTopology.InfrastructureTopology == "" {
		p.DefaultTopology.InfrastructureTopology = configv1.HighlyAvailableTopologyMode
		p.Spec.DefaultTopology.InfrastructureTopology = configv1.HighlyAvailableTopologyMode
		p.Origins["spec.defaultTopology.infrastructureTopology"] = DefaultOrigin
	}
	for k, v := range spec.Labels {
		p.Labels[k] = v
	}
	for _, o := range spec.Overlays {
		if o.Path == "" {
			o.Path = o.Name
		}
		p.Overlays = append(p.Overlays, Overlay{OverlayRef: o, File: merged.Origins[fmt.Sprintf("spec.overlays[%s]", o.Name)]})
	}
	return p, nil
}

// Merged returns the profile as one definition file: apiVersion, kind,
// metadata and the merged spec with defaults filled in. File is the
// profile's own file.
func (p *Profile) Merged() *Definition {
	return &Definition{APIVersion: APIVersion, Kind: Kind, Metadata: Metadata{Name: p.Name}, Spec: p.Spec, File: p.File}
}
