//go:build e2e

package clustersync_test

import (
	"os"
	"sync"
	"testing"

	"github.com/payload-apply/payload-apply/clustersync"
	"github.com/payload-apply/payload-apply/lib/plancache"
	"github.com/payload-apply/payload-apply/lib/redact"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/plan"
	"github.com/payload-apply/payload-apply/profiles"
	"github.com/payload-apply/payload-apply/test/apiserver"
)

func TestMain(m *testing.M) {
	os.Exit(apiserver.Run(m, apiserver.Options{}))
}

// recorder is a Sink that keeps every event.
type recorder struct {
	mu     sync.Mutex
	events []clustersync.Event
}

func (r *recorder) Event(e clustersync.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

// count returns how many events of each kind came, by a name of the type.
func (r *recorder) count() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for _, e := range r.events {
		switch e.(type) {
		case clustersync.Planned:
			out["Planned"]++
		case clustersync.StageStarted:
			out["StageStarted"]++
		case clustersync.StageDone:
			out["StageDone"]++
		case clustersync.TaskDone:
			out["TaskDone"]++
		case clustersync.RunLevelDone:
			out["RunLevelDone"]++
		}
	}
	return out
}

// TestEngine drives the engine as a library on the package's server (no
// other test uses it, so it starts empty): a first
// install of the embedded payload, a re-apply that writes nothing, a live
// diff that finds nothing, and the status of the ClusterOperators (not
// available: nothing plays the operators here).
func TestEngine(t *testing.T) {
	s := apiserver.Shared(t)
	ctx := t.Context()
	secrets := &redact.Values{}
	rec := &recorder{}
	// The plan cache an operator keeps between reconcile passes.
	store := &plancache.Store{Dir: t.TempDir()}
	sess, err := clustersync.Start(ctx, s.RESTConfig(), clustersync.StartOptions{
		Connect: clustersync.ConnectOptions{Sink: rec, Secrets: secrets},
		Plan:    plan.Options{PlanCache: store},
	})
	if err != nil {
		t.Fatal(err)
	}
	if c := sess.Plan.PlanCache; c == nil || c.Hit || !c.Saved {
		t.Errorf("first plan: cache %+v, want a miss, saved", c)
	}
	if sess.Plan.Profile != "self-managed-high-availability" {
		t.Errorf("profile %q, want the default on a cluster that names none", sess.Plan.Profile)
	}

	// The record names the payload by an image of the caller's choosing.
	release := clustersync.Release{Image: "test.invalid/embedded@sha256:0123"}
	opts := clustersync.DefaultApplyOptions()
	opts.Sink, opts.Release = rec, release
	first := clustersync.Apply(ctx, sess, opts)
	if !first.OK() {
		t.Fatalf("first apply: %v", first.Errors)
	}
	if first.Done != first.Tasks || first.Objects.Count(resourceapply.Created) == 0 {
		t.Errorf("first apply: %d of %d done, %s", first.Done, first.Tasks, first.Objects.Summary())
	}
	// The record: the release installed, Completed.
	if cv := first.Record; cv == nil || len(cv.Status.History) != 1 || cv.Status.History[0].State != "Completed" ||
		cv.Status.History[0].Image != release.Image || cv.Status.Desired.Version != "4.22.0" || first.State != clustersync.StateInitializing {
		t.Errorf("record after the install: %+v (state %s)", first.Record, first.State)
	}
	c := rec.count()
	if c["Planned"] != 1 || c["StageStarted"] != 1 || c["StageDone"] != 1 || c["TaskDone"] != first.Tasks || c["RunLevelDone"] == 0 {
		t.Errorf("events %v for %d tasks", c, first.Tasks)
	}

	// The same cluster, planned again (its profile now comes from the
	// ConfigMap the first apply wrote): nothing to write.
	// A reconcile pass: the parse comes from the plan cache.
	again, err := clustersync.Start(ctx, s.RESTConfig(), clustersync.StartOptions{Plan: plan.Options{PlanCache: store}})
	if err != nil {
		t.Fatal(err)
	}
	if c := again.Plan.PlanCache; c == nil || !c.Hit {
		t.Errorf("second plan: cache %+v, want a hit", c)
	}
	if again.Plan.ProfileSource != profiles.SourceCluster {
		t.Errorf("second plan's profile came from %q, want the cluster's ConfigMap", again.Plan.ProfileSource)
	}
	before := again.Cluster.Requests.Writes()
	opts = clustersync.DefaultApplyOptions()
	opts.Release = release
	second := clustersync.Apply(ctx, again, opts)
	if !second.OK() {
		t.Fatalf("re-apply: %v", second.Errors)
	}
	if w := again.Cluster.Requests.Writes() - before; w != 0 || second.State != clustersync.StateReconciling {
		t.Errorf("re-apply (%s) made %d writes, want none (%s)", second.State, w, second.Objects.Summary())
	}

	d, err := clustersync.Diff(ctx, again, clustersync.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Failures) > 0 || d.Result.Summary().Differs() {
		t.Errorf("diff after apply: %s, failures %v", d.Result.Summary(), d.Failures)
	}

	st, err := clustersync.Status(ctx, again)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Operators) == 0 || st.Cluster.Healthy() {
		t.Errorf("status: %d operators, healthy %v; want operators that nothing has made available", len(st.Operators), st.Cluster.Healthy())
	}
}
