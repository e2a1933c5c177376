package clusterversion

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func at(min int) metav1.Time {
	return metav1.NewTime(time.Date(2026, 8, 1, 0, min, 0, 0, time.UTC))
}

func tp(min int) *metav1.Time { t := at(min); return &t }

func TestMergeHistory(t *testing.T) {
	a := configv1.Release{Version: "4.22.0", Image: "/p/a@sha256:aa"}
	b := configv1.Release{Version: "4.22.1", Image: "/p/b@sha256:bb"}
	type step struct {
		desired   configv1.Release
		completed bool
		verified  bool
		risks     string
		min       int
	}
	tests := []struct {
		name  string
		steps []step
		want  []configv1.UpdateHistory
	}{
		{
			name:  "install: Partial, then Completed in place",
			steps: []step{{desired: a, min: 0}, {desired: a, min: 1}, {desired: a, completed: true, min: 2}, {desired: a, completed: true, min: 9}},
			want:  []configv1.UpdateHistory{{State: configv1.CompletedUpdate, StartedTime: at(0), CompletionTime: tp(2), Version: a.Version, Image: a.Image}},
		},
		{
			name: "update: the old entry ends, the new one is Partial then Completed",
			steps: []step{{desired: a, completed: true, min: 0}, {desired: b, risks: "forced", min: 5},
				{desired: b, risks: "forced", min: 6}, {desired: b, completed: true, verified: true, risks: "forced", min: 7}},
			want: []configv1.UpdateHistory{
				{State: configv1.CompletedUpdate, StartedTime: at(5), CompletionTime: tp(7), Version: b.Version, Image: b.Image, Verified: true, AcceptedRisks: "forced"},
				{State: configv1.CompletedUpdate, StartedTime: at(0), CompletionTime: tp(0), Version: a.Version, Image: a.Image},
			},
		},
		{
			name:  "an update retargeted before it completed stays Partial, with a completion time",
			steps: []step{{desired: a, completed: true, min: 0}, {desired: b, min: 5}, {desired: a, min: 8}},
			want: []configv1.UpdateHistory{
				{State: configv1.PartialUpdate, StartedTime: at(8), Version: a.Version, Image: a.Image},
				{State: configv1.PartialUpdate, StartedTime: at(5), CompletionTime: tp(8), Version: b.Version, Image: b.Image},
				{State: configv1.CompletedUpdate, StartedTime: at(0), CompletionTime: tp(0), Version: a.Version, Image: a.Image},
			},
		},
		{
			name:  "a new image of the same version is a new entry",
			steps: []step{{desired: a, completed: true, min: 0}, {desired: configv1.Release{Version: a.Version, Image: "/p/a2@sha256:a2"}, completed: true, min: 3}},
			want: []configv1.UpdateHistory{
				{State: configv1.CompletedUpdate, StartedTime: at(3), CompletionTime: tp(3), Version: a.Version, Image: "/p/a2@sha256:a2"},
				{State: configv1.CompletedUpdate, StartedTime: at(0), CompletionTime: tp(0), Version: a.Version, Image: a.Image},
			},
		},
		{
			name:  "without an image nothing is recorded",
			steps: []step{{desired: configv1.Release{Version: "4.22.0"}, completed: true}},
			want:  []configv1.UpdateHistory{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var st configv1.ClusterVersionStatus
			for _, s := range tc.steps {
				mergeHistory(&st, s.desired, s.verified, s.completed, s.risks, at(s.min))
			}
			if diff := cmp.Diff(tc.want, st.History); diff != "" {
				t.Errorf("history (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrune(t *testing.T) {
	// 4.0.0 installed, then z-streams of 4.1 .. with a Partial between
	// each: pruning keeps the initial entry, the newest five, the newest
	// Completed one, and drops Partial z-stream entries first.
	var h []configv1.UpdateHistory
	for i := 0; i < 12; i++ {
		state := configv1.CompletedUpdate
		if i%2 == 1 {
			state = configv1.PartialUpdate
		}
		h = append([]configv1.UpdateHistory{{State: state, Version: fmt.Sprintf("4.1.%d", i), Image: fmt.Sprint(i)}}, h...)
	}
	got := prune(append([]configv1.UpdateHistory(nil), h...), 8)
	if len(got) != 8 {
		t.Fatalf("%d entries, want 8", len(got))
	}
	var versions []string
	for _, e := range got {
		versions = append(versions, e.Version)
	}
	// The newest five and the initial 4.1.0 are kept; the Partial
	// z-stream entries go first (oldest first), then the oldest Completed.
	want := []string{"4.1.11", "4.1.10", "4.1.9", "4.1.8", "4.1.7", "4.1.6", "4.1.4", "4.1.0"}
	if h[len(h)-1].Version != "4.1.0" {
		t.Fatal("setup")
	}
	if diff := cmp.Diff(want, versions); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	if got := prune(h[:5], 8); len(got) != 5 {
		t.Errorf("a short history was pruned to %d", len(got))
	}
}

func TestCurrentVersion(t *testing.T) {
	h := []configv1.UpdateHistory{{State: configv1.PartialUpdate, Version: "4.23.0"}, {State: configv1.CompletedUpdate, Version: "4.22.1"}, {State: configv1.CompletedUpdate, Version: "4.22.0"}}
	if v := CurrentVersion(h); v != "4.22.1" {
		t.Errorf("CurrentVersion = %q", v)
	}
	if v := CurrentVersion(h[:1]); v != "4.23.0" {
		t.Errorf("CurrentVersion of a partial install = %q", v)
	}
	if v := CurrentVersion(nil); v != "" {
		t.Errorf("CurrentVersion of nothing = %q", v)
	}
}

func TestUpdateTypeOf(t *testing.T) {
	for _, tc := range []struct {
		from, to string
		want     UpdateType
	}{
		{"4.22.0", "4.22.1", UpdatePatch}, {"4.22.0-0.snapshot-2026-08", "4.22.1", UpdatePatch}, {"4.22.0-0.snapshot-2026-08", "4.22.0", UpdatePatch},
		{"4.22.1", "4.23.0", UpdateMinor}, {"4.22.1", "4.24.0", UpdateMinor}, {"4.22.1", "5.0.0", UpdateMajor},
		{"4.22.1", "4.22.0", UpdateDowngrade}, {"4.22.1", "4.22.1", UpdateSame},
	} {
		if got, err := UpdateTypeOf(tc.from, tc.to); err != nil || got != tc.want {
			t.Errorf("UpdateTypeOf(%s, %s) = %s, %v; want %s", tc.from, tc.to, got, err, tc.want)
		}
	}
	if _, err := UpdateTypeOf("4.22", "4.23.0"); err == nil {
		t.Error("a version that does not parse gave no error")
	}
}
