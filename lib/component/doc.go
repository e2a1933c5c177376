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
// A Step reaches the cluster only through the Cluster it is given, whose
// Client (an interface over apimachinery types) the apply engine
// implements in lib/resourceapply: neither this package nor the
// components import client-go, so planning links no cluster I/O.
// Components receive their configuration as typed fields of their Hook
// values (plan.Components), not through the Input.
//
// May import: lib/manifest.
// Cluster I/O: none.
package component
