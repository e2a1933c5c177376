package payload

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/safefs"
)

// maxLinkHops bounds the symbolic links followed to resolve one path, as
// the kernel's ELOOP does.
const maxLinkHops = 40

// ErrLinkEscapes is wrapped by the error for a symbolic link that leads out
// of the payload directory.
var ErrLinkEscapes = errors.New("symbolic link leads outside the payload directory")

// reader reads payload files within the limits of LoadOptions, refusing
// symbolic links that lead outside the payload. Errors are
// *manifest.ParseError naming the file.
type reader struct {
	ctx      context.Context
	fsys     fs.FS
	limits   manifest.Limits
	maxTotal int64
	maxFiles int
	total    int64
	full     bool // the payload size limit was reached: read nothing more
	// skip, when set, says which regular files need not be read now (their
	// parse is cached): readAll defers them.
	skip func(name string) bool
	// onRead is LoadOptions.OnRead.
	onRead func(name string, data []byte)
}

func newReader(ctx context.Context, fsys fs.FS, opts LoadOptions) *reader {
	r := &reader{ctx: ctx, fsys: fsys, limits: opts.Limits, maxTotal: opts.MaxPayloadSize, maxFiles: opts.MaxFiles, onRead: opts.OnRead}
	if r.limits.MaxFileSize <= 0 {
		r.limits.MaxFileSize = manifest.DefaultLimits().MaxFileSize
	}
	if r.maxTotal <= 0 {
		r.maxTotal = DefaultMaxPayloadSize
	}
	if r.maxFiles <= 0 {
		r.maxFiles = DefaultMaxFiles
	}
	return r
}

func fileError(name string, err error) error {
	return &manifest.ParseError{File: name, Doc: -1, Err: err}
}

// checkLinks returns an error when name, or a directory above it, is a
// symbolic link that resolves outside the root of the file system. File
// systems that cannot read links (fs.ReadLinkFS) have none to check.
func (r *reader) checkLinks(name string) error {
	lfs, ok := r.fsys.(fs.ReadLinkFS)
	if !ok {
		return nil
	}
	parts := strings.Split(name, "/")
	cur, hops := "", 0
	for len(parts) > 0 {
		part := parts[0]
		parts = parts[1:]
		next := path.Join(cur, part)
		if next == ".." || strings.HasPrefix(next, "../") {
			return fileError(name, ErrLinkEscapes)
		}
		if next == "." || next == "" {
			cur = ""
			continue
		}
		st, err := lfs.Lstat(next)
		if err != nil {
			return nil // reading the file reports it
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > maxLinkHops {
			return fileError(name, fmt.Errorf("more than %d symbolic links to follow", maxLinkHops))
		}
		target, err := lfs.ReadLink(next)
		if err != nil {
			return fileError(name, err)
		}
		if path.IsAbs(target) || strings.HasPrefix(target, `\`) || (len(target) > 1 && target[1] == ':') {
			return fileError(name, fmt.Errorf("%w: %s -> %s", ErrLinkEscapes, next, target))
		}
		resolved := path.Join(cur, target)
		if resolved == ".." || strings.HasPrefix(resolved, "../") {
			return fileError(name, fmt.Errorf("%w: %s -> %s", ErrLinkEscapes, next, target))
		}
		parts = append(strings.Split(target, "/"), parts...)
	}
	return nil
}

// read returns a file's bytes after checking its size (size is what the
// directory listing said, -1 when unknown) and, with links, its path's
// symbolic links (readAll has checked the directories, so a file listed as
// a regular file needs no check).
func (r *reader) read(name string, size int64, links bool) ([]byte, error) {
	if links {
		if err := r.checkLinks(name); err != nil {
			return nil, err
		}
	}
	max := r.limits.MaxFileSize
	if size > max {
		return nil, fileError(name, &manifest.LimitError{What: "file size", Size: size, Limit: max})
	}
	data, err := manifest.ReadFile(r.fsys, name, max)
	if err != nil {
		return nil, fileError(name, err)
	}
	if r.onRead != nil {
		r.onRead(name, data)
	}
	return data, nil
}

// readAll reads the manifest files among a directory's entries, in order,
// until the payload size limit is reached; errors are appended to errs.
func (r *reader) readAll(dir string, entries []fs.DirEntry, errs []error) ([]rawFile, []error) {
	var out []rawFile
	for _, e := range entries {
		if r.full || r.ctx.Err() != nil {
			break
		}
		if e.IsDir() || !IsManifestFile(e.Name()) {
			continue
		}
		name := dir + "/" + e.Name()
		if t := e.Type(); !t.IsRegular() && t&fs.ModeSymlink == 0 {
			// A named pipe, device or socket: never opened (a FIFO
			// would block the open for good).
			errs = append(errs, fileError(name, &safefs.SpecialFileError{Mode: t}))
			continue
		}
		size := int64(-1)
		if e.Type().IsRegular() {
			if info, err := e.Info(); err == nil {
				size = info.Size()
			}
		}
		if r.skip != nil && e.Type().IsRegular() && size >= 0 && size <= r.limits.MaxFileSize && r.skip(name) {
			r.total += size
			if r.total > r.maxTotal {
				r.full = true
				errs = append(errs, fileError(name, &manifest.LimitError{What: "payload size", Size: r.total, Limit: r.maxTotal}))
				break
			}
			out = append(out, rawFile{path: name, deferred: func() ([]byte, error) { return r.read(name, size, false) }})
			continue
		}
		data, err := r.read(name, size, e.Type()&fs.ModeSymlink != 0)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		r.total += int64(len(data))
		if r.total > r.maxTotal {
			r.full = true
			errs = append(errs, fileError(name, &manifest.LimitError{What: "payload size", Size: r.total, Limit: r.maxTotal}))
			break
		}
		out = append(out, rawFile{path: name, data: data})
	}
	return out, errs
}

// countManifestFiles counts the entries Load reads.
func countManifestFiles(entries []fs.DirEntry) int {
	n := 0
	for _, e := range entries {
		if !e.IsDir() && IsManifestFile(e.Name()) {
			n++
		}
	}
	return n
}
