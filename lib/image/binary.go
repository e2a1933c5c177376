package image

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"fmt"
	"io"
	"path"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// BinaryOptions configure BinaryImage.
type BinaryOptions struct {
	// Path is where the binary goes in the image, absolute
	// ("/usr/bin/payload-apply"). Required.
	Path string
	// Cmd are the arguments after the binary when the image runs
	// (config Cmd; the binary is the Entrypoint).
	Cmd []string
	// User is the config's user, "UID[:GID]" (numeric, so that
	// runAsNonRoot can check it). Empty: "65532:65532", the nonroot user
	// of distroless images.
	User string
	// Labels are the config's labels.
	Labels map[string]string
	// Format picks the media types: OCI for FormatOCI (and ""), Docker
	// schema 2 for FormatDockerArchive.
	Format Format
}

// StaticError says that a binary is not a static ELF executable: an image
// with no libraries cannot run it.
type StaticError struct {
	// Reason says what was found: not ELF, an interpreter, libraries.
	Reason string
}

func (e *StaticError) Error() string {
	return "not a static executable: " + e.Reason + " (build it with CGO_ENABLED=0)"
}

// CheckStatic returns the architecture (GOARCH name) of a static ELF
// executable, or a *StaticError when bin is not one: an image holding
// nothing but the binary could not run it.
func CheckStatic(bin io.ReaderAt) (arch string, err error) {
	f, err := elf.NewFile(bin)
	if err != nil {
		return "", &StaticError{Reason: "not an ELF file: " + err.Error()}
	}
	defer f.Close()
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return "", &StaticError{Reason: "ELF type " + f.Type.String()}
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "", &StaticError{Reason: "it names a program interpreter (dynamically linked)"}
		}
	}
	if libs, err := f.ImportedLibraries(); err == nil && len(libs) > 0 {
		return "", &StaticError{Reason: "it needs " + strings.Join(libs, ", ")}
	}
	switch f.Machine {
	case elf.EM_X86_64:
		return "amd64", nil
	case elf.EM_AARCH64:
		return "arm64", nil
	case elf.EM_PPC64:
		return "ppc64le", nil
	case elf.EM_S390:
		return "s390x", nil
	}
	return "", &StaticError{Reason: "machine " + f.Machine.String() + " is not one Go images are built for here"}
}

// BinaryImage returns an image of one layer holding bin, a static
// executable (CheckStatic), at opts.Path (mode 0555, root-owned, epoch
// timestamps, with its parent directories), run as opts.User with
// Entrypoint [opts.Path] and Cmd opts.Cmd, for the binary's architecture
// and linux. The same binary and options give the same digest. It is a
// base for Build: a payload layer on top makes the image a release image
// whose binary applies its own payload, as the CVO's image does.
func BinaryImage(bin []byte, opts BinaryOptions) (v1.Image, error) {
	if !path.IsAbs(opts.Path) || path.Clean(opts.Path) != opts.Path || opts.Path == "/" {
		return nil, fmt.Errorf("binary image: path %q: want a clean absolute file path", opts.Path)
	}
	arch, err := CheckStatic(bytes.NewReader(bin))
	if err != nil {
		return nil, fmt.Errorf("binary image: %w", err)
	}
	manifestType, layerType, configType := types.OCIManifestSchema1, types.OCILayer, types.OCIConfigJSON
	if opts.Format == FormatDockerArchive {
		manifestType, layerType, configType = types.DockerManifestSchema2, types.DockerLayer, types.DockerConfigJSON
	}
	blob, err := fileLayer(strings.TrimPrefix(opts.Path, "/"), bin)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(blob)), nil
	}, tarball.WithMediaType(layerType))
	if err != nil {
		return nil, fmt.Errorf("binary image: layer: %w", err)
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, manifestType), configType)
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:     struct{ v1.Layer }{layer},
		MediaType: layerType,
		History:   v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "payload-apply operator image", Comment: opts.Path},
	})
	if err != nil {
		return nil, fmt.Errorf("binary image: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("binary image: config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	cf.Created = v1.Time{Time: epoch}
	cf.Config.Entrypoint = []string{opts.Path}
	cf.Config.Cmd = opts.Cmd
	cf.Config.User = opts.User
	if cf.Config.User == "" {
		cf.Config.User = "65532:65532"
	}
	cf.Config.WorkingDir = "/"
	cf.Config.Labels = opts.Labels
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("binary image: config: %w", err)
	}
	return img, nil
}

// fileLayer returns the gzipped tar of one executable file at name (a
// relative path) and its parent directories.
func fileLayer(name string, data []byte) ([]byte, error) {
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	var dirs []string
	for d := path.Dir(name); d != "."; d = path.Dir(d) {
		dirs = append([]string{d}, dirs...)
	}
	for _, d := range dirs {
		if err := tw.WriteHeader(dirHeader(d)); err != nil {
			return nil, fmt.Errorf("binary image: %w", err)
		}
	}
	hdr := fileHeader(name, int64(len(data)))
	hdr.Mode = 0o555
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, fmt.Errorf("binary image: %w", err)
	}
	if _, err := tw.Write(data); err != nil {
		return nil, fmt.Errorf("binary image: %w", err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("binary image: %w", err)
	}
	gz, err := gzipLayer(raw.Bytes(), gzip.BestSpeed)
	if err != nil {
		return nil, fmt.Errorf("binary image: compress layer: %w", err)
	}
	return gz, nil
}
