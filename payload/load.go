package payload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	imagev1 "github.com/openshift/api/image/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/parallel"
	"github.com/payload-apply/payload-apply/lib/safefs"
	"github.com/payload-apply/payload-apply/profiles"
)

// Directory and file names of a release payload, as the CVO reads them.
const (
	// ManifestDir holds the CVO's own manifests; they are Go templates.
	ManifestDir = "manifests"
	// ReleaseManifestDir holds every other operator's manifests.
	ReleaseManifestDir = "release-manifests"
	// ReleaseMetadataFile is the Cincinnati metadata of the release.
	ReleaseMetadataFile = "release-metadata"
	// ImageReferencesFile is the ImageStream naming every image of the release.
	ImageReferencesFile = "image-references"
)

// LoadOptions configure Load. The zero value is usable.
type LoadOptions struct {
	// ReleaseImage is the pull spec the manifests/ templates see as
	// {{.ReleaseImage}}. Empty: "quay.io/openshift-release-dev/ocp-release:<version>".
	ReleaseImage string
	// ClusterProfile is what the templates see as {{.ClusterProfile}}.
	// Empty: profiles.Default.
	ClusterProfile string
	// Parallelism bounds the number of files parsed at once; 0 means GOMAXPROCS.
	Parallelism int
	// KeepData keeps each file's text in File.Data after parsing (validate
	// lints it). Otherwise Data is dropped once the file is parsed: the
	// objects are what the other commands use, and a payload's text is as
	// big as the payload (100 MB for ten releases).
	KeepData bool
	// Only, when set, loads the payload for that one selection: the
	// manifests Only excludes keep, of their object, only apiVersion, kind
	// and metadata (what Select reads to explain the exclusion). The
	// feature-set variants of CRDs, which a selection mostly excludes, are
	// about half of a payload's bytes, and parsed objects take about twice
	// the memory of their text. Such a Payload serves that selection alone:
	// Select with any other selector, and WithProfile, fail. Nil: every
	// object is kept whole.
	Only *manifest.Selector
	// KeepWhole, with Only, keeps whole the manifests it reports though
	// Only excludes them (clustersync keeps the ClusterVersion CRD, which
	// the record needs whatever the selection).
	KeepWhole func(*manifest.Manifest) bool
	// Limits bound each file, document and object (zero fields: see
	// manifest.DefaultLimits). A file above Limits.MaxFileSize is not
	// read.
	Limits manifest.Limits
	// MaxPayloadSize bounds the bytes of all manifest files together; 0
	// means DefaultMaxPayloadSize. Load stops reading at the file that
	// crosses it.
	MaxPayloadSize int64
	// MaxFiles bounds the number of manifest files; 0 means
	// DefaultMaxFiles. Load reads none when there are more.
	MaxFiles int
	// Parsed, when set, keeps the parsed files of this payload between
	// loads (a cached release): files it has are not parsed again, and
	// those parsed without error are given to it. Templates of manifests/
	// do not use it (what they parse to depends on their rendering). Nil:
	// every file is parsed.
	Parsed ParseCache
	// Template bounds the work of rendering each manifests/ template
	// (zero fields: DefaultTemplateLimits).
	Template TemplateLimits
	// OnStage, when set, is told as each stage of Load starts (from
	// Load's goroutine): StageRead, StageTemplate, StageParse.
	OnStage func(LoadStage)
	// OnRead, when set, is given every file Load reads (manifest files,
	// release-metadata, image-references) with its bytes, as read, before
	// they are parsed; it must not keep or change them. It is called
	// concurrently. A cache keyed by the payload's content records with it
	// what it stores a parse under (see ReadRecorder and Fingerprint).
	OnRead func(path string, data []byte)
}

// LoadStage is a stage of Load.
type LoadStage string

// The stages of Load, in order.
const (
	// StageRead reads the files.
	StageRead LoadStage = "read"
	// StageTemplate renders the manifests/ templates.
	StageTemplate LoadStage = "template"
	// StageParse parses every file.
	StageParse LoadStage = "parse"
)

func (o LoadOptions) stage(s LoadStage) {
	if o.OnStage != nil {
		o.OnStage(s)
	}
}

