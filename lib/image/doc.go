// Package image builds release payload images and reads them back, without
// a container daemon or a registry.
//
// Build turns a payload file system (manifests/ and release-manifests/) into
// a v1.Image whose one added layer holds those directories at the image root,
// labelled io.openshift.release=<version> as `oc adm release new` labels a
// release image; Write stores it as an OCI image layout directory or a
// docker-archive tarball. Same payload and options, same digest.
//
// Open and Load read an OCI layout directory, an OCI archive (a tar of such
// a directory) or an image tarball; Load flattens the layers in memory,
// honouring whiteouts and opaque directories, and keeps only the payload
// directories. Load refuses hostile archives with a *RefusedError: paths with
// ".." or absolute paths, links leaving the image root, devices and other
// special files, and entries, totals, file counts and layer counts above the
// LoadOptions limits. It writes nothing to disk. FlattenTop gives the same
// result reading only the layers the payload can come from (from the top
// down to a layer that hides the payload directories), for images whose
// layers are expensive to read; NewFS makes an FS of files kept elsewhere
// (a cache).
//
// The package imports go-containerregistry and the standard library only:
// no client-go, and nothing from this module (the payload model sits above
// it and reads the result through io/fs).
//
// May import: lib/safefs.
// Cluster I/O: none.
package image
