package manifest

import (
	"fmt"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Annotation keys the payload format defines.
const (
	// IncludePrefix starts the per-profile inclusion annotation,
	// include.release.openshift.io/<profile>: "true".
	IncludePrefix = "include.release.openshift.io/"
	// ExcludePrefix starts the exclusion annotation, exclude.release.openshift.io/<id>: "true".
	ExcludePrefix = "exclude.release.openshift.io/"
	// FeatureSetAnnotation lists the feature sets (comma separated) that include the object.
	FeatureSetAnnotation = "release.openshift.io/feature-set"
	// FeatureGateAnnotation lists the feature gates (comma separated, "-Gate" negated) that must hold.
	FeatureGateAnnotation = "release.openshift.io/feature-gate"
	// MajorVersionAnnotation lists the major versions (comma separated, "-N" negated) that include the object.
	MajorVersionAnnotation = "release.openshift.io/major-version"
	// CapabilityAnnotation names the capabilities (joined with "+") the object belongs to.
	CapabilityAnnotation = "capability.openshift.io/name"
	// CreateOnlyAnnotation marks an object that is created when missing and never updated.
	CreateOnlyAnnotation = "release.openshift.io/create-only"
	// DeleteAnnotation marks an object that is deleted instead of applied.
	DeleteAnnotation = "release.openshift.io/delete"
)

// Selector decides which manifests a cluster includes. As in library-go, a nil
// field means "do not filter on this"; the zero Selector includes every
// manifest that has annotations. A Selector is safe for concurrent use once built.
type Selector struct {
	// Profiles is the chain of cluster profiles, nearest first: the profile in
	// effect, then its parent, and so on. A manifest is included when the
	// nearest profile it is annotated for has the value "true". Empty means no
	// profile filter.
	Profiles []string
	// ExcludeID excludes manifests annotated exclude.release.openshift.io/<id>: "true".
	ExcludeID *string
	// FeatureSet is the cluster's feature set ("" and "Default" are the same).
	FeatureSet *string
	// FeatureGates is the set of enabled feature gates; nil disables the gate
	// filter (and library-go's check that forbids both a feature-set and a
	// feature-gate annotation on one manifest).
	FeatureGates sets.Set[string]
	// MajorVersion is the release's major version.
	MajorVersion *uint64
	// Capabilities are the known and enabled capabilities.
	Capabilities *configv1.ClusterVersionCapabilitiesStatus
	// Overrides are ClusterVersion overrides; unmanaged ones exclude their object.
	Overrides []configv1.ComponentOverride
}

// ReasonOverridden is the Reason of a manifest an unmanaged override
// excludes (library-go's word), when nothing else excludes it.
const ReasonOverridden = "overridden"

// Decision is the outcome of Selector.Include for one manifest.
type Decision struct {
	// Included is true when the cluster gets the manifest.
	Included bool
	// Matched is the inclusion annotation that selected the manifest, e.g.
	// include.release.openshift.io/single-node-developer, or "" when there is
	// no profile filter or the manifest is excluded.
	Matched string
	// Reason says why the manifest is excluded, in library-go's words.
	Reason string
}

// Include decides whether the cluster described by s includes m. With at
// most one profile it is exactly library-go's Manifest.Include. For a derived
// profile the other filters run first (through library-go with no profile),
// then the profile chain is walked nearest first: the first profile the
// manifest is annotated for decides, so a child can also opt out of a parent's
// manifest with a value other than "true".
func (s *Selector) Include(m *Manifest) Decision {
	if len(s.Profiles) <= 1 {
		var profile *string
		if len(s.Profiles) == 1 {
			profile = &s.Profiles[0]
		}
		if err := m.Manifest.Include(s.ExcludeID, s.FeatureSet, profile, s.Capabilities, s.Overrides, s.FeatureGates, s.MajorVersion); err != nil {
			return Decision{Reason: err.Error()}
		}
		if profile == nil {
			return Decision{Included: true}
		}
		return Decision{Included: true, Matched: IncludePrefix + *profile}
	}
	if err := m.Manifest.Include(s.ExcludeID, s.FeatureSet, nil, s.Capabilities, s.Overrides, s.FeatureGates, s.MajorVersion); err != nil {
		return Decision{Reason: err.Error()}
	}
	annotations := m.Obj.GetAnnotations()
	for _, p := range s.Profiles {
		key := IncludePrefix + p
		val, ok := annotations[key]
		if !ok {
			continue
		}
		if val != "true" {
			return Decision{Reason: fmt.Sprintf("unrecognized value %s=%s", key, val)}
		}
		return Decision{Included: true, Matched: key}
	}
	keys := make([]string, len(s.Profiles))
	for i, p := range s.Profiles {
		keys[i] = IncludePrefix + p
	}
	return Decision{Reason: strings.Join(keys, ", ") + " unset"}
}

// IsCreateOnly reports whether m carries release.openshift.io/create-only: "true".
func (m *Manifest) IsCreateOnly() bool {
	return m.Obj.GetAnnotations()[CreateOnlyAnnotation] == "true"
}

// IsDelete reports whether m carries release.openshift.io/delete: "true".
func (m *Manifest) IsDelete() bool {
	return m.Obj.GetAnnotations()[DeleteAnnotation] == "true"
}
