package operator

import (
	configv1 "github.com/openshift/api/config/v1"

	"github.com/payload-apply/payload-apply/payload"
)

// Mode is what a pass does, as the CVO names its states.
type Mode string

// The modes.
const (
	// ModeInstall: the cluster's record has never reached a release (the
	// CVO's initializing state): every component at once, the CVO's
	// flattened install order, full parallelism.
	ModeInstall Mode = "install"
	// ModeReconcile: the cluster has reached the release it is to run
	// (reconciling): the payload is applied again to repair drift, in the
	// CVO's reconcile order with its two workers.
	ModeReconcile Mode = "reconcile"
	// ModeUpdate: the cluster moves to another release (updating), in the
	// CVO's update order.
	ModeUpdate Mode = "update"
)

// Modes lists the modes, for metrics.
var Modes = []Mode{ModeInstall, ModeReconcile, ModeUpdate}

// work is what the next pass is to do: the release to apply and the mode.
type work struct {
	mode    Mode
	desired configv1.Release
	// requested says desired comes from spec.desiredUpdate (an admin's
	// request) rather than from the operator's own release.
	requested bool
	// generation is the ClusterVersion's metadata.generation the decision
	// read (0 without one).
	generation int64
}

// decide is the CVO's choice of state (pkg/cvo's sync): the release to
// apply is spec.desiredUpdate when it names an image, else the release
// the cluster is at (current); the mode is install while the record has
// no Completed history entry, reconcile when its newest entry is a
// Completed one of that image, else update. reached says a pass has
// already succeeded for that image in this process: then it is reconcile
// whatever the record says (the CVO's worker moves to reconciling after
// its first successful sync, before the record shows it).
func decide(cv *configv1.ClusterVersion, current configv1.Release, reached func(image string) bool) work {
	w := work{desired: current}
	if cv != nil {
		w.generation = cv.Generation
		if u := cv.Spec.DesiredUpdate; u != nil && u.Image != "" {
			w.desired = configv1.Release{Version: u.Version, Image: u.Image}
			w.requested = u.Image != current.Image
		}
	}
	switch {
	case reached != nil && reached(w.desired.Image):
		w.mode = ModeReconcile
	case cv == nil || neverReachedLevel(cv):
		w.mode = ModeInstall
	case reachedLevel(cv, w.desired.Image):
		w.mode = ModeReconcile
	default:
		w.mode = ModeUpdate
	}
	return w
}

// neverReachedLevel reports whether no history entry of the record is
// Completed: the cluster is still being installed.
func neverReachedLevel(cv *configv1.ClusterVersion) bool {
	for _, h := range cv.Status.History {
		if h.State == configv1.CompletedUpdate {
			return false
		}
	}
	return true
}

// reachedLevel reports whether the record's newest history entry is a
// Completed one of image.
func reachedLevel(cv *configv1.ClusterVersion, image string) bool {
	h := cv.Status.History
	return len(h) > 0 && h[0].State == configv1.CompletedUpdate && h[0].Image == image
}

// current returns the release the cluster is at, as far as the operator
// knows: the record's status.desired when it names an image (the release
// last accepted: after an update, the new one), else own, the release of
// the operator's own payload.
func current(cv *configv1.ClusterVersion, own configv1.Release) configv1.Release {
	if cv != nil && cv.Status.Desired.Image != "" {
		return configv1.Release{Version: cv.Status.Desired.Version, Image: cv.Status.Desired.Image}
	}
	return own
}

// order returns the engine's order for a mode.
func (m Mode) order() payload.Order {
	switch m {
	case ModeInstall, ModeReconcile:
		// The CVO's flattened order (reconcile permutes it per attempt).
		return payload.OrderInstall
	}
	return payload.OrderGraph
}
