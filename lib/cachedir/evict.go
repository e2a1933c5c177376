// Package cachedir keeps a cache directory private and within its limits.
// Private makes the directory, or checks one that exists, before anything
// is read from it: not a link, owned by its user, writable by no one else
// (a cache others can write serves what they forged). Evict removes the
// least recently used entries beyond a count or a size, and the temporary
// files of writers that died, under the directory's lock file so that
// concurrent processes do not evict at once; it removes only files the
// cache can show it wrote (their first bytes are its format's, Owned), so
// that a cache directory that is in fact a user's (a link, a wrong
// setting) loses nothing of the user's. What an entry is (its file names,
// its size, its magic) is the caller's.
//
// The payload cache (lib/imagecache) and the plan cache (lib/plancache)
// use it.
//
// May import: lib/safefs.
//
// Cluster I/O: none.
package cachedir

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// TempPrefix starts the name of a file being written; writers create it
// in the directory and rename it into place.
const TempPrefix = ".tmp-"

// staleTemp is how old a temporary file must be before it is taken for a
// dead writer's.
const staleTemp = time.Hour

// Limits bound a cache directory.
type Limits struct {
	// MaxEntries is how many entries are kept.
	MaxEntries int
	// MaxBytes is how many bytes the entries may take; the most recently
	// used entry is kept whatever its size.
	MaxBytes int64
}

// Entries tell Evict what the directory holds.
type Entries struct {
	// Owned says, from a file's name and first bytes (at most HeadSize),
	// whether the cache wrote it: its magic. Nothing else is removed,
	// temporary files included.
	Owned func(name string, head []byte) bool
	// Size says whether the file named name (an Owned one) is an entry
	// and how many bytes it takes (its companions included). It may
	// remove an Owned file that belongs to no entry (RemoveOwned).
	Size func(dir, name string, info fs.FileInfo) (size int64, ok bool)
	// Companions are the files removed with the entry at path (each only
	// when Owned); nil: none.
	Companions func(path string) []string
}

// RemoveOwned removes the regular file path when owned says, from its
// first bytes, that the cache wrote it.
func RemoveOwned(path string, owned func(name string, head []byte) bool) {
	if head, err := Head(path); err == nil && owned(filepath.Base(path), head) {
		os.Remove(path)
	}
}

// Evict removes, under dir's lock file, temporary files older than an
// hour and the least recently used entries (by modification time) beyond
// lim: only files e.Owned recognizes. When another process holds the lock
// it is left to that one.
func Evict(dir string, lim Limits, e Entries) error {
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil // another process is evicting
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck
	names, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	type entry struct {
		path string
		size int64
		used time.Time
	}
	var list []entry
	for _, n := range names {
		info, err := n.Info()
		if err != nil {
			continue
		}
		p := filepath.Join(dir, n.Name())
		if !info.Mode().IsRegular() || n.Name() == ".lock" {
			continue
		}
		if strings.HasPrefix(n.Name(), TempPrefix) {
			if time.Since(info.ModTime()) > staleTemp {
				RemoveOwned(p, e.Owned)
			}
			continue
		}
		if head, err := Head(p); err != nil || !e.Owned(n.Name(), head) {
			continue
		}
		if size, ok := e.Size(dir, n.Name(), info); ok {
			list = append(list, entry{p, size, info.ModTime()})
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].used.After(list[j].used) })
	var total int64
	for i, x := range list {
		total += x.size
		if i >= lim.MaxEntries || (total > lim.MaxBytes && i > 0) {
			os.Remove(x.path) // Owned: checked above
			if e.Companions != nil {
				for _, c := range e.Companions(x.path) {
					RemoveOwned(c, e.Owned)
				}
			}
		}
	}
	return nil
}
