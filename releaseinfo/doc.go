// Package releaseinfo describes a release payload the way 'oc adm release
// info' does: its name, digest, creation time, platform, release metadata
// (version, update edges, channels), the components with their run levels
// and manifest counts, and the image references; and compares two
// payloads: images changed, added and removed, manifest files changed,
// added and removed.
//
// It is pure: it reads a loaded payload.Payload and its files (fs.FS), and
// never the network. It imports payload, lib/manifest and the standard
// library.
//
// May import: payload.
// Cluster I/O: none.
package releaseinfo
