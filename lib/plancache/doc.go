// Package plancache keeps what planning a payload costs on disk, so that
// the next command over the same payload does not pay it again: the parse
// of every manifest file (Parsed, a payload.ParseCache), which is most of
// a plan's time. An entry is found by a Key, the SHA-256 of everything it
// was made from (plan uses the payload's content as payload.Fingerprint
// hashes it, the binary that made it, BinaryID, and the parse limits); the
// caller builds it from what it read, so a changed file is a different
// key, never a stale entry.
//
// Each entry is one file, <hex key>.entry: a header (magic, format, the
// key again, the body's length and CRC-32C) and the body. Writers write a
// temporary file and rename it into place, so readers never see part of
// an entry and concurrent writers of one key leave one whole entry; an
// entry whose header does not match (another format, another key, a
// truncated or damaged body) is removed and read as a miss. Eviction
// (least recently used first, beyond MaxEntries or MaxBytes) runs after a
// Put under an exclusive lock file, skipped when another process holds it,
// as lib/imagecache does, and removes only files that begin as entries do
// (lib/cachedir). The directory must be private to its user: one that is
// a link, or that another user owns or may write, is not used
// (cachedir.Private). Entries are opened only when they are regular files
// (lib/safefs), and their header is checked against their size before
// they are read whole.
//
// May import: lib/cachedir, lib/manifest, lib/safefs.
// Cluster I/O: none.
package plancache
