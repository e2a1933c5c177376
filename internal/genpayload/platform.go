package genpayload

import "strings"

// The kinds a payload's objects use are served by Kubernetes itself, by a
// CustomResourceDefinition of the same payload, or by a component that
// installs it later (the monitoring stack's ServiceMonitor and
// PrometheusRule, the cloud credential operator's CredentialsRequest: the
// real payload has those objects and not their CRDs, so an apply to a bare
// API server fails them as "resource type missing"; the generated one does
// the same, in the same proportions). This file writes the CRDs of the
// others, as the real payload has them: ClusterOperator (the CVO's
// manifests/), SecurityContextConstraints and the openshift-config
// Namespace (the config operator's; the tool's generated cluster-profile
// ConfigMap goes there), and each component's operator configuration kind
// (the "Custom" objects). Their schemas hold every field the generator
// writes for those kinds, so the API server prunes nothing and a second
// apply finds every object unchanged.

// role is what a component provides besides its own objects.
type role int

const (
	plainRole  role = iota
	cvoRole         // the CVO: manifests/, templates, the ClusterOperator CRD
	configRole      // the config operator: openshift-config, the SecurityContextConstraints CRD
)

// configNamespace is the namespace the config operator creates (the
// cluster-profile ConfigMap's, profiles.ConfigMapNamespace).
const configNamespace = "openshift-config"

// everywhere are the annotations of a platform object: included in every
// profile and feature set, whatever the component's own objects draw.
func (c *comp) everywhere() map[string]any {
	if c.cvo {
		return map[string]any{"include.release.openshift.io/{{ .ClusterProfile }}": "true"}
	}
	ann := map[string]any{}
	for _, p := range []string{selfManaged, singleNode, ibmCloud, hypershift} {
		ann["include.release.openshift.io/"+p] = "true"
	}
	return ann
}

// home returns the annotations of what a component provides for its own
// objects, its Namespace and the CRD of its configKind: included in the
// profiles reach holds (those of the objects in them; no feature set) and
// in the component's capability.
func (c *comp) home(reach map[string]bool) map[string]any {
	if c.cvo {
		return c.everywhere()
	}
	ann := map[string]any{}
	for p := range reach {
		ann["include.release.openshift.io/"+p] = "true"
	}
	if len(ann) > 0 && c.capability != "" {
		ann["capability.openshift.io/name"] = c.capability
	}
	return ann
}

// reach returns the profiles that objects of kind need from their
// component (its namespace for namespaced kinds, the CRD for its
// configKind), nil for others.
func (c *comp) reach(kind string) map[string]bool {
	if kind == c.configKind() {
		return c.configReach
	}
	for _, k := range kinds {
		if k.kind == kind && k.namespaced {
			return c.nsReach
		}
	}
	return nil
}

// namespaceObject is the component's own Namespace, included wherever an
// object in it is.
func (c *comp) namespaceObject() map[string]any {
	ann := c.home(c.nsReach)
	ann["openshift.io/node-selector"] = ""
	ann["workload.openshift.io/allowed"] = "management"
	return map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{
		"name": c.namespace, "annotations": ann, "labels": namespaceLabels()}}
}

func namespaceLabels() map[string]any {
	return map[string]any{"openshift.io/cluster-monitoring": "true", "pod-security.kubernetes.io/enforce": "privileged", "openshift.io/run-level": ""}
}

// configNamespaceObject is the openshift-config Namespace.
func (c *comp) configNamespaceObject() map[string]any {
	ann := c.everywhere()
	ann["openshift.io/node-selector"] = ""
	return map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{
		"name":        configNamespace,
		"annotations": ann,
		"labels":      map[string]any{"openshift.io/run-level": "0", "pod-security.kubernetes.io/enforce": "privileged"},
	}}
}

// configKind is the kind of the component's "Custom" objects (its
// operator configuration).
func (c *comp) configKind() string {
	return strings.ToUpper(c.noun[:1]) + strings.ReplaceAll(c.noun[1:], "-", "") + "Config"
}

func strSchema() map[string]any { return map[string]any{"type": "string"} }

func objSchema(props map[string]any) map[string]any {
	return map[string]any{"type": "object", "properties": props}
}

func stringList() map[string]any {
	return map[string]any{"type": "array", "items": strSchema()}
}

// clusterOperatorCRD is clusteroperators.config.openshift.io, about size
// bytes.
func (c *comp) clusterOperatorCRD(size int) map[string]any {
	status := map[string]any{
		"conditions": conditionsSchema(),
		"versions":   map[string]any{"type": "array", "items": objSchema(map[string]any{"name": strSchema(), "version": strSchema()})},
		"relatedObjects": map[string]any{"type": "array", "items": objSchema(map[string]any{
			"group": strSchema(), "resource": strSchema(), "name": strSchema(), "namespace": strSchema()})},
	}
	return c.platformCRD("config.openshift.io", "ClusterOperator", "clusteroperators", size, c.everywhere(), nil, status)
}

