package image

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Labels a release image carries, as `oc adm release new` sets them.
const (
	// ReleaseLabel is the release version.
	ReleaseLabel = "io.openshift.release"
	// BaseImageDigestLabel is the manifest digest of the base image, when
	// there is one.
	BaseImageDigestLabel = "io.openshift.release.base-image-digest"
)

// Payload directories at the image root, as the CVO reads them.
const (
	manifestDir        = "manifests"
	releaseManifestDir = "release-manifests"
)

// Whiteout names (OCI image spec, layer changesets).
const (
	whiteoutPrefix = ".wh."
	opaqueMarker   = ".wh..wh..opq"
)

// Format is how Write stores an image.
type Format string

const (
	// FormatOCI is an OCI image layout directory.
	FormatOCI Format = "oci"
	// FormatDockerArchive is a tarball as `docker save` writes it.
	FormatDockerArchive Format = "docker-archive"
)

// Formats returns the formats Write knows, for help and validation.
func Formats() []Format { return []Format{FormatOCI, FormatDockerArchive} }

// epoch is every timestamp Build writes: builds are reproducible.
var epoch = time.Unix(0, 0).UTC()

// BuildOptions configure Build.
type BuildOptions struct {
	// Version is the release version, the value of ReleaseLabel. Required.
	Version string
	// Base is the image whose layers come first (the CVO image, for a real
	// release). Nil: the payload layer is the only layer. With a base, the
	// payload layer marks release-manifests/ (and manifests/ when the payload
	// has it) opaque, so the base's copies do not show through.
	Base v1.Image
	// Format picks the media types of an image without Base: OCI for
	// FormatOCI (and ""), Docker schema 2 for FormatDockerArchive. With a
	// Base, the base's manifest media type is kept.
	Format Format
}

// Build returns an image holding payload's manifests/ and
// release-manifests/ trees (everything else in payload is ignored) in one
// layer on top of opts.Base. Files are stored mode 0444 and directories
// 0755, owned by root, sorted by name, with every timestamp at the Unix
// epoch; the config has OS linux and architecture amd64 unless the base says
// otherwise, the labels ReleaseLabel (and BaseImageDigestLabel with a base)
// and no others. So the same payload and options give the same digest.
func Build(payload fs.FS, opts BuildOptions) (v1.Image, error) {
	if opts.Version == "" {
		return nil, errors.New("build image: version is required")
	}
	manifestType, layerType, configType := types.OCIManifestSchema1, types.OCILayer, types.OCIConfigJSON
	if opts.Format == FormatDockerArchive {
		manifestType, layerType, configType = types.DockerManifestSchema2, types.DockerLayer, types.DockerConfigJSON
	}
	base := opts.Base
	var baseDigest v1.Hash
	if base == nil {
		base = mutate.ConfigMediaType(mutate.MediaType(empty.Image, manifestType), configType)
	} else {
		mt, err := base.MediaType()
		if err != nil {
			return nil, fmt.Errorf("build image: base image: %w", err)
		}
		if mt == types.DockerManifestSchema2 {
			layerType = types.DockerLayer
		} else {
			layerType = types.OCILayer
		}
		if baseDigest, err = base.Digest(); err != nil {
			return nil, fmt.Errorf("build image: base image: %w", err)
		}
	}

	blob, err := payloadLayer(payload, opts.Base != nil)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(blob)), nil
	}, tarball.WithMediaType(layerType))
	if err != nil {
		return nil, fmt.Errorf("build image: payload layer: %w", err)
	}
	img, err := mutate.Append(base, mutate.Addendum{
		// Hide the tarball layer's Descriptor method: it has an empty
		// annotations map, which the manifest JSON drops, so the manifest
		// would not read back equal to itself.
		Layer:     struct{ v1.Layer }{layer},
		MediaType: layerType,
		History: v1.History{
			Created:   v1.Time{Time: epoch},
			CreatedBy: "payload-apply build",
			Comment:   "release payload " + opts.Version,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("build image: append payload layer: %w", err)
	}

	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("build image: config: %w", err)
	}
	cf = cf.DeepCopy()
	if cf.OS == "" {
		cf.OS = "linux"
	}
	if cf.Architecture == "" {
		cf.Architecture = "amd64"
	}
	cf.Created = v1.Time{Time: epoch}
	cf.Container = ""
	cf.Config.Labels = map[string]string{ReleaseLabel: opts.Version}
	if opts.Base != nil {
		cf.Config.Labels[BaseImageDigestLabel] = baseDigest.String()
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("build image: config: %w", err)
	}
	return img, nil
}

