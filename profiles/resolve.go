package profiles

import (
	"fmt"
	"strings"
)

// The ConfigMap a cluster records its profile in (the cluster-profiles
// enhancement): openshift-config/cluster-profile, data key "profile".
const (
	ConfigMapNamespace = "openshift-config"
	ConfigMapName      = "cluster-profile"
	ConfigMapKey       = "profile"
)

// Source says where the profile in effect was named.
type Source string

// The sources of a profile name, in the order Resolve tries them.
const (
	// SourceFlag: the caller named it (--profile).
	SourceFlag Source = "--profile"
	// SourceCluster: the cluster's openshift-config/cluster-profile ConfigMap.
	SourceCluster Source = "ConfigMap openshift-config/cluster-profile"
	// SourceDefault: nothing named one; Default is in effect.
	SourceDefault Source = "default"
)

// FromConfigMap returns the profile the data of an
// openshift-config/cluster-profile ConfigMap names: its "profile" key,
// trimmed. It is "" when data is nil (no ConfigMap) or has no such key, and
// then the default profile is in effect.
func FromConfigMap(data map[string]string) string {
	return strings.TrimSpace(data[ConfigMapKey])
}

// Resolve returns the profile in effect and where it was named: flag when
// it is not empty; else the profile clusterData names (clusterData is the
// data of the cluster's openshift-config/cluster-profile ConfigMap, nil when
// no cluster is given or it has no such ConfigMap); else Default. The name
// must be a profile of s: an unknown one is an error that says where it came
// from and lists the known profiles.
func (s *Set) Resolve(flag string, clusterData map[string]string) (string, Source, error) {
	name, src := strings.TrimSpace(flag), SourceFlag
	if name == "" {
		name, src = FromConfigMap(clusterData), SourceCluster
	}
	if name == "" {
		name, src = Default, SourceDefault
	}
	if _, ok := s.defs[name]; !ok {
		return "", src, fmt.Errorf("%s: %w", src, s.unknown(name))
	}
	return name, src, nil
}
