// Package component defines the render hooks through which payload
// components (ingress placement, node tuning, platform operators) take part in
// planning, and the cluster facts they read (ClusterConfig, from
// --cluster-config).
//
// A Hook is pure: it sees the selected objects, the admin's extra manifests
// and the cluster facts, and returns objects to add and objects to remove.
// Apply-time work that needs the cluster (real UIDs, status subresources,
// finalizers) is a Step, returned by the hook and run by the apply engine as
// a node of the task graph.
//
// The package imports lib/manifest, apimachinery, openshift/api and
// client-go's dynamic client interface; hooks never talk to a cluster, steps
// do only through the Cluster they are given.
package component
