// Package cachedir keeps a cache directory within its limits: the least
// recently used entries beyond a count or a size are removed, and so are
// the temporary files of writers that died, under the directory's lock
// file so that concurrent processes do not evict at once. What an entry is
// (its file names, its size) is the caller's.
//
// The payload cache (lib/imagecache) and the plan cache (lib/plancache)
// use it.
//
// May import: nothing.
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
	// Size says whether the file named name is an entry and how many bytes
	// it takes (its companions included). It may remove a file that
	// belongs to no entry.
	Size func(dir, name string, info fs.FileInfo) (size int64, ok bool)
	// Remove removes the entry at path (its companions included).
	Remove func(path string)
}

// Evict removes, under dir's lock file, temporary files older than an
// hour and the least recently used entries (by modification time) beyond
// lim. When another process holds the lock it is left to that one.
func Evict(dir string, lim Limits, e Entries) error {
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
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
		if strings.HasPrefix(n.Name(), TempPrefix) {
			if time.Since(info.ModTime()) > staleTemp {
				os.Remove(p)
			}
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
			e.Remove(x.path)
		}
	}
	return nil
}
