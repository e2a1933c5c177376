package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/payload-apply/payload-apply/lib/image"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/plan"
)

func buildCommand() *command {
	return &command{
		name:  "build",
		short: "Build a release payload image from manifest directories, offline",
		usage: "--from [NAME=]DIR... --version V (-o PATH [--format oci|docker-archive] | --to HOST/REPO:TAG)... [--base IMAGE] [--manifests DIR]",
		long: `Collects manifest directories into a release payload and writes it as an
image, without a container daemon or a registry: an OCI image layout
directory (--format oci, the default) or a docker-archive tarball. The image
has one layer holding /release-manifests/ (and /manifests/ when given) on
top of --base, and the label io.openshift.release=V. The same inputs give the
same digest, printed on stdout.

Each --from DIR is one of:
  - a component directory (an operator's manifests): its .yaml, .yml and
    .json files go to release-manifests/, named as oc adm release new names
    them: a name not starting with 0000_ becomes 0000_50_<component>_<name>,
    and a name already taken gets _2, _3, ... before its extension. Other
    files and subdirectories are skipped. The component is NAME when given
    as NAME=DIR, else the metadata.name of the directory's image-references
    when set, else the directory's base name.
  - a payload directory, one holding release-manifests/ (an extracted
    release, a previous build): its manifests/ and release-manifests/ files
    keep their names; its release-metadata is replaced.
--manifests DIR adds the cluster-version-operator's own manifests (Go
templates), copied to manifests/ as they are.

Every image-references is merged into one ImageStream named V; a tag that two
sources give different pull specs is an error naming both. release-metadata
is written as cincinnati-metadata-v0 with version V, which must be semver.

Before writing, the image is read back and validated as 'validate --payload
IMAGE' does: any error stops the build. Image references are checked: every
pull spec well-formed (error), metadata version equal to the ImageStream
name and the image label (error), every tag used by some manifest (warning:
real releases carry images no manifest names, such as the installer).

--to HOST/REPO:TAG pushes the image to a registry (as 'oc adm release new
--to-image' does), with the credentials and TLS settings of
--registry-config and --insecure-registry; with -o too, it is also written.
The digest printed is the one pushed: pull by it (HOST/REPO@sha256:...).

--base IMAGE is an OCI layout directory, an image tarball or a registry
reference whose layers come first; the payload layer hides the base's
payload directories.

Exit codes: 0 built, 1 error (inputs, validation or writing), 2 usage error.`,
		flags: func(fs *pflag.FlagSet) runner {
			o := &buildOptions{}
			fs.StringArrayVar(&o.from, "from", nil, "a component or payload directory, [NAME=]DIR; repeat for more")
			fs.StringVar(&o.manifests, "manifests", "", "the cluster-version-operator's manifests directory, copied to manifests/")
			fs.StringVar(&o.version, "version", "", "release version (semver): the label, release-metadata version and ImageStream name")
			fs.StringVarP(&o.output, "output", "o", "", "where to write the image: a directory (oci) or a file (docker-archive)")
			fs.StringVar(&o.format, "format", string(image.FormatOCI), "output format: oci or docker-archive")
			fs.StringVar(&o.base, "base", "", "base image: an OCI layout directory, an image tarball or a registry reference")
			fs.StringVar(&o.to, "to", "", "push the image to this registry reference, HOST/REPO:TAG")
			o.registry.addFlags(fs)
			return o
		},
	}
}

type buildOptions struct {
	from      []string
	manifests string
	version   string
	output    string
	format    string
	base      string
	to        string
	registry  registryFlags

	sources []payload.Source
}

func (o *buildOptions) Complete(ctx context.Context, args []string, s IOStreams) error {
	if len(args) > 0 {
		return usageErrorf("unexpected arguments: %v", args)
	}
	for _, f := range o.from {
		src, err := sourceFromFlag(f)
		if err != nil {
			return err
		}
		o.sources = append(o.sources, src)
	}
	if o.manifests != "" {
		if err := checkDir("--manifests", o.manifests); err != nil {
			return err
		}
		o.sources = append(o.sources, payload.Source{Path: o.manifests, FS: rootFS(o.manifests), Kind: payload.SourceCVO})
	}
	return nil
}

