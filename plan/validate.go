package plan

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/payload-apply/payload-apply/lib/image"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/profiles"
)

// ValidateOptions say what Validate checks beyond the payload itself.
type ValidateOptions struct {
	// Release checks a release image, or a payload about to be built into
	// one: the payload must have release-manifests/ with release-metadata
	// and image-references (Load already requires the ImageStream's name to
	// equal the metadata version), and, when Labels is not nil (the image's
	// config labels), the io.openshift.release label must equal the
	// release version. Unused image-references tags stay warnings, as
	// without Release: real releases carry images that no manifest names
	// (the installer, CLI artifacts, must-gather), so they cannot be
	// errors.
	Release bool
	// Labels are the image's config labels (with Release); nil for a
	// directory.
	Labels map[string]string
}

// Validate checks a payload the way `payload-apply validate` reports it and
// returns every finding, sorted by file and document: parse errors,
// repeated YAML keys, annotation lint, objects included twice, what the
// API server would refuse in the included objects (CheckObjects) and the
// overlays each profile applies, built over its selection (for every
// profile and feature set, or only those opts names), overlays no profile
// applies, image references, and file names the task graph cannot order;
// with vopts.Release, what a release image needs too. The error is for
// problems that stop validation itself (an unreadable payload, unknown
// options, an opts.Loaded payload loaded without payload.LoadOptions.KeepData,
// ctx ending).
func Validate(ctx context.Context, opts Options, vopts ValidateOptions) ([]manifest.Finding, error) {
	findings, err := validate(ctx, opts, vopts)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, interrupted(err, ctxErr)
	}
	return findings, err
}

func validate(ctx context.Context, opts Options, vopts ValidateOptions) ([]manifest.Finding, error) {
	release, labels := vopts.Release, vopts.Labels
	set := opts.Profiles
	if set == nil {
		var err error
		if set, err = profiles.Embedded(); err != nil {
			return nil, err
		}
	}
	fsys := payloadFS(opts.Payload)
	p := opts.Loaded
	var findings []manifest.Finding
	if p == nil {
		var err error
		phase(ctx, opts, PhaseLoad)
		p, err = payload.Load(ctx, fsys, payload.LoadOptions{ReleaseImage: opts.ReleaseImage, ClusterProfile: opts.Profile, KeepData: true, Parsed: opts.Parsed, Template: opts.TemplateLimits, OnStage: onStage(ctx, opts)})
		if p == nil {
			return nil, err
		}
		findings = append(findings, errorFindings(err)...)
	}
	findings = append(findings, p.Findings...)
	if opts.Cache == nil {
		// The matrix of profiles and feature sets below shares the
		// profiles' templates and the overlay builds.
		opts.Cache = NewCache()
	}

	phase(ctx, opts, PhaseValidate)
	linter := manifest.NewLinter(set.Names())
	for _, f := range p.Files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if f.Data == nil && len(f.Manifests) > 0 {
			return nil, fmt.Errorf("%s: the payload was loaded without its text (payload.LoadOptions.KeepData): cannot lint it", f.Path)
		}
		docs, err := manifest.SplitDocuments(f.Data)
		if err == nil {
			for _, d := range docs {
				findings = append(findings, manifest.DuplicateKeys(f.Path, d)...)
			}
		}
		if _, _, ok := payload.ParseFileName(f.Path); !ok {
			findings = append(findings, manifest.Finding{File: f.Path, Doc: -1, Severity: manifest.SeverityWarning,
				Message: "file name does not follow 0000_<NN>_<component>_<name>: it is applied last, serially"})
		}
		for i := range f.Manifests {
			findings = append(findings, linter.Lint(&f.Manifests[i])...)
		}
	}

	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dups, err := duplicateFindings(ctx, p, set, opts)
	if err != nil {
		return nil, err
	}
	findings = append(findings, dups...)
	findings = append(findings, imageFindings(p)...)
	if opts.ExtraManifests != nil {
		findings = append(findings, extraFindings(ctx, p, opts)...)
	}
	if release {
		findings = append(findings, releaseFindings(p, findings, labels)...)
	}
	findings = appendNew(nil, map[manifest.Finding]bool{}, findings)
	SortFindings(findings)
	return findings, nil
}

// extraFindings checks the admin's extra manifests (--extra-manifests) as
// render would take them: parse errors, and what the
// components make of them (an invalid PerformanceProfile, a PlatformOperator
// with no bundle) in a plan of the selection opts names (the default one
// when it names none).
func extraFindings(ctx context.Context, p *payload.Payload, opts Options) []manifest.Finding {
	if _, err := LoadExtraManifests(ctx, opts.ExtraManifests); err != nil {
		return errorFindings(err)
	}
	opts.Loaded = p
	pl, err := Build(ctx, opts)
	if err != nil {
		return errorFindings(err)
	}
	var findings []manifest.Finding
	for _, f := range pl.Findings {
		if strings.HasPrefix(f.File, ExtraDir+"/") {
			findings = append(findings, f)
		}
	}
	return findings
}

