package profiles

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/openshift/api/features"
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

// Profile is one cluster profile definition as written in its file.
type Profile struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Spec       Spec     `json:"spec"`

	// File is where the definition came from ("embedded:hypershift.yaml" or a path).
	File string `json:"-"`
}

// Metadata names a profile.
type Metadata struct {
	Name string `json:"name"`
}

// Spec is the content of a profile.
type Spec struct {
	// Parent names the profile this one derives from; empty for a root.
	Parent string `json:"parent,omitempty"`
	// Description says what clusters the profile is for.
	Description string `json:"description,omitempty"`
	// FeatureGateProfile selects openshift/api's feature-gate defaults:
	// SelfManaged or Hypershift. Inherited from the parent when empty.
	FeatureGateProfile string `json:"featureGateProfile,omitempty"`
}

// Set is a collection of profiles by name. It is immutable once built and safe
// for concurrent use.
type Set struct {
	byName map[string]*Profile
}

// Embedded returns the reference profiles compiled into the binary.
func Embedded() (*Set, error) {
	return Load(embedded, "embedded:")
}

// Load reads every .yaml/.yml file at the top of fsys as a profile; label
// prefixes file names in messages. Problems in several files are all reported.
func Load(fsys fs.FS, label string) (*Set, error) {
	s := &Set{byName: map[string]*Profile{}}
	return s, s.add(fsys, label)
}

// WithDir returns a new Set with the profiles of fsys added; a name defined
// twice is an error naming both files.
func (s *Set) WithDir(fsys fs.FS, label string) (*Set, error) {
	n := &Set{byName: make(map[string]*Profile, len(s.byName))}
	for k, v := range s.byName {
		n.byName[k] = v
	}
	return n, n.add(fsys, label)
}

func (s *Set) add(fsys fs.FS, label string) error {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	var errs []error
	for _, e := range entries {
		if e.IsDir() || (path.Ext(e.Name()) != ".yaml" && path.Ext(e.Name()) != ".yml") {
			continue
		}
		file := label + e.Name()
		data, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", file, err))
			continue
		}
		p, err := Parse(file, data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if prev, ok := s.byName[p.Metadata.Name]; ok {
			errs = append(errs, fmt.Errorf("%s: profile %q is already defined in %s", file, p.Metadata.Name, prev.File))
			continue
		}
		s.byName[p.Metadata.Name] = p
	}
	errs = append(errs, s.check()...)
	return errors.Join(errs...)
}

// Parse decodes and checks one profile file.
func Parse(file string, data []byte) (*Profile, error) {
	var p Profile
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	p.File = file
	switch {
	case p.APIVersion != APIVersion || p.Kind != Kind:
		return nil, fmt.Errorf("%s: is %s %s, want %s %s", file, p.APIVersion, p.Kind, APIVersion, Kind)
	case p.Metadata.Name == "":
		return nil, fmt.Errorf("%s: metadata.name is required", file)
	}
	if errs := validation.IsDNS1123Label(p.Metadata.Name); len(errs) > 0 {
		return nil, fmt.Errorf("%s: metadata.name %q: %s", file, p.Metadata.Name, strings.Join(errs, "; "))
	}
	switch p.Spec.FeatureGateProfile {
	case "", "SelfManaged", "Hypershift":
	default:
		return nil, fmt.Errorf("%s: spec.featureGateProfile %q: want SelfManaged or Hypershift", file, p.Spec.FeatureGateProfile)
	}
	return &p, nil
}

// check reports unknown parents and cycles.
func (s *Set) check() []error {
	var errs []error
	for _, name := range s.Names() {
		if _, err := s.Chain(name); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// Names returns the profile names, sorted.
func (s *Set) Names() []string {
	names := make([]string, 0, len(s.byName))
	for n := range s.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Get returns the named profile, or an error listing the known ones.
func (s *Set) Get(name string) (*Profile, error) {
	p, ok := s.byName[name]
	if !ok {
		return nil, fmt.Errorf("unknown profile %q (known: %s)", name, strings.Join(s.Names(), ", "))
	}
	return p, nil
}

// Chain returns the profile and its ancestors, nearest first. An unknown
// parent or a cycle is an error naming the profile file.
func (s *Set) Chain(name string) ([]*Profile, error) {
	p, err := s.Get(name)
	if err != nil {
		return nil, err
	}
	chain := []*Profile{p}
	for p.Spec.Parent != "" {
		parent, ok := s.byName[p.Spec.Parent]
		if !ok {
			return nil, fmt.Errorf("%s: profile %q: unknown parent %q (known: %s)", p.File, p.Metadata.Name, p.Spec.Parent, strings.Join(s.Names(), ", "))
		}
		if slices.Contains(chain, parent) {
			names := make([]string, 0, len(chain)+1)
			for _, c := range chain {
				names = append(names, c.Metadata.Name)
			}
			return nil, fmt.Errorf("%s: profile %q: parent cycle %s -> %s", p.File, chain[0].Metadata.Name, strings.Join(names, " -> "), parent.Metadata.Name)
		}
		chain = append(chain, parent)
		p = parent
	}
	return chain, nil
}

// ChainNames returns the names of Chain(name).
func (s *Set) ChainNames(name string) ([]string, error) {
	chain, err := s.Chain(name)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(chain))
	for i, p := range chain {
		names[i] = p.Metadata.Name
	}
	return names, nil
}

// GateProfile returns the openshift/api feature-gate profile of the named
// profile: the nearest featureGateProfile in its chain, else SelfManaged.
func (s *Set) GateProfile(name string) (features.ClusterProfileName, error) {
	chain, err := s.Chain(name)
	if err != nil {
		return "", err
	}
	for _, p := range chain {
		switch p.Spec.FeatureGateProfile {
		case "SelfManaged":
			return features.SelfManaged, nil
		case "Hypershift":
			return features.Hypershift, nil
		}
	}
	return features.SelfManaged, nil
}
