package profiles

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

//go:embed *.yaml
var embedded embed.FS

// APIVersion and Kind of a profile file.
const (
	APIVersion = "payload-apply/v1alpha1"
	Kind       = "ClusterProfile"
)

// Default is the profile in effect when nothing names one.
const Default = "self-managed-high-availability"

// EmbeddedLabel prefixes the file names of the embedded profiles in messages.
const EmbeddedLabel = "embedded:profiles/"

// Definition is one cluster profile file as written, before inheritance.
type Definition struct {
	// APIVersion and Kind must be APIVersion and Kind.
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Metadata names the profile.
	Metadata Metadata `json:"metadata"`
	// Spec is the profile's content.
	Spec Spec `json:"spec"`

	// File is where the definition came from ("embedded:profiles/hypershift.yaml"
	// or a path under --profiles-dir).
	File string `json:"-"`

	// fields is spec as decoded into maps, for merging: unlike Spec it tells
	// a field that is absent from one set to its zero value.
	fields map[string]any
}

// Metadata names a profile.
type Metadata struct {
	// Name is the profile's name, a DNS-1123 label.
	Name string `json:"name"`
}

// Spec is the content of a profile file. Every field is optional; a child
// inherits what it leaves out (see Rules for how fields combine and which
// are protected).
type Spec struct {
	// Parent names the profile this one derives from; empty for a root.
	// It is not inherited.
	Parent string `json:"parent,omitempty"`
	// Description says what clusters the profile is for.
	Description string `json:"description,omitempty"`
	// FeatureGateProfile selects openshift/api's feature-gate defaults.
	// Protected. Unset in the whole chain: SelfManaged.
	FeatureGateProfile GateProfile `json:"featureGateProfile,omitempty"`
	// HyperShift says the cluster is a HyperShift hosted cluster: components
	// that behave differently there (node tuning reads PerformanceProfiles
	// from ConfigMaps) do so. Protected. Unset in the whole chain: false.
	HyperShift *bool `json:"hypershift,omitempty"`
	// DefaultTopology are the cluster facts components assume when no
	// Infrastructure object is given (--cluster-config).
	DefaultTopology Topology `json:"defaultTopology,omitempty"`
	// Overlays are the kustomize overlays the profile applies, keyed by name.
	// A child's overlays come after its parent's; inherited entries are
	// protected.
	Overlays []OverlayRef `json:"overlays,omitempty"`
	// Labels describe the profile; render puts them on the generated
	// openshift-config/cluster-profile ConfigMap. Merged by key.
	Labels map[string]string `json:"labels,omitempty"`
}

// GateProfile names a feature-gate profile of openshift/api.
type GateProfile string

// The feature-gate profiles.
const (
	GateProfileSelfManaged GateProfile = "SelfManaged"
	GateProfileHypershift  GateProfile = "Hypershift"
)

// Topology holds the two topology facts of an Infrastructure status. Empty
// fields are unset.
type Topology struct {
	// ControlPlaneTopology: HighlyAvailable, HighlyAvailableArbiter,
	// DualReplica, SingleReplica or External (the control plane runs outside
	// the cluster). Unset in the whole chain: HighlyAvailable.
	ControlPlaneTopology configv1.TopologyMode `json:"controlPlaneTopology,omitempty"`
	// InfrastructureTopology: HighlyAvailable or SingleReplica. Unset in the
	// whole chain: HighlyAvailable.
	InfrastructureTopology configv1.TopologyMode `json:"infrastructureTopology,omitempty"`
}

// OverlayRef names one overlay of a profile.
type OverlayRef struct {
	// Name keys the entry.
	Name string `json:"name"`
	// Path is the overlay's directory, relative to the overlay sources (the
	// embedded overlays/ and --overlays-dir). Empty: Name.
	Path string `json:"path,omitempty"`
	// Description says what the overlay changes.
	Description string `json:"description,omitempty"`
}

// Set is a collection of profiles by name. It is immutable once built and
// safe for concurrent use.
type Set struct {
	defs   map[string]*Definition
	merged map[string]*Profile
}

// Embedded returns the reference profiles compiled into the binary.
func Embedded() (*Set, error) {
	return Load(embedded, EmbeddedLabel)
}