// errorFindings turns a load error into findings, one per joined error.
func errorFindings(err error) []manifest.Finding {
	if err == nil {
		return nil
	}
	var out []manifest.Finding
	var walk func(error)
	walk = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		var pe *manifest.ParseError
		if errors.As(err, &pe) {
			out = append(out, manifest.Finding{File: pe.File, Doc: pe.Doc, Severity: manifest.SeverityError, Message: pe.Err.Error()})
			return
		}
		out = append(out, manifest.Finding{File: "payload", Doc: -1, Severity: manifest.SeverityError, Message: err.Error()})
	}
	walk(err)
	return out
}

// duplicateFindings selects the payload for every profile and feature set
// (or the ones opts names) and reports each object included twice once.
func duplicateFindings(ctx context.Context, p *payload.Payload, set *profiles.Set, opts Options) ([]manifest.Finding, error) {
	profileNames := set.Names()
	if opts.Profile != "" {
		profileNames = []string{opts.Profile}
	}
	featureSets := manifest.KnownFeatureSets()
	if opts.FeatureSet != "" {
		featureSets = []string{opts.FeatureSet}
	}
	type dup struct {
		err         *payload.DuplicateError
		profiles    []string
		featureSets map[string][]string // profile -> feature sets
	}
	byKey := map[string]*dup{}
	var order []string
	var out []manifest.Finding
	seen := map[manifest.Finding]bool{}
	overlays := newOverlayChecker(opts)
	for _, prof := range profileNames {
		for _, fs := range featureSets {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			o := opts
			o.Loaded, o.Profile, o.FeatureSet, o.Profiles = p, prof, fs, set
			r, err := resolve(ctx, o)
			if err != nil {
				if ctx.Err() != nil {
					return nil, err
				}
				// The profile's templates do not render (the file
				// is named): a finding, and the next selection.
				out = appendNew(out, seen, errorFindings(err))
				continue
			}
			sel, err := r.payload.Select(r.selector)
			if err == nil {
				out = append(out, overlays.check(ctx, r, sel.Included)...)
				checked, err := CheckObjects(ctx, sel.Included, opts.Cache.schemas)
				if err != nil {
					return nil, err
				}
				out = appendNew(out, seen, checked)
				continue
			}
			for _, e := range flatten(err) {
				var d *payload.DuplicateError
				if !errors.As(e, &d) {
					return nil, e
				}
				key := d.First.Position() + "|" + d.Second.Position()
				entry, ok := byKey[key]
				if !ok {
					entry = &dup{err: d, featureSets: map[string][]string{}}
					byKey[key] = entry
					order = append(order, key)
				}
				if len(entry.featureSets[prof]) == 0 {
					entry.profiles = append(entry.profiles, prof)
				}
				entry.featureSets[prof] = append(entry.featureSets[prof], fs)
			}
		}
	}
	for _, key := range order {
		d := byKey[key]
		var where []string
		for _, prof := range d.profiles {
			sets := strings.Join(d.featureSets[prof], ", ")
			if len(d.featureSets[prof]) == len(featureSets) && len(featureSets) > 1 {
				sets = "every feature set"
			}
			where = append(where, fmt.Sprintf("%s (%s)", prof, sets))
		}
		out = append(out, manifest.Finding{File: d.err.Second.File, Doc: d.err.Second.Doc, Severity: manifest.SeverityError,
			Message: fmt.Sprintf("%s is also defined in %s; both are included for %s", d.err.Second.ID(), d.err.First.Position(), strings.Join(where, "; "))})
	}
	out = append(out, overlays.unused(set)...)
	return out, nil
}

