package component

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	configv1 "github.com/openshift/api/config/v1"
	sigsjson "sigs.k8s.io/json"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// ClusterConfig holds the cluster facts components read, as the installer
// writes them (Infrastructure status.cpuPartitioning included: the node
// tuning component reads it): the Infrastructure, Ingress and FeatureGate config objects
// named "cluster" and the profile from ConfigMap
// openshift-config/cluster-profile.
type ClusterConfig struct {
	// File is where the facts came from ("" when they are the profile's
	// defaults rather than a --cluster-config file).
	File string
	// Infrastructure is never nil: given, or the profile's defaults.
	Infrastructure *configv1.Infrastructure
	// Ingress is the Ingress config, or nil when not given.
	Ingress *configv1.Ingress
	// FeatureGate is the FeatureGate config, or nil when not given.
	FeatureGate *configv1.FeatureGate
	// Profile is data.profile of the cluster-profile ConfigMap, or "".
	Profile string
	// ClusterVersion is the cluster's ClusterVersion "version", or nil when
	// not given: its spec.overrides exclude what they mark unmanaged.
	ClusterVersion *configv1.ClusterVersion
	// Objects are the objects as written in File, by identity, for
	// components that need fields exactly as given (the typed objects above
	// fill in zero values).
	Objects map[manifest.ID]*manifest.Manifest
}

// Given reports whether the facts came from a file rather than defaults.
func (c *ClusterConfig) Given() bool { return c.File != "" }

// Known values of the topology and placement enums, as openshift/api
// documents them.
var (
	controlPlaneTopologies = []configv1.TopologyMode{configv1.HighlyAvailableTopologyMode, configv1.HighlyAvailableArbiterMode,
		configv1.SingleReplicaTopologyMode, configv1.ExternalTopologyMode, configv1.DualReplicaTopologyMode}
	infrastructureTopologies = []configv1.TopologyMode{configv1.HighlyAvailableTopologyMode, configv1.SingleReplicaTopologyMode}
	placements               = []configv1.DefaultPlacement{"", configv1.DefaultPlacementWorkers, configv1.DefaultPlacementControlPlane}
)