// Load reads every .yaml/.yml file at the top of fsys as a profile; label
// prefixes file names in messages. Problems in several files are all
// reported, each naming its file: parse errors, duplicate names, unknown
// parents, parent cycles and merge errors (*ProtectedError among them).
func Load(fsys fs.FS, label string) (*Set, error) {
	s := &Set{defs: map[string]*Definition{}}
	err := s.add(fsys, label)
	return s, err
}

// WithDir returns a new Set with the profiles of fsys added; a name defined
// twice is an error naming both files. s is not changed.
func (s *Set) WithDir(fsys fs.FS, label string) (*Set, error) {
	n := &Set{defs: make(map[string]*Definition, len(s.defs))}
	for k, v := range s.defs {
		n.defs[k] = v
	}
	err := n.add(fsys, label)
	return n, err
}

// MaxFileSize is the largest profile definition file read (the built-in
// ones are about 1 KiB).
const MaxFileSize = 1 << 20

// readLimited reads a file of at most max bytes.
func readLimited(fsys fs.FS, name string, max int64) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("file is larger than the limit of %d bytes", max)
	}
	return data, nil
}

func (s *Set) add(fsys fs.FS, label string) error {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return fmt.Errorf("%s: read profiles: %w", strings.TrimSuffix(label, "/"), err)
	}
	var errs []error
	for _, e := range entries {
		if e.IsDir() || (path.Ext(e.Name()) != ".yaml" && path.Ext(e.Name()) != ".yml") {
			continue
		}
		file := label + e.Name()
		data, err := readLimited(fsys, e.Name(), MaxFileSize)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", file, err))
			continue
		}
		d, err := Parse(file, data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if prev, ok := s.defs[d.Metadata.Name]; ok {
			errs = append(errs, fmt.Errorf("%s: profile %q is already defined in %s", file, d.Metadata.Name, prev.File))
			continue
		}
		s.defs[d.Metadata.Name] = d
	}
	errs = append(errs, s.mergeAll()...)
	return errors.Join(errs...)
}

