package payload

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
	"testing/fstest"

	"github.com/blang/semver/v4"
	imagev1 "github.com/openshift/api/image/v1"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// SourceKind says how Assemble reads a source directory.
type SourceKind string

const (
	// SourceAuto reads a directory that holds a release-manifests/
	// subdirectory as SourcePayload and any other as SourceComponent.
	SourceAuto SourceKind = ""
	// SourceComponent is one operator's manifest directory, as the operator
	// image's /manifests holds it: its .yaml, .yml and .json files go to
	// release-manifests/ under the names `oc adm release new` gives them,
	// and its image-references file is merged.
	SourceComponent SourceKind = "component"
	// SourcePayload is a payload directory (an extracted release, a
	// previous build): the files of its manifests/ and release-manifests/
	// keep their names, its release-manifests/image-references is merged and
	// its release-metadata is replaced.
	SourcePayload SourceKind = "payload"
	// SourceCVO is the cluster-version-operator's own manifests directory
	// (Go templates): its files are copied to manifests/ as they are, and
	// its image-references file is merged.
	SourceCVO SourceKind = "cvo"
)

// Source is one input directory of Assemble.
type Source struct {
	// Path names the directory in messages and errors; its base name is the
	// default component name.
	Path string
	// FS is the directory's content.
	FS fs.FS
	// Kind says how to read the directory; SourceAuto detects it.
	Kind SourceKind
	// Component, when set, names the component (NAME=DIR on the command
	// line). Otherwise a component directory is named by its
	// image-references metadata.name when that is set, else by the base
	// name of Path. Names follow the task graph's pattern: letters and
	// digits in dash-separated words.
	Component string
}

// AssembleOptions configure Assemble.
type AssembleOptions struct {
	// Version is the release version (semver, required): release-metadata's
	// version and the name of the merged image-references ImageStream.
	Version string
}

// Placement records where Assemble put one source file.
type Placement struct {
	// Source is the Source.Path the file came from.
	Source string
	// Component is the component the file was named for; empty for files
	// that keep their names (payload and CVO sources).
	Component string
	// From is the file's path inside the source.
	From string
	// To is the file's path in the payload.
	To string
}

// Assembly is a payload that Assemble put together, held in memory.
type Assembly struct {
	// Files maps slash-separated paths under the payload root
	// (manifests/..., release-manifests/...) to their content.
	Files map[string][]byte
	// Release is the release-metadata Assemble wrote.
	Release *Release
	// ImageStream is the merged image-references Assemble wrote.
	ImageStream *imagev1.ImageStream
	// Placed lists every copied file in payload order.
	Placed []Placement
	// Skipped lists what was left out, one "SOURCE/FILE: reason" each.
	Skipped []string
}

// FS returns the payload as a read-only file system; it shares the bytes of
// Files, which must not change afterwards.
func (a *Assembly) FS() fs.FS {
	m := fstest.MapFS{}
	for name, data := range a.Files {
		m[name] = &fstest.MapFile{Data: data, Mode: 0o444}
	}
	return m
}

// componentRE is a component name the task graph can parse back out of
// 0000_<NN>_<component>_<name>.
var componentRE = regexp.MustCompile(`^[a-zA-Z0-9]+(-[a-zA-Z0-9]+)*$`)

