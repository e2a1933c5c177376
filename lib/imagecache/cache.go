package imagecache

import (
	"archive/tar"
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing/fstest"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/payload-apply/payload-apply/lib/cachedir"
	"github.com/payload-apply/payload-apply/lib/image"
	"github.com/payload-apply/payload-apply/lib/safefs"
)

// formatVersion changes when the entry format does; entries of another
// format are misses.
const formatVersion = 1

// metaName is the first entry of an entry's tar.
const metaName = "meta.json"

// Cache is a directory of payload entries. Its zero limits take
// DefaultMaxBytes and DefaultMaxEntries. It is safe for concurrent use,
// by goroutines and by processes.
type Cache struct {
	// Dir holds the entries; created (0700) on the first Put.
	Dir string
	// MaxBytes and MaxEntries bound the entries kept.
	MaxBytes   int64
	MaxEntries int
}

// Defaults: room for a few dozen releases (the real payload is 13 MiB).
const (
	DefaultMaxBytes   = 1 << 30
	DefaultMaxEntries = 32
)

// DefaultDir is os.UserCacheDir()/payload-apply/payloads
// ($XDG_CACHE_HOME or ~/.cache on Linux).
func DefaultDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("payload cache: %w", err)
	}
	return filepath.Join(d, "payload-apply", "payloads"), nil
}

// Meta describes an entry.
type Meta struct {
	// Format is the entry format's version.
	Format int `json:"format"`
	// Digest is the key: the digest the reference resolved to.
	Digest string `json:"digest"`
	// ImageDigest is the image manifest's digest (Digest's image for linux/amd64 when
	// Digest is an image index).
	ImageDigest string `json:"imageDigest"`
	// Reference is where the payload was pulled from (REPO@DIGEST).
	Reference string `json:"reference"`
	// Pulled is when.
	Pulled time.Time `json:"pulled"`
	// Config is the image's config file.
	Config *v1.ConfigFile `json:"config,omitempty"`
}

func (c *Cache) entryPath(digest v1.Hash) string {
	return filepath.Join(c.Dir, digest.Algorithm+"-"+digest.Hex+".tar")
}

// Get returns the payload cached for digest and its Meta, or nil, nil, nil
// when there is none. A cache directory others could write is not read
// (cachedir.Private: the error says why). A damaged entry is removed and
// reported as a miss with the error; one that is not a regular file (a
// named pipe) is refused without being opened or removed.
func (c *Cache) Get(digest v1.Hash) (*image.FS, *Meta, error) {
	if err := cachedir.Private(c.Dir); err != nil {
		return nil, nil, fmt.Errorf("payload cache not used: %w", err)
	}
	p := c.entryPath(digest)
	lim := image.DefaultLoadOptions()
	data, err := readFileMax(p, lim.MaxPayloadSize+int64(lim.MaxFiles)*2048+8<<20, isEntry)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if errors.Is(err, safefs.ErrSpecialFile) || errors.Is(err, errNotOurs) {
		return nil, nil, fmt.Errorf("payload cache: %w", err)
	}
	if err != nil {
		os.Remove(p)
		return nil, nil, fmt.Errorf("payload cache: %w (removed)", err)
	}
	fsys, meta, err := readEntry(data)
	if err == nil && meta.Digest != digest.String() {
		err = fmt.Errorf("entry is for %s", meta.Digest)
	}
	if err != nil {
		os.Remove(p)
		return nil, nil, fmt.Errorf("payload cache: %s: %w (removed)", p, err)
	}
	now := time.Now()
	_ = os.Chtimes(p, now, now) // recently used
	return fsys, meta, nil
}

// readEntry reads an entry held whole in data; the files' contents are
// slices of data, not copies.
func readEntry(data []byte) (*image.FS, *Meta, error) {
	lim := image.DefaultLoadOptions()
	// tar reads a clean end of input as the end: only the end-of-archive
	// blocks the writer closes with tell a whole entry from a cut one.
	if len(data) < 2048 || !bytes.Equal(data[len(data)-1024:], make([]byte, 1024)) {
		return nil, nil, errors.New("truncated: no end of archive")
	}
	br := bytes.NewReader(data)
	tr := tar.NewReader(br)
	hdr, err := tr.Next()
	if err != nil || hdr.Name != metaName || hdr.Size > 8<<20 {
		return nil, nil, errors.New("no meta.json first")
	}
	var meta Meta
	if err := json.NewDecoder(io.LimitReader(tr, hdr.Size)).Decode(&meta); err != nil {
		return nil, nil, fmt.Errorf("meta.json: %w", err)
	}
	if meta.Format != formatVersion {
		return nil, nil, fmt.Errorf("format %d, want %d", meta.Format, formatVersion)
	}
	digest, err := v1.NewHash(meta.ImageDigest)
	if err != nil {
		return nil, nil, fmt.Errorf("meta.json: %w", err)
	}
	files := fstest.MapFS{}
	var total int64
	for n := 0; ; n++ {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		name := path.Clean(hdr.Name)
		if n >= lim.MaxFiles || !fs.ValidPath(name) || name == "." {
			return nil, nil, fmt.Errorf("entry %q refused", hdr.Name)
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			files[name] = &fstest.MapFile{Mode: fs.ModeDir | 0o555}
		case tar.TypeReg:
			total += hdr.Size
			if hdr.Size > lim.MaxFileSize || total > lim.MaxPayloadSize {
				return nil, nil, fmt.Errorf("entry %q: above the payload limits", hdr.Name)
			}
			// tar reads no further than a header: the content starts here.
			at := br.Size() - int64(br.Len())
			if at+hdr.Size > int64(len(data)) {
				return nil, nil, fmt.Errorf("entry %q: truncated", hdr.Name)
			}
			files[name] = &fstest.MapFile{Data: data[at : at+hdr.Size : at+hdr.Size], Mode: 0o444}
		default:
			return nil, nil, fmt.Errorf("entry %q: type %q refused", hdr.Name, string(rune(hdr.Typeflag)))
		}
	}
	return image.NewFS(files, digest, meta.Config), &meta, nil
}

