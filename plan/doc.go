// Package plan runs the offline pipeline from a payload to an ordered plan:
// resolve the profile in effect (--profile, the cluster's
// openshift-config/cluster-profile ConfigMap, or the default) and merge it
// with its ancestors; load; select (profile chain, feature set, feature
// gates, capabilities, exclusion id); apply the profile chain's kustomize
// overlays, root first (lib/overlay); add the generated
// openshift-config/cluster-profile ConfigMap; and build the task graph.
// Component render hooks plug in after the overlays as they are built.
//
// It is pure: the same Options give the same Plan, byte for byte. It never
// talks to a cluster; callers that know a cluster resolve its facts first
// and pass them in Options.
//
// Planning many selections of one payload (Validate's matrix of profiles
// and feature sets, a caller rendering several) loads it once
// (Options.Loaded) and shares a Cache: each profile's templates, overlay
// builds and each object's YAML are made once. A single render loads only
// what its selection includes whole (Options.Lean).
//
// May import: components/..., lib/apicheck, lib/component, lib/diff, lib/image, lib/jsonenc, lib/parallel,
// lib/manifest, lib/overlay, lib/plancache, lib/safefs, overlays, payload, profiles.
// Cluster I/O: none.
package plan
