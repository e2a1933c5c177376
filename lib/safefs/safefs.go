package safefs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrSpecialFile is wrapped by every *SpecialFileError.
var ErrSpecialFile = errors.New("not a regular file")

// SpecialFileError says that a path names something other than a regular
// file (or directory, where one is wanted): a named pipe, a device, a
// socket.
type SpecialFileError struct {
	// Path is the path as the caller gave it.
	Path string
	// Mode is the file's type.
	Mode fs.FileMode
	// Dir is set when a directory was wanted.
	Dir bool
}

// Error prints e.g. "x.yaml: not a regular file: a named pipe (FIFO)"
// ("not a directory" when one was wanted; without "x.yaml: " when Path is
// empty, for callers that name the file themselves).
func (e *SpecialFileError) Error() string {
	what := ErrSpecialFile.Error()
	if e.Dir {
		what = "not a directory"
	}
	if e.Path == "" {
		return fmt.Sprintf("%s: %s", what, Describe(e.Mode))
	}
	return fmt.Sprintf("%s: %s: %s", e.Path, what, Describe(e.Mode))
}

// Unwrap returns ErrSpecialFile.
func (e *SpecialFileError) Unwrap() error { return ErrSpecialFile }

// Describe names a file type in words: "a named pipe (FIFO)", "a
// character device", ...
func Describe(mode fs.FileMode) string {
	switch t := mode.Type(); {
	case t == 0:
		return "a regular file"
	case t&fs.ModeDir != 0:
		return "a directory"
	case t&fs.ModeSymlink != 0:
		return "a symbolic link"
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeCharDevice != 0:
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a block device"
	case t&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return "a special file (" + mode.Type().String() + ")"
}

// Kind says what Open accepts.
type Kind int

// What an open may find.
const (
	// Regular accepts regular files only.
	Regular Kind = iota
	// RegularOrDir accepts regular files and directories.
	RegularOrDir
	// Directory accepts directories only.
	Directory
)

func (k Kind) accepts(mode fs.FileMode) bool {
	switch {
	case mode.IsRegular():
		return k != Directory
	case mode.IsDir():
		return k != Regular
	}
	return false
}

// Check returns a *SpecialFileError when info is not of a kind k accepts
// (a directory where a regular file is wanted is an error naming it so).
func Check(path string, info fs.FileInfo, k Kind) error {
	if k.accepts(info.Mode()) {
		return nil
	}
	if info.IsDir() {
		return &fs.PathError{Op: "read", Path: path, Err: errors.New("is a directory")}
	}
	if k == Directory && info.Mode().IsRegular() {
		return &fs.PathError{Op: "read", Path: path, Err: errors.New("not a directory")}
	}
	return &SpecialFileError{Path: path, Mode: info.Mode(), Dir: k == Directory}
}

// WithoutPath returns err without the path it names, when it is a
// *SpecialFileError or a *fs.PathError for path: for callers whose own
// error names the file already.
func WithoutPath(err error, path string) error {
	var se *SpecialFileError
	if errors.As(err, &se) && se.Path == path {
		c := *se
		c.Path = ""
		return &c
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		return pe.Err
	}
	return err
}

// openFlags open for reading without blocking on a FIFO (O_NONBLOCK has
// no effect on regular files and directories).
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK

// Open opens path for reading when it is of a kind k accepts, following
// symbolic links: it stats path first, opens it with O_NONBLOCK, and
// checks the open file again, so a named pipe or a device is refused
// without blocking and without being read.
func Open(path string, k Kind) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := Check(path, st, k); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, openFlags, 0)
	if err != nil {
		return nil, err
	}
	if err := checkOpen(path, f, k); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkOpen checks an open file's type (fstat).
func checkOpen(path string, f *os.File, k Kind) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	return Check(path, st, k)
}

// ReadFile reads the regular file path (see Open), refusing one above
// max bytes (max <= 0: no limit) with a *TooLargeError before reading it.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := Open(path, Regular)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(path, f, max)
}

// TooLargeError says a file is above the size a reader accepts.
type TooLargeError struct {
	Path        string
	Size, Limit int64
}

// Error prints e.g. "x.yaml: file size 40 bytes exceeds the limit of 10".
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: file size %d bytes exceeds the limit of %d", e.Path, e.Size, e.Limit)
}

func readLimited(path string, f fs.File, max int64) ([]byte, error) {
	if max <= 0 {
		return io.ReadAll(f)
	}
	if st, err := f.Stat(); err == nil && st.Size() > max {
		return nil, &TooLargeError{Path: path, Size: st.Size(), Limit: max}
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &TooLargeError{Path: path, Size: int64(len(data)), Limit: max}
	}
	return data, nil
}
