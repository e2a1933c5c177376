// Package overlays holds the kustomize overlays of the reference profiles,
// one directory per overlay (overlays/<name>/kustomization.yaml), compiled
// into the binary. A profile lists the overlays it applies in
// spec.overlays; --overlays-dir adds more directories of the same shape.
//
// The package is data only: it exposes the directory through io/fs and
// imports nothing but embed.
//
// May import: nothing.
// Cluster I/O: none.
package overlays
