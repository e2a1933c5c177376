package imagecache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/payload-apply/payload-apply/lib/cachedir"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/safefs"
)

// parsedMagic starts a .parsed file; the parsed forms follow, by path.
var parsedMagic = []byte("PAP\x01")

// maxParsedSize bounds a .parsed file read whole.
const maxParsedSize = 1 << 30

// Parsed keeps what the manifest files of one cached payload parse to, in
// the file beside its entry (sha256-<hex>.parsed), so that a payload read
// from the cache is not parsed again. It implements payload.ParseCache.
// The file is written once every expected file has been parsed (Put) or
// found (Get) and something new was parsed; it belongs to one build of the
// parser (Build), and a file of another build is ignored and replaced. It is
// safe for concurrent use.
type Parsed struct {
	path  string
	build string
	want  map[string]bool

	loadOnce sync.Once
	index    map[string]string // path -> parsed form, read from disk

	mu    sync.Mutex
	added map[string][]byte
	seen  map[string]bool
	done  bool
	err   error
}

// Parsed returns the parse cache of digest's entry: files are the manifest
// files whose parse is kept (the payload's release-manifests/ manifests);
// build names the parser (the binary), so that another build's results are
// not used.
func (c *Cache) Parsed(digest v1.Hash, files []string, build string) *Parsed {
	want := make(map[string]bool, len(files))
	for _, f := range files {
		want[f] = true
	}
	return &Parsed{
		path:  strings.TrimSuffix(c.entryPath(digest), ".tar") + ".parsed",
		build: build, want: want, added: map[string][]byte{}, seen: map[string]bool{},
	}
}

// load reads the .parsed file, once; a missing, damaged or other build's
// file is an empty index.
func (p *Parsed) load() {
	p.index = map[string]string{}
	s, err := readStringMax(p.path, maxParsedSize)
	if err != nil {
		return
	}
	i := len(parsedMagic)
	next := func() (string, bool) {
		n, k := binary.Uvarint([]byte(s[i:min(len(s), i+binary.MaxVarintLen64)]))
		if k <= 0 || n > uint64(len(s)-i-k) {
			return "", false
		}
		i += k
		v := s[i : i+int(n)]
		i += int(n)
		return v, true
	}
	build, ok := next()
	if !ok || build != p.build {
		return
	}
	index := map[string]string{}
	for i < len(s) {
		path, ok1 := next()
		form, ok2 := next()
		if !ok1 || !ok2 || len(index) > 4*len(p.want)+1024 {
			return
		}
		index[path] = form
	}
	p.index = index
}

// errNotOurs marks a file whose first bytes are not the cache's: it is
// neither read nor removed.
var errNotOurs = errors.New("not a cache entry (its first bytes are not the cache's format): left alone")

// openChecked opens the regular file path (a named pipe or a device is
// refused without blocking: lib/safefs), refuses one above max bytes, and
// checks its first bytes with magic before the caller reads it whole (a
// damaged sparse file of gigabytes is refused after reading a block).
func openChecked(path string, max int64, magic func(head []byte) bool) (*os.File, int64, error) {
	f, err := safefs.Open(path, safefs.Regular)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	head := make([]byte, cachedir.HeadSize)
	n, _ := io.ReadFull(f, head)
	if !magic(head[:n]) {
		f.Close()
		return nil, 0, fmt.Errorf("%s: %w", path, errNotOurs)
	}
	if st.Size() > max {
		f.Close()
		return nil, 0, fmt.Errorf("%s: larger than %d bytes", path, max)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// readFileMax reads a file checked by openChecked whole.
func readFileMax(path string, max int64, magic func([]byte) bool) ([]byte, error) {
	f, size, err := openChecked(path, max, magic)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, size)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF {
		return nil, err
	}
	return buf[:n], nil
}

// readStringMax reads a .parsed file (checked by openChecked) into a
// string without a second copy (the parsed forms are slices of it).
func readStringMax(path string, max int64) (string, error) {
	f, size, err := openChecked(path, max, func(head []byte) bool { return bytes.HasPrefix(head, parsedMagic) })
	if err != nil {
		return "", err
	}
	defer f.Close()
	var b strings.Builder
	b.Grow(int(size))
	if _, err := io.Copy(&b, io.LimitReader(f, max)); err != nil {
		return "", err
	}
	return b.String(), nil
}

// Get implements payload.ParseCache: objects keep does not report are decoded
// no further than their metadata.
func (p *Parsed) Get(path string, keep func(*manifest.Manifest) bool) ([]manifest.Manifest, bool) {
	p.loadOnce.Do(p.load)
	form, ok := p.index[path]
	if !ok {
		return nil, false
	}
	ms, err := manifest.DecodeParsed(form, manifest.Limits{}, keep)
	if err != nil {
		return nil, false
	}
	p.mu.Lock()
	p.seen[path] = true
	p.mu.Unlock()
	p.maybeSave()
	return ms, true
}

// Ready reports whether the cache holds this build's parse of the payload
// (so that loading it decodes instead of parsing).
func (p *Parsed) Ready() bool {
	p.loadOnce.Do(p.load)
	return len(p.index) > 0
}

// Has implements payload.ParseCache.
func (p *Parsed) Has(path string) bool {
	p.loadOnce.Do(p.load)
	_, ok := p.index[path]
	return ok
}

// Put implements payload.ParseCache: it encodes ms at once.
func (p *Parsed) Put(path string, ms []manifest.Manifest) {
	form, err := manifest.EncodeParsed(ms)
	p.mu.Lock()
	if err == nil {
		p.added[path] = form
	}
	p.seen[path] = true
	p.mu.Unlock()
	p.maybeSave()
}

// Err returns the error of writing the file, if it was written and failed.
func (p *Parsed) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// maybeSave writes the file once every expected file was seen, if
// something was added.
func (p *Parsed) maybeSave() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done || len(p.added) == 0 {
		return
	}
	for f := range p.want {
		if !p.seen[f] {
			return
		}
	}
	p.done = true
	p.loadOnce.Do(p.load)
	b := append([]byte{}, parsedMagic...)
	put := func(s string) { b = binary.AppendUvarint(b, uint64(len(s))); b = append(b, s...) }
	put(p.build)
	forms := map[string]string{}
	for path, form := range p.index {
		forms[path] = form
	}
	for path, form := range p.added {
		forms[path] = string(form)
	}
	paths := make([]string, 0, len(forms))
	for path := range forms {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	for _, path := range paths {
		put(path)
		put(forms[path])
	}
	p.err = writeAtomic(p.path, b)
}

// writeAtomic writes data to a temporary file beside path and renames it.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), cachedir.TempPrefix+"*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
