// Package apicheck checks objects, before anything is sent, the way the
// API server checks them when they arrive, for the types it can know
// offline: the built-in Kubernetes kinds (the structured-merge-diff schemas
// client-go carries, the same the server's server-side apply uses), and
// custom resources whose CustomResourceDefinition is among the objects
// (their OpenAPI v3 schema, made structural, pruned, defaulted and
// validated with the API server's own code, k8s.io/apiextensions-apiserver).
// Every object also gets the checks the server makes of any object: an
// apiVersion and kind it can route, a string namespace and name it accepts,
// labels and annotations that are maps of strings, and no client-side
// List.
//
// Each problem names the field path and what is wrong; kinds it knows
// nothing of (served by an aggregated API, or defined by a
// CustomResourceDefinition that is not among the objects) get only the
// generic checks. x-kubernetes-validations (CEL) rules are not evaluated.
//
// May import: lib/manifest.
// Cluster I/O: none.
package apicheck
