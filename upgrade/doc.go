// Package upgrade is the pure model of moving a cluster from release A to
// release B as the cluster-version operator (CVO) does: what B creates,
// changes, deletes (release.openshift.io/delete), leaves behind (objects of
// A that B drops without a delete manifest: orphans, left on the cluster)
// and moves to another run level (Compare); what B's deletes of Namespaces
// and CustomResourceDefinitions take with them, which then are no orphans
// (Takes, and the checks ReleaseDeletesWhatItApplies and
// ReleaseDeletesOthersObjects: TakesVerdicts); which capabilities B enables
// implicitly because objects A runs need them (ImplicitlyEnabled); and the
// CVO's preconditions, each a named check with a verdict
// (ClusterVersionUpgradeable, ClusterVersionGiantHop,
// ClusterVersionRollback), summarized with the checks a caller forces
// (Summarize).
//
// It reads plans and facts the caller gathered; clustersync reads the
// cluster and runs the update.
//
// May import: lib/clusterversion, lib/manifest, payload, plan.
// Cluster I/O: none.
package upgrade
