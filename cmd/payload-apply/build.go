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

	"github.com/payload-apply/payload-apply/clustersync"
	"github.com/payload-apply/payload-apply/lib/image"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/plan"
)

func buildCommand() *command {
	return &command{
		name:  "build",
		short: "Build a release payload image from manifest directories, offline",
		usage: "--from [NAME=]DIR... --version V (--output-dir DIR | --output-file FILE | --to HOST/REPO:TAG)... [-o text|json] [--base IMAGE] [--manifests DIR]",
		long: `Collects manifest directories into a release payload and writes it as an
image, without a container daemon or a registry: an OCI image layout
directory (--output-dir DIR, new or empty) or a docker-archive tarball
(--output-file FILE), as oc adm release new writes --to-dir and --to-file.
The image has one layer holding /release-manifests/ (and /manifests/ when
given) on top of --base, and the label io.openshift.release=V. The same
inputs give the same digest, printed on stdout (-o json: {"digest",
"version", "files", "imageReferences", "warnings", "path", "format",
"pushed"}).
-o is a format, as for every command; --format oci|docker-archive is
deprecated (the flag naming the path says which).

Each --from DIR is one of:
  - a component directory (an operator's manifests): its .yaml, .yml and
    .json files go to release-manifests/, named as oc adm release new names
    them: a name not starting with 0000_ becomes 0000_50_<component>_<name>,
    and a name already taken gets _2, _3, ... before its extension. Other
    files and subdirectories are skipped. The component is NAME when given
    as NAME=DIR, else the metadata.name of the directory's image-references
    when set, else the directory's base name. A payload's release-manifests/
    directory itself is refused: pass the payload directory above it.
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
--registry-config and --insecure-registry; with --output-dir or
--output-file too, it is also written there.
The digest printed is the one pushed: pull by it (HOST/REPO@sha256:...).

--base IMAGE is an OCI layout directory, an image tarball or a registry
reference whose layers come first; the payload layer hides the base's
payload directories.

Exit codes: 0 built, 1 error (inputs, validation, writing or pushing), 2
usage error.`,
		flags: func(fs *pflag.FlagSet) runner {
			o := &buildOptions{}
			fs.StringArrayVar(&o.from, "from", nil, "a component or payload directory, [NAME=]DIR; repeat for more")
			fs.StringVar(&o.manifests, "manifests", "", "the cluster-version-operator's manifests directory, copied to manifests/")
			fs.StringVar(&o.version, "version", "", "release version (semver): the label, release-metadata version and ImageStream name")
			fs.StringVar(&o.outputDir, "output-dir", "", "write the image as an OCI image layout into this new or empty directory")
			fs.StringVar(&o.outputFile, "output-file", "", "write the image as a docker-archive tarball to this file")
			o.output = addOutputFlag(fs, formatText, formatJSON)
			o.output.pathHint = "the image goes to --output-dir DIR (OCI layout) or --output-file FILE (docker-archive)"
			fs.StringVar(&o.format, "format", "", "deprecated: --output-dir writes oci, --output-file docker-archive")
			deprecateFlag(fs, "format", "--output-dir DIR writes an OCI layout, --output-file FILE a docker-archive")
			fs.StringVar(&o.base, "base", "", "base image: an OCI layout directory, an image tarball or a registry reference")
			fs.StringVar(&o.to, "to", "", "push the image to this registry reference, HOST/REPO:TAG")
			o.registry.addFlags(fs)
			return o
		},
	}
}

type buildOptions struct {
	from       []string
	manifests  string
	version    string
	outputDir  string
	outputFile string
	output     *outputFlag
	format     string
	base       string
	to         string
	registry   registryFlags

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
	if err := payloadSubdir("--from", dir); err != nil {
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
	case o.outputDir == "" && o.outputFile == "" && o.to == "":
		return usageErrorf("say where the image goes: --output-dir DIR (an OCI image layout), --output-file FILE (a docker-archive tarball) or --to HOST/REPO:TAG (a registry)")
	case o.outputDir != "" && o.outputFile != "":
		return usageErrorf("--output-dir and --output-file exclude each other")
	}
	want := image.FormatOCI
	if o.outputFile != "" {
		want = image.FormatDockerArchive
	}
	switch image.Format(o.format) {
	case "", want:
	case image.FormatOCI, image.FormatDockerArchive:
		return usageErrorf("--format %s: --output-dir writes oci and --output-file docker-archive", o.format)
	default:
		return usageErrorf("--format %q: want oci or docker-archive", o.format)
	}
	return nil
}

// target is the file or directory the image is written to ("" for none:
// pushed only), and as what.
func (o *buildOptions) target() (string, image.Format) {
	if o.outputFile != "" {
		return o.outputFile, image.FormatDockerArchive
	}
	return o.outputDir, image.FormatOCI
}

// targets names every place the image goes.
func (o *buildOptions) targets() []string {
	var out []string
	if path, _ := o.target(); path != "" {
		out = append(out, path)
	}
	if o.to != "" {
		out = append(out, o.to)
	}
	return out
}

// buildResult is build -o json.
type buildResult struct {
	Digest          string `json:"digest"`
	Version         string `json:"version"`
	Files           int    `json:"files"`
	ImageReferences int    `json:"imageReferences"`
	Warnings        int    `json:"warnings"`
	Path            string `json:"path,omitempty"`
	Format          string `json:"format,omitempty"`
	// Pushed is the registry reference pushed, by digest.
	Pushed string `json:"pushed,omitempty"`
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
	path, format := o.target()
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
		return fmt.Errorf("payload has %s: not writing %s", clustersync.Plural(errs, "error"), strings.Join(o.targets(), " or "))
	}

	var wrote []string
	if path != "" {
		if err := image.Write(img, path, image.WriteOptions{Format: format, Tag: o.version}); err != nil {
			return err
		}
		wrote = append(wrote, fmt.Sprintf("wrote %s (%s)", path, format))
	}
	var pinned string
	if o.to != "" {
		if pinned, err = pushImage(ctx, &o.registry, o.to, img); err != nil {
			return err
		}
		wrote = append(wrote, "pushed "+pinned)
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	r := buildResult{Digest: digest.String(), Version: o.version, Files: len(flat.Files()), ImageReferences: len(asm.ImageStream.Spec.Tags),
		Warnings: len(findings), Path: path, Pushed: pinned}
	if path != "" {
		r.Format = string(format)
	}
	fmt.Fprintf(s.ErrOut, "built release %s: %s, %s, %s; %s\n", o.version, clustersync.Plural(r.Files, "file"),
		clustersync.Plural(r.ImageReferences, "image reference"), clustersync.Plural(r.Warnings, "warning"), strings.Join(wrote, ", "))
	if o.output.value == formatJSON {
		return printJSON(s.Out, r)
	}
	_, err = fmt.Fprintln(s.Out, digest)
	return err
}
