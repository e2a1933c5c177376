// Package clusterversion is the pure model of the cluster's record, the
// real config.openshift.io/v1 ClusterVersion named "version", as the
// cluster-version operator (CVO) keeps its status: what the status becomes
// given how far a sync has come (Update: desired, history, conditions,
// capabilities), the history's rules (a new entry per release, Partial
// until Completed, pruned to MaxHistory by the CVO's ranking), the
// Upgradeable condition from its checks (ClusterOperators, admin acks,
// deletes in progress, overrides, an update in progress), capabilities
// (enabled never become disabled; implicitly enabled ones) and how two
// versions relate (UpdateTypeOf).
//
// Everything here is a function of its arguments (the time included): the
// cluster write lives in clustersync, which reads the facts and calls this
// package. The messages follow the CVO's wording (pkg/cvo/status.go,
// status_history.go and upgradeable.go of openshift/cluster-version-operator),
// written anew.
//
// May import: nothing.
// Cluster I/O: none.
package clusterversion
