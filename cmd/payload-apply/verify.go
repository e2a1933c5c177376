package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/payload-apply/payload-apply/lib/image"
	"github.com/payload-apply/payload-apply/lib/registry"
	"github.com/payload-apply/payload-apply/lib/signature"
)

func verifyCommand() *command {
	return &command{
		name:  "verify",
		short: "Verify a release image's signatures: the CVO's atomic signatures, cosign signatures",
		usage: "IMAGE (--verify-keyring FILE --signature-store DIR|URL | --verify-cosign-key FILE)... [-o text|json]",
		long: `Checks that a release image is signed, as apply checks it before applying:
IMAGE is a registry reference (HOST/REPO:TAG, HOST/REPO@sha256:...,
docker://...; a tag is resolved to its digest with one HEAD request,
nothing else is downloaded) or a local OCI layout or image tarball (its
manifest digest).

Atomic signatures (the Cluster Version Operator's): every --verify-keyring
(an OpenPGP public keyring, gpg --export [--armor]) must have signed the
digest; the signatures are read from each --signature-store, a directory or
an http(s) URL laid out sha256=<hex>/signature-N as the CVO reads them, and
verified with library-go's verifier, as the CVO verifies them. Keys that
have expired or are revoked do not count (the CVO's verifier does not
check key expiry; payload-apply does).

Cosign signatures: every --verify-cosign-key (cosign.pub) must have signed
the image; the signatures are read beside it in its registry (the tag
sha256-<hex>.sig), offline, as 'cosign verify --key cosign.pub
--insecure-ignore-tlog' does.

Prints one line (or -o json: the result, as apply records it) on stdout.

Exit codes: 0 verified; 1 not verified (the reason names the digest); 2
usage error, or IMAGE could not be read or resolved.`,
		flags: func(fs *pflag.FlagSet) runner {
			o := &verifyOptions{}
			o.verify.addFlags(fs)
			o.output = addOutputFlag(fs, formatText, formatJSON)
			o.registry.addFlags(fs)
			return o
		},
	}
}

type verifyOptions struct {
	verify   verifyFlags
	registry registryFlags
	output   *outputFlag

	src payloadSource
}

func (o *verifyOptions) Complete(ctx context.Context, args []string, s IOStreams) error {
	if len(args) != 1 {
		return usageErrorf("want one IMAGE, got %d arguments", len(args))
	}
	src, err := o.registry.resolveImage(ctx, args[0])
	o.src = src
	return err
}

func (o *verifyOptions) Validate() error {
	if !o.verify.given() {
		return usageErrorf("say what must have signed: --verify-keyring or --verify-cosign-key")
	}
	if o.verify.allowUnverified {
		return usageErrorf("--allow-unverified makes no sense here")
	}
	return nil
}

func (o *verifyOptions) Run(ctx context.Context, s IOStreams) error {
	p, err := o.verify.policy(&o.registry, o.src, nil)
	if err != nil {
		return err
	}
	r, err := p.Verify(ctx, o.src.subject())
	var ue *signature.UnverifiedError
	if err != nil && !errors.As(err, &ue) {
		return err
	}
	if o.output.value == formatJSON {
		data, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintln(s.Out, string(data))
	} else {
		fmt.Fprintln(s.Out, r.String())
	}
	if !r.Verified {
		return &exitError{Code: exitFail}
	}
	return nil
}

// resolveImage finds the digest of an image argument without reading its
// payload: a local OCI layout or image tarball (its manifest), or a
// registry reference (one HEAD request for a tag, none for a digest).
func (r *registryFlags) resolveImage(ctx context.Context, spec string) (payloadSource, error) {
	if _, err := os.Stat(spec); err == nil && !strings.HasPrefix(spec, registry.DockerPrefix) {
		img, err := image.Open(spec, image.LoadOptions{})
		if err != nil {
			return payloadSource{}, &exitError{Code: exitUsage, Err: err}
		}
		d, err := img.Digest()
		if err != nil {
			return payloadSource{}, &exitError{Code: exitUsage, Err: fmt.Errorf("%s: %w", spec, err)}
		}
		return payloadSource{Spec: spec, Kind: sourceImage, Digest: d}, nil
	} else if !registry.IsReference(spec) {
		return payloadSource{}, usageErrorf("%s: %v (neither an image file nor a registry reference HOST/REPO:TAG)", spec, err)
	}
	c := r.client()
	ref, err := c.ParseReference(spec)
	if err != nil {
		return payloadSource{}, usageErrorf("%v", err)
	}
	res, err := c.Resolve(ctx, ref)
	if err != nil {
		if ctx.Err() != nil {
			return payloadSource{}, &exitError{Code: exitInterrupted, Err: errors.New("interrupted")}
		}
		return payloadSource{}, &exitError{Code: exitUsage, Err: err}
	}
	return payloadSource{Spec: spec, Kind: sourceRegistry, Ref: ref, Digest: res.Digest}, nil
}
