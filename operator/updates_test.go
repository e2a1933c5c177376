package operator

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/payload-apply/payload-apply/lib/cincinnati"
)

const clusterID = "5b0d3c8f-3a51-4d2a-9f6e-8e1c3f6b2a10"

func testUpdater(t *testing.T, interval time.Duration) *updater {
	t.Helper()
	opts := DefaultOptions()
	opts.Updates.Interval = interval
	u, err := newUpdater(opts)
	if err != nil {
		t.Fatal(err)
	}
	u.client.Backoff = wait.Backoff{Steps: 1}
	return u
}

func always(name string) configv1.ConditionalUpdateRisk {
	return configv1.ConditionalUpdateRisk{Name: name, Message: name + " hurts.", URL: "https://bugs/" + name, MatchingRules: []configv1.ClusterCondition{{Type: cincinnati.RuleAlways}}}
}

func promqlRisk(name string) configv1.ConditionalUpdateRisk {
	r := always(name)
	r.MatchingRules = []configv1.ClusterCondition{{Type: cincinnati.RulePromQL, PromQL: &configv1.PromQLClusterCondition{PromQL: "up"}}}
	return r
}

// TestResolve: a request naming a version without an image resolves
// through the record's updates; a conditional update whose risks apply
// is refused unless they are accepted, and the accepted ones are
// returned for the history.
func TestResolve(t *testing.T) {
	u := testUpdater(t, time.Minute)
	cv := &configv1.ClusterVersion{Status: configv1.ClusterVersionStatus{
		Desired:          configv1.Release{Version: "4.22.0"},
		AvailableUpdates: []configv1.Release{{Version: "4.22.1", Image: "img:4.22.1"}},
		ConditionalUpdates: []configv1.ConditionalUpdate{
			{Release: configv1.Release{Version: "4.22.2", Image: "img:4.22.2"}, Risks: []configv1.ConditionalUpdateRisk{always("Applies")}},
			{Release: configv1.Release{Version: "4.22.3", Image: "img:4.22.3"}, Risks: []configv1.ConditionalUpdateRisk{promqlRisk("Unknowable")}},
		},
	}}
	for _, tc := range []struct {
		name    string
		version string
		accept  []string
		image   string
		risks   []string
		reason  string
		message string
	}{
		{name: "available", version: "4.22.1", image: "img:4.22.1"},
		{name: "not recommended", version: "4.22.2", reason: "Applies",
			message: "The update from 4.22.0 to 4.22.2 is not recommended:\n\nApplies hurts. https://bugs/Applies\n\nTo update anyway, accept its risks: spec.desiredUpdate.acceptRisks Applies."},
		{name: "accepted", version: "4.22.2", accept: []string{"Applies", "Other"}, image: "img:4.22.2",
			risks: []string{"The update to 4.22.2 is exposed to the risks Applies, which the cluster's administrators accepted (spec.desiredUpdate.acceptRisks)."}},
		{name: "cannot be evaluated, even accepted", version: "4.22.3", accept: []string{"Unknowable"}, reason: cincinnati.ReasonEvaluationFailed,
			message: "name the release's image in spec.desiredUpdate.image"},
		{name: "unknown", version: "4.22.9", reason: ReasonVersionNotFound, message: "No image is known for version 4.22.9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cv.DeepCopy()
			c.Spec.DesiredUpdate = &configv1.Update{Version: tc.version}
			for _, a := range tc.accept {
				c.Spec.DesiredUpdate.AcceptRisks = append(c.Spec.DesiredUpdate.AcceptRisks, configv1.AcceptRisk{Name: a})
			}
			req, risks, rej := u.resolve(t.Context(), c, *c.Spec.DesiredUpdate)
			if tc.reason != "" {
				if rej == nil || rej.Reason != tc.reason || !strings.Contains(rej.Message, tc.message) {
					t.Fatalf("rejection %+v, want %s containing %q", rej, tc.reason, tc.message)
				}
				return
			}
			if rej != nil || req.Image != tc.image || req.Version != tc.version {
				t.Fatalf("resolved %+v, %v; want image %s", req, rej, tc.image)
			}
			if diff := cmp.Diff(tc.risks, risks); diff != "" {
				t.Errorf("risks (-want +got)\n%s", diff)
			}
		})
	}
}

