package plancache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sort"
	"sync"
	"unsafe"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// Parsed is the parse of one payload's manifest files, kept in one entry
// of a Store: it implements payload.ParseCache (Get, Has, Put), so that a
// Load given it decodes what it has instead of parsing, and parses and
// records the rest. Objects a selection excludes are decoded no further
// than their metadata. What Load parsed is written by Save, as one new
// entry, when the caller has checked that it was parsed from the bytes the
// key names. It is safe for concurrent use.
type Parsed struct {
	store  *Store
	key    Key
	limits manifest.Limits

	index map[string]string // path -> parsed form, from the entry

	mu    sync.Mutex
	added map[string][]byte
	bad   bool // a form of the entry did not decode
}

// maxForms bounds the forms of one entry (payload.DefaultMaxFiles).
const maxForms = 200_000

// OpenParsed reads the entry of key from s (nil: none) and returns the
// parse cache over it. An entry that cannot be read or is damaged is
// reported with the error, for the caller to log, and the cache starts
// empty: it is never an error to plan without it. limits are those the
// forms are decoded within (the caller's manifest limits).
func OpenParsed(s *Store, key Key, limits manifest.Limits) (*Parsed, error) {
	p := &Parsed{store: s, key: key, limits: limits, index: map[string]string{}, added: map[string][]byte{}}
	body, err := s.Get(key)
	if err != nil || len(body) == 0 {
		return p, err
	}
	// The forms are slices of one string over the entry's bytes, which
	// nothing else holds or changes: no second copy of the entry.
	index, err := decodeIndex(unsafe.String(&body[0], len(body)))
	if err != nil {
		return p, fmt.Errorf("plan cache: entry %s: %w", key, err)
	}
	p.index = index
	return p, nil
}

// decodeIndex reads an entry's body: a count, then each path and its
// parsed form (manifest.EncodeParsed), each length first.
func decodeIndex(s string) (map[string]string, error) {
	i := 0
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
	n, k := binary.Uvarint([]byte(s[:min(len(s), binary.MaxVarintLen64)]))
	if k <= 0 || n > maxForms {
		return nil, errors.New("bad count")
	}
	i = k
	index := make(map[string]string, n)
	for range n {
		path, ok1 := next()
		form, ok2 := next()
		if !ok1 || !ok2 {
			return nil, errors.New("truncated")
		}
		index[path] = form
	}
	if i != len(s) {
		return nil, errors.New("trailing bytes")
	}
	return index, nil
}

// Hit reports whether the entry was found: loading decodes instead of
// parsing.
func (p *Parsed) Hit() bool { return len(p.index) > 0 }

// Len is the number of files the entry holds.
func (p *Parsed) Len() int { return len(p.index) }

// Get implements payload.ParseCache: objects keep does not report are decoded no
// further than their metadata. A form that does not decode is a miss (the
// file is then read and parsed, and Save replaces the entry).
func (p *Parsed) Get(path string, keep func(*manifest.Manifest) bool) ([]manifest.Manifest, bool) {
	form, ok := p.index[path]
	if !ok {
		return nil, false
	}
	ms, err := manifest.DecodeParsed(form, p.limits, keep)
	if err != nil {
		p.mu.Lock()
		p.bad = true
		p.mu.Unlock()
		return nil, false
	}
	return ms, true
}

// Has implements payload.ParseCache.
func (p *Parsed) Has(path string) bool {
	_, ok := p.index[path]
	return ok
}

// Put implements payload.ParseCache: it encodes ms at once.
func (p *Parsed) Put(path string, ms []manifest.Manifest) {
	form, err := manifest.EncodeParsed(ms)
	if err != nil {
		return
	}
	p.mu.Lock()
	p.added[path] = form
	p.mu.Unlock()
}

// Added is the number of files parsed and recorded since OpenParsed.
func (p *Parsed) Added() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.added)
}

// Save writes the entry when something was parsed (or a form of it did
// not decode): what it held and what was added, by path. The caller calls
// it only when every file parsed came from the bytes the key names.
func (p *Parsed) Save() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.store == nil || (len(p.added) == 0 && !p.bad) {
		return nil
	}
	forms := make(map[string]string, len(p.index)+len(p.added))
	for path, form := range p.index {
		forms[path] = form
	}
	size := 0
	for path, form := range p.added {
		forms[path] = string(form)
	}
	paths := make([]string, 0, len(forms))
	for path, form := range forms {
		paths = append(paths, path)
		size += len(path) + len(form) + 2*binary.MaxVarintLen64
	}
	sort.Strings(paths)
	b := make([]byte, 0, size+binary.MaxVarintLen64)
	b = binary.AppendUvarint(b, uint64(len(paths)))
	for _, path := range paths {
		b = binary.AppendUvarint(b, uint64(len(path)))
		b = append(b, path...)
		b = binary.AppendUvarint(b, uint64(len(forms[path])))
		b = append(b, forms[path]...)
	}
	p.added, p.bad = map[string][]byte{}, false
	return p.store.Put(p.key, b)
}

// BinaryID names the running binary for keys: its module version and VCS
// revision as built, and the executable's path, size and modification
// time, so that a rebuilt parser never reads another build's entries.
func BinaryID() string {
	id := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		id = bi.Main.Path + "@" + bi.Main.Version + " " + bi.GoVersion
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
				id += " " + s.Value
			}
		}
	}
	if exe, err := os.Executable(); err == nil {
		if st, err := os.Stat(exe); err == nil {
			id += fmt.Sprintf(" %s %d %d", exe, st.Size(), st.ModTime().UnixNano())
		}
	}
	return id
}
