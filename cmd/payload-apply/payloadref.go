package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	configv1 "github.com/openshift/api/config/v1"

	"github.com/payload-apply/payload-apply/clustersync"
	"github.com/payload-apply/payload-apply/lib/clusterversion"
	"github.com/payload-apply/payload-apply/lib/signature"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/plan"
)

// The one place where payloads and the cluster's record meet: how the
// record (ClusterVersion status.desired.image, history[].image) names a
// payload, and how a recorded name opens again. A registry payload is its
// pull spec by digest (REPO@sha256:HEX, as the CVO records a release
// image); a payload on disk is its absolute path and its digest,
// PATH@sha256:HEX (the manifest digest of an OCI layout or image tarball,
// payload.Digest of a directory); the built-in payload is
// embeddedImage@sha256:HEX.

// embeddedImage names the payload built into the binary.
const embeddedImage = "embedded://payload-apply"

// openPayloadArg opens a payload a flag names: embeddedImage (with or
// without its digest) is the built-in payload (fsys nil: the plan's
// default), anything else as registryFlags.openPayload opens it.
func openPayloadArg(ctx context.Context, reg *registryFlags, flag, spec string) (fs.FS, payloadSource, error) {
	if loc, digest := splitImage(spec); loc == embeddedImage {
		fsys, src, err := openRecorded(ctx, reg, spec)
		if err != nil && digest != "" {
			return nil, src, usageErrorf("%s %s: %v", flag, spec, err)
		}
		return fsys, src, err
	}
	return reg.openPayload(ctx, flag, spec)
}

// recordImage returns how the record names the payload src describes,
// which opened as fsys (nil for the built-in payload).
func recordImage(ctx context.Context, src payloadSource, fsys fs.FS) (string, error) {
	switch src.Kind {
	case sourceRegistry:
		return src.Pinned(), nil
	case sourceEmbedded:
		d, err := payload.Digest(ctx, payload.Embedded())
		return embeddedImage + "@" + d, err
	}
	abs, err := filepath.Abs(src.Spec)
	if err != nil {
		return "", err
	}
	if src.Kind == sourceImage {
		return abs + "@" + src.Digest.String(), nil
	}
	d, err := payload.Digest(ctx, fsys)
	if err != nil {
		return "", err
	}
	return abs + "@" + d, nil
}

// recordImageOf is recordImage for the payload p was planned from: a
// directory's digest comes from the plan (Plan.PayloadDigest: remembered
// with the plan cache, nothing read again); other payloads as recordImage
// names them.
func recordImageOf(ctx context.Context, src payloadSource, fsys fs.FS, p *plan.Plan) (string, error) {
	if src.Kind != sourceDirectory {
		return recordImage(ctx, src, fsys)
	}
	abs, err := filepath.Abs(src.Spec)
	if err != nil {
		return "", err
	}
	d, err := p.PayloadDigest(ctx, fsys)
	if err != nil {
		return "", err
	}
	return abs + "@" + d, nil
}

// startRecordImage starts recordImage in the background and returns a
// function that waits for its answer (recordImage stops when ctx ends).
func startRecordImage(ctx context.Context, src payloadSource, fsys fs.FS) func() (string, error) {
	type answer struct {
		img string
		err error
	}
	done := make(chan answer, 1)
	go func() {
		img, err := recordImage(ctx, src, fsys)
		done <- answer{img, err}
	}()
	return func() (string, error) {
		a := <-done
		return a.img, a.err
	}
}

// splitImage splits a recorded image at its digest.
func splitImage(img string) (loc, digest string) {
	if i := strings.LastIndex(img, "@sha256:"); i >= 0 {
		return img[:i], img[i+1:]
	}
	return img, ""
}

