// Package genpayload generates synthetic release payloads shaped like a
// real one, for benchmarks at 1, 10 and 100 times the size of a release:
// the same run levels, component sizes, kinds, document sizes (CRDs above
// all), multi-document files, CRD variants per feature set, profile,
// capability, feature-set and feature-gate annotations and create-only and
// delete markers as ../shared/testdata/ocp-payload, in the proportions
// shape.go records. The content (names, schemas, descriptions) is made up;
// nothing of the real payload is copied.
//
// It applies to a bare API server as the real payload does (platform.go):
// the CRDs of the kinds its objects use are in it (ClusterOperator,
// SecurityContextConstraints, each component's operator configuration),
// but for ServiceMonitor, PrometheusRule and CredentialsRequest, whose
// objects fail as the real payload's do; every namespace an object is put
// in is created by the payload, in every profile the object is included
// in (openshift-config too, for the tool's cluster-profile ConfigMap); and
// every x-kubernetes-validations rule names only properties of the schema
// it is attached to, with transition rules (oldSelf) only where the server
// can pair an object with its old value. A second apply writes nothing.
//
// Output depends only on Options: the same seed and scale give the same
// bytes. hack/gen-payload is the command; benchmarks and tests import this
// package. It imports only the standard library.
//
// May import: nothing.
// Cluster I/O: none.
package genpayload
