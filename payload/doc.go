// Package payload is the release-payload model: it loads a payload (Load),
// selects what a cluster includes (Payload.Select), orders the result into
// the CVO's task graph (NewTaskGraph) and walks that graph (RunGraph) with an
// injected function. Run applies a graph through an Applier, the one-method
// interface behind which cluster access sits (the CVO's ResourceBuilder),
// with an optional stage of tasks applied ahead of the graph
// (StageCRDsAndNamespaces).
//
// Everything here is pure and offline: the package reads payloads through
// io/fs, never imports client-go's cluster I/O, krusty or
// go-containerregistry, and does no logging. It may import lib/manifest,
// apimachinery, openshift/api and library-go.
package payload