// Put stores fsys (as Flatten or Get returned it) under digest, pulled
// from ref, then evicts what the limits do not allow.
func (c *Cache) Put(digest v1.Hash, ref string, fsys *image.FS) error {
	if err := cachedir.Private(c.Dir); err != nil {
		return fmt.Errorf("payload cache not used: %w", err)
	}
	tmp, err := os.CreateTemp(c.Dir, cachedir.TempPrefix+"*")
	if err != nil {
		return fmt.Errorf("payload cache: %w", err)
	}
	defer os.Remove(tmp.Name())
	bw := bufio.NewWriterSize(tmp, 1<<20)
	err = writeEntry(bw, Meta{Format: formatVersion, Digest: digest.String(), ImageDigest: fsys.Digest().String(),
		Reference: ref, Pulled: time.Now().UTC(), Config: fsys.Config()}, fsys)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), c.entryPath(digest))
	}
	if err != nil {
		return fmt.Errorf("payload cache: %w", err)
	}
	return c.evict()
}

func writeEntry(w io.Writer, meta Meta, fsys *image.FS) error {
	tw := tar.NewWriter(w)
	data, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: metaName, Size: int64(len(data)), Mode: 0o600, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := tw.Write(data); err != nil {
		return err
	}
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Name: p + "/", Mode: 0o755, Typeflag: tar.TypeDir})
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: p, Size: int64(len(data)), Mode: 0o444, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// isEntry reports whether a file's first bytes are an entry's: a tar
// whose first member is meta.json, in the USTAR format the cache writes.
func isEntry(head []byte) bool {
	return len(head) >= 263 && bytes.HasPrefix(head, []byte(metaName+"\x00")) && string(head[257:262]) == "ustar"
}

// owned says whether the cache wrote a file, by its first bytes: an entry,
// a .parsed file, or a temporary file of either.
func owned(name string, head []byte) bool {
	switch {
	case strings.HasSuffix(name, ".tar"):
		return isEntry(head)
	case strings.HasSuffix(name, ".parsed"):
		return bytes.HasPrefix(head, parsedMagic)
	case strings.HasPrefix(name, cachedir.TempPrefix):
		return isEntry(head) || bytes.HasPrefix(head, parsedMagic)
	}
	return false
}

// evict removes the least recently used entries beyond the limits, and
// temporary files of writers that died, under the cache's lock file. An
// entry is a .tar and its .parsed form; a .parsed without its .tar is
// removed.
func (c *Cache) evict() error {
	lim := cachedir.Limits{MaxEntries: c.MaxEntries, MaxBytes: c.MaxBytes}
	if lim.MaxBytes <= 0 {
		lim.MaxBytes = DefaultMaxBytes
	}
	if lim.MaxEntries <= 0 {
		lim.MaxEntries = DefaultMaxEntries
	}
	err := cachedir.Evict(c.Dir, lim, cachedir.Entries{
		Owned: owned,
		Size: func(dir, name string, info fs.FileInfo) (int64, bool) {
			p := filepath.Join(dir, name)
			switch {
			case strings.HasSuffix(name, ".tar"):
				size := info.Size()
				if st, err := os.Stat(strings.TrimSuffix(p, ".tar") + ".parsed"); err == nil {
					size += st.Size()
				}
				return size, true
			case strings.HasSuffix(name, ".parsed"):
				if _, err := os.Lstat(strings.TrimSuffix(p, ".parsed") + ".tar"); errors.Is(err, fs.ErrNotExist) {
					os.Remove(p) // Owned: Evict checked it
				}
			}
			return 0, false
		},
		Companions: func(path string) []string { return []string{strings.TrimSuffix(path, ".tar") + ".parsed"} },
	})
	if err != nil {
		return fmt.Errorf("payload cache: %w", err)
	}
	return nil
}