// openRecorded opens the payload a record names, checking that it has the
// recorded digest: the built-in payload, a payload on disk, or a registry
// reference by digest (pulled, or read from the cache). The error says why
// it cannot: a payload of another build, one that changed or moved, a
// registry that cannot be reached.
func openRecorded(ctx context.Context, reg *registryFlags, img string) (fs.FS, payloadSource, error) {
	loc, digest := splitImage(img)
	if loc == embeddedImage {
		src := payloadSource{Kind: sourceEmbedded}
		now, err := recordImage(ctx, src, nil)
		if err != nil {
			return nil, src, err
		}
		if _, d := splitImage(now); digest != "" && d != digest {
			return nil, src, fmt.Errorf("it is the built-in payload of another payload-apply build (%s; this one's is %s)", digest, d)
		}
		return payload.Embedded(), src, nil
	}
	if !filepath.IsAbs(loc) {
		// A registry reference: its digest pins it.
		fsys, src, err := reg.openPayload(ctx, "the recorded release", img)
		if err != nil {
			return nil, src, fmt.Errorf("%s cannot be pulled: %w", img, err)
		}
		return fsys, src, nil
	}
	fsys, src, err := reg.openPayload(ctx, "the recorded release", loc)
	if err != nil {
		return nil, src, fmt.Errorf("%s cannot be opened here: %w", loc, err)
	}
	if digest == "" {
		return fsys, src, nil
	}
	now, err := recordImage(ctx, src, fsys)
	if err != nil {
		return nil, src, err
	}
	if _, d := splitImage(now); d != digest {
		return nil, src, fmt.Errorf("the payload at %s changed since the cluster applied it (%s then, %s now)", loc, digest, d)
	}
	return fsys, src, nil
}

// verificationOf is how the record says a payload was verified (nil: no
// policy asked for it, as for a local payload the CVO does not verify).
func verificationOf(r signature.Result) *clustersync.Verification {
	switch {
	case r.Verified:
		return &clustersync.Verification{Verified: true}
	case r.Accepted:
		return &clustersync.Verification{Reason: r.Reason}
	}
	return nil
}

// runningRelease returns the release a record says the cluster runs (its
// newest history entry), and whether there is one.
func runningRelease(rec *configv1.ClusterVersion) (configv1.Release, bool) {
	if rec == nil || len(rec.Status.History) == 0 || rec.Status.History[0].Image == "" {
		return configv1.Release{}, false
	}
	h := rec.Status.History[0]
	return configv1.Release{Version: h.Version, Image: h.Image}, true
}

// payloadOfRecord is StartOptions.Payload for a command that compares the
// cluster with the release it runs (status, diff) when --payload is not
// given: it opens the payload the record names and says so on w, or
// refuses (exit 2) when the cluster has no record or the payload cannot
// be opened here; the built-in payload is never a silent stand-in.
func payloadOfRecord(w io.Writer, reg *registryFlags) func(ctx context.Context, rec *configv1.ClusterVersion) (fs.FS, error) {
	return func(ctx context.Context, rec *configv1.ClusterVersion) (fs.FS, error) {
		rel, ok := runningRelease(rec)
		if !ok {
			return nil, usageErrorf("the cluster has no record of the release it runs (ClusterVersion %s with a history): pass --payload to say which payload to compare it with", clustersync.RecordName)
		}
		fsys, _, err := openRecorded(ctx, reg, rel.Image)
		if err != nil {
			return nil, usageErrorf("the cluster runs %s (%s), but %v: pass --payload to say which payload to compare it with", clusterversion.VersionName(rel), rel.Image, err)
		}
		fmt.Fprintf(w, "comparing with the release the cluster runs: %s (%s)\n", clusterversion.VersionName(rel), rel.Image)
		return fsys, nil
	}
}

// sayComparedPayload says on w which payload given (a --payload value)
// is compared with, and what the cluster runs.
func sayComparedPayload(w io.Writer, given string, sess *clustersync.Session) {
	version := "no version"
	if r := sess.Plan.Payload.Release; r != nil && r.Version != "" {
		version = r.Version
	}
	if rel, ok := runningRelease(sess.Record); ok {
		fmt.Fprintf(w, "comparing with --payload %s (%s); the cluster runs %s (%s)\n", given, version, clusterversion.VersionName(rel), rel.Image)
		return
	}
	fmt.Fprintf(w, "comparing with --payload %s (%s); the cluster has no record of a release\n", given, version)
}
