package payload

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/blang/semver/v4"
	imagev1 "github.com/openshift/api/image/v1"
	"sigs.k8s.io/yaml"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// Release is the release-metadata of a payload.
type Release struct {
	// Version is the release version (semver), e.g. "4.22.0".
	Version string
	// Semver is Version parsed.
	Semver semver.Version
	// Previous and Next list update edges, when the metadata gives them.
	Previous []string
	Next     []string
	// Metadata is the free-form metadata object.
	Metadata map[string]any
}

// MajorVersion returns the release's major version, or nil when the payload has
// no release-metadata (then no major-version filter applies).
func (r *Release) MajorVersion() *uint64 {
	if r == nil || r.Version == "" {
		return nil
	}
	v := r.Semver.Major
	return &v
}

// cincinnatiMetadata is the release-metadata file format.
type cincinnatiMetadata struct {
	Kind     string         `json:"kind"`
	Version  string         `json:"version"`
	Previous []string       `json:"previous,omitempty"`
	Next     []string       `json:"next,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

func loadMetadata(r *reader) (*Release, *imagev1.ImageStream, []error) {
	var errs []error
	metaPath := ReleaseManifestDir + "/" + ReleaseMetadataFile
	imsPath := ReleaseManifestDir + "/" + ImageReferencesFile
	fileErr := func(file string, err error) error {
		return &manifest.ParseError{File: file, Doc: -1, Err: err}
	}

	var rel *Release
	if data, err := r.read(metaPath, -1, true); err != nil {
		errs = append(errs, err)
	} else if r, err := ParseReleaseMetadata(data); err != nil {
		errs = append(errs, fileErr(metaPath, err))
	} else {
		rel = r
	}

	var ims *imagev1.ImageStream
	if data, err := r.read(imsPath, -1, true); err != nil {
		errs = append(errs, err)
	} else if s, err := ParseImageReferences(data); err != nil {
		errs = append(errs, fileErr(imsPath, err))
	} else {
		ims = s
	}
	if rel != nil && ims != nil && ims.Name != rel.Version {
		errs = append(errs, fileErr(imsPath, fmt.Errorf("ImageStream name %q differs from the version %q in %s", ims.Name, rel.Version, metaPath)))
	}
	return rel, ims, errs
}

// ReadRelease reads release-manifests/release-metadata of a payload, as
// Load does, without loading the rest: nil and no error when the payload
// has no release-manifests/.
func ReadRelease(fsys fs.FS) (*Release, error) {
	data, err := newReader(context.Background(), fsys, LoadOptions{}).read(ReleaseManifestDir+"/"+ReleaseMetadataFile, -1, true)
	if errors.Is(err, fs.ErrNotExist) {
		if _, dirErr := fs.Stat(fsys, ReleaseManifestDir); errors.Is(dirErr, fs.ErrNotExist) {
			return nil, nil
		}
	}
	if err != nil {
		return nil, err
	}
	return ParseReleaseMetadata(data)
}

// ParseReleaseMetadata decodes and checks a release-metadata file: one JSON
// object of kind cincinnati-metadata-v0 with a semver version. Unknown
// fields are ignored, as the CVO and Cincinnati ignore them (the format
// grows by adding fields, and "metadata" is free-form).
func ParseReleaseMetadata(data []byte) (*Release, error) {
	var m cincinnatiMetadata
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})))
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not valid JSON: data after the object")
	}
	if m.Kind != "cincinnati-metadata-v0" {
		return nil, fmt.Errorf("kind is %q, want cincinnati-metadata-v0", m.Kind)
	}
	if m.Version == "" {
		return nil, errors.New("version is required")
	}
	v, err := semver.Parse(m.Version)
	if err != nil {
		return nil, fmt.Errorf("version %q is not semver: %w", m.Version, err)
	}
	for _, list := range [][]string{m.Previous, m.Next} {
		for _, e := range list {
			if _, err := semver.Parse(e); err != nil {
				return nil, fmt.Errorf("update edge %q is not semver: %w", e, err)
			}
		}
	}
	return &Release{Version: m.Version, Semver: v, Previous: m.Previous, Next: m.Next, Metadata: m.Metadata}, nil
}

// ParseImageReferences decodes and checks an image-references file: an
// image.openshift.io/v1 ImageStream (JSON or YAML) whose tags each have a
// unique name and a DockerImage pull spec.
func ParseImageReferences(data []byte) (*imagev1.ImageStream, error) {
	ims, err := parseImageStream(data)
	if err != nil {
		return nil, err
	}
	if ims.Name == "" {
		return nil, errors.New("metadata.name (the release version) is required")
	}
	return ims, nil
}

// parseImageStream is ParseImageReferences without the name requirement: a
// component's image-references has no release version to name.
func parseImageStream(data []byte) (*imagev1.ImageStream, error) {
	var ims imagev1.ImageStream
	if err := yaml.UnmarshalStrict(data, &ims); err != nil {
		return nil, fmt.Errorf("not an ImageStream: %w", err)
	}
	if ims.Kind != "ImageStream" || (ims.APIVersion != "image.openshift.io/v1" && ims.APIVersion != "v1") {
		return nil, fmt.Errorf("is %s %s, want image.openshift.io/v1 ImageStream", ims.APIVersion, ims.Kind)
	}
	seen := map[string]bool{}
	for i, tag := range ims.Spec.Tags {
		switch {
		case tag.Name == "":
			return nil, fmt.Errorf("spec.tags[%d]: name is required", i)
		case seen[tag.Name]:
			return nil, fmt.Errorf("spec.tags[%d]: tag %q repeated", i, tag.Name)
		case tag.From == nil || tag.From.Name == "":
			return nil, fmt.Errorf("spec.tags[%d] (%s): from.name (a pull spec) is required", i, tag.Name)
		case tag.From.Kind != "DockerImage":
			return nil, fmt.Errorf("spec.tags[%d] (%s): from.kind is %q, want DockerImage", i, tag.Name, tag.From.Kind)
		}
		seen[tag.Name] = true
	}
	return &ims, nil
}
