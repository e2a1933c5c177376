// Package payload is the release-payload model: it loads a payload (Load),
// selects what a cluster includes (Payload.Select), orders the result into
// the CVO's task graph (NewTaskGraph) and walks that graph (RunGraph) with an
// injected function. Run applies a graph through an Applier, the one-method
// interface behind which cluster access sits (the CVO's ResourceBuilder),
// with an optional stage of tasks applied ahead of the graph
// (StageCRDsAndNamespaces).
//
// Components' apply-time steps are tasks too (NewTaskGraph with GraphOptions.Steps): a Task
// carries either an object (Manifest) or a Step, which this package knows
// only by name; the Applier runs it. A step's node requires the nodes of
// the objects it runs after, and Run does not run a step whose object failed.
//
// A payload loaded again and again (a release from the cache) need not be
// parsed again: LoadOptions.Parsed (a ParseCache) hands Load what its files
// parsed to, and Load then does not even read those files.
//
// Everything here is pure and offline: the package reads payloads through
// io/fs, never imports client-go's cluster I/O, krusty or
// go-containerregistry, and does no logging. It may import lib/manifest,
// apimachinery, openshift/api and library-go.
//
// May import: lib/manifest, lib/parallel, lib/safefs, profiles.
// Cluster I/O: none.
package payload
