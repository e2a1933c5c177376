package payload

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/openshift/api/features"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// Entry is one manifest of a payload with the inclusion decision taken for it.
type Entry struct {
	Manifest *manifest.Manifest
	manifest.Decision
}

// Selection is what a cluster gets from a payload.
type Selection struct {
	// Included are the included manifests in load order.
	Included []*manifest.Manifest
	// Entries are all manifests in load order with their decisions, for
	// `render --explain`.
	Entries []Entry
}

// DuplicateError reports one object defined twice among the included
// manifests. Before selection that is normal (one variant per feature set);
// after it the cluster would not know which one to apply.
type DuplicateError struct {
	First, Second *manifest.Manifest
}

// Error names the object and both places that define it.
func (e *DuplicateError) Error() string {
	return fmt.Sprintf("%s: %s is also defined in %s (both included)", e.Second.Position(), e.Second.ID(), e.First.Position())
}

// Select applies sel to every manifest of the payload. The error, when not nil,
// joins a *DuplicateError for every object included twice; the Selection is
// returned complete either way. A payload loaded for one selection
// (LoadOptions.Only) returns an error and no Selection for any other.
func (p *Payload) Select(sel *manifest.Selector) (*Selection, error) {
	if p.opts.Only != nil && !reflect.DeepEqual(*p.opts.Only, *sel) {
		return nil, errors.New("the payload was loaded for another selection")
	}
	all := p.Manifests()
	s := &Selection{Entries: make([]Entry, len(all))}
	for i, m := range all {
		s.Entries[i] = Entry{Manifest: m, Decision: sel.Include(m)}
		if s.Entries[i].Included {
			s.Included = append(s.Included, m)
		}
	}
	return s, CheckDuplicates(s.Included)
}

// CheckDuplicates returns a joined *DuplicateError for every object that more
// than one of ms defines, or nil.
func CheckDuplicates(ms []*manifest.Manifest) error {
	seen := make(map[manifest.ID]*manifest.Manifest, len(ms))
	var errs []error
	for _, m := range ms {
		id := m.ID()
		if first, ok := seen[id]; ok {
			errs = append(errs, &DuplicateError{First: first, Second: m})
			continue
		}
		seen[id] = m
	}
	return errors.Join(errs...)
}

// FeatureSetName normalises a feature-set name: "" and "Default" are the
// same set. It returns an error naming the known sets for anything else
// library-go does not know.
func FeatureSetName(name string) (configv1.FeatureSet, error) {
	if name == "" || name == "Default" {
		return configv1.Default, nil
	}
	if !slices.Contains(manifest.KnownFeatureSets(), name) {
		return "", fmt.Errorf("unknown feature set %q (known: %s)", name, strings.Join(manifest.KnownFeatureSets(), ", "))
	}
	return configv1.FeatureSet(name), nil
}

// EnabledFeatureGates resolves the enabled feature gates the way the cluster
// would: for CustomNoUpgrade exactly the gates overrides enables; otherwise
// openshift/api's gates for the major version, gate profile and feature set,
// with overrides ("Gate" enables, "-Gate" disables) applied on top. Unknown
// gate names are an error.
func EnabledFeatureGates(major uint64, gateProfile features.ClusterProfileName, set configv1.FeatureSet, overrides []string) (sets.Set[string], error) {
	enabled := sets.New[string]()
	if set != configv1.CustomNoUpgrade {
		for _, g := range features.FeatureSets(major, gateProfile, set).Enabled {
			enabled.Insert(string(g.FeatureGateAttributes.Name))
		}
	}
	if err := OverrideFeatureGates(enabled, overrides); err != nil {
		return nil, err
	}
	return enabled, nil
}

// OverrideFeatureGates applies overrides to enabled: "Gate" (or "+Gate")
// enables a gate, "-Gate" disables it; blank entries are ignored. An
// unknown gate name is an error, and then enabled is left as it was.
func OverrideFeatureGates(enabled sets.Set[string], overrides []string) error {
	known := sets.New(manifest.KnownFeatureGates()...)
	type override struct {
		name    string
		disable bool
	}
	var parsed []override
	for _, o := range overrides {
		o = strings.TrimSpace(o)
		if o == "" {
			continue
		}
		name, disable := strings.CutPrefix(o, "-")
		name = strings.TrimPrefix(name, "+")
		if !known.Has(name) {
			return fmt.Errorf("unknown feature gate %q", name)
		}
		parsed = append(parsed, override{name, disable})
	}
	for _, o := range parsed {
		if o.disable {
			enabled.Delete(o.name)
		} else {
			enabled.Insert(o.name)
		}
	}
	return nil
}

// GatesFromFeatureGate returns the feature set of a FeatureGate object and the
// gates its status lists as enabled for version (or for its only entry when
// no entry names version).
func GatesFromFeatureGate(fg *configv1.FeatureGate, version string) (configv1.FeatureSet, sets.Set[string], error) {
	var chosen *configv1.FeatureGateDetails
	for i := range fg.Status.FeatureGates {
		if fg.Status.FeatureGates[i].Version == version {
			chosen = &fg.Status.FeatureGates[i]
		}
	}
	if chosen == nil && len(fg.Status.FeatureGates) == 1 {
		chosen = &fg.Status.FeatureGates[0]
	}
	if chosen == nil {
		var versions []string
		for _, d := range fg.Status.FeatureGates {
			versions = append(versions, d.Version)
		}
		return "", nil, fmt.Errorf("FeatureGate %s: status.featureGates has no entry for version %q (has %v)", fg.Name, version, versions)
	}
	enabled := sets.New[string]()
	for _, g := range chosen.Enabled {
		enabled.Insert(string(g.Name))
	}
	return fg.Spec.FeatureSet, enabled, nil
}

// Capabilities builds the capability filter from a baseline capability set
// and additional capabilities, as ClusterVersion spec.capabilities does. An
// empty baseline means vCurrent. Unknown names are errors naming the known ones.
func Capabilities(baseline string, additional []string) (*configv1.ClusterVersionCapabilitiesStatus, error) {
	if baseline == "" {
		baseline = string(configv1.ClusterVersionCapabilitySetCurrent)
	}
	base, ok := configv1.ClusterVersionCapabilitySets[configv1.ClusterVersionCapabilitySet(baseline)]
	if !ok {
		var names []string
		for k := range configv1.ClusterVersionCapabilitySets {
			names = append(names, string(k))
		}
		sort.Strings(names)
		return nil, fmt.Errorf("unknown baseline capability set %q (known: %s)", baseline, strings.Join(names, ", "))
	}
	known := configv1.KnownClusterVersionCapabilities
	enabled := append([]configv1.ClusterVersionCapability(nil), base...)
	for _, a := range additional {
		c := configv1.ClusterVersionCapability(strings.TrimSpace(a))
		if c == "" {
			continue
		}
		if !slices.Contains(known, c) {
			names := make([]string, len(known))
			for i, k := range known {
				names[i] = string(k)
			}
			return nil, fmt.Errorf("unknown capability %q (known: %s)", c, strings.Join(names, ", "))
		}
		if !slices.Contains(enabled, c) {
			enabled = append(enabled, c)
		}
	}
	return &configv1.ClusterVersionCapabilitiesStatus{EnabledCapabilities: enabled, KnownCapabilities: append([]configv1.ClusterVersionCapability(nil), known...)}, nil
}
