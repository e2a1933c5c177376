package image

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"testing/fstest"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Why Load refuses an archive; a *RefusedError wraps one of these, so test
// with errors.Is.
var (
	// ErrUnsafePath: an entry name that is absolute or has a ".." element.
	ErrUnsafePath = errors.New("path leaves the image root")
	// ErrUnsafeLink: a symbolic or hard link whose target leaves the image
	// root, an entry below a symbolic link, a hard link to something that
	// is not an earlier regular file, or a payload link that loops or does
	// not resolve inside the image.
	ErrUnsafeLink = errors.New("link leaves the image root")
	// ErrSpecialFile: a device, FIFO or other entry that is neither a
	// regular file, a directory nor a link.
	ErrSpecialFile = errors.New("special file")
	// ErrTooLarge: an entry, the layers' total or the payload kept in memory
	// above its limit.
	ErrTooLarge = errors.New("size limit exceeded")
	// ErrTooManyFiles: more entries or layers than the limits allow.
	ErrTooManyFiles = errors.New("too many files")
)

// RefusedError is a hostile or oversized archive that Load refuses.
type RefusedError struct {
	// Layer is the layer's index, 0 for the bottom layer; -1 when the
	// refusal is about the image as a whole.
	Layer int
	// Entry is the entry's name as the archive spells it; empty when the
	// refusal is not about one entry.
	Entry string
	// Reason is one of ErrUnsafePath, ErrUnsafeLink, ErrSpecialFile,
	// ErrTooLarge and ErrTooManyFiles.
	Reason error
	// Detail says what exactly was wrong.
	Detail string
}

// Error prints "layer N: entry "NAME": refused: REASON: DETAIL".
func (e *RefusedError) Error() string {
	var b strings.Builder
	if e.Layer >= 0 {
		fmt.Fprintf(&b, "layer %d: ", e.Layer)
	}
	if e.Entry != "" {
		fmt.Fprintf(&b, "entry %q: ", e.Entry)
	}
	fmt.Fprintf(&b, "refused: %v", e.Reason)
	if e.Detail != "" {
		fmt.Fprintf(&b, ": %s", e.Detail)
	}
	return b.String()
}

// Unwrap returns Reason.
func (e *RefusedError) Unwrap() error { return e.Reason }

// LoadOptions are the limits and choices of Load and Flatten. A zero field
// takes its value from DefaultLoadOptions.
type LoadOptions struct {
	// MaxLayers is the most layers an image may have.
	MaxLayers int
	// MaxFiles is the most tar entries over all layers, and the most files
	// and directories the payload directories may expand to through links.
	MaxFiles int
	// MaxEntrySize is the largest size any one entry may declare.
	MaxEntrySize int64
	// MaxTotalSize bounds the sum of the entries' sizes over all layers,
	// and so the decompression work: a gzip bomb stops here.
	MaxTotalSize int64
	// MaxFileSize is the largest payload file read into memory.
	MaxFileSize int64
	// MaxPayloadSize bounds the sum of the payload files read into memory.
	MaxPayloadSize int64
	// Keep names the top-level directories whose files are kept (read
	// into memory and served by the FS); everything else is checked,
	// counted and skipped.
	Keep []string
}

// DefaultLoadOptions returns the limits Load uses unless told otherwise:
// 128 layers, 200,000 entries, 4 GiB per entry, 16 GiB in total (room for a
// real base image), 32 MiB per payload file and 512 MiB of payload (the
// real OpenShift payload is about 13 MiB in 630 files, its largest file
// 1 MiB), keeping manifests/ and release-manifests/.
func DefaultLoadOptions() LoadOptions {
	return LoadOptions{
		MaxLayers:      128,
		MaxFiles:       200_000,
		MaxEntrySize:   4 << 30,
		MaxTotalSize:   16 << 30,
		MaxFileSize:    32 << 20,
		MaxPayloadSize: 512 << 20,
		Keep:           []string{manifestDir, releaseManifestDir},
	}
}

