package operator

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	configv1 "github.com/openshift/api/config/v1"
)

func TestDecide(t *testing.T) {
	a := configv1.Release{Version: "4.22.0", Image: "example.com/release@sha256:a"}
	b := configv1.Release{Version: "4.22.1", Image: "example.com/release@sha256:b"}
	entry := func(r configv1.Release, s configv1.UpdateState) configv1.UpdateHistory {
		return configv1.UpdateHistory{Version: r.Version, Image: r.Image, State: s}
	}
	record := func(desired *configv1.Release, h ...configv1.UpdateHistory) *configv1.ClusterVersion {
		cv := &configv1.ClusterVersion{}
		cv.Generation = 3
		cv.Status.History = h
		if len(h) > 0 {
			cv.Status.Desired = configv1.Release{Version: h[0].Version, Image: h[0].Image}
		}
		if desired != nil {
			cv.Spec.DesiredUpdate = &configv1.Update{Version: desired.Version, Image: desired.Image}
		}
		return cv
	}
	never := func(string) bool { return false }
	for _, tc := range []struct {
		name    string
		cv      *configv1.ClusterVersion
		reached func(string) bool
		want    Mode
		desired configv1.Release
		request bool
	}{
		{name: "no record: install", want: ModeInstall, desired: a},
		{name: "an install in progress", cv: record(nil, entry(a, configv1.PartialUpdate)), want: ModeInstall, desired: a},
		{name: "installed: reconcile", cv: record(nil, entry(a, configv1.CompletedUpdate)), want: ModeReconcile, desired: a},
		{name: "an update requested", cv: record(&b, entry(a, configv1.CompletedUpdate)), want: ModeUpdate, desired: b, request: true},
		{name: "an update in progress", cv: record(&b, entry(b, configv1.PartialUpdate), entry(a, configv1.CompletedUpdate)), want: ModeUpdate, desired: b},
		{name: "an update done", cv: record(&b, entry(b, configv1.CompletedUpdate), entry(a, configv1.CompletedUpdate)), want: ModeReconcile, desired: b},
		{name: "an update requested during the install", cv: record(&b, entry(a, configv1.PartialUpdate)), want: ModeInstall, desired: b, request: true},
		{name: "reached in this process", cv: record(nil, entry(a, configv1.PartialUpdate)), reached: func(i string) bool { return i == a.Image }, want: ModeReconcile, desired: a},
		{name: "a request of the running release", cv: record(&a, entry(a, configv1.CompletedUpdate)), want: ModeReconcile, desired: a},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reached := tc.reached
			if reached == nil {
				reached = never
			}
			w := decide(tc.cv, current(tc.cv, a), reached)
			if w.mode != tc.want || !cmp.Equal(w.desired, tc.desired) || w.requested != tc.request {
				t.Errorf("decide: mode %s, desired %v, requested %v; want %s, %v, %v", w.mode, w.desired, w.requested, tc.want, tc.desired, tc.request)
			}
			if tc.cv != nil && w.generation != 3 {
				t.Errorf("generation %d, want the record's 3", w.generation)
			}
		})
	}
}

func TestCurrent(t *testing.T) {
	own := configv1.Release{Version: "4.22.0", Image: "own"}
	if got := current(nil, own); !cmp.Equal(got, own) {
		t.Errorf("no record: %v, want the operator's own release", got)
	}
	cv := &configv1.ClusterVersion{}
	cv.Status.Desired = configv1.Release{Version: "4.22.1", Image: "b"}
	if got := current(cv, own); !cmp.Equal(got, cv.Status.Desired) {
		t.Errorf("a record: %v, want status.desired", got)
	}
}