// payloadLayer returns the gzipped tar of payload's manifests/ and
// release-manifests/ trees.
func payloadLayer(payload fs.FS, opaque bool) ([]byte, error) {
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	found := false
	for _, root := range []string{manifestDir, releaseManifestDir} {
		st, err := fs.Stat(payload, root)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("build image: %s: %w", root, err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("build image: %s: not a directory", root)
		}
		found = true
		err = fs.WalkDir(payload, root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if err := tw.WriteHeader(dirHeader(p)); err != nil {
					return err
				}
				if p == root && opaque {
					return tw.WriteHeader(fileHeader(p+"/"+opaqueMarker, 0))
				}
				return nil
			}
			data, err := fs.ReadFile(payload, p)
			if err != nil {
				return err
			}
			if err := tw.WriteHeader(fileHeader(p, int64(len(data)))); err != nil {
				return err
			}
			_, err = tw.Write(data)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("build image: %w", err)
		}
	}
	if !found {
		return nil, fmt.Errorf("build image: payload has neither %s/ nor %s/", manifestDir, releaseManifestDir)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("build image: %w", err)
	}
	gz, err := gzipLayer(raw.Bytes(), gzip.DefaultCompression)
	if err != nil {
		return nil, fmt.Errorf("build image: compress layer: %w", err)
	}
	return gz, nil
}

// gzipLayer compresses a layer's tar stream at level.
func gzipLayer(raw []byte, level int) ([]byte, error) {
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, level)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return gz.Bytes(), nil
}

func dirHeader(name string) *tar.Header {
	return &tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX}
}

func fileHeader(name string, size int64) *tar.Header {
	return &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o444, ModTime: epoch, Format: tar.FormatPAX}
}

// WriteOptions configure Write.
type WriteOptions struct {
	// Format is how to store the image; "" is FormatOCI.
	Format Format
	// Tag names the image inside the output: the OCI layout's
	// org.opencontainers.image.ref.name annotation, and the docker-archive's
	// repository tag "<Repository>:<Tag>" ("+" becomes "_"). Empty: "latest".
	Tag string
	// Repository is the docker-archive's repository. Empty: "release".
	Repository string
}

// Write stores img at dst. The output is written beside dst and renamed
// into place, so a failed write leaves dst as it was. For FormatOCI dst is a
// directory, which may already exist only when it is empty or an OCI
// layout (it is then replaced); for FormatDockerArchive dst is a file,
// replaced when it exists.
func Write(img v1.Image, dst string, opts WriteOptions) error {
	tag := opts.Tag
	if tag == "" {
		tag = "latest"
	}
	switch opts.Format {
	case FormatOCI, "":
		return writeLayout(img, dst, tag)
	case FormatDockerArchive:
		repo := opts.Repository
		if repo == "" {
			repo = "release"
		}
		return writeArchive(img, dst, repo+":"+tag)
	}
	return fmt.Errorf("write image: format %q: want %s", opts.Format, formatList())
}

func formatList() string {
	s := make([]string, len(Formats()))
	for i, f := range Formats() {
		s[i] = string(f)
	}
	return strings.Join(s, " or ")
}

func writeLayout(img v1.Image, dst, tag string) error {
	if st, err := os.Stat(dst); err == nil {
		if !st.IsDir() {
			return fmt.Errorf("%s: write image: exists and is not a directory", dst)
		}
		entries, err := os.ReadDir(dst)
		if err != nil {
			return fmt.Errorf("%s: write image: %w", dst, err)
		}
		if _, err := os.Stat(filepath.Join(dst, "oci-layout")); len(entries) > 0 && err != nil {
			return fmt.Errorf("%s: write image: exists and is neither empty nor an OCI layout", dst)
		}
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-")
	if err != nil {
		return fmt.Errorf("%s: write image: %w", dst, err)
	}
	defer os.RemoveAll(tmp)
	p, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return fmt.Errorf("%s: write image: %w", dst, err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": tag})); err != nil {
		return fmt.Errorf("%s: write image: %w", dst, err)
	}
	// Blobs come out of temporary files (0600): make the layout readable
	// by the tools and users it is for.
	err = filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.Chmod(p, 0o755)
		}
		return os.Chmod(p, 0o644)
	})
	if err != nil {
		return fmt.Errorf("%s: write image: %w", dst, err)
	}
	if err := os.RemoveAll(dst); err != nil {
		return fmt.Errorf("%s: write image: replace: %w", dst, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return fmt.Errorf("%s: write image: %w", dst, err)
	}
	return nil
}

// writeArchive writes img as a docker-archive tagged ref (REPO:TAG).
func writeArchive(img v1.Image, dst, refName string) error {
	if st, err := os.Stat(dst); err == nil && st.IsDir() {
		return fmt.Errorf("%s: write image: is a directory", dst)
	}
	ref, err := name.NewTag(strings.ReplaceAll(refName, "+", "_"), name.WeakValidation)
	if err != nil {
		return fmt.Errorf("%s: write image: tag %q: %w", dst, refName, err)
	}
	f, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-")
	if err != nil {
		return fmt.Errorf("%s: write image: %w", dst, err)
	}
	defer os.Remove(f.Name())
	if err := tarball.Write(ref, img, f); err != nil {
		f.Close()
		return fmt.Errorf("%s: write image: %w", dst, err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return fmt.Errorf("%s: write image: %w", dst, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: write image: %w", dst, err)
	}
	if err := os.Rename(f.Name(), dst); err != nil {
		return fmt.Errorf("%s: write image: %w", dst, err)
	}
	return nil
}