func (o LoadOptions) withDefaults() LoadOptions {
	d := DefaultLoadOptions()
	if o.MaxLayers <= 0 {
		o.MaxLayers = d.MaxLayers
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = d.MaxFiles
	}
	if o.MaxEntrySize <= 0 {
		o.MaxEntrySize = d.MaxEntrySize
	}
	if o.MaxTotalSize <= 0 {
		o.MaxTotalSize = d.MaxTotalSize
	}
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = d.MaxFileSize
	}
	if o.MaxPayloadSize <= 0 {
		o.MaxPayloadSize = d.MaxPayloadSize
	}
	if o.Keep == nil {
		o.Keep = d.Keep
	}
	return o
}

// FS is the flattened file system of an image: the directories and regular
// files under LoadOptions.Keep (symbolic and hard links resolved to what
// they point at), in memory. It is read-only and safe for concurrent use.
type FS struct {
	files  fstest.MapFS
	digest v1.Hash
	config *v1.ConfigFile
}

var (
	_ fs.ReadFileFS = (*FS)(nil)
	_ fs.ReadDirFS  = (*FS)(nil)
	_ fs.StatFS     = (*FS)(nil)
)

// Open opens the named file.
func (f *FS) Open(name string) (fs.File, error) { return f.files.Open(name) }

// ReadFile returns the named file's content.
func (f *FS) ReadFile(name string) ([]byte, error) { return f.files.ReadFile(name) }

// ReadDir lists the named directory, sorted by name.
func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) { return f.files.ReadDir(name) }

// Stat describes the named file.
func (f *FS) Stat(name string) (fs.FileInfo, error) { return f.files.Stat(name) }

// NewFS returns an FS of files (directories are entries with fs.ModeDir)
// with an image's digest and config, as Flatten would return it: for a
// payload kept elsewhere, such as a cache. files is used as it is; the
// caller must not change it afterwards.
func NewFS(files fstest.MapFS, digest v1.Hash, config *v1.ConfigFile) *FS {
	return &FS{files: files, digest: digest, config: config}
}

// Digest is the image's manifest digest.
func (f *FS) Digest() v1.Hash { return f.digest }

// Config returns the image's config file (nil when unknown). The caller
// must not change it.
func (f *FS) Config() *v1.ConfigFile { return f.config }

// Labels returns the image config's labels (nil when it has none). The map
// is a copy.
func (f *FS) Labels() map[string]string {
	if f.config == nil || f.config.Config.Labels == nil {
		return nil
	}
	out := make(map[string]string, len(f.config.Config.Labels))
	for k, v := range f.config.Config.Labels {
		out[k] = v
	}
	return out
}

