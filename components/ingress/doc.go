// Package ingress is the ingress component: default router placement for
// single-node clusters with workers (the single-node-openshift-with-workers
// design).
//
// Pure rules (placement.go) decide, from the Infrastructure and Ingress
// config objects, the Ingress config's status.defaultPlacement (the
// installer's rule), and the replicas and node selector of the default
// IngressController. The render hook (hook.go) adds the Ingress config object
// and the default IngressController to the plan with those fields explicit,
// letting an admin's IngressController in --extra-manifests win. The
// apply-time step (step.go) writes status.defaultPlacement through the status
// subresource once the Ingress config exists.
//
// The package imports lib/component, lib/manifest, apimachinery and
// openshift/api; only step.go talks to a cluster, through component.Cluster.
//
// May import: lib/component, lib/manifest.
// Cluster I/O: none.
package ingress
