// Package imagecache keeps payloads pulled from registries on disk, by
// digest, so that reading the same release again asks the network nothing
// and reads no image again: one tar file per entry holding the payload
// files as lib/image flattened them, and the image's config.
//
// Entries are written to a temporary file and renamed into place, so
// readers never see a partial entry and concurrent writers of one digest
// leave one whole entry; an entry removed while a reader has it open is
// still read whole (it is one file). Beside an entry, a .parsed file keeps
// what its manifests parse to (Parsed), so that nothing is parsed twice
// either. Eviction (least recently used first, beyond MaxEntries or
// MaxBytes) runs after a Put under an exclusive lock file, skipped when
// another process holds it, and removes only files whose first bytes are
// the cache's (lib/cachedir). Entries are trusted as the user's own files,
// so the cache directory must be private: one that is a link, or that
// another user owns or may write, is not used (cachedir.Private). Every
// file is opened only when it is a regular file (lib/safefs), and its
// first bytes are checked before it is read whole.
//
// It imports lib/image, lib/manifest (the parsed form), go-containerregistry's
// v1 types and the standard library.
//
// May import: lib/cachedir, lib/image, lib/manifest, lib/safefs.
// Cluster I/O: none.
package imagecache