// ParseCache keeps what the manifest files of one payload parse to (see
// LoadOptions.Parsed). Its methods are called concurrently.
type ParseCache interface {
	// Get returns what path parsed to, as manifest.Parse
	// returned it, in objects of the caller's own (Load changes them).
	// With keep set, an object keep does not report must come with its
	// apiVersion, kind and metadata alone (what Load keeps of it).
	Get(path string, keep func(*manifest.Manifest) bool) ([]manifest.Manifest, bool)
	// Put records what path parsed to. ms is changed after Put returns:
	// Put copies or encodes what it keeps.
	Put(path string, ms []manifest.Manifest)
	// Has reports whether Get would find path: Load then does not read
	// the release-manifests/ file (unless LoadOptions.KeepData), and
	// reads it only when Get fails after all.
	Has(path string) bool
}

// Default payload-wide limits (see LoadOptions). The real OpenShift payload
// is 13 MiB in 600 files; the hundredfold synthetic payload of the scale
// benchmarks is about 1 GiB in 60,000.
const (
	DefaultMaxPayloadSize = 2 << 30
	DefaultMaxFiles       = 200_000
)

// File is one manifest file of a payload, after templating.
type File struct {
	// Path is relative to the payload root, slash-separated.
	Path string
	// Data is the file's content (rendered, for manifests/); nil unless
	// the payload was loaded with LoadOptions.KeepData.
	Data []byte
	// Manifests are the objects parsed from Data, in document order.
	Manifests []manifest.Manifest

	deferred func() ([]byte, error) // see rawFile.deferred
}

// Payload is a loaded release payload. It is immutable once loaded and safe
// for concurrent use.
type Payload struct {
	// Release is the release-metadata; nil when the payload has none.
	Release *Release
	// ImageStream is the image-references ImageStream; nil when absent.
	ImageStream *imagev1.ImageStream
	// Files are the manifest files in load order: manifests/ then
	// release-manifests/, each in name order.
	Files []*File
	// Findings are warnings met while loading.
	Findings []manifest.Finding

	opts     LoadOptions
	cvoFiles []rawFile // manifests/ before templating, kept for WithProfile
	// rendered maps each manifests/ file that is a template to what it
	// rendered to (Data may be dropped), for WithProfile to reuse the
	// parsed file when another profile renders it the same.
	rendered map[string][]byte
}

type rawFile struct {
	path string
	data []byte
	// deferred is set for a file not read because opts.Parsed has its
	// parse; it reads the file when the parse is not there after all.
	deferred func() ([]byte, error)
}

// Manifests returns every parsed object in load order.
func (p *Payload) Manifests() []*manifest.Manifest {
	n := 0
	for _, f := range p.Files {
		n += len(f.Manifests)
	}
	out := make([]*manifest.Manifest, 0, n)
	for _, f := range p.Files {
		for i := range f.Manifests {
			out = append(out, &f.Manifests[i])
		}
	}
	return out
}

// Images maps image-references tag names to pull specs.
func (p *Payload) Images() map[string]string {
	images := map[string]string{}
	if p.ImageStream == nil {
		return images
	}
	for _, tag := range p.ImageStream.Spec.Tags {
		if tag.From != nil {
			images[tag.Name] = tag.From.Name
		}
	}
	return images
}

// IsManifestFile reports whether a file name is a manifest by the CVO's rule:
// a .yaml, .yml or .json extension.
func IsManifestFile(name string) bool {
	switch path.Ext(name) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// Load reads a payload from fsys: the directories manifests/ (Go templates)
// and release-manifests/ (at least one must exist), their .yaml, .yml and
// .json files in name order (subdirectories are ignored, as by the CVO), and
// release-manifests/release-metadata and image-references, which must both
// exist when release-manifests/ does and must agree on the version.
//
// Files are read within opts' limits (see LoadOptions and
// manifest.Parse with its limits), and a symbolic link that leads outside fsys
// (when fsys can read links, fs.ReadLinkFS) is refused with an error
// wrapping ErrLinkEscapes; links inside are followed.
//
// Every problem is reported, not just the first: the error joins a
// *manifest.ParseError per bad document or file. With such an error the
// returned Payload still holds everything that did load (validate reports
// on it); it is nil only when the payload could not be read at all.
//
// Load notices ctx ending between files (reading, parsing) and within a
// template's execution, and returns ctx's error (and no Payload) then.
func Load(ctx context.Context, fsys fs.FS, opts LoadOptions) (*Payload, error) {
	p, err := load(ctx, fsys, opts)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, fmt.Errorf("loading the payload: %w", ctxErr)
	}
	return p, err
}

