package overlay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// Annotations the overlay stage adds while kustomize runs and removes after.
const (
	// IndexAnnotation tags each input object with its position, so that the
	// object that comes out of kustomize finds its source file again.
	IndexAnnotation = "overlay.payload-apply/index"
	// originAnnotation is kustomize's record of the file an object came
	// from (buildMetadata: [originAnnotations]); it names the file of the
	// objects an overlay adds.
	originAnnotation = "config.kubernetes.io/origin"
)

// InputFile is the file, next to the overlay's kustomization, that holds the
// objects the overlay works on; the overlay stage adds it to the
// kustomization's resources. An overlay may not have a file of that name.
const InputFile = ".payload-apply-objects.yaml"

// AddedDir is where the objects an overlay adds are filed:
// overlays/<overlay dir>/<file the overlay defines them in>.
const AddedDir = "overlays"

// buildMu serialises kustomize builds. krusty's Run replaces a process-wide
// OpenAPI schema (kyaml/openapi.SetSchema), so two builds must never run at
// once; this mutex is the package's only mutable state and the accepted
// exception to "no package-level state".
var buildMu sync.Mutex

// Error is a problem with an overlay; File is the file to look at: the
// overlay's kustomization file, another file of the overlay, or the profile
// file that lists an overlay that cannot be found.
type Error struct {
	// File is the file to look at.
	File string
	// Err says what is wrong.
	Err error
}

