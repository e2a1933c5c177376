// Package platformoperators is the Platform Operators Manager (POM)
// component, tech preview: an admin's PlatformOperator
// (platform.openshift.io/v1alpha1) names an OLM package; the component picks
// a bundle of that package from a file-based catalog and asks rukpak to
// install it through a BundleDeployment (core.rukpak.io) named after the
// PlatformOperator and controlled by it; it reports each PlatformOperator's
// Installed condition from its BundleDeployment's conditions, and the state
// of them all in the aggregate ClusterOperator platform-operators-aggregated,
// which the apply waits on like any ClusterOperator.
//
// The pure parts, each in its own file:
//   - catalog.go: LoadCatalog reads a file-based catalog directory (olm.package,
//     olm.channel and olm.bundle documents, YAML or JSON).
//   - select.go, csv.go: Catalog.Select picks the highest-semver bundle of a
//     package that passes the cluster version filter (olm.maxOpenShiftVersion)
//     and the phase-0 restrictions (csv.go reads the ClusterServiceVersion),
//     and says why every other bundle was rejected.
//   - validate.go: DecodePlatformOperator and ValidatePackageName check what
//     the CRD checks, and the package name stricter than its unanchored
//     pattern (a whole DNS label), with FILE#DOC and field in the message.
//   - bundledeployment.go: BundleDeployment renders the object in the
//     v1alpha2 (default, rukpak v0.17.0) or v1alpha1 (OpenShift 4.12) Shape,
//     with the provisioner classes and name limits rukpak's CRDs accept.
//   - conditions.go: InstalledCondition derives the Installed condition from
//     a BundleDeployment's conditions.
//   - clusteroperator.go: AggregateStatus and CoreStatus compute the two
//     ClusterOperators' status.
//
// Hook (hook.go) is the render hook: with the TechPreviewNoUpgrade feature
// set and the manager in the plan, it validates the PlatformOperators among
// the extra manifests (they stay in the plan), shows the BundleDeployments
// it expects to be created (StepSpec.Preview, without the owner reference's
// uid) and returns the apply-time Step (step.go). The Step is the manager's
// reconcile, run by the apply engine through component.Cluster only: it
// creates the missing BundleDeployments with their controller owner
// reference (the PlatformOperator's real UID), writes every
// PlatformOperator's status, and the status of both ClusterOperators, each
// only when it differs; cluster.go holds its reads and status writes.
//
// Where the seed is silent the behaviour follows openshift/platform-operators
// (main 83d274ee, release-4.12 c930dc74) or docs/platform-operators.md says
// why not; upstream_test.go holds upstream's pinned vectors.
//
// The package imports lib/component, lib/manifest, apimachinery, openshift/api
// (config types), blang/semver and client-go's dynamic client (only in the
// step). It never imports plan or payload.
//
// May import: lib/component, lib/manifest.
// Cluster I/O: none.
package platformoperators