// Assemble collects source directories into a release payload the way
// `oc adm release new` lays one out:
//
//   - A component directory's .yaml, .yml and .json files (top level only,
//     as the CVO reads them) go to release-manifests/. A file whose name does
//     not start with "0000_" becomes "0000_50_<component>_<name>"; other
//     files of the directory (README, scripts) are skipped.
//   - Payload and CVO sources keep their file names.
//   - Components are taken in name order, files in name order; when a name
//     is already taken, the file becomes <stem>_2<ext> (then _3, ...).
//   - Every source's image-references is merged into one ImageStream named
//     Version, tags sorted by name. A tag two sources give different pull
//     specs is an error naming both sources; the same tag and pull spec twice
//     is merged. Only the tags' name, annotations and from are kept.
//   - release-manifests/release-metadata is written as
//     cincinnati-metadata-v0 with Version, which must be semver.
//
// Every problem is reported, joined. Assemble reads only through the
// sources' FS and writes nothing.
func Assemble(sources []Source, opts AssembleOptions) (*Assembly, error) {
	if opts.Version == "" {
		return nil, errors.New("release version: is required")
	}
	if _, err := semver.Parse(opts.Version); err != nil {
		return nil, fmt.Errorf("release version %q: not semver: %w", opts.Version, err)
	}
	a := &Assembly{Files: map[string][]byte{}}
	var errs []error
	var refs []imageRefs

	type release struct {
		src       Source
		component string
		dir       string // directory inside src.FS holding the files
		verbatim  bool   // keep file names (payload sources)
	}
	var releases []release
	var cvos []Source
	for _, src := range sources {
		kind := src.Kind
		if kind == SourceAuto {
			kind = SourceComponent
			if st, err := fs.Stat(src.FS, ReleaseManifestDir); err == nil && st.IsDir() {
				kind = SourcePayload
			}
		}
		switch kind {
		case SourceCVO:
			cvos = append(cvos, src)
		case SourcePayload:
			if st, err := fs.Stat(src.FS, ManifestDir); err == nil && st.IsDir() {
				sub, err := fs.Sub(src.FS, ManifestDir)
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", src.Path, err))
					continue
				}
				cvos = append(cvos, Source{Path: path.Join(src.Path, ManifestDir), FS: sub, Kind: SourceCVO})
			}
			name := src.Component
			if name == "" {
				name = path.Base(filepathToSlash(src.Path))
			}
			releases = append(releases, release{src: src, component: name, dir: ReleaseManifestDir, verbatim: true})
		case SourceComponent:
			ref, err := readImageRefs(src.FS, ImageReferencesFile, path.Join(src.Path, ImageReferencesFile))
			if err != nil {
				errs = append(errs, err)
			}
			name, err := componentName(src, ref)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			releases = append(releases, release{src: src, component: name, dir: "."})
		default:
			errs = append(errs, fmt.Errorf("%s: source kind %q: want %q, %q or %q", src.Path, kind, SourceComponent, SourcePayload, SourceCVO))
		}
	}

	// Components in name order; a name given twice would mix two
	// components' files under one prefix.
	sort.SliceStable(releases, func(i, j int) bool { return releases[i].component < releases[j].component })
	for i := 1; i < len(releases); i++ {
		p, r := releases[i-1], releases[i]
		if p.component == r.component && !p.verbatim && !r.verbatim {
			errs = append(errs, fmt.Errorf("component %q: given by both %s and %s: name one of them with NAME=DIR", r.component, p.src.Path, r.src.Path))
		}
	}

	taken := map[string]bool{ReleaseMetadataFile: true, ImageReferencesFile: true}
	for _, r := range releases {
		entries, err := fs.ReadDir(r.src.FS, r.dir)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: read directory: %w", path.Join(r.src.Path, r.dir), err))
			continue
		}
		for _, e := range entries {
			from := path.Join(r.dir, e.Name())
			shown := path.Join(r.src.Path, from)
			switch {
			case e.IsDir():
				a.Skipped = append(a.Skipped, shown+": directory (the CVO reads only the top level)")
				continue
			case e.Name() == ImageReferencesFile:
				ref, err := readImageRefs(r.src.FS, from, shown)
				if err != nil {
					errs = append(errs, err)
				} else {
					refs = append(refs, ref)
				}
				continue
			case r.verbatim && e.Name() == ReleaseMetadataFile:
				a.Skipped = append(a.Skipped, shown+": replaced by the new release's metadata")
				continue
			case !r.verbatim && !IsManifestFile(e.Name()):
				a.Skipped = append(a.Skipped, shown+": not a manifest (.yaml, .yml or .json)")
				continue
			}
			data, err := manifest.ReadFile(r.src.FS, from, 0)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: read: %w", shown, err))
				continue
			}
			name, component := e.Name(), ""
			if !r.verbatim {
				component = r.component
				if !strings.HasPrefix(name, "0000_") {
					name = "0000_50_" + component + "_" + name
				}
			}
			name = uniqueName(taken, name)
			to := ReleaseManifestDir + "/" + name
			a.Files[to] = data
			a.Placed = append(a.Placed, Placement{Source: r.src.Path, Component: component, From: from, To: to})
		}
	}

	// CVO manifests keep their names: they are one component's files and
	// a clash means two sources claim the CVO.
	cvoFrom := map[string]string{}
	for _, src := range cvos {
		entries, err := fs.ReadDir(src.FS, ".")
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: read directory: %w", src.Path, err))
			continue
		}
		for _, e := range entries {
			shown := path.Join(src.Path, e.Name())
			switch {
			case e.IsDir():
				a.Skipped = append(a.Skipped, shown+": directory (the CVO reads only the top level)")
				continue
			case e.Name() == ImageReferencesFile:
				ref, err := readImageRefs(src.FS, e.Name(), shown)
				if err != nil {
					errs = append(errs, err)
				} else {
					refs = append(refs, ref)
				}
				continue
			}
			to := ManifestDir + "/" + e.Name()
			if prev, ok := cvoFrom[to]; ok {
				errs = append(errs, fmt.Errorf("%s: given by both %s and %s", to, prev, shown))
				continue
			}
			data, err := manifest.ReadFile(src.FS, e.Name(), 0)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: read: %w", shown, err))
				continue
			}
			cvoFrom[to] = shown
			a.Files[to] = data
			a.Placed = append(a.Placed, Placement{Source: src.Path, From: e.Name(), To: to})
		}
	}

	imsData, err := mergeImageRefs(refs, opts.Version)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	metaData, err := json.MarshalIndent(cincinnatiMetadata{Kind: "cincinnati-metadata-v0", Version: opts.Version, Previous: []string{}}, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("release-metadata: marshal: %w", err)
	}
	metaData = append(metaData, '\n')
	a.Files[ReleaseManifestDir+"/"+ReleaseMetadataFile] = metaData
	a.Files[ReleaseManifestDir+"/"+ImageReferencesFile] = imsData
	// Read back what was written, so the checks Load makes hold by
	// construction.
	if a.Release, err = ParseReleaseMetadata(metaData); err != nil {
		return nil, fmt.Errorf("release-metadata: %w", err)
	}
	if a.ImageStream, err = ParseImageReferences(imsData); err != nil {
		return nil, fmt.Errorf("image-references: %w", err)
	}
	return a, nil
}

