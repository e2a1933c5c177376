// Package genpayload generates synthetic release payloads shaped like a
// real one, for benchmarks at 1, 10 and 100 times the size of a release:
// the same run levels, component sizes, kinds, document sizes (CRDs above
// all), multi-document files, CRD variants per feature set, profile,
// capability, feature-set and feature-gate annotations and create-only and
// delete markers as ../shared/testdata/ocp-payload, in the proportions
// shape.go records. The content (names, schemas, descriptions) is made up;
// nothing of the real payload is copied.
//
// Output depends only on Options: the same seed and scale give the same
// bytes. hack/gen-payload is the command; benchmarks and tests import this
// package. It imports only the standard library.
//
// May import: nothing.
// Cluster I/O: none.
package genpayload