// Files returns the paths of the regular files, sorted.
func (f *FS) Files() []string {
	var out []string
	for name, file := range f.files {
		if file.Mode.IsRegular() {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Load opens the image at path (see Open) and flattens it (see Flatten).
// Errors start with path.
func Load(path string, opts LoadOptions) (*FS, error) {
	img, err := Open(path, opts)
	if err != nil {
		return nil, err
	}
	fsys, err := Flatten(img, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return fsys, nil
}

// Flatten reads img's layers bottom-up into memory and returns the
// resulting file system, as a container runtime would lay it out: a later
// entry replaces an earlier one, ".wh.NAME" deletes NAME from the layers
// below and ".wh..wh..opq" hides everything the layers below put in its
// directory. Every entry of every layer is checked; only the files under
// opts.Keep are read into memory. A hostile or oversized archive yields a
// *RefusedError; nothing is written to disk.
func Flatten(img v1.Image, opts LoadOptions) (*FS, error) {
	opts = opts.withDefaults()
	layers, err := img.Layers()
	if err != nil {
		return nil, fmt.Errorf("read layers: %w", err)
	}
	if len(layers) > opts.MaxLayers {
		return nil, &RefusedError{Layer: -1, Reason: ErrTooManyFiles, Detail: fmt.Sprintf("%d layers, limit %d", len(layers), opts.MaxLayers)}
	}
	f := &flattener{
		opts:     opts,
		layers:   layers,
		tree:     map[string]*node{".": {kind: kindDir}},
		children: map[string]map[string]struct{}{},
	}
	for i := range layers {
		if err := f.readLayer(i); err != nil {
			return nil, err
		}
	}
	out, err := f.collect()
	if err != nil {
		return nil, err
	}
	digest, err := img.Digest()
	if err != nil {
		return nil, fmt.Errorf("image digest: %w", err)
	}
	config, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("image config: %w", err)
	}
	return &FS{files: out, digest: digest, config: config}, nil
}

type nodeKind uint8

const (
	kindDir nodeKind = iota + 1
	kindFile
	kindSymlink
)

// node is one path of the flattened tree.
type node struct {
	kind   nodeKind
	target string // symlink target as written
	// A file's content: where it is (layer, entry ordinal) and, once read,
	// the bytes.
	layer, index int
	size         int64
	data         []byte
	loaded       bool
}

type flattener struct {
	opts   LoadOptions
	layers []v1.Layer

	tree     map[string]*node
	children map[string]map[string]struct{} // dir -> child paths

	entries    int   // tar entries seen
	total      int64 // declared sizes seen
	payload    int64 // bytes kept in memory
	streamRead int64 // uncompressed bytes read
}

// errStreamLimit stops a decompressed stream that grew past its budget.
var errStreamLimit = errors.New("uncompressed stream limit")

// budgetReader fails once more than n bytes in all were read through it.
type budgetReader struct {
	r    io.Reader
	read *int64
	max  int64
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if *b.read >= b.max {
		return 0, errStreamLimit
	}
	if rest := b.max - *b.read; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := b.r.Read(p)
	*b.read += int64(n)
	return n, err
}

func (f *flattener) refuse(layer int, entry string, reason error, format string, args ...any) error {
	return &RefusedError{Layer: layer, Entry: entry, Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// readLayer applies layer i to the tree.
func (f *flattener) readLayer(i int) error {
	rc, err := f.layers[i].Uncompressed()
	if err != nil {
		return fmt.Errorf("layer %d: open: %w", i, err)
	}
	defer rc.Close()
	// Headers, padding and PAX records come on top of the declared sizes;
	// allow for them generously, but keep the stream bounded.
	max := f.opts.MaxTotalSize + int64(f.opts.MaxFiles)*2048 + 64<<20
	br := &budgetReader{r: rc, read: &f.streamRead, max: max}
	tr := tar.NewReader(br)
	added := map[string]bool{} // paths this layer put in place
	for index := 0; ; index++ {
		hdr, err := tr.Next()
		if err == io.EOF {
			// Read to the end, so that a blob checked against its digest
			// as it is read (OCI layouts) is checked whole.
			if _, err := io.Copy(io.Discard, br); err != nil {
				if errors.Is(err, errStreamLimit) {
					return f.refuse(i, "", ErrTooLarge, "uncompressed layers above %d bytes", max)
				}
				return fmt.Errorf("layer %d: %w", i, err)
			}
			return nil
		}
		if errors.Is(err, tar.ErrInsecurePath) && hdr != nil {
			return f.refuse(i, hdr.Name, ErrUnsafePath, "insecure path")
		}
		if errors.Is(err, errStreamLimit) {
			return f.refuse(i, "", ErrTooLarge, "uncompressed layers above %d bytes", max)
		}
		if err != nil {
			return fmt.Errorf("layer %d: read tar: %w", i, err)
		}
		if err := f.entry(i, index, hdr, tr, added); err != nil {
			if errors.Is(err, errStreamLimit) {
				return f.refuse(i, hdr.Name, ErrTooLarge, "uncompressed layers above %d bytes", max)
			}
			return err
		}
	}
}

// entry applies one tar entry.
func (f *flattener) entry(layer, index int, hdr *tar.Header, r io.Reader, added map[string]bool) error {
	f.entries++
	if f.entries > f.opts.MaxFiles {
		return f.refuse(layer, hdr.Name, ErrTooManyFiles, "more than %d entries", f.opts.MaxFiles)
	}
	if hdr.Typeflag == tar.TypeXGlobalHeader {
		return nil
	}
	name, err := cleanName(hdr.Name)
	if err != nil {
		return f.refuse(layer, hdr.Name, ErrUnsafePath, "%v", err)
	}
	if hdr.Size < 0 || hdr.Size > f.opts.MaxEntrySize {
		return f.refuse(layer, hdr.Name, ErrTooLarge, "%d bytes, limit %d per entry", hdr.Size, f.opts.MaxEntrySize)
	}
	f.total += hdr.Size
	if f.total > f.opts.MaxTotalSize {
		return f.refuse(layer, hdr.Name, ErrTooLarge, "layers hold more than %d bytes in all", f.opts.MaxTotalSize)
	}
	if name == "." {
		if hdr.Typeflag != tar.TypeDir {
			return f.refuse(layer, hdr.Name, ErrUnsafePath, "the image root must be a directory")
		}
		return nil
	}
	dir, base := path.Dir(name), path.Base(name)
	if base == opaqueMarker {
		if err := f.ensureParents(layer, hdr.Name, name, added); err != nil {
			return err
		}
		for child := range f.children[dir] {
			if !added[child] {
				f.remove(child)
			}
		}
		return nil
	}
	if strings.HasPrefix(base, whiteoutPrefix) {
		victim := strings.TrimPrefix(base, whiteoutPrefix)
		if victim == "" || victim == "." || victim == ".." {
			return f.refuse(layer, hdr.Name, ErrUnsafePath, "whiteout of %q", victim)
		}
		if p := path.Join(dir, victim); !added[p] {
			f.remove(p)
		}
		return nil
	}

	var n *node
	switch hdr.Typeflag {
	case tar.TypeDir:
		if old := f.tree[name]; old != nil && old.kind == kindDir {
			added[name] = true
			return nil // merge with the directory below
		}
		n = &node{kind: kindDir}
	case tar.TypeReg:
		n = &node{kind: kindFile, layer: layer, index: index, size: hdr.Size}
		if f.kept(name) {
			if err := f.read(layer, hdr.Name, n, r); err != nil {
				return err
			}
		}
	case tar.TypeSymlink:
		if linkEscapes(name, hdr.Linkname) {
			return f.refuse(layer, hdr.Name, ErrUnsafeLink, "symbolic link to %q", hdr.Linkname)
		}
		n = &node{kind: kindSymlink, target: hdr.Linkname}
	case tar.TypeLink:
		target, err := cleanName(hdr.Linkname)
		if err != nil || target == "." {
			return f.refuse(layer, hdr.Name, ErrUnsafeLink, "hard link to %q", hdr.Linkname)
		}
		t := f.tree[target]
		if t == nil || t.kind != kindFile {
			return f.refuse(layer, hdr.Name, ErrUnsafeLink, "hard link to %q, which is not an earlier regular file", hdr.Linkname)
		}
		c := *t
		n = &c
	case tar.TypeChar:
		return f.refuse(layer, hdr.Name, ErrSpecialFile, "character device")
	case tar.TypeBlock:
		return f.refuse(layer, hdr.Name, ErrSpecialFile, "block device")
	case tar.TypeFifo:
		return f.refuse(layer, hdr.Name, ErrSpecialFile, "FIFO")
	default:
		return f.refuse(layer, hdr.Name, ErrSpecialFile, "entry type %q", string(rune(hdr.Typeflag)))
	}
	if err := f.ensureParents(layer, hdr.Name, name, added); err != nil {
		return err
	}
	if old := f.tree[name]; old != nil && old.kind == kindDir && n.kind != kindDir {
		f.remove(name)
	}
	f.tree[name] = n
	f.addChild(dir, name)
	added[name] = true
	return nil
}

// read reads a kept file's content.
func (f *flattener) read(layer int, entry string, n *node, r io.Reader) error {
	if n.size > f.opts.MaxFileSize {
		return f.refuse(layer, entry, ErrTooLarge, "payload file of %d bytes, limit %d", n.size, f.opts.MaxFileSize)
	}
	f.payload += n.size
	if f.payload > f.opts.MaxPayloadSize {
		return f.refuse(layer, entry, ErrTooLarge, "payload files above %d bytes in all", f.opts.MaxPayloadSize)
	}
	n.data = make([]byte, n.size)
	if _, err := io.ReadFull(r, n.data); err != nil {
		if errors.Is(err, errStreamLimit) {
			return err
		}
		return fmt.Errorf("layer %d: entry %q: read: %w", layer, entry, err)
	}
	n.loaded = true
	return nil
}

// ensureParents makes name's ancestors directories: missing ones are
// created, files are replaced, and a symbolic link on the way is refused (an
// entry written through a link is the classic archive escape).
func (f *flattener) ensureParents(layer int, entry, name string, added map[string]bool) error {
	var ancestors []string
	for p := path.Dir(name); p != "."; p = path.Dir(p) {
		ancestors = append(ancestors, p)
	}
	for i := len(ancestors) - 1; i >= 0; i-- {
		p := ancestors[i]
		switch n := f.tree[p]; {
		case n == nil || n.kind == kindFile:
			f.tree[p] = &node{kind: kindDir}
			f.addChild(path.Dir(p), p)
			added[p] = true
		case n.kind == kindSymlink:
			return f.refuse(layer, entry, ErrUnsafeLink, "below symbolic link %q", p)
		}
	}
	return nil
}

func (f *flattener) addChild(dir, child string) {
	set := f.children[dir]
	if set == nil {
		set = map[string]struct{}{}
		f.children[dir] = set
	}
	set[child] = struct{}{}
}

// remove deletes p and everything below it.
func (f *flattener) remove(p string) {
	if _, ok := f.tree[p]; !ok {
		return
	}
	for child := range f.children[p] {
		f.remove(child)
	}
	delete(f.children, p)
	delete(f.tree, p)
	delete(f.children[path.Dir(p)], p)
}

// kept reports whether name lies under one of the kept directories.
func (f *flattener) kept(name string) bool {
	for _, k := range f.opts.Keep {
		if name == k || strings.HasPrefix(name, k+"/") {
			return true
		}
	}
	return false
}

// cleanName checks a tar entry name and returns it cleaned ("." for the
// root): no absolute paths, no ".." elements, no NUL.
func cleanName(name string) (string, error) {
	switch {
	case name == "":
		return "", errors.New("empty name")
	case strings.ContainsRune(name, 0):
		return "", errors.New("NUL in name")
	case strings.HasPrefix(name, "/"):
		return "", errors.New("absolute path")
	}
	for _, elem := range strings.Split(name, "/") {
		if elem == ".." {
			return "", errors.New(`".." in path`)
		}
	}
	return path.Clean(name), nil
}

// linkEscapes reports whether a symbolic link at name pointing at target
// climbs above the image root. Absolute targets are rooted at the image
// root, as a container runtime resolves them, and do not escape.
func linkEscapes(name, target string) bool {
	if target == "" || strings.ContainsRune(target, 0) {
		return true
	}
	if path.IsAbs(target) {
		return false
	}
	j := path.Join(path.Dir(name), target)
	return j == ".." || strings.HasPrefix(j, "../")
}

// maxHops bounds symbolic link resolution, as Linux's ELOOP does.
const maxHops = 40

// resolve follows every symbolic link in name and returns the path it
// leads to and its node. It fails with fs.ErrNotExist for a missing path
// and ErrUnsafeLink for loops and links that leave the root.
func (f *flattener) resolve(name string) (string, *node, error) {
	hops := 0
	parts := strings.Split(name, "/")
	cur := "."
	for i := 0; i < len(parts); i++ {
		next := path.Join(cur, parts[i])
		n := f.tree[next]
		if n == nil {
			return "", nil, fs.ErrNotExist
		}
		if n.kind == kindSymlink {
			hops++
			if hops > maxHops {
				return "", nil, fmt.Errorf("%w: more than %d links on the way to %q (a loop?)", ErrUnsafeLink, maxHops, name)
			}
			var target string
			if path.IsAbs(n.target) {
				target = strings.TrimPrefix(path.Clean(n.target), "/")
			} else {
				target = path.Join(cur, n.target)
			}
			if target == ".." || strings.HasPrefix(target, "../") {
				return "", nil, fmt.Errorf("%w: %q resolves outside the image root", ErrUnsafeLink, name)
			}
			rest := append([]string{}, parts[i+1:]...)
			parts = []string{}
			if target != "" && target != "." {
				parts = strings.Split(target, "/")
			}
			parts = append(parts, rest...)
			cur, i = ".", -1
			continue
		}
		if i < len(parts)-1 && n.kind != kindDir {
			return "", nil, fs.ErrNotExist
		}
		cur = next
	}
	return cur, f.tree[cur], nil
}

// placed is one file of the output and the node holding its content.
type placed struct {
	name string
	node *node
}

// collect walks the kept directories, following links, and returns the
// output file system, reading from the layers again whatever content a
// link brought in from outside the kept directories.
func (f *flattener) collect() (fstest.MapFS, error) {
	out := fstest.MapFS{}
	var files []placed
	count := 0 // directories and files placed
	tooMany := func(name string) error {
		count++
		if count > f.opts.MaxFiles {
			return &RefusedError{Layer: -1, Entry: name, Reason: ErrTooManyFiles, Detail: fmt.Sprintf("payload directories expand to more than %d files", f.opts.MaxFiles)}
		}
		return nil
	}
	var walk func(outName, real string, stack map[string]bool) error
	walk = func(outName, real string, stack map[string]bool) error {
		if stack[real] {
			return &RefusedError{Layer: -1, Entry: outName, Reason: ErrUnsafeLink, Detail: fmt.Sprintf("directory loop through %q", real)}
		}
		if err := tooMany(outName); err != nil {
			return err
		}
		stack[real] = true
		defer delete(stack, real)
		out[outName] = &fstest.MapFile{Mode: fs.ModeDir | 0o555}
		children := make([]string, 0, len(f.children[real]))
		for c := range f.children[real] {
			children = append(children, c)
		}
		sort.Strings(children)
		for _, c := range children {
			o := outName + "/" + path.Base(c)
			resolved, n, err := f.resolve(c)
			if errors.Is(err, fs.ErrNotExist) {
				return &RefusedError{Layer: -1, Entry: o, Reason: ErrUnsafeLink, Detail: "does not resolve inside the image"}
			}
			if err != nil {
				return &RefusedError{Layer: -1, Entry: o, Reason: ErrUnsafeLink, Detail: strings.TrimPrefix(err.Error(), ErrUnsafeLink.Error()+": ")}
			}
			switch n.kind {
			case kindDir:
				if err := walk(o, resolved, stack); err != nil {
					return err
				}
			case kindFile:
				if err := tooMany(o); err != nil {
					return err
				}
				files = append(files, placed{name: o, node: n})
			}
		}
		return nil
	}
	for _, root := range f.opts.Keep {
		resolved, n, err := f.resolve(root)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, &RefusedError{Layer: -1, Entry: root, Reason: ErrUnsafeLink, Detail: strings.TrimPrefix(err.Error(), ErrUnsafeLink.Error()+": ")}
		}
		if n.kind != kindDir {
			continue
		}
		if err := walk(root, resolved, map[string]bool{}); err != nil {
			return nil, err
		}
	}
	if err := f.fetch(files); err != nil {
		return nil, err
	}
	for _, p := range files {
		out[p.name] = &fstest.MapFile{Data: p.node.data, Mode: 0o444}
	}
	return out, nil
}

// fetch reads the content of files whose entries lay outside the kept
// directories (reached through links) from their layers.
func (f *flattener) fetch(files []placed) error {
	want := map[int]map[int][]*node{} // layer -> entry index -> nodes
	for _, p := range files {
		if p.node.loaded {
			continue
		}
		if want[p.node.layer] == nil {
			want[p.node.layer] = map[int][]*node{}
		}
		want[p.node.layer][p.node.index] = append(want[p.node.layer][p.node.index], p.node)
	}
	for layer, entries := range want {
		rc, err := f.layers[layer].Uncompressed()
		if err != nil {
			return fmt.Errorf("layer %d: open: %w", layer, err)
		}
		tr := tar.NewReader(rc)
		for index := 0; len(entries) > 0; index++ {
			hdr, err := tr.Next()
			if err != nil {
				rc.Close()
				return fmt.Errorf("layer %d: read tar again: %w", layer, err)
			}
			nodes, ok := entries[index]
			if !ok {
				continue
			}
			delete(entries, index)
			if err := f.read(layer, hdr.Name, nodes[0], tr); err != nil {
				rc.Close()
				return err
			}
			for _, n := range nodes[1:] {
				n.data, n.loaded = nodes[0].data, true
			}
		}
		rc.Close()
	}
	return nil
}