// TestFetch: the updater asks when the question changes or it is time;
// a service failure keeps the last answer to the same question (and
// backs off), another failure clears it.
func TestFetch(t *testing.T) {
	var calls atomic.Int64
	var down atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if down.Load() {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		fmt.Fprint(w, `{"nodes":[{"version":"4.22.0","payload":"img:4.22.0"},{"version":"4.22.1","payload":"img:4.22.1"},{"version":"4.23.0","payload":"img:4.23.0"}],"edges":[[0,1],[1,2]]}`)
	}))
	defer srv.Close()
	u := testUpdater(t, time.Hour)
	q := cincinnati.Query{Channel: "stable-4.22", Arch: "amd64", ID: clusterID, Version: "4.22.0"}
	versions := func(k known) []string {
		var out []string
		for _, r := range k.updates {
			out = append(out, r.Version)
		}
		return out
	}
	for _, step := range []struct {
		name     string
		q        func(*cincinnati.Query)
		down     bool
		due      bool
		calls    int64
		status   configv1.ConditionStatus
		reason   string
		versions []string
		record   bool
	}{
		{name: "first: the service is down: the record's updates kept", down: true, calls: 1, status: "False", reason: cincinnati.ReasonResponseFailed, record: true},
		{name: "not due: not asked", down: true, calls: 1, status: "False", reason: cincinnati.ReasonResponseFailed, record: true},
		{name: "due: asked, answered", due: true, calls: 2, status: "True", versions: []string{"4.22.1"}},
		{name: "within the interval: not asked", calls: 2, status: "True", versions: []string{"4.22.1"}},
		{name: "down again: the answer kept", down: true, due: true, calls: 3, status: "False", reason: cincinnati.ReasonResponseFailed, versions: []string{"4.22.1"}},
		{name: "another version: asked at once", q: func(q *cincinnati.Query) { q.Version = "4.22.1" }, calls: 4, status: "True", versions: []string{"4.23.0"}},
		{name: "not in the channel: cleared", q: func(q *cincinnati.Query) { q.Version = "4.21.9" }, calls: 5, status: "False", reason: cincinnati.ReasonVersionNotFound},
		{name: "no channel: cleared, nothing asked", q: func(q *cincinnati.Query) { q.Channel = "" }, calls: 5, status: "False", reason: cincinnati.ReasonNoChannel},
		{name: "another question while down: nothing kept", q: func(q *cincinnati.Query) { q.Channel = "fast-4.22" }, down: true, calls: 6, status: "False", reason: cincinnati.ReasonResponseFailed},
	} {
		t.Run(step.name, func(t *testing.T) {
			down.Store(step.down)
			if step.due {
				u.next = time.Time{}
			}
			qq := q
			if step.q != nil {
				step.q(&qq)
			}
			k := u.fetch(t.Context(), srv.URL, qq)
			if calls.Load() != step.calls || k.retrieved.Status != step.status || k.retrieved.Reason != step.reason || k.fromRecord != step.record {
				t.Errorf("%d requests, RetrievedUpdates=%s %s, from the record %v; want %d, %s %s, %v", calls.Load(), k.retrieved.Status, k.retrieved.Reason, k.fromRecord, step.calls, step.status, step.reason, step.record)
			}
			if diff := cmp.Diff(step.versions, versions(k)); diff != "" {
				t.Errorf("updates (-want +got)\n%s", diff)
			}
		})
	}
	if d := time.Until(u.next); d > time.Hour || d < 0 {
		t.Errorf("next question in %s", d)
	}
}

func TestWithConditions(t *testing.T) {
	then := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	recorded := []configv1.ConditionalUpdate{{Release: configv1.Release{Image: "a"}, Conditions: []metav1.Condition{{Type: "Recommended", LastTransitionTime: then}}}}
	got := withConditions([]configv1.ConditionalUpdate{{Release: configv1.Release{Image: "a"}}, {Release: configv1.Release{Image: "b"}}}, recorded)
	if len(got[0].Conditions) != 1 || !got[0].Conditions[0].LastTransitionTime.Equal(&then) || got[1].Conditions != nil {
		t.Errorf("%+v", got)
	}
	st := configv1.ClusterVersionStatus{AvailableUpdates: []configv1.Release{{Image: "a"}, {Image: "c"}}, ConditionalUpdates: recorded}
	if diff := cmp.Diff([]configv1.Release{{Image: "c"}}, unconditional(st)); diff != "" {
		t.Errorf("unconditional (-want +got)\n%s", diff)
	}
}
