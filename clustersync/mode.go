package clustersync

import (
	"fmt"

	configv1 "github.com/openshift/api/config/v1"

	"github.com/payload-apply/payload-apply/lib/clusterversion"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/plan"
)

// mode is what a run is, in the CVO's terms.
type mode struct {
	// order is the graph's order.
	order payload.Order
	// state is StateInitializing, StateUpdating or StateReconciling.
	state string
}

// release is the release a run applies: the plan's version, the image
// the caller names.
func (m mode) release(p *plan.Plan, rel Release) configv1.Release {
	return configv1.Release{Version: planVersion(p), Image: rel.Image}
}

// planVersion is the release version of the plan's payload, "" when it
// has no release-metadata.
func planVersion(p *plan.Plan) string {
	if p == nil || p.Payload == nil || p.Payload.Release == nil {
		return ""
	}
	return p.Payload.Release.Version
}

// ReleaseMismatchError says Apply was given a release other than the one
// the cluster runs: moving a cluster to another version is an Upgrade.
type ReleaseMismatchError struct {
	// Running is the release of the record's newest history entry, Given
	// the plan's.
	Running, Given configv1.Release
}

// Error names both releases.
func (e *ReleaseMismatchError) Error() string {
	return fmt.Sprintf("the cluster runs %s (%s), not %s: apply installs a release or applies again the one the cluster runs; going to %s is an upgrade",
		clusterversion.VersionName(e.Running), e.Running.Image, clusterversion.VersionName(e.Given), clusterversion.VersionName(e.Given))
}

// applyMode decides what Apply does, from the record as the CVO decides
// its state: without history it installs (the install order); with the
// newest entry of the same version it applies that release again: the
// reconcile order once Completed, else it finishes the install (one
// entry) or the update that stopped (the update order and its waits); an
// image other than the entry's, same version, is an update of its own (a
// new entry). Another version is a *ReleaseMismatchError.
func applyMode(rec *configv1.ClusterVersion, p *plan.Plan, rel Release) (mode, error) {
	if rec == nil || len(rec.Status.History) == 0 {
		return mode{order: payload.OrderInstall, state: StateInitializing}, nil
	}
	last := rec.Status.History[0]
	given := configv1.Release{Version: planVersion(p), Image: rel.Image}
	if given.Version != last.Version && given.Version != "" && last.Version != "" {
		return mode{}, &ReleaseMismatchError{Running: configv1.Release{Version: last.Version, Image: last.Image}, Given: given}
	}
	sameImage := given.Image == "" || last.Image == "" || given.Image == last.Image
	switch {
	case sameImage && last.State == configv1.CompletedUpdate:
		return mode{order: payload.OrderReconcile, state: StateReconciling}, nil
	case sameImage && len(rec.Status.History) == 1:
		return mode{order: payload.OrderInstall, state: StateInitializing}, nil
	}
	return mode{order: payload.OrderUpdate, state: StateUpdating}, nil
}

// desiredUpdate returns the record's spec.desiredUpdate, nil without one.
func desiredUpdate(rec *configv1.ClusterVersion) *configv1.Update {
	if rec == nil {
		return nil
	}
	return rec.Spec.DesiredUpdate
}
