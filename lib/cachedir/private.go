package cachedir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/payload-apply/payload-apply/lib/safefs"
)

// Private makes dir (0700, and its missing parents as os.MkdirAll does)
// when it is missing, and checks that it is a cache only its user can
// change before anything is read from it or written to it: dir a
// directory, not a symbolic link, owned by the user and writable by no one
// else; each directory above it owned by the user or root and writable by
// no one else (by its group only when that is the user's group; by
// anyone only with the sticky bit, as /tmp). A cache another user could
// write is a cache whose entries anyone could forge (a payload served for
// a digest the user verified). The error says what is wrong and what to
// do.
func Private(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return err
	}
	st, err := os.Lstat(abs)
	if err != nil {
		return err
	}
	uid, gid := uint32(os.Geteuid()), uint32(os.Getegid())
	if st.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s: a symbolic link, not the cache's own directory: remove it (or point the cache elsewhere) and the cache makes its own", abs)
	}
	if err := safefs.Check(abs, st, safefs.Directory); err != nil {
		return err
	}
	if err := owned(abs, st, uid, gid, false); err != nil {
		return err
	}
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			return err
		}
		if err := owned(d, st, uid, gid, true); err != nil {
			return err
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// owned checks a directory's owner and who may write it.
func owned(path string, st fs.FileInfo, uid, gid uint32, parent bool) error {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	mode := st.Mode()
	what := "the cache directory " + path
	if parent {
		what = path + ", a directory above the cache,"
	}
	switch {
	case sys.Uid != uid && (!parent || sys.Uid != 0):
		return fmt.Errorf("%s is owned by uid %d, not by this user (uid %d): anyone who owns it can forge entries; use a directory of your own (XDG_CACHE_HOME) or --no-cache", what, sys.Uid, uid)
	case !parent && mode.Perm()&0o022 != 0:
		return fmt.Errorf("%s is writable by others (mode %#o): anyone who can write it can forge entries; make it private (chmod 700 %s) or use --no-cache", what, mode.Perm(), path)
	case parent && mode&fs.ModeSticky == 0 && (mode.Perm()&0o002 != 0 || mode.Perm()&0o020 != 0 && sys.Gid != gid):
		return fmt.Errorf("%s is writable by others (mode %#o): they could replace the cache; make it private (chmod go-w %s) or use --no-cache", what, mode.Perm(), path)
	}
	return nil
}

// HeadSize is how much of a file Owned is shown.
const HeadSize = 512

// Head returns the first HeadSize bytes (or fewer) of the regular file
// path, opened without blocking (a named pipe or a device is refused, never
// waited on: lib/safefs).
func Head(path string) ([]byte, error) {
	f, err := safefs.Open(path, safefs.Regular)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, HeadSize)
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b[:n], nil
}
