// Package manifest parses release-payload manifests and decides which of them a
// cluster includes.
//
// It owns three things: splitting YAML and JSON files into documents while
// remembering each document's file, index and line (Parse); the inclusion
// decision with a reason for every exclusion (Selector, built on library-go's
// Manifest.Include); and the annotation lint that `payload-apply validate`
// reports (Lint).
//
// The package is a leaf of the module: it imports apimachinery, openshift/api
// and library-go only. It performs no I/O beyond what its callers hand it, does
// no logging and never talks to a cluster.
package manifest
