package safefs

import (
	"io/fs"
	"os"
	"slices"
	"strings"
)

// Dir is a directory given on the command line, read through os.Root so
// that no name, and no symbolic link, reaches outside it ("path escapes
// from parent"), whatever the code reading it checks itself. Open and
// ReadDir refuse what is neither a regular file nor a directory (see
// Open), without blocking on it. Each call opens the root and closes it
// again (files opened stay usable), so nothing is left open when the
// caller is done.
type Dir string

var (
	_ fs.ReadFileFS = Dir("")
	_ fs.ReadDirFS  = Dir("")
	_ fs.StatFS     = Dir("")
	_ fs.ReadLinkFS = Dir("")
)

func (d Dir) root(name string) (*os.Root, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	r, err := os.OpenRoot(string(d))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return r, nil
}

// open opens name (of a kind k accepts) without blocking.
func (d Dir) open(name string, k Kind) (*os.File, error) {
	r, err := d.root(name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return OpenIn(r, name, k)
}

// OpenIn opens name under r for reading when it is of a kind k accepts,
// as Open does (stat, O_NONBLOCK, fstat): a named pipe or a device inside
// a root is refused without blocking.
func OpenIn(r *os.Root, name string, k Kind) (*os.File, error) {
	st, err := r.Stat(name)
	if err != nil {
		return nil, err
	}
	if err := Check(name, st, k); err != nil {
		return nil, err
	}
	f, err := r.OpenFile(name, openFlags, 0)
	if err != nil {
		return nil, err
	}
	if err := checkOpen(name, f, k); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Open opens name, a regular file or a directory.
func (d Dir) Open(name string) (fs.File, error) {
	f, err := d.open(name, RegularOrDir)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// ReadFile reads the regular file name.
func (d Dir) ReadFile(name string) ([]byte, error) {
	f, err := d.open(name, Regular)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(name, f, 0)
}

// ReadDir lists the directory name, sorted by name.
func (d Dir) ReadDir(name string) ([]fs.DirEntry, error) {
	f, err := d.open(name, Directory)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// Stat describes name, following links.
func (d Dir) Stat(name string) (fs.FileInfo, error) {
	r, err := d.root(name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Stat(name)
}

// Lstat describes name without following a final link.
func (d Dir) Lstat(name string) (fs.FileInfo, error) {
	r, err := d.root(name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Lstat(name)
}

// ReadLink returns the target of the link name.
func (d Dir) ReadLink(name string) (string, error) {
	r, err := d.root(name)
	if err != nil {
		return "", err
	}
	defer r.Close()
	return r.Readlink(name)
}