// ParseClusterConfig reads a --cluster-config file: a multi-document YAML of
// config.openshift.io/v1 Infrastructure (required), Ingress and FeatureGate,
// each named "cluster", and optionally the ClusterVersion "version" and the
// ConfigMap openshift-config/cluster-profile. Objects are decoded strictly with the
// openshift/api types (unknown fields are errors) and enum values are
// checked; every problem is reported as FILE#DOC: message.
func ParseClusterConfig(file string, data []byte) (*ClusterConfig, error) {
	ms, err := manifest.Parse(file, data, manifest.ParseOptions{})
	if err != nil {
		return nil, err
	}
	c := &ClusterConfig{File: file, Objects: map[manifest.ID]*manifest.Manifest{}}
	var errs []error
	fail := func(m *manifest.Manifest, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s: %s", m.Position(), m.ID(), fmt.Sprintf(format, args...)))
	}
	seen := map[manifest.ID]bool{}
	for i := range ms {
		m := &ms[i]
		id := m.ID()
		if seen[id] {
			fail(m, "defined twice")
			continue
		}
		seen[id] = true
		c.Objects[id] = m
		gk := m.GVK.GroupKind()
		switch {
		case gk.Group == configv1.GroupName && (gk.Kind == "Infrastructure" || gk.Kind == "Ingress" || gk.Kind == "FeatureGate"):
			if m.GVK.Version != "v1" {
				fail(m, "apiVersion %s: want config.openshift.io/v1", m.Obj.GetAPIVersion())
				continue
			}
			if m.Obj.GetName() != "cluster" {
				fail(m, "the cluster's %s must be named \"cluster\"", gk.Kind)
				continue
			}
			var target any
			switch gk.Kind {
			case "Infrastructure":
				c.Infrastructure = &configv1.Infrastructure{}
				target = c.Infrastructure
			case "Ingress":
				c.Ingress = &configv1.Ingress{}
				target = c.Ingress
			case "FeatureGate":
				c.FeatureGate = &configv1.FeatureGate{}
				target = c.FeatureGate
			}
			if err := decodeStrict(m.Obj.Object, target); err != nil {
				fail(m, "%v", err)
			}
		case gk.Group == configv1.GroupName && gk.Kind == "ClusterVersion":
			if m.GVK.Version != "v1" || m.Obj.GetName() != "version" {
				fail(m, "want config.openshift.io/v1 ClusterVersion named \"version\"")
				continue
			}
			c.ClusterVersion = &configv1.ClusterVersion{}
			if err := decodeStrict(m.Obj.Object, c.ClusterVersion); err != nil {
				fail(m, "%v", err)
			}
		case gk.Group == "" && gk.Kind == "ConfigMap" && m.Obj.GetNamespace() == "openshift-config" && m.Obj.GetName() == "cluster-profile":
			data, _ := m.Obj.Object["data"].(map[string]any)
			p, ok := data["profile"].(string)
			if !ok || p == "" {
				fail(m, "data.profile is required (a profile name)")
				continue
			}
			c.Profile = p
		default:
			fail(m, "unexpected object: want config.openshift.io/v1 Infrastructure, Ingress, FeatureGate, ClusterVersion or ConfigMap openshift-config/cluster-profile")
		}
	}
	if c.Infrastructure == nil && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("%s: an Infrastructure named \"cluster\" is required", file))
	}
	if c.Infrastructure != nil {
		st := c.Infrastructure.Status
		if st.ControlPlaneTopology != "" && !slices.Contains(controlPlaneTopologies, st.ControlPlaneTopology) {
			errs = append(errs, fmt.Errorf("%s: Infrastructure/cluster: status.controlPlaneTopology %q: want one of %v", file, st.ControlPlaneTopology, controlPlaneTopologies))
		}
		if st.InfrastructureTopology != "" && !slices.Contains(infrastructureTopologies, st.InfrastructureTopology) {
			errs = append(errs, fmt.Errorf("%s: Infrastructure/cluster: status.infrastructureTopology %q: want one of %v", file, st.InfrastructureTopology, infrastructureTopologies))
		}
		if p := st.CPUPartitioning; p != "" && p != configv1.CPUPartitioningNone && p != configv1.CPUPartitioningAllNodes {
			errs = append(errs, fmt.Errorf("%s: Infrastructure/cluster: status.cpuPartitioning %q: want %s or %s", file, p, configv1.CPUPartitioningNone, configv1.CPUPartitioningAllNodes))
		}
	}
	if c.Ingress != nil && !slices.Contains(placements, c.Ingress.Status.DefaultPlacement) {
		errs = append(errs, fmt.Errorf("%s: Ingress/cluster: status.defaultPlacement %q: want Workers or ControlPlane", file, c.Ingress.Status.DefaultPlacement))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}

// PlatformType returns the Infrastructure's platform: status.platformStatus.type,
// else the deprecated status.platform, else "None".
func (c *ClusterConfig) PlatformType() configv1.PlatformType {
	if c.Infrastructure == nil {
		return configv1.NonePlatformType
	}
	if ps := c.Infrastructure.Status.PlatformStatus; ps != nil && ps.Type != "" {
		return ps.Type
	}
	//nolint:staticcheck // status.platform is deprecated but installers still write it.
	if p := c.Infrastructure.Status.Platform; p != "" {
		return p
	}
	return configv1.NonePlatformType
}

// decodeStrict decodes an object into its Go type as the API server
// decodes a body (sigs.k8s.io/json, strict), so that a value of the wrong
// type and a field the type lacks are errors naming the field
// ("status.controlPlaneTopology: want a string, not an array").
func decodeStrict(obj map[string]any, target any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	strict, err := sigsjson.UnmarshalStrict(data, target, sigsjson.DisallowUnknownFields)
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te):
		return fmt.Errorf("%s: want %s, not %s", te.Field, jsonKind(te.Type.Kind().String()), jsonKind(te.Value))
	case err != nil:
		return err
	case len(strict) > 0:
		return errors.Join(strict...)
	}
	return nil
}

// jsonKind names a Go kind as JSON calls it.
func jsonKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "slice", "array":
		return "a list"
	case "map", "struct", "object":
		return "an object"
	case "bool":
		return "true or false"
	}
	return "a number"
}