// Parse decodes and checks one profile file. Unknown fields, wrong types
// and bad values are errors naming file.
func Parse(file string, data []byte) (*Definition, error) {
	var d Definition
	if err := yaml.UnmarshalStrict(data, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	d.File = file
	switch {
	case d.APIVersion != APIVersion || d.Kind != Kind:
		return nil, fmt.Errorf("%s: is %s %s, want %s %s", file, d.APIVersion, d.Kind, APIVersion, Kind)
	case d.Metadata.Name == "":
		return nil, fmt.Errorf("%s: metadata.name is required", file)
	}
	if errs := validation.IsDNS1123Label(d.Metadata.Name); len(errs) > 0 {
		return nil, fmt.Errorf("%s: metadata.name %q: %s", file, d.Metadata.Name, strings.Join(errs, "; "))
	}
	var raw struct {
		Spec map[string]any `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	d.fields = raw.Spec
	if d.fields == nil {
		d.fields = map[string]any{}
	}
	delete(d.fields, "parent")
	if errs := d.Spec.validate(); len(errs) > 0 {
		for i, e := range errs {
			errs[i] = fmt.Errorf("%s: profile %q: %w", file, d.Metadata.Name, e)
		}
		return nil, errors.Join(errs...)
	}
	return &d, nil
}

// validate checks the values of one file's spec (not the merged one).
func (s *Spec) validate() []error {
	var errs []error
	if s.Parent != "" {
		if msgs := validation.IsDNS1123Label(s.Parent); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("spec.parent %q: %s", s.Parent, strings.Join(msgs, "; ")))
		}
	}
	switch s.FeatureGateProfile {
	case "", GateProfileSelfManaged, GateProfileHypershift:
	default:
		errs = append(errs, fmt.Errorf("spec.featureGateProfile %q: want %s or %s", s.FeatureGateProfile, GateProfileSelfManaged, GateProfileHypershift))
	}
	switch s.DefaultTopology.ControlPlaneTopology {
	case "", configv1.HighlyAvailableTopologyMode, configv1.HighlyAvailableArbiterMode, configv1.DualReplicaTopologyMode,
		configv1.SingleReplicaTopologyMode, configv1.ExternalTopologyMode:
	default:
		errs = append(errs, fmt.Errorf("spec.defaultTopology.controlPlaneTopology %q: want HighlyAvailable, HighlyAvailableArbiter, DualReplica, SingleReplica or External", s.DefaultTopology.ControlPlaneTopology))
	}
	switch s.DefaultTopology.InfrastructureTopology {
	case "", configv1.HighlyAvailableTopologyMode, configv1.SingleReplicaTopologyMode:
	default:
		errs = append(errs, fmt.Errorf("spec.defaultTopology.infrastructureTopology %q: want HighlyAvailable or SingleReplica", s.DefaultTopology.InfrastructureTopology))
	}
	for i, o := range s.Overlays {
		if o.Name == "" {
			errs = append(errs, fmt.Errorf("spec.overlays[%d]: name is required", i))
			continue
		}
		if msgs := validation.IsDNS1123Subdomain(o.Name); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("spec.overlays[%s]: name: %s", o.Name, strings.Join(msgs, "; ")))
		}
		if o.Path != "" {
			if err := checkOverlayPath(o.Path); err != nil {
				errs = append(errs, fmt.Errorf("spec.overlays[%s].path %q: %w", o.Name, o.Path, err))
			}
		}
	}
	for _, k := range sortedKeys(anyMap(s.Labels)) {
		if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("spec.labels[%q]: key: %s", k, strings.Join(msgs, "; ")))
		}
		if msgs := validation.IsValidLabelValue(s.Labels[k]); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("spec.labels[%q]: value %q: %s", k, s.Labels[k], strings.Join(msgs, "; ")))
		}
	}
	return errs
}

// checkOverlayPath accepts clean, relative, slash-separated paths that stay
// inside the overlay sources.
func checkOverlayPath(p string) error {
	switch {
	case path.IsAbs(p) || strings.HasPrefix(p, `\`) || strings.Contains(p, ":"):
		return errors.New("must be relative to the overlay directories")
	case !fs.ValidPath(p):
		return errors.New("must be a clean slash-separated path without . or .. elements")
	}
	return nil
}

func anyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// mergeAll checks every chain and merges every profile, keeping the results.
func (s *Set) mergeAll() []error {
	s.merged = map[string]*Profile{}
	var errs []error
	for _, name := range s.Names() {
		p, err := s.merge(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		s.merged[name] = p
	}
	return errs
}

// Names returns the profile names, sorted.
func (s *Set) Names() []string {
	names := make([]string, 0, len(s.defs))
	for n := range s.defs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Definition returns the named profile's file as written, or an error
// listing the known profiles.
func (s *Set) Definition(name string) (*Definition, error) {
	d, ok := s.defs[name]
	if !ok {
		return nil, s.unknown(name)
	}
	return d, nil
}

func (s *Set) unknown(name string) error {
	return fmt.Errorf("unknown profile %q (known: %s)", name, strings.Join(s.Names(), ", "))
}

// Chain returns the named profile's definition and its ancestors', nearest
// first. An unknown parent or a cycle is an error naming the profile file.
func (s *Set) Chain(name string) ([]*Definition, error) {
	d, err := s.Definition(name)
	if err != nil {
		return nil, err
	}
	chain := []*Definition{d}
	for d.Spec.Parent != "" {
		parent, ok := s.defs[d.Spec.Parent]
		if !ok {
			return nil, fmt.Errorf("%s: profile %q: unknown parent %q (known: %s)", d.File, d.Metadata.Name, d.Spec.Parent, strings.Join(s.Names(), ", "))
		}
		if slices.Contains(chain, parent) {
			names := make([]string, 0, len(chain)+1)
			for _, c := range chain {
				names = append(names, c.Metadata.Name)
			}
			return nil, fmt.Errorf("%s: profile %q: parent cycle %s -> %s", chain[0].File, chain[0].Metadata.Name, strings.Join(names, " -> "), parent.Metadata.Name)
		}
		chain = append(chain, parent)
		d = parent
	}
	return chain, nil
}

// ChainNames returns the names of Chain(name), nearest first.
func (s *Set) ChainNames(name string) ([]string, error) {
	chain, err := s.Chain(name)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(chain))
	for i, d := range chain {
		names[i] = d.Metadata.Name
	}
	return names, nil
}
