package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/payload-apply/payload-apply/lib/image"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/safefs"
	"github.com/payload-apply/payload-apply/plan"
)

// operatorBinaryPath is where the operator's image holds the binary.
const operatorBinaryPath = "/usr/bin/payload-apply"

// maxBinarySize bounds the binary read into the image.
const maxBinarySize = 512 << 20

// imageFlags are the flags of `operator image`.
type imageFlags struct {
	binary, outputDir, outputFile, repository string
}

func (f *imageFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.binary, "binary", "", "image: the static payload-apply binary to put in the image (default: this one)")
	fs.StringVar(&f.outputDir, "output-dir", "", "image: write the image as an OCI image layout into this new or empty directory")
	fs.StringVar(&f.outputFile, "output-file", "", "image: write the image as a docker-archive tarball to this file")
	fs.StringVar(&f.repository, "repository", "localhost/payload-apply", "image: repository of the docker-archive's tag (REPOSITORY:VERSION)")
}

func (f *imageFlags) validate() error {
	if (f.outputDir == "") == (f.outputFile == "") {
		return usageErrorf("give one of --output-dir DIR (OCI layout) and --output-file FILE (docker-archive)")
	}
	return nil
}

// runImage builds the operator's image and prints its digest.
func (o *operatorOptions) runImage(ctx context.Context, s IOStreams) error {
	f := o.image
	bin, err := readBinary(f.binary)
	if err != nil {
		return err
	}
	format, dst := image.FormatOCI, f.outputDir
	if f.outputFile != "" {
		format, dst = image.FormatDockerArchive, f.outputFile
	}
	cmd := []string{"operator"}
	tag := version()
	if o.selection.payload != "" {
		cmd = append(cmd, "--payload=/")
	}
	img, err := image.BinaryImage(bin, image.BinaryOptions{
		Path:   operatorBinaryPath,
		Cmd:    cmd,
		Format: format,
		Labels: map[string]string{"org.opencontainers.image.title": "payload-apply", "org.opencontainers.image.version": version()},
	})
	if err != nil {
		var se *image.StaticError
		if errors.As(err, &se) {
			return &exitError{Code: exitFail, Err: fmt.Errorf("%s: %w", binaryName(f.binary), err)}
		}
		return err
	}
	if o.selection.payload != "" {
		// A release image: the payload's layer on top of the binary,
		// labelled with its version, as the CVO's release images are.
		popts := o.opts
		popts.Lean = true
		p, err := plan.Build(ctx, popts)
		if err != nil {
			return err
		}
		if p.Payload.Release == nil || p.Payload.Release.Version == "" {
			return fmt.Errorf("--payload %s: no release-metadata version to label the image with", o.selection.payload)
		}
		tag = p.Payload.Release.Version
		if img, err = image.Build(o.opts.Payload, image.BuildOptions{Version: tag, Base: img}); err != nil {
			return err
		}
	}
	if err := image.Write(img, dst, image.WriteOptions{Format: format, Tag: tag, Repository: f.repository}); err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return fmt.Errorf("operator image: %w", err)
	}
	fmt.Fprintln(s.Out, digest.String())
	return nil
}

func binaryName(path string) string {
	if path == "" {
		return "this payload-apply binary"
	}
	return path
}

// readBinary reads the binary to put in the image: path, else this
// process's executable.
func readBinary(path string) ([]byte, error) {
	if path == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("operator image: finding this binary: %w (give --binary)", err)
		}
		path = exe
	}
	fh, err := safefs.Open(path, safefs.Regular) // a named pipe is refused, never waited on
	if err != nil {
		return nil, usageErrorf("--binary: %v", err)
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, maxBinarySize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > maxBinarySize {
		return nil, fmt.Errorf("%s: %w", path, &manifest.LimitError{What: "binary size", Size: int64(len(b)), Limit: maxBinarySize})
	}
	return b, nil
}