// componentName picks a component directory's name: Source.Component, else
// its image-references metadata.name, else its base name.
func componentName(src Source, ref imageRefs) (string, error) {
	name, from := src.Component, "NAME=DIR"
	if name == "" && ref.stream != nil && ref.stream.Name != "" {
		name, from = ref.stream.Name, ref.file+" metadata.name"
	}
	if name == "" {
		name, from = path.Base(filepathToSlash(src.Path)), "the directory's base name"
	}
	if !componentRE.MatchString(name) {
		return "", fmt.Errorf("%s: component name %q (from %s): want letters and digits in dash-separated words; name it with NAME=DIR", src.Path, name, from)
	}
	return name, nil
}

// uniqueName returns name, or name with _2, _3, ... before its extension
// when that is taken, and marks the result taken.
func uniqueName(taken map[string]bool, name string) string {
	out := name
	ext := path.Ext(name)
	for i := 2; taken[out]; i++ {
		out = fmt.Sprintf("%s_%d%s", strings.TrimSuffix(name, ext), i, ext)
	}
	taken[out] = true
	return out
}

// filepathToSlash turns OS separators into slashes for base names; paths
// here are for messages and naming only.
func filepathToSlash(p string) string {
	p = strings.ReplaceAll(p, "\\", "/")
	if trimmed := strings.TrimRight(p, "/"); trimmed != "" {
		return trimmed
	}
	return p
}

// imageRefs is one source's parsed image-references.
type imageRefs struct {
	file   string // as shown in messages
	stream *imagev1.ImageStream
}

// readImageRefs reads an image-references file; a missing file is no error
// and yields an empty imageRefs.
func readImageRefs(fsys fs.FS, name, shown string) (imageRefs, error) {
	data, err := manifest.ReadFile(fsys, name, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return imageRefs{file: shown}, nil
	}
	if err != nil {
		return imageRefs{file: shown}, fmt.Errorf("%s: read: %w", shown, err)
	}
	ims, err := parseImageStream(data)
	if err != nil {
		return imageRefs{file: shown}, fmt.Errorf("%s: %w", shown, err)
	}
	return imageRefs{file: shown, stream: ims}, nil
}

// imageStreamFile is the image-references Assemble writes.
type imageStreamFile struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Tags []tagFile `json:"tags"`
	} `json:"spec"`
}

type tagFile struct {
	Name        string            `json:"name"`
	Annotations map[string]string `json:"annotations,omitempty"`
	From        tagFrom           `json:"from"`
}

type tagFrom struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// mergeImageRefs merges the tags of refs into one image-references file
// named version.
func mergeImageRefs(refs []imageRefs, version string) ([]byte, error) {
	type origin struct {
		tag  imagev1.TagReference
		file string
	}
	tags := map[string]origin{}
	var errs []error
	for _, r := range refs {
		if r.stream == nil {
			continue
		}
		for _, t := range r.stream.Spec.Tags {
			prev, ok := tags[t.Name]
			if !ok {
				tags[t.Name] = origin{tag: t, file: r.file}
				continue
			}
			if prev.tag.From.Name != t.From.Name {
				errs = append(errs, fmt.Errorf("image-references: tag %q: conflicting pull specs %q from %s and %q from %s", t.Name, prev.tag.From.Name, prev.file, t.From.Name, r.file))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	var out imageStreamFile
	out.Kind, out.APIVersion, out.Metadata.Name = "ImageStream", "image.openshift.io/v1", version
	out.Spec.Tags = []tagFile{}
	for _, o := range tags {
		out.Spec.Tags = append(out.Spec.Tags, tagFile{Name: o.tag.Name, Annotations: o.tag.Annotations, From: tagFrom{Kind: o.tag.From.Kind, Name: o.tag.From.Name}})
	}
	sort.Slice(out.Spec.Tags, func(i, j int) bool { return out.Spec.Tags[i].Name < out.Spec.Tags[j].Name })
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("image-references: marshal: %w", err)
	}
	return append(data, '\n'), nil
}
