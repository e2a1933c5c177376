// Package profiles owns cluster profile definitions: the embedded reference
// profiles (self-managed-high-availability, the default;
// single-node-developer; ibm-cloud-managed; hypershift), user-defined ones
// read from a directory (--profiles-dir), inheritance through spec.parent,
// and which profile is in effect for a cluster (Resolve).
//
// A profile file is YAML:
//
//	apiVersion: payload-apply/v1alpha1
//	kind: ClusterProfile
//	metadata:
//	  name: crc
//	spec:
//	  parent: single-node-developer    # optional; not inherited
//	  description: CodeReady Containers # the child's wins
//	  featureGateProfile: SelfManaged   # or Hypershift; protected
//	  hypershift: false                 # HyperShift hosted cluster; protected
//	  defaultTopology:                  # assumed without --cluster-config
//	    controlPlaneTopology: SingleReplica
//	    infrastructureTopology: SingleReplica
//	  overlays:                         # keyed by name; parent's first
//	  - name: crc
//	    path: crc                       # under overlays/ or --overlays-dir; default: name
//	  labels:                           # merged by key
//	    example.com/tier: dev
//
// Inheritance follows the NamespacedCloudProfile rules (Rules, SpecRules):
// maps merge by key, keyed lists by their key with the parent's order kept
// and the child's new entries appended, the child's scalars win, and
// protected fields an ancestor set cannot change. Set.Profile returns the
// merged Profile with the file each field came from.
//
// The package is pure: it reads definitions through io/fs, never talks to a
// cluster (Resolve takes the cluster-profile ConfigMap's data from its
// caller), does no logging, and imports only apimachinery, openshift/api
// and sigs.k8s.io/yaml.
//
// May import: nothing.
// Cluster I/O: none.
package profiles
