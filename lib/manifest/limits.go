package manifest

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/payload-apply/payload-apply/lib/safefs"
)

// Limits bound what Parse accepts from one file, so that a hostile
// or broken file is refused with an error naming it instead of exhausting
// memory or stack. A zero field takes its value from DefaultLimits.
//
// Two more bounds come from go-yaml itself and cannot be changed: a
// document whose aliases expand to far more nodes than it holds ("billion
// laughs") fails with "document contains excessive aliasing", and nesting
// beyond 10,000 levels with "exceeded max depth of 10000"; MaxDepth is
// checked after decoding and is much lower.
type Limits struct {
	// MaxFileSize is the largest file, in bytes.
	MaxFileSize int64
	// MaxDocumentSize is the largest document of a file, in bytes.
	MaxDocumentSize int
	// MaxDepth is the deepest nesting of maps and lists in an object (the
	// object itself is depth 1).
	MaxDepth int
}

// DefaultLimits returns the limits Parse uses: 32 MiB per file (as
// lib/image reads payload files), 4 MiB per document (more than the API
// server accepts in one request, 3 MiB) and a depth of 128. The real
// OpenShift payload's largest file and document are 0.8 MiB (one CRD) and
// its deepest object is 40 levels deep.
func DefaultLimits() Limits {
	return Limits{MaxFileSize: 32 << 20, MaxDocumentSize: 4 << 20, MaxDepth: 128}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxFileSize <= 0 {
		l.MaxFileSize = d.MaxFileSize
	}
	if l.MaxDocumentSize <= 0 {
		l.MaxDocumentSize = d.MaxDocumentSize
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = d.MaxDepth
	}
	return l
}

// ErrLimit is the error every limit violation wraps: errors.Is(err,
// ErrLimit) tells a refused file from a malformed one.
var ErrLimit = errors.New("limit exceeded")

// LimitError says which limit a file or document exceeds.
type LimitError struct {
	// What names the limit: "file size", "document size", "payload size",
	// "file count", "depth", or one of a template's: "rendered file size",
	// "template operations", "template time" (Size and Limit in
	// nanoseconds), "template nesting", "template string size".
	What string
	// Size is what the input has (for "depth", Limit+1: the walk stops
	// there), Limit the most allowed.
	Size, Limit int64
}

// Error prints e.g. "document size 5242880 bytes exceeds the limit of
// 4194304", or "nested more than 128 levels deep (the depth limit)".
func (e *LimitError) Error() string {
	switch e.What {
	case "depth":
		return fmt.Sprintf("nested more than %d levels deep (the depth limit)", e.Limit)
	case "file count":
		return fmt.Sprintf("more than %d files (the file count limit)", e.Limit)
	case "template operations":
		return fmt.Sprintf("template execution stopped after %d operations (loop iterations, template and function calls; the operation limit)", e.Limit)
	case "template time":
		return fmt.Sprintf("template execution stopped after %s (the time limit)", time.Duration(e.Limit))
	case "template call depth":
		return fmt.Sprintf("template calls nested more than %d deep (text/template's limit)", e.Limit)
	case "template nesting":
		return fmt.Sprintf("template control structures nested more than %d levels deep (the nesting limit)", e.Limit)
	case "template string size":
		return fmt.Sprintf("template function would build a string of %d bytes, above the limit of %d", e.Size, e.Limit)
	}
	return fmt.Sprintf("%s %d bytes exceeds the limit of %d", e.What, e.Size, e.Limit)
}

// Unwrap returns ErrLimit.
func (e *LimitError) Unwrap() error { return ErrLimit }

// tooDeep reports whether v nests maps and lists deeper than max levels
// (v itself is level 1 when it is a map or list). It stops as soon as it
// knows.
func tooDeep(v any, max int) bool {
	if max <= 0 {
		switch v.(type) {
		case map[string]any, []any:
			return true
		}
		return false
	}
	switch t := v.(type) {
	case map[string]any:
		for _, e := range t {
			if tooDeep(e, max-1) {
				return true
			}
		}
	case []any:
		for _, e := range t {
			if tooDeep(e, max-1) {
				return true
			}
		}
	}
	return false
}

// ReadFile reads name from fsys, refusing a file above max bytes (0:
// DefaultLimits().MaxFileSize) with a *LimitError before reading it when
// its size is known, and after reading max+1 bytes otherwise, so that a
// huge file costs at most max+1 bytes. Anything but a regular file (a
// named pipe, a device, a socket, a directory) is refused with a
// *safefs.SpecialFileError: before it is opened when fsys can stat
// (fs.StatFS; lib/safefs.Dir also opens without blocking), else once it
// is open, before it is read.
func ReadFile(fsys fs.FS, name string, max int64) ([]byte, error) {
	return ReadFileInto(fsys, name, max, nil)
}

// ReadFileInto is ReadFile into buf's memory when it holds the file: a
// caller reading many files one after the other (to hash them) reuses one
// buffer instead of making garbage of every file. The result may share
// buf's memory.
func ReadFileInto(fsys fs.FS, name string, max int64, buf []byte) ([]byte, error) {
	if max <= 0 {
		max = DefaultLimits().MaxFileSize
	}
	if sfs, ok := fsys.(fs.StatFS); ok {
		st, err := sfs.Stat(name)
		if err != nil {
			return nil, err
		}
		if !st.Mode().IsRegular() {
			return nil, &safefs.SpecialFileError{Mode: st.Mode()}
		}
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &safefs.SpecialFileError{Mode: st.Mode()}
	}
	size := st.Size()
	if size > max {
		return nil, &LimitError{What: "file size", Size: size, Limit: max}
	}
	var data []byte
	if size >= 0 {
		// The size is known: one buffer of it (and a byte to see a file
		// that grew), not ReadAll's doublings.
		if int64(cap(buf)) > size {
			buf = buf[:size+1]
		} else {
			buf = make([]byte, size+1)
		}
		n, err := io.ReadFull(f, buf)
		if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
			return nil, err
		}
		data = buf[:n]
		if int64(n) > size {
			rest, err := io.ReadAll(io.LimitReader(f, max+1-int64(n)))
			if err != nil {
				return nil, err
			}
			data = append(data, rest...)
		}
	} else if data, err = io.ReadAll(io.LimitReader(f, max+1)); err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &LimitError{What: "file size", Size: int64(len(data)), Limit: max}
	}
	return data, nil
}
