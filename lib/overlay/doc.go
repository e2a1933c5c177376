// Package overlay is the overlay stage of the pipeline: it applies the
// kustomize overlays of a profile chain to the objects selection included,
// root profile first, and keeps every object's source file, document and run
// level through the overlay.
//
// An overlay is a directory with a kustomization file (Source, Find). Apply
// copies it alone into kustomize's in-memory file system, writes the objects
// next to it as one resource file that it adds to the kustomization, and runs
// krusty. Patches (strategic merge and JSON 6902), replacements, labels,
// namespace and name transforms and generators work as in `kustomize build`.
// Before the build each object is tagged with its index (IndexAnnotation), so
// that what comes out is matched to what went in and keeps its File, Doc and
// OriginalFilename; objects without a tag were added by the overlay, and
// tags that do not come back were deleted ($patch: delete).
//
// Overlays can read nothing but their own directory: Check refuses absolute
// paths, "..", remote resources and Helm charts before the build, and the
// build sees only the overlay's copy.
//
// An overlay made only of patches gets only the objects its patches may
// select (narrow.go); the others pass through untouched, as kustomize would
// leave them. A Cache remembers builds across calls (validate and renders
// of many selections), object by object when the patches cannot mix
// objects.
//
// krusty replaces a process-wide OpenAPI schema on every run, so builds are
// serialised by a package-level mutex (the one piece of package state). The
// package imports kustomize, apimachinery and lib/manifest; it never talks to
// a cluster and does no logging.
//
// May import: lib/manifest.
// Cluster I/O: none.
package overlay
