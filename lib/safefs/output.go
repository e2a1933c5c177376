package safefs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
)

// ErrEscapes is wrapped by the error for a write that would leave the
// output directory (an absolute or "../" name, or a symbolic link inside
// the directory that leads out of it).
var ErrEscapes = errors.New("refusing to write outside the output directory")

// Output is a directory files are written into, confined to it as Dir
// confines reads: every name is resolved through os.Root, so neither a
// name nor a symbolic link already inside the directory can take a write
// out of it. Files are written to a temporary name beside their place and
// renamed over it, so a named pipe, a device or a symbolic link standing
// at a file's place is replaced, never written through (and never blocks).
// An Output is safe for concurrent use.
type Output struct {
	dir  string
	root *os.Root
}

// CreateOutput creates dir (and its parents) when missing and opens it
// for writing. Close it when done.
func CreateOutput(dir string) (*Output, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if err := Check(dir, st, Directory); err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &Output{dir: dir, root: r}, nil
}

// Dir returns the directory as CreateOutput was given it.
func (o *Output) Dir() string { return o.dir }

// Close releases the directory.
func (o *Output) Close() error { return o.root.Close() }

// WriteFile writes data to name (slash-separated, relative to the
// directory), creating the directories above it, with mode perm. The error
// wraps ErrEscapes when name, or a symbolic link on its way, leads outside
// the directory.
func (o *Output) WriteFile(name string, data []byte, perm fs.FileMode) error {
	clean := path.Clean(name)
	if !fs.ValidPath(clean) || clean == "." {
		return fmt.Errorf("%s: %w %s", name, ErrEscapes, o.dir)
	}
	if dir := path.Dir(clean); dir != "." {
		if err := o.root.MkdirAll(dir, 0o755); err != nil {
			return o.wrap(name, err)
		}
	}
	tmp := path.Join(path.Dir(clean), "."+path.Base(clean)+".tmp-"+randomSuffix())
	f, err := o.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return o.wrap(name, err)
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = o.root.Remove(tmp)
		return o.wrap(name, err)
	}
	if err := o.root.Rename(tmp, clean); err != nil {
		_ = o.root.Remove(tmp)
		return o.wrap(name, err)
	}
	return nil
}

// wrap names the file and turns os.Root's "path escapes from parent" into
// ErrEscapes.
func (o *Output) wrap(name string, err error) error {
	if strings.Contains(err.Error(), "path escapes from parent") {
		return fmt.Errorf("%s: %w %s: a symbolic link on the way leads out of it", name, ErrEscapes, o.dir)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%s: write under %s: %w", name, o.dir, err)
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
