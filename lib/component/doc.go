// Package component defines the render hooks through which payload
// components (ingress placement, node tuning, platform operators) take part in
// planning, and the cluster facts they read (ClusterConfig, from
// --cluster-config).
//
// A Hook is pure: it sees the selected objects, the admin's extra manifests
// and the cluster facts, and returns objects to add and objects to remove.
// The package imports lib/manifest, apimachinery and openshift/api only; it
// never talks to a cluster.
package component
