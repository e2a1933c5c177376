// Package manifest parses release-payload manifests and decides which of them a
// cluster includes.
//
// It owns four things: splitting YAML and JSON files into documents while
// remembering each document's file, index and line (Parse); the inclusion
// decision with a reason for every exclusion (Selector, built on library-go's
// Manifest.Include); the annotation lint that `payload-apply validate`
// reports (Lint); and encoding objects as YAML (MarshalYAML). Besides,
// EncodeParsed and DecodeParsed keep parsed manifests in a compact binary
// form, which a cached release is decoded from (twenty times faster than
// parsing) instead of being parsed again.
//
// Decoding and encoding give exactly what library-go's ParseManifests and
// sigs.k8s.io/yaml give, by shorter ways where the package can vouch for the
// result (decode.go, marshal.go), by theirs otherwise.
//
// The package is a leaf of the module: it imports apimachinery, openshift/api,
// library-go and the YAML and JSON libraries they use (go-yaml v2 and v3,
// sigs.k8s.io/yaml and sigs.k8s.io/json) only. It performs no I/O beyond what
// its callers hand it, does no logging and never talks to a cluster.
//
// May import: lib/safefs.
// Cluster I/O: none.
package manifest
