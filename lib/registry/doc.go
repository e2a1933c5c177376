// Package registry pushes release payload images to container registries
// and pulls payloads from them, with go-containerregistry's remote package.
//
// A Client talks to registries as the container tools do: credentials from
// the files podman, skopeo, oc and docker keep (Keychain), TLS verified
// against the system roots (plus Options.RootCAs) except for the hosts in
// Options.Insecure, which may also be reached over plain HTTP, as skopeo's
// --tls-verify=false allows. Every response is bounded: manifests and other
// metadata by Limits.MaxManifestSize, redirect chains by Limits.MaxRedirects,
// layers by image.LoadOptions; every body must come at Limits.MinRate over
// every Limits.RateWindow, and every response within its budget
// (Limits.Budget: ReadBudget, plus a blob's length at MinRate), so that a
// registry sending a byte at a time cannot hold a command; the caller's
// context (Ctrl-C) ends a transfer at once.
//
// Pull reads only the layers a payload needs (image.FlattenTop): from the
// top of the image down to the layer below which nothing of manifests/ and
// release-manifests/ can come. Layers are spooled to temporary files, checked
// against their digests, and removed when Pull returns.
//
// The pure parts (references, credential files) are apart from the network
// code (transport, client, pull, push, cosign signature images). The package
// imports go-containerregistry, lib/image, lib/signature (the cosign
// signature type it reads and writes) and the standard library; never
// client-go or the payload model.
//
// May import: lib/image, lib/safefs, lib/signature.
package registry
