package operator

import (
	configv1 "github.com/openshift/api/config/v1"

	"github.com/payload-apply/payload-apply/clustersync"
)

// Mode is what a pass did, as the CVO names its states.
type Mode string

// The modes.
const (
	// ModeInstall: the cluster's record has no release it reached (the
	// CVO's initializing state): clustersync.Apply in the CVO's flattened
	// install order.
	ModeInstall Mode = "install"
	// ModeReconcile: the cluster runs the release (reconciling): the
	// payload is applied again to repair drift, in the CVO's reconcile
	// order with its two workers.
	ModeReconcile Mode = "reconcile"
	// ModeUpdate: the cluster moves to the release spec.desiredUpdate
	// names (updating): clustersync.PlanUpgrade and RunUpgrade, in the
	// CVO's update order; or the request was rejected.
	ModeUpdate Mode = "update"
)

// Modes lists the modes, for metrics.
var Modes = []Mode{ModeInstall, ModeReconcile, ModeUpdate}

// modeOf names the mode of a clustersync state.
func modeOf(state string) Mode {
	switch state {
	case clustersync.StateReconciling:
		return ModeReconcile
	case clustersync.StateUpdating:
		return ModeUpdate
	}
	return ModeInstall
}

// work is what the next pass is to do, read from the cluster's record.
// Which order and which history entry an apply has is clustersync's to
// decide from the same record; the operator only chooses between applying
// the release the cluster runs and going to the one an admin requests.
type work struct {
	// running is the release the cluster runs or is being installed
	// with: the record's status.desired, else the operator's own.
	running configv1.Release
	// update is spec.desiredUpdate when it asks for a release the cluster
	// has not reached (its newest history entry is not a Completed one of
	// that image): the pass runs the upgrade. Nil otherwise.
	update *configv1.Update
}

// decide reads the record as the CVO's sync does: until a release was
// reached (no Completed history entry: an install) the release being
// installed is applied, and a request waits for the install to end; a
// spec.desiredUpdate naming an image the newest history entry has not
// completed is an update (new, or one that stopped); anything else
// applies the release the cluster runs again.
func decide(cv *configv1.ClusterVersion, own configv1.Release) work {
	w := work{running: current(cv, own)}
	if cv == nil || !installed(cv.Status.History) {
		return w
	}
	d := cv.Spec.DesiredUpdate
	if d == nil || (d.Image == "" && (d.Version == "" || d.Version == w.running.Version)) {
		return w
	}
	if h := cv.Status.History[0]; d.Image != "" && h.Image == d.Image && h.State == configv1.CompletedUpdate {
		return w
	}
	w.update = d.DeepCopy()
	return w
}

// current returns the release the cluster runs, as far as the operator
// knows: the record's status.desired when it names an image (the release
// last accepted: during and after an update, the new one), else own, the
// release of the operator's own payload.
func current(cv *configv1.ClusterVersion, own configv1.Release) configv1.Release {
	if cv != nil && cv.Status.Desired.Image != "" {
		return configv1.Release{Version: cv.Status.Desired.Version, Image: cv.Status.Desired.Image}
	}
	return own
}

// reconciling reports whether the record says the cluster has reached
// image: its newest history entry is a Completed one of it (the pass
// applies with the reconcile parallelism).
func reconciling(cv *configv1.ClusterVersion, image string) bool {
	if cv == nil || len(cv.Status.History) == 0 {
		return false
	}
	h := cv.Status.History[0]
	return h.State == configv1.CompletedUpdate && h.Image == image
}

// installed reports whether a history entry is Completed: the install
// ended.
func installed(h []configv1.UpdateHistory) bool {
	for _, e := range h {
		if e.State == configv1.CompletedUpdate {
			return true
		}
	}
	return false
}