// sourceFromFlag parses a --from value, [NAME=]DIR. A value that names an
// existing directory as a whole is a directory, even with "=" in it.
func sourceFromFlag(v string) (payload.Source, error) {
	dir, component := v, ""
	if name, d, ok := strings.Cut(v, "="); ok {
		if st, err := os.Stat(v); err != nil || !st.IsDir() {
			dir, component = d, name
			if component == "" {
				return payload.Source{}, usageErrorf("--from %q: empty NAME in NAME=DIR", v)
			}
		}
	}
	if err := checkDir("--from", dir); err != nil {
		return payload.Source{}, err
	}
	return payload.Source{Path: defaultBaseName(dir), FS: rootFS(dir), Component: component}, nil
}

// defaultBaseName makes "." and ".." name the directory they stand for, so
// the default component name is the directory's own name.
func defaultBaseName(dir string) string {
	switch filepath.Base(filepath.Clean(dir)) {
	case ".", "..":
		if abs, err := filepath.Abs(dir); err == nil {
			return abs
		}
	}
	return dir
}

func (o *buildOptions) Validate() error {
	switch {
	case len(o.sources) == 0:
		return usageErrorf("--from or --manifests is required")
	case o.version == "":
		return usageErrorf("--version is required")
	case o.output == "" && o.to == "":
		return usageErrorf("-o/--output or --to is required")
	}
	switch image.Format(o.format) {
	case image.FormatOCI, image.FormatDockerArchive:
	default:
		return usageErrorf("--format %q: want oci or docker-archive", o.format)
	}
	return nil
}

func (o *buildOptions) Run(ctx context.Context, s IOStreams) error {
	logger := klog.FromContext(ctx)
	asm, err := payload.Assemble(o.sources, payload.AssembleOptions{Version: o.version})
	if err != nil {
		return err
	}
	for _, p := range asm.Placed {
		logger.V(2).Info("Placed", "file", p.To, "source", p.Source, "from", p.From, "component", p.Component)
	}
	for _, sk := range asm.Skipped {
		logger.V(1).Info("Skipped", "file", sk)
	}

	var base v1.Image
	if o.base != "" {
		if base, err = o.registry.openImage(ctx, "--base", o.base); err != nil {
			return err
		}
	}
	format := image.Format(o.format)
	img, err := image.Build(asm.FS(), image.BuildOptions{Version: o.version, Base: base, Format: format})
	if err != nil {
		return err
	}

	// Validate what ships: the image read back, base layers included.
	flat, err := image.Flatten(img, image.LoadOptions{})
	if err != nil {
		return fmt.Errorf("read the built image back: %w", err)
	}
	findings, err := plan.Validate(ctx, plan.Options{Payload: flat}, plan.ValidateOptions{Release: true, Labels: flat.Labels()})
	if err != nil {
		return err
	}
	errs := 0
	for _, f := range findings {
		fmt.Fprintln(s.ErrOut, f)
		if f.Severity == manifest.SeverityError {
			errs++
		}
	}
	if errs > 0 {
		return fmt.Errorf("payload has %d errors: not writing %s", errs, strings.TrimPrefix(o.output+" or "+o.to, " or "))
	}

	var wrote []string
	if o.output != "" {
		if err := image.Write(img, o.output, image.WriteOptions{Format: format, Tag: o.version}); err != nil {
			return err
		}
		wrote = append(wrote, fmt.Sprintf("wrote %s (%s)", o.output, format))
	}
	if o.to != "" {
		pinned, err := pushImage(ctx, &o.registry, o.to, img)
		if err != nil {
			return err
		}
		wrote = append(wrote, "pushed "+pinned)
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	files := len(flat.Files())
	fmt.Fprintf(s.ErrOut, "built release %s: %d files, %d image references, %d warnings; %s\n",
		o.version, files, len(asm.ImageStream.Spec.Tags), len(findings), strings.Join(wrote, ", "))
	fmt.Fprintln(s.Out, digest)
	return nil
}