// appendNew appends the findings not seen yet (the same object checked in
// several selections is reported once).
func appendNew(out []manifest.Finding, seen map[manifest.Finding]bool, fs []manifest.Finding) []manifest.Finding {
	for _, f := range fs {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// imageFindings checks container images against image-references: every
// image must be a well-formed pull spec, should be one of the tags' pull
// specs (or the release image), and every tag should be used.
func imageFindings(p *payload.Payload) []manifest.Finding {
	var out []manifest.Finding
	images := p.Images()
	known := map[string]string{} // pull spec -> tag
	for tag, spec := range images {
		known[spec] = tag
		if _, err := name.ParseReference(spec); err != nil {
			out = append(out, manifest.Finding{File: payload.ReleaseManifestDir + "/" + payload.ImageReferencesFile, Doc: -1,
				Severity: manifest.SeverityError, Message: fmt.Sprintf("tag %s: pull spec %q: %v", tag, spec, err)})
		}
	}
	used := map[string]bool{}
	for _, m := range p.Manifests() {
		// A tag is used when its pull spec appears anywhere in a manifest
		// (container images, but also env values such as operand images),
		// which is what a release build substitutes.
		for s := range stringValues(m.Obj.Object) {
			if tag, ok := known[s]; ok {
				used[tag] = true
			}
		}
		for _, img := range ContainerImages(m.Obj) {
			if _, err := name.ParseReference(img); err != nil {
				out = append(out, manifest.Finding{File: m.File, Doc: m.Doc, Severity: manifest.SeverityError,
					Message: fmt.Sprintf("%s: image %q is not a valid pull spec: %v", m.ID(), img, err)})
				continue
			}
			if _, ok := known[img]; !ok && p.ImageStream != nil && !strings.HasPrefix(m.File, payload.ManifestDir+"/") {
				out = append(out, manifest.Finding{File: m.File, Doc: m.Doc, Severity: manifest.SeverityWarning,
					Message: fmt.Sprintf("%s: image %q is not in image-references: a release build will not substitute it", m.ID(), img)})
			}
		}
	}
	var unused []string
	for tag := range images {
		if !used[tag] {
			unused = append(unused, tag)
		}
	}
	sort.Strings(unused)
	for _, tag := range unused {
		out = append(out, manifest.Finding{File: payload.ReleaseManifestDir + "/" + payload.ImageReferencesFile, Doc: -1,
			Severity: manifest.SeverityWarning, Message: fmt.Sprintf("tag %s (%s) is used by no manifest", tag, images[tag])})
	}
	return out
}

// releaseFindings checks what a release image needs beyond a payload
// directory: release metadata and image references, and a release label
// that agrees with them. found are the findings so far, so that a file Load
// already reported is not reported twice.
func releaseFindings(p *payload.Payload, found []manifest.Finding, labels map[string]string) []manifest.Finding {
	var out []manifest.Finding
	reported := map[string]bool{}
	for _, f := range found {
		if f.Severity == manifest.SeverityError {
			reported[f.File] = true
		}
	}
	for _, file := range []string{payload.ReleaseMetadataFile, payload.ImageReferencesFile} {
		name := payload.ReleaseManifestDir + "/" + file
		missing := (file == payload.ReleaseMetadataFile && p.Release == nil) || (file == payload.ImageReferencesFile && p.ImageStream == nil)
		if missing && !reported[name] {
			out = append(out, manifest.Finding{File: name, Doc: -1, Severity: manifest.SeverityError,
				Message: "a release image needs this file"})
		}
	}
	if labels == nil {
		return out
	}
	label, ok := labels[image.ReleaseLabel]
	switch {
	case !ok:
		out = append(out, manifest.Finding{File: "image", Doc: -1, Severity: manifest.SeverityError,
			Message: fmt.Sprintf("label %s is missing", image.ReleaseLabel)})
	case p.Release != nil && label != p.Release.Version:
		out = append(out, manifest.Finding{File: "image", Doc: -1, Severity: manifest.SeverityError,
			Message: fmt.Sprintf("label %s is %q, release-metadata version is %q", image.ReleaseLabel, label, p.Release.Version)})
	}
	return out
}

// ContainerImages returns the image of every container, init container and
// ephemeral container in obj's pod specs (Pods, workload templates, CronJob
// job templates), in document order.
func ContainerImages(obj *unstructured.Unstructured) []string {
	var out []string
	var walk func(v any, key string)
	walk = func(v any, key string) {
		switch t := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(t[k], k)
			}
		case []any:
			for _, e := range t {
				if key == "containers" || key == "initContainers" || key == "ephemeralContainers" {
					if c, ok := e.(map[string]any); ok {
						if img, ok := c["image"].(string); ok {
							out = append(out, img)
						}
					}
					continue
				}
				walk(e, "")
			}
		}
	}
	if spec, ok := obj.Object["spec"]; ok && obj.GetKind() != "CustomResourceDefinition" {
		walk(spec, "spec")
	}
	return out
}

// SortFindings sorts by file, document, then severity (errors first) and message.
func SortFindings(fs []manifest.Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Doc != b.Doc {
			return a.Doc < b.Doc
		}
		if a.Severity != b.Severity {
			return a.Severity == manifest.SeverityError
		}
		return a.Message < b.Message
	})
}

// stringValues yields every string value in an unstructured object.
func stringValues(v any) map[string]struct{} {
	out := map[string]struct{}{}
	var walk func(any)
	walk = func(v any) {
		switch t := v.(type) {
		case string:
			out[t] = struct{}{}
		case map[string]any:
			for _, e := range t {
				walk(e)
			}
		case []any:
			for _, e := range t {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}
