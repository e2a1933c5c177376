package payload

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sync"

	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/parallel"
)

// Fingerprint says what a payload holds, file by file: the SHA-256 of each
// file Load reads (the manifest files of manifests/ and
// release-manifests/, release-metadata and image-references), and one
// digest over them all. Two payloads with the same Digest give Load the
// same bytes, wherever they are and whatever their files' times; a file
// changed, added or removed changes it. A cache keyed by it (lib/plancache)
// is keyed by what was read, not by where it came from.
type Fingerprint struct {
	// Digest is the SHA-256 of the sorted lines "PATH\x00HEX(SHA-256 of the
	// file)\n" of Files.
	Digest [32]byte
	// Files maps each file's payload path to the SHA-256 of its bytes.
	Files map[string][32]byte
}

// String prints the digest as "sha256:HEX".
func (f *Fingerprint) String() string { return "sha256:" + hex.EncodeToString(f.Digest[:]) }

// NewFingerprint returns the fingerprint of files (path to SHA-256), as
// FingerprintOf makes it.
func NewFingerprint(files map[string][32]byte) *Fingerprint {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	h := sha256.New()
	for _, p := range paths {
		sum := files[p]
		h.Write([]byte(p))
		h.Write([]byte{0})
		h.Write([]byte(hex.EncodeToString(sum[:])))
		h.Write([]byte{'\n'})
	}
	f := &Fingerprint{Files: files}
	h.Sum(f.Digest[:0])
	return f
}

// FingerprintOf reads every file Load would read from fsys, within the same
// limits and with the same checks of symbolic links (opts' limits; the
// rest of opts does not matter), and returns their fingerprint. Files are
// streamed through SHA-256 on all cores, never held whole. Any problem Load would report about
// reading (a missing directory, a file above a limit, a link leading out
// of the payload) is an error: Load says it better, so callers that only
// want a cache key load without one.
func FingerprintOf(ctx context.Context, fsys fs.FS, opts LoadOptions) (*Fingerprint, error) {
	r := newReader(ctx, fsys, opts)
	var names []string
	var sizes []int64
	var links []bool
	found := false
	for _, dir := range []string{ManifestDir, ReleaseManifestDir} {
		entries, err := fs.ReadDir(fsys, dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fileError(dir, err)
		}
		found = true
		if err := r.checkLinks(dir); err != nil {
			return nil, err
		}
		for _, e := range entries {
			meta := dir == ReleaseManifestDir && (e.Name() == ReleaseMetadataFile || e.Name() == ImageReferencesFile)
			if e.IsDir() || (!IsManifestFile(e.Name()) && !meta) {
				continue
			}
			size := int64(-1)
			if e.Type().IsRegular() {
				if info, err := e.Info(); err == nil {
					size = info.Size()
				}
			}
			names = append(names, dir+"/"+e.Name())
			sizes = append(sizes, size)
			links = append(links, e.Type()&fs.ModeSymlink != 0)
		}
	}
	if !found {
		return nil, fmt.Errorf("payload has neither %s/ nor %s/", ManifestDir, ReleaseManifestDir)
	}
	if len(names) > r.maxFiles+2 {
		return nil, &manifest.ParseError{File: ".", Doc: -1, Err: &manifest.LimitError{What: "file count", Size: int64(len(names)), Limit: int64(r.maxFiles)}}
	}

	// Each worker streams files through SHA-256 with a buffer of its own:
	// nothing of the payload is kept, and little garbage made.
	sums := make([][32]byte, len(names))
	read := make([]int64, len(names))
	errs := make([]error, len(names))
	err := parallel.Each(ctx, len(names), 0, func() func(int) {
		buf := make([]byte, 64<<10)
		return func(i int) { sums[i], read[i], errs[i] = r.hashFile(names[i], sizes[i], links[i], buf) }
	})
	if err != nil {
		return nil, err
	}
	for i, name := range names {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if r.total += read[i]; r.total > r.maxTotal {
			return nil, fileError(name, &manifest.LimitError{What: "payload size", Size: r.total, Limit: r.maxTotal})
		}
	}
	files := make(map[string][32]byte, len(names))
	for i, name := range names {
		files[name] = sums[i]
	}
	return NewFingerprint(files), nil
}

// hashFile returns the SHA-256 of a file and its length, within the
// limits and with the checks of reader.read, streaming it through buf.
func (r *reader) hashFile(name string, size int64, links bool, buf []byte) ([32]byte, int64, error) {
	var sum [32]byte
	if links {
		if err := r.checkLinks(name); err != nil {
			return sum, 0, err
		}
	}
	max := r.limits.MaxFileSize
	if size > max {
		return sum, 0, fileError(name, &manifest.LimitError{What: "file size", Size: size, Limit: max})
	}
	f, err := r.fsys.Open(name)
	if err != nil {
		return sum, 0, fileError(name, err)
	}
	defer f.Close()
	h := sha256.New()
	// A LimitedReader has no WriteTo: CopyBuffer uses buf.
	n, err := io.CopyBuffer(h, &io.LimitedReader{R: f, N: max + 1}, buf)
	if err != nil {
		return sum, 0, fileError(name, err)
	}
	if n > max {
		return sum, 0, fileError(name, &manifest.LimitError{What: "file size", Size: n, Limit: max})
	}
	h.Sum(sum[:0])
	return sum, n, nil
}

// ReadRecorder collects the SHA-256 of every file Load reads, for
// LoadOptions.OnRead; it is safe for concurrent use.
type ReadRecorder struct {
	mu    sync.Mutex
	files map[string][32]byte
}

// Record is a LoadOptions.OnRead: it hashes data as path's content.
func (r *ReadRecorder) Record(path string, data []byte) {
	sum := sha256.Sum256(data)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.files == nil {
		r.files = map[string][32]byte{}
	}
	r.files[path] = sum
}

// Files returns the files recorded so far with their SHA-256.
func (r *ReadRecorder) Files() map[string][32]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string][32]byte, len(r.files))
	for p, s := range r.files {
		out[p] = s
	}
	return out
}
