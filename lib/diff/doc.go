// Package diff compares two sets of objects (two rendered selections, or the
// cluster and what an apply would make of it) and prints the result: objects
// to create, change and delete, a unified diff per changed object (go-udiff),
// grouped by run level and component, with a summary.
//
// Before comparing, fields that only the server owns (managedFields,
// resourceVersion, uid, generation, creationTimestamp, status, ...) are
// dropped and Secret data is masked, so the output never leaks a secret.
//
// The package is pure: it imports lib/manifest, apimachinery and go-udiff.
//
// May import: lib/manifest, lib/redact.
// Cluster I/O: none.
package diff