// Error prints "FILE: message".
func (e *Error) Error() string { return e.File + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Action is what an overlay did to an object.
type Action string

// The actions.
const (
	Modified Action = "modified"
	Added    Action = "added"
	Deleted  Action = "deleted"
)

// Change is one thing an overlay did.
type Change struct {
	// Overlay is the overlay's kustomization file (Overlay.File).
	Overlay string
	// Action is what the overlay did.
	Action Action
	// Source is the input object the change concerns, as Apply was given it;
	// nil for objects an overlay added (and later changes to them).
	Source *manifest.Manifest
	// Object is the object after the change; nil for Deleted.
	Object *manifest.Manifest
}

// Result is the outcome of Apply.
type Result struct {
	// Objects are the objects after every overlay: the input objects that
	// remain, in input order, then those the overlays added. An object no
	// overlay changed is the input pointer itself; a changed one is a new
	// Manifest with the input's File, Doc, Line and OriginalFilename, so it
	// keeps its place (run level, component, file order) in the task graph.
	// An added object is filed as overlays/<overlay dir>/<its file>: its run
	// level comes from that file's name when it follows
	// 0000_<NN>_<component>_<name>, else it runs last. Objects made by a
	// generator are filed as <kind>-<name>.yaml (lower case).
	Objects []*manifest.Manifest
	// Changes list what each overlay did, overlay by overlay.
	Changes []Change
}

// Apply runs overlays over objs in order, each on the previous one's output,
// with kustomize (krusty, in memory). Each overlay is first Checked, then
// copied alone into an in-memory file system with the objects as InputFile,
// so it can read nothing else. Builds run one at a time (see buildMu).
// Errors are *Error naming the overlay's kustomization file; Apply stops at
// the first overlay that fails. Apply is safe for concurrent use; it does not
// change objs.
//
// An overlay whose kustomization holds nothing but patches that each name a
// target gets only the objects some target may select (see narrowing):
// kustomize leaves the others as they are, so they pass through without
// the cost of a build.
//
// ctx is looked at between overlays and between objects; a kustomize
// build, which cannot be stopped, is left to finish in the background when
// ctx ends during it (the next build waits for it), and Apply returns
// ctx's error at once.
func Apply(ctx context.Context, objs []*manifest.Manifest, overlays []*Overlay) (*Result, error) {
	return (*Cache)(nil).apply(ctx, objs, overlays, true)
}

// prepared is an overlay copied into kustomize's in-memory file system,
// ready for its objects.
type prepared struct {
	fs        filesys.FileSystem
	narrowing *narrowing // nil: every object goes to kustomize
}

// prepare Checks the overlay and copies it.
func (o *Overlay) prepare() (*prepared, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	fail := func(format string, args ...any) error {
		return &Error{File: o.File, Err: fmt.Errorf(format, args...)}
	}
	mem := filesys.MakeFsInMemory()
	if err := o.copyTo(mem); err != nil {
		return nil, fail("copy the overlay: %w", err)
	}
	if mem.Exists(memRoot + "/" + InputFile) {
		return nil, fail("%s is reserved for the objects the overlay works on", InputFile)
	}
	n, err := o.rewriteKustomization(mem)
	if err != nil {
		return nil, fail("%w", err)
	}
	return &prepared{fs: mem, narrowing: n}, nil
}

// build runs kustomize over in and says what became of each object.
func (o *Overlay) build(ctx context.Context, mem *prepared, in []state) (*cacheEntry, error) {
	fail := func(format string, args ...any) error {
		return &Error{File: o.File, Err: fmt.Errorf(format, args...)}
	}
	var input bytes.Buffer
	for i, s := range in {
		if i%256 == 0 && ctx.Err() != nil {
			return nil, fail("kustomize build: %w", ctx.Err())
		}
		data, err := tagged(s.m.Obj.Object, i)
		if err != nil {
			return nil, fail("%s: %s: encode: %w", s.m.Position(), s.m.ID(), err)
		}
		input.WriteString("---\n")
		input.Write(data)
		input.WriteByte('\n')
	}
	resMap, err := runKustomize(ctx, mem, input.Bytes())
	if err != nil {
		return nil, fail("%w", err)
	}

	e := &cacheEntry{in: in, out: make([]state, len(in))}
	seen := make([]bool, len(in))
	docs := map[string]int{}
	for _, r := range resMap.Resources() {
		raw, err := r.MarshalJSON()
		if err != nil {
			return nil, fail("%s: encode kustomize output: %w", r.CurId(), err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			return nil, fail("%s: decode kustomize output: %w", r.CurId(), err)
		}
		ann := u.GetAnnotations()
		idx, tagged := ann[IndexAnnotation]
		origin := ann[originAnnotation]
		if tagged {
			i, err := strconv.Atoi(idx)
			if err != nil || i < 0 || i >= len(in) || seen[i] {
				return nil, fail("%s: the overlay changed or copied the %s annotation", r.CurId(), IndexAnnotation)
			}
			seen[i] = true
			prev := in[i]
			restore(u, prev.m.Obj)
			if reflect.DeepEqual(u.Object, prev.m.Obj.Object) {
				e.out[i] = prev
				continue
			}
			m, err := newManifest(u, prev.m.File, prev.m.Doc, prev.m.Line)
			if err != nil {
				return nil, fail("%s: %w", prev.m.Position(), err)
			}
			m.OriginalFilename = prev.m.OriginalFilename
			e.out[i] = state{m: m, source: prev.source}
			e.changes = append(e.changes, Change{Overlay: o.File, Action: Modified, Source: prev.source, Object: m})
			continue
		}
		restore(u, nil)
		file := o.addedFile(origin, u)
		m, err := newManifest(u, file, docs[file], 0)
		if err != nil {
			return nil, fail("%s: %w", file, err)
		}
		docs[file]++
		e.added = append(e.added, state{m: m})
		e.changes = append(e.changes, Change{Overlay: o.File, Action: Added, Object: m})
	}
	for i, ok := range seen {
		if !ok {
			e.changes = append(e.changes, Change{Overlay: o.File, Action: Deleted, Source: in[i].source})
		}
	}
	return e, nil
}

// runKustomize writes input as the overlay's objects and builds it. The
// prepared copy may be shared (Cache): the write and the build happen
// under buildMu, in a goroutine of their own, so that when ctx ends while
// the build runs (krusty has no way to stop it) the caller gets ctx's
// error at once; the build finishes in the background and the next one
// waits for it.
func runKustomize(ctx context.Context, mem *prepared, input []byte) (resmap.ResMap, error) {
	type result struct {
		res resmap.ResMap
		err error
	}
	done := make(chan result, 1)
	go func() {
		buildMu.Lock()
		defer buildMu.Unlock()
		if err := ctx.Err(); err != nil {
			done <- result{err: fmt.Errorf("kustomize build: %w", err)}
			return
		}
		if err := mem.fs.WriteFile(memRoot+"/"+InputFile, input); err != nil {
			done <- result{err: fmt.Errorf("write the objects: %w", err)}
			return
		}
		res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(mem.fs, memRoot)
		if err != nil {
			err = fmt.Errorf("kustomize build: %w", explainKustomize(err))
		}
		done <- result{res: res, err: err}
	}()
	select {
	case r := <-done:
		return r.res, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("kustomize build: %w", ctx.Err())
	}
}

// copyTo copies the overlay's directory tree to memRoot in mem.
func (o *Overlay) copyTo(mem filesys.FileSystem) error {
	if err := mem.MkdirAll(memRoot); err != nil {
		return err
	}
	return fs.WalkDir(o.Source.FS, o.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := memRoot + strings.TrimPrefix(p, o.Dir)
		if d.IsDir() {
			return mem.MkdirAll(target)
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", p)
		}
		data, err := manifest.ReadFile(o.Source.FS, p, 0)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		return mem.WriteFile(target, data)
	})
}

// rewriteKustomization adds InputFile first to the overlay's resources and
// turns on origin annotations, in the in-memory copy. It returns the
// overlay's narrowing, nil when every object must go to kustomize.
func (o *Overlay) rewriteKustomization(mem filesys.FileSystem) (*narrowing, error) {
	file := memRoot + "/" + o.kustomization
	data, err := mem.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var k map[string]any
	if err := yaml.Unmarshal(data, &k); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if k == nil {
		k = map[string]any{}
	}
	n := narrowingOf(k, func(p string) ([]byte, error) { return mem.ReadFile(memRoot + "/" + p) })
	resources, _ := k["resources"].([]any)
	k["resources"] = append([]any{InputFile}, resources...)
	meta, _ := k["buildMetadata"].([]any)
	hasOrigin := false
	for _, v := range meta {
		hasOrigin = hasOrigin || v == "originAnnotations"
	}
	if !hasOrigin {
		k["buildMetadata"] = append(meta, "originAnnotations")
	}
	out, err := yaml.Marshal(k)
	if err != nil {
		return nil, err
	}
	return n, mem.WriteFile(file, out)
}

// tagged returns obj as JSON with IndexAnnotation set to i; obj is not
// changed.
func tagged(obj map[string]any, i int) ([]byte, error) {
	o := maps.Clone(obj)
	md, _ := o["metadata"].(map[string]any)
	md = maps.Clone(md)
	if md == nil {
		md = map[string]any{}
	}
	ann, _ := md["annotations"].(map[string]any)
	ann = maps.Clone(ann)
	if ann == nil {
		ann = map[string]any{}
	}
	ann[IndexAnnotation] = strconv.Itoa(i)
	md["annotations"] = ann
	o["metadata"] = md
	return json.Marshal(o)
}

// restore removes the overlay stage's annotations from u, giving back the
// values prev had (prev nil: an added object), and drops an annotations map
// that is left empty when prev had none.
func restore(u *unstructured.Unstructured, prev *unstructured.Unstructured) {
	ann := u.GetAnnotations()
	var before map[string]string
	if prev != nil {
		before = prev.GetAnnotations()
	}
	for _, k := range []string{IndexAnnotation, originAnnotation} {
		if v, ok := before[k]; ok {
			ann[k] = v
		} else {
			delete(ann, k)
		}
	}
	if len(ann) == 0 {
		if prev != nil {
			if _, had, _ := unstructured.NestedFieldNoCopy(prev.Object, "metadata", "annotations"); had {
				unstructured.SetNestedField(u.Object, map[string]any{}, "metadata", "annotations")
				return
			}
		}
		unstructured.RemoveNestedField(u.Object, "metadata", "annotations")
		return
	}
	u.SetAnnotations(ann)
}

// addedFile names the file of an object the overlay added: the file it came
// from, under overlays/<dir>/, or <kind>-<name>.yaml for generated objects.
func (o *Overlay) addedFile(origin string, u *unstructured.Unstructured) string {
	var org struct {
		Path string `json:"path"`
	}
	if origin != "" {
		_ = yaml.Unmarshal([]byte(origin), &org)
	}
	name := org.Path
	if name == "" || strings.HasPrefix(name, "..") || path.IsAbs(name) {
		name = strings.ToLower(u.GetKind()) + "-" + u.GetName() + ".yaml"
	}
	return path.Join(AddedDir, o.Dir, name)
}

// newManifest builds a manifest from an object the way Parse would.
func newManifest(u *unstructured.Unstructured, file string, doc, line int) (*manifest.Manifest, error) {
	raw, err := u.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	m := &manifest.Manifest{File: file, Doc: doc, Line: line}
	if err := m.Manifest.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	m.OriginalFilename = path.Base(file)
	m.Raw = nil // not kept (see manifest.Manifest)
	return m, nil
}

// kustomize says an object lost its name by printing the object as a Go
// value; these read what it was out of that dump.
var (
	missingName    = regexp.MustCompile(`missing metadata\.name in object \{\{(\S+) (\S+)\}`)
	previousName   = regexp.MustCompile(`previousNames:(\S+)`)
	previousNS     = regexp.MustCompile(`previousNamespaces:(\S+)`)
	transformerRef = regexp.MustCompile(`kind: (\S+Transformer)`)
)

// explainKustomize rewrites the errors kustomize words for its own
// developers: an object whose name a patch removed is named as it was
// before, with what removed it, instead of kustomize's dump of it.
func explainKustomize(err error) error {
	m := missingName.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	obj := m[2]
	if n := previousName.FindStringSubmatch(err.Error()); n != nil {
		if ns := previousNS.FindStringSubmatch(err.Error()); ns != nil && ns[1] != "" && ns[1] != "~X" {
			obj += "/" + ns[1]
		}
		obj += "/" + n[1]
	}
	by := "the overlay"
	if t := transformerRef.FindStringSubmatch(err.Error()); t != nil {
		by = "a patch (" + t[1] + ")"
	}
	return fmt.Errorf("%s removed metadata.name of %s (%s): every object needs a name; a patch may change it, not remove it", by, obj, m[1])
}