func load(ctx context.Context, fsys fs.FS, opts LoadOptions) (*Payload, error) {
	p := &Payload{opts: opts}
	var errs []error
	found := false
	r := newReader(ctx, fsys, opts)
	opts.stage(StageRead)

	releaseEntries, err := fs.ReadDir(fsys, ReleaseManifestDir)
	switch {
	case err == nil:
		found = true
		rel, ims, metaErrs := loadMetadata(r)
		p.Release, p.ImageStream = rel, ims
		errs = append(errs, metaErrs...)
	case errors.Is(err, fs.ErrNotExist):
	default:
		errs = append(errs, &manifest.ParseError{File: ReleaseManifestDir, Doc: -1, Err: safefs.WithoutPath(err, ReleaseManifestDir)})
	}

	cvoEntries, err := fs.ReadDir(fsys, ManifestDir)
	switch {
	case err == nil:
		found = true
	case errors.Is(err, fs.ErrNotExist):
	default:
		errs = append(errs, &manifest.ParseError{File: ManifestDir, Doc: -1, Err: safefs.WithoutPath(err, ManifestDir)})
	}
	if !found {
		return nil, fmt.Errorf("payload has neither %s/ nor %s/", ManifestDir, ReleaseManifestDir)
	}

	if err := r.checkLinks(ManifestDir); err != nil {
		errs = append(errs, err)
		cvoEntries = nil
	}
	if err := r.checkLinks(ReleaseManifestDir); err != nil {
		errs = append(errs, err)
		releaseEntries = nil
	}
	if n := countManifestFiles(cvoEntries) + countManifestFiles(releaseEntries); n > r.maxFiles {
		return nil, &manifest.ParseError{File: ".", Doc: -1, Err: &manifest.LimitError{What: "file count", Size: int64(n), Limit: int64(r.maxFiles)}}
	}
	p.cvoFiles, errs = r.readAll(ManifestDir, cvoEntries, errs)
	if opts.Parsed != nil && !opts.KeepData {
		r.skip = opts.Parsed.Has
	}
	releaseFiles, errs := r.readAll(ReleaseManifestDir, releaseEntries, errs)

	if err := ctx.Err(); err != nil {
		return nil, err
	}
	opts.stage(StageTemplate)
	cvo, findings, renderErrs := p.renderTemplates(ctx, opts.ClusterProfile)
	errs = append(errs, renderErrs...)
	p.Findings = append(p.Findings, findings...)
	p.rendered = renderedTemplates(p.cvoFiles, cvo)
	p.Files = append(cvo, make([]*File, len(releaseFiles))...)
	for i, rf := range releaseFiles {
		p.Files[len(cvo)+i] = &File{Path: rf.path, Data: rf.data, deferred: rf.deferred}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	opts.stage(StageParse)
	errs = append(errs, parseFiles(ctx, p.Files, opts, p.rendered)...)
	return p, errors.Join(errs...)
}

// WithProfile returns the payload as a cluster of another profile sees it:
// the manifests/ templates are rendered again with {{.ClusterProfile}} set to
// profile; release-manifests/ are shared, not parsed again. A payload loaded
// for one selection (LoadOptions.Only) has no other profile. ctx ending
// stops it with ctx's error.
func (p *Payload) WithProfile(ctx context.Context, profile string) (*Payload, error) {
	if profile == p.profile() {
		return p, nil
	}
	if p.opts.Only != nil {
		return nil, fmt.Errorf("the payload was loaded for profile %s only", p.profile())
	}
	q := *p
	q.opts.ClusterProfile = profile
	cvo, findings, renderErrs := q.renderTemplates(ctx, profile)
	if len(renderErrs) > 0 {
		return nil, errors.Join(renderErrs...)
	}
	q.rendered = renderedTemplates(q.cvoFiles, cvo)
	// A file that renders as it did for p (most do not name the profile)
	// is p's file, already parsed.
	prev := map[string]*File{}
	for _, f := range p.Files[:countPrefix(p.Files, ManifestDir+"/")] {
		prev[f.Path] = f
	}
	var parse []*File
	for i, f := range cvo {
		old, ok := prev[f.Path]
		if !ok {
			parse = append(parse, f)
			continue
		}
		if text, templated := p.rendered[f.Path]; !templated || bytes.Equal(text, f.Data) {
			cvo[i] = old
			continue
		}
		parse = append(parse, f)
	}
	if errs := parseFiles(ctx, parse, p.opts, q.rendered); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	// The templated files come first in load order; keep the rest as they are.
	q.Files = append(cvo, p.Files[countPrefix(p.Files, ManifestDir+"/"):]...)
	q.Findings = append(nonTemplateFindings(p.Findings), findings...)
	return &q, nil
}

// renderedTemplates returns, for each file of raw that is a template and
// rendered into files, the rendered text (files' Data must still be there).
func renderedTemplates(raw []rawFile, files []*File) map[string][]byte {
	byPath := map[string]*File{}
	for _, f := range files {
		byPath[f.Path] = f
	}
	out := map[string][]byte{}
	for _, rf := range raw {
		if f, ok := byPath[rf.path]; ok && isTemplate(rf.data) {
			out[rf.path] = f.Data
		}
	}
	return out
}

func countPrefix(files []*File, prefix string) int {
	n := 0
	for n < len(files) && strings.HasPrefix(files[n].Path, prefix) {
		n++
	}
	return n
}

func nonTemplateFindings(fs []manifest.Finding) []manifest.Finding {
	var out []manifest.Finding
	for _, f := range fs {
		if !strings.HasPrefix(f.File, ManifestDir+"/") {
			out = append(out, f)
		}
	}
	return out
}

// maxFileSize is the file size limit of the payload's LoadOptions.
func (p *Payload) maxFileSize() int64 {
	if p.opts.Limits.MaxFileSize > 0 {
		return p.opts.Limits.MaxFileSize
	}
	return manifest.DefaultLimits().MaxFileSize
}

func (p *Payload) profile() string {
	if p.opts.ClusterProfile == "" {
		return profiles.Default
	}
	return p.opts.ClusterProfile
}

// parseFiles parses files in parallel, each result in its own slot, and
// returns the errors in file order. It drops the files' Data unless
// opts.KeepData. Files of templated (manifests/ templates) are never
// parsed through opts.Parsed. When ctx ends it parses no more files and
// returns ctx's error.
func parseFiles(ctx context.Context, files []*File, opts LoadOptions, templated map[string][]byte) []error {
	keep := opts.keep()
	errs := make([]error, len(files))
	parse := func(i int) {
		if ctx.Err() != nil {
			return
		}
		_, isTemplate := templated[files[i].Path]
		cached := opts.Parsed != nil && !isTemplate
		hit := false
		if cached {
			files[i].Manifests, hit = opts.Parsed.Get(files[i].Path, keep)
		}
		if !hit && files[i].deferred != nil {
			files[i].Data, errs[i] = files[i].deferred()
		}
		files[i].deferred = nil
		if !hit && errs[i] == nil {
			files[i].Manifests, errs[i] = manifest.Parse(files[i].Path, files[i].Data, manifest.ParseOptions{Limits: opts.Limits})
			if cached && errs[i] == nil {
				opts.Parsed.Put(files[i].Path, files[i].Manifests)
			}
		}
		if !opts.KeepData {
			files[i].Data = nil
		}
		if keep != nil && !hit { // a hit comes stripped (ParseCache.Get)
			for j := range files[i].Manifests {
				if m := &files[i].Manifests[j]; !keep(m) {
					stripToMetadata(m)
				}
			}
		}
	}
	if err := parallel.Each(ctx, len(files), opts.Parallelism, func() func(int) { return parse }); err != nil {
		return []error{err}
	}
	return slices.DeleteFunc(errs, func(e error) bool { return e == nil })
}

// keep reports which manifests a load for one selection keeps whole: those
// Only includes, and those KeepWhole reports; nil when every one is.
func (o LoadOptions) keep() func(*manifest.Manifest) bool {
	if o.Only == nil {
		return nil
	}
	only, whole := o.Only, o.KeepWhole
	return func(m *manifest.Manifest) bool { return only.Include(m).Included || whole != nil && whole(m) }
}

// stripToMetadata keeps of m's object only what selection reads.
func stripToMetadata(m *manifest.Manifest) {
	obj := map[string]any{}
	for _, k := range []string{"apiVersion", "kind", "metadata"} {
		if v, ok := m.Obj.Object[k]; ok {
			obj[k] = v
		}
	}
	m.Obj = &unstructured.Unstructured{Object: obj}
}
