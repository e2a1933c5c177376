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
	for _, tc := range []struct {
		name    string
		cv      *configv1.ClusterVersion
		running configv1.Release
		update  *configv1.Update
	}{
		{name: "no record: install the operator's own", running: a},
		{name: "an install in progress", cv: record(nil, entry(a, configv1.PartialUpdate)), running: a},
		{name: "installed", cv: record(nil, entry(a, configv1.CompletedUpdate)), running: a},
		{name: "an update requested", cv: record(&b, entry(a, configv1.CompletedUpdate)), running: a, update: &configv1.Update{Version: b.Version, Image: b.Image}},
		{name: "an update in progress", cv: record(&b, entry(b, configv1.PartialUpdate), entry(a, configv1.CompletedUpdate)), running: b, update: &configv1.Update{Version: b.Version, Image: b.Image}},
		{name: "an update done", cv: record(&b, entry(b, configv1.CompletedUpdate), entry(a, configv1.CompletedUpdate)), running: b},
		{name: "a request waits for the install", cv: record(&b, entry(a, configv1.PartialUpdate)), running: a},
		{name: "a request of the running release", cv: record(&a, entry(a, configv1.CompletedUpdate)), running: a},
		{name: "a version without an image", cv: record(&configv1.Release{Version: b.Version}, entry(a, configv1.CompletedUpdate)), running: a, update: &configv1.Update{Version: b.Version}},
		{name: "the running version without an image", cv: record(&configv1.Release{Version: a.Version}, entry(a, configv1.CompletedUpdate)), running: a},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := decide(tc.cv, a)
			if !cmp.Equal(w.running, tc.running) || !cmp.Equal(w.update, tc.update) {
				t.Errorf("decide: running %v, update %v; want %v, %v", w.running, w.update, tc.running, tc.update)
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
