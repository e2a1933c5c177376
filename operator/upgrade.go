package operator

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/klog/v2"

	"github.com/payload-apply/payload-apply/clustersync"
)

// The reasons of ReleaseAccepted=False the operator writes itself, as the
// CVO names them (an Upgrade's preconditions write PreconditionChecks).
const (
	// ReasonRetrievePayload: the payload of the requested release cannot
	// be opened or is not verified.
	ReasonRetrievePayload = "RetrievePayload"
	// ReasonVersionNotFound: the request names a version without an
	// image, and the record's availableUpdates and conditionalUpdates do
	// not list it. (A conditional update that is not recommended is
	// refused with its Recommended condition's reason: updates.go.)
	ReasonVersionNotFound = "VersionNotFound"
	// ReasonPlanFailed: the requested release cannot be planned for the
	// cluster (no release version, a manifest in error).
	ReasonPlanFailed = "PayloadLoadFailed"
)

// upgrade runs the update spec.desiredUpdate (req) requests, with the
// upgrade issue's machinery: clustersync.PlanUpgrade plans it from the
// release the cluster runs (its preconditions; req.Force overrides them
// all, and lets an unverified payload through, as the CVO's force does,
// recorded as accepted risks), clustersync.RunUpgrade runs it (history,
// conditions, the update order and its waits) or, when a precondition
// blocks it, writes ReleaseAccepted=False naming the precondition and
// changes nothing else. A payload that cannot be opened, a version
// without an image that availableUpdates does not list, and a release
// that cannot be planned are rejected the same way (RejectRelease). It
// returns nil when the pass failed before the update could be judged.
func (l *leader) upgrade(ctx context.Context, cv *configv1.ClusterVersion, req configv1.Update, abort <-chan struct{}) *PassReport {
	o := l.o
	logger := klog.FromContext(ctx)
	var risks []string
	if req.Image == "" {
		var rej *RejectedError
		if req, risks, rej = o.updates.resolve(ctx, cv, req); rej != nil {
			return l.reject(ctx, configv1.Release{Version: req.Version}, rej.Reason, rej.Message)
		}
	}
	target := configv1.Release{Version: req.Version, Image: req.Image}
	to, err := l.payload(ctx, req.Image, req.Force)
	if err != nil {
		return l.reject(ctx, target, ReasonRetrievePayload,
			fmt.Sprintf("Retrieving payload failed version=%q image=%q failure=%v", clip(req.Version, maxQuoted), clip(req.Image, maxQuoted), err))
	}
	fromImage := clustersync.FromImage(cv, req.Image)
	// The release the cluster runs was accepted already.
	from, err := l.payload(ctx, fromImage, true)
	if err != nil {
		l.failed(ctx, "opening the release the cluster runs", err)
		return nil
	}
	in := clustersync.UpgradeInput{From: o.planOptions(from), To: o.planOptions(to),
		Release: clustersync.Release{Image: req.Image, Verification: to.Verification, AcceptedRisks: risks}}
	if req.Force {
		in.Force = []string{clustersync.ForceAll}
	}
	u, err := clustersync.PlanUpgrade(ctx, l.cluster, in)
	if err != nil {
		if clustersync.CredentialsError(err) || ctx.Err() != nil {
			l.failed(ctx, "planning the update to "+req.Image, err)
			return nil
		}
		return l.reject(ctx, target, ReasonPlanFailed, fmt.Sprintf("Preparing the update to version=%q image=%q failed: %v", clip(req.Version, maxQuoted), clip(req.Image, maxQuoted), err))
	}
	logger.Info("Update requested", "from", clusterversion(u.FromRelease), "to", clusterversion(u.ToRelease), "type", u.Type,
		"continuing", u.Continuing, "creates", len(u.Changes.Creates), "changes", len(u.Changes.Changes), "deletes", len(u.Changes.Deletes), "force", req.Force)
	opts := o.applyOptions(abort)
	return o.measure(ctx, l.cluster, u.ToRelease, ModeUpdate, l.failures, func(ctx context.Context, opts clustersync.ApplyOptions) *clustersync.ApplyReport {
		return clustersync.RunUpgrade(ctx, u, opts)
	}, opts)
}

// Bounds of what the operator quotes from a request: each value, and a
// whole message (the record's condition, the log), so that a request of
// megabytes is refused in a message the API server takes.
const (
	maxQuoted  = 256
	maxMessage = 4096
)

// clip returns s cut to at most n bytes at a rune boundary, saying how
// long it was.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", s[:cut], len(s))
}

// reject writes ReleaseAccepted=False with reason and message (clipped)
// and reports the rejected request. The release the cluster runs is
// reconciled whatever becomes of the write: a rejected request never
// stops the reconcile loop (a failed write is logged, and tried again at
// the next pass).
func (l *leader) reject(ctx context.Context, target configv1.Release, reason, message string) *PassReport {
	start := time.Now()
	message = clip(message, maxMessage)
	target = configv1.Release{Version: clip(target.Version, maxQuoted), Image: clip(target.Image, maxQuoted)}
	logger := klog.FromContext(ctx)
	if err := clustersync.RejectRelease(ctx, l.cluster, reason, message); err != nil && ctx.Err() == nil {
		logger.Info("Cannot record the rejected request; reconciling the release the cluster runs all the same", "err", err)
	}
	r := &PassReport{Mode: ModeUpdate, Release: target, Start: start, Duration: time.Since(start),
		Err: &RejectedError{Reason: reason, Message: message}}
	l.o.record(r)
	logger.Info("Update rejected", "version", target.Version, "image", target.Image, "reason", reason, "message", message)
	return r
}

// RejectedError says a requested release was not accepted: the record's
// ReleaseAccepted=False says the same.
type RejectedError struct {
	// Reason is ReleaseAccepted's reason (PreconditionChecks,
	// RetrievePayload, ...) and Message its message.
	Reason, Message string
}

// Error says why.
func (e *RejectedError) Error() string {
	return "the requested release was rejected: " + e.Reason + ": " + e.Message
}

// rejection returns the RejectedError of a report's errors: a
// clustersync.PreconditionError becomes one (PreconditionChecks).
func rejection(errs []error) *RejectedError {
	for _, err := range errs {
		var pe *clustersync.PreconditionError
		if errors.As(err, &pe) {
			return &RejectedError{Reason: "PreconditionChecks", Message: pe.Summary.Message}
		}
	}
	return nil
}

// clusterversion names a release in a log line.
func clusterversion(r configv1.Release) string {
	if r.Version == "" {
		return r.Image
	}
	return r.Version + " (" + r.Image + ")"
}
