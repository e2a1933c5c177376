package plancache

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/payload-apply/payload-apply/lib/cachedir"
	"github.com/payload-apply/payload-apply/lib/safefs"
)

// Key names an entry: the SHA-256 of what the entry was made from.
type Key [32]byte

// NewKey returns the key of parts: the SHA-256 of each part, length
// first, so that no two lists of parts give the same bytes.
func NewKey(parts ...string) Key {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	for _, p := range parts {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(p)))])
		h.Write([]byte(p))
	}
	var k Key
	h.Sum(k[:0])
	return k
}

// String prints the key in hex.
func (k Key) String() string { return hex.EncodeToString(k[:]) }

// Store is a directory of entries. Its zero limits take DefaultMaxBytes
// and DefaultMaxEntries. It is safe for concurrent use, by goroutines and
// by processes.
type Store struct {
	// Dir holds the entries; created (0700) on the first Put.
	Dir string
	// MaxBytes and MaxEntries bound what is kept.
	MaxBytes   int64
	MaxEntries int
}

// Defaults: the parse of the real OpenShift payload takes about 9 MiB, a
// hundred releases' worth of synthetic payload about 1 GiB.
const (
	DefaultMaxBytes   = 1 << 30
	DefaultMaxEntries = 64
)

// maxEntrySize bounds an entry read whole.
const maxEntrySize = 2 << 30

// DefaultDir is os.UserCacheDir()/payload-apply/plans ($XDG_CACHE_HOME or
// ~/.cache on Linux).
func DefaultDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("plan cache: %w", err)
	}
	return filepath.Join(d, "payload-apply", "plans"), nil
}

// The header of an entry file: magic, format (uvarint), key, body length
// (uvarint), CRC-32C of the body (4 bytes, little endian).
var entryMagic = []byte("PAPC")

// formatVersion changes when what entries hold changes; entries of another
// format are misses.
const formatVersion = 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (s *Store) path(key Key) string {
	return filepath.Join(s.Dir, key.String()+".entry")
}

// Get returns the body stored under key, or nil, nil when there is none. A
// directory others could write is not read (cachedir.Private). An entry
// is opened only when it is a regular file (a named pipe is refused
// without blocking: lib/safefs), and its header is checked against its
// size before it is read whole; a file whose first bytes are not an
// entry's is left alone, a damaged entry (or one of another format) is
// removed; both are reported as a miss with the error, for the caller to
// log.
func (s *Store) Get(key Key) ([]byte, error) {
	if s == nil {
		return nil, nil
	}
	if err := cachedir.Private(s.Dir); err != nil {
		return nil, fmt.Errorf("plan cache not used: %w", err)
	}
	p := s.path(key)
	body, err := readEntry(p, key)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case errors.Is(err, errNotOurs), errors.Is(err, safefs.ErrSpecialFile):
		return nil, fmt.Errorf("plan cache: %w", err)
	case err != nil:
		os.Remove(p)
		return nil, fmt.Errorf("plan cache: %s: %w (removed)", p, err)
	}
	now := time.Now()
	_ = os.Chtimes(p, now, now) // recently used
	return body, nil
}

// Has reports whether a regular file is stored under key in a private
// directory (without reading it).
func (s *Store) Has(key Key) bool {
	if s == nil || cachedir.Private(s.Dir) != nil {
		return false
	}
	st, err := os.Stat(s.path(key))
	return err == nil && st.Mode().IsRegular()
}

// errNotOurs marks a file whose first bytes are not an entry's: it is
// neither read nor removed.
var errNotOurs = errors.New("not a cache entry (its first bytes are not the cache's format): left alone")

// readEntry returns the body of the entry file path: its header (magic,
// format, key, length) is read and checked against the file's size first,
// then the body is read whole into one buffer and checked against its
// CRC.
func readEntry(path string, key Key) ([]byte, error) {
	f, err := safefs.Open(path, safefs.Regular)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	head := make([]byte, cachedir.HeadSize)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if !bytes.HasPrefix(head, entryMagic) {
		return nil, fmt.Errorf("%s: %w", path, errNotOurs)
	}
	i := len(entryMagic)
	format, n := binary.Uvarint(head[i:])
	if n <= 0 || format != formatVersion {
		return nil, fmt.Errorf("format %d, want %d", format, formatVersion)
	}
	i += n
	if len(head)-i < len(key) || !bytes.Equal(head[i:i+len(key)], key[:]) {
		return nil, errors.New("entry of another key")
	}
	i += len(key)
	size, n := binary.Uvarint(head[i:])
	if n <= 0 || size > maxEntrySize || uint64(st.Size()) != uint64(i+n+4)+size {
		return nil, fmt.Errorf("truncated or damaged: the header says %d bytes of body, the file has %d in all", size, st.Size())
	}
	i += n
	sum := binary.LittleEndian.Uint32(head[i:])
	body := make([]byte, size)
	if _, err := f.ReadAt(body, int64(i+4)); err != nil {
		return nil, err
	}
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, errors.New("checksum mismatch")
	}
	return body, nil
}

// Put stores body under key, then evicts what the limits do not allow.
func (s *Store) Put(key Key, body []byte) error {
	if err := cachedir.Private(s.Dir); err != nil {
		return fmt.Errorf("plan cache not used: %w", err)
	}
	head := append([]byte{}, entryMagic...)
	head = binary.AppendUvarint(head, formatVersion)
	head = append(head, key[:]...)
	head = binary.AppendUvarint(head, uint64(len(body)))
	head = binary.LittleEndian.AppendUint32(head, crc32.Checksum(body, castagnoli))
	tmp, err := os.CreateTemp(s.Dir, cachedir.TempPrefix+"*")
	if err != nil {
		return fmt.Errorf("plan cache: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(head)
	if err == nil {
		_, err = tmp.Write(body)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), s.path(key))
	}
	if err != nil {
		return fmt.Errorf("plan cache: %w", err)
	}
	return s.evict()
}

// evict removes the least recently used entries beyond the limits, and
// temporary files of writers that died, under the store's lock file.
func (s *Store) evict() error {
	lim := cachedir.Limits{MaxEntries: s.MaxEntries, MaxBytes: s.MaxBytes}
	if lim.MaxBytes <= 0 {
		lim.MaxBytes = DefaultMaxBytes
	}
	if lim.MaxEntries <= 0 {
		lim.MaxEntries = DefaultMaxEntries
	}
	err := cachedir.Evict(s.Dir, lim, cachedir.Entries{
		Owned: func(_ string, head []byte) bool { return bytes.HasPrefix(head, entryMagic) },
		Size: func(_, name string, info fs.FileInfo) (int64, bool) {
			return info.Size(), strings.HasSuffix(name, ".entry")
		},
	})
	if err != nil {
		return fmt.Errorf("plan cache: %w", err)
	}
	return nil
}