// sccCRD is securitycontextconstraints.security.openshift.io, about size
// bytes: its fields are at the top level, beside metadata. The schema
// declares every field of the API's type (nullable where the type may
// leave them null), since an apply decodes the objects of this kind into
// it, as the CVO does, and sends them with all their fields.
func (c *comp) sccCRD(size int) map[string]any {
	nullable := func(p map[string]any) map[string]any { p["nullable"] = true; return p }
	boolean := func() map[string]any { return map[string]any{"type": "boolean"} }
	integer := func() map[string]any { return map[string]any{"type": "integer", "format": "int64"} }
	ranges := func() map[string]any {
		return nullable(objSchema(map[string]any{"type": strSchema(),
			"ranges": map[string]any{"type": "array", "items": objSchema(map[string]any{"min": integer(), "max": integer()})}}))
	}
	top := map[string]any{
		"allowHostDirVolumePlugin": boolean(), "allowHostIPC": boolean(), "allowHostNetwork": boolean(),
		"allowHostPID": boolean(), "allowHostPorts": boolean(), "allowPrivilegedContainer": boolean(),
		"readOnlyRootFilesystem":          boolean(),
		"allowPrivilegeEscalation":        nullable(boolean()),
		"defaultAllowPrivilegeEscalation": nullable(boolean()),
		"priority":                        nullable(map[string]any{"type": "integer", "format": "int32"}),
		"allowedFlexVolumes":              nullable(map[string]any{"type": "array", "items": objSchema(map[string]any{"driver": strSchema()})}),
		"fsGroup":                         ranges(),
		"supplementalGroups":              ranges(),
		"runAsUser": nullable(objSchema(map[string]any{"type": strSchema(), "uid": integer(),
			"uidRangeMin": integer(), "uidRangeMax": integer()})),
		"seLinuxContext": nullable(objSchema(map[string]any{"type": strSchema(),
			"seLinuxOptions": objSchema(map[string]any{"user": strSchema(), "role": strSchema(), "type": strSchema(), "level": strSchema()})})),
		"userNamespaceLevel": strSchema(),
	}
	for _, k := range []string{"allowedCapabilities", "allowedUnsafeSysctls", "defaultAddCapabilities", "forbiddenSysctls",
		"groups", "requiredDropCapabilities", "seccompProfiles", "users", "volumes"} {
		top[k] = nullable(stringList())
	}
	return c.platformCRD("security.openshift.io", "SecurityContextConstraints", "securitycontextconstraints", size, c.everywhere(), top, nil)
}

// operatorConfigCRD is the CRD of the component's configKind, about size
// bytes.
func (c *comp) operatorConfigCRD(size int) map[string]any {
	kind := c.configKind()
	spec := map[string]any{
		"logLevel": strSchema(), "operatorLogLevel": strSchema(), "managementState": strSchema(),
		"observedConfig": objSchema(map[string]any{"settings": stringList()}),
	}
	return c.platformCRD(c.group, kind, strings.ToLower(kind)+"s", size, c.home(c.configReach), map[string]any{"spec": spec},
		map[string]any{"conditions": conditionsSchema()})
}

// platformCRD builds a cluster-scoped CRD of about size bytes, annotated
// with ann, whose schema
// has the properties fields at the top level (a "spec" entry is merged
// into spec), status (with the status subresource) when not nil, and made-up
// optional spec properties to reach the size.
func (c *comp) platformCRD(group, kind, plural string, size int, ann, fields, status map[string]any) map[string]any {
	g := c.g
	spec, _ := g.schemaProps(max(size-1500, 300), 0, 16, true)
	top := map[string]any{
		"apiVersion": map[string]any{"description": "APIVersion defines the versioned schema of this representation of an object.", "type": "string"},
		"kind":       map[string]any{"description": "Kind is a string value representing the REST resource this object represents.", "type": "string"},
		"metadata":   map[string]any{"type": "object"},
	}
	for k, v := range fields {
		if k == "spec" {
			for sk, sv := range v.(map[string]any) {
				spec[sk] = sv
			}
			continue
		}
		top[k] = v
	}
	top["spec"] = map[string]any{"description": g.sentence(10, 40), "type": "object", "properties": spec}
	version := map[string]any{"name": "v1", "served": true, "storage": true}
	if status != nil {
		top["status"] = map[string]any{"description": "status holds observed values.", "type": "object", "properties": status}
		version["subresources"] = map[string]any{"status": map[string]any{}}
	}
	version["schema"] = map[string]any{"openAPIV3Schema": map[string]any{"description": g.sentence(20, 60), "type": "object", "properties": top}}
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": plural + "." + group, "annotations": ann},
		"spec": map[string]any{
			"group":    group,
			"names":    map[string]any{"kind": kind, "listKind": kind + "List", "plural": plural, "singular": strings.ToLower(kind)},
			"scope":    "Cluster",
			"versions": []any{version},
		},
	}
}
