// Package profiles owns cluster profile definitions: the embedded reference
// profiles (self-managed-high-availability, single-node-developer,
// ibm-cloud-managed, hypershift), user-defined ones read from a directory,
// and the parent chain that inclusion walks.
//
// A profile file is YAML:
//
//	apiVersion: payload-apply/v1alpha1
//	kind: ClusterProfile
//	metadata:
//	  name: crc
//	spec:
//	  parent: single-node-developer
//	  description: ...
//	  featureGateProfile: SelfManaged   # or Hypershift
//
// The package is pure: it reads definitions through io/fs and imports only
// apimachinery, openshift/api and sigs.k8s.io/yaml.
package profiles
