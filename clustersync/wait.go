package clustersync

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/payload-apply/payload-apply/lib/component"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/plan"
)

// wait waits for the objects applied: ClusterOperators until Available,
// not Degraded and at their versions, CRDs Established, Jobs complete,
// Deployments for failure conditions only, anything else by kstatus
// (resourceapply.Check). Steps that own statuses (component.Repeating) run
// again before every poll; a ClusterOperator such a step owns is waited for
// at the release version where its manifest lists
// component.VersionPlaceholder. With stopAtFailure the wait ends at the
// first object that reports a failure it will not leave. It returns the
// wait's errors and, when the wait failed, the last error of each step run
// again, and how the wait ended.
func (a *applier) wait(ctx context.Context, p *plan.Plan, stopAtFailure bool) ([]error, *WaitReport) {
	return a.waitFor(ctx, p, nil, stopAtFailure)
}

// waitFor is wait for the objects only accepts (nil: all), and the steps
// that own any of them.
func (a *applier) waitFor(ctx context.Context, p *plan.Plan, only func(manifest.ID) bool, stopAtFailure bool) ([]error, *WaitReport) {
	release := ""
	if p.Payload != nil && p.Payload.Release != nil {
		release = p.Payload.Release.Version
	}
	var repeat []*payload.Task
	owned := map[manifest.ID]bool{}
	for i, t := range p.Graph.Tasks {
		r, ok := t.Step.(component.Repeating)
		if !ok {
			continue
		}
		if only != nil && !ownsAny(r, only) {
			continue
		}
		// Steps that failed or did not run have said so already.
		if act := a.changes[i].Action; act == resourceapply.Configured || act == resourceapply.Unchanged {
			repeat = append(repeat, t)
			for _, id := range r.Owns() {
				owned[id] = true
			}
		}
	}
	var waitFor []*unstructured.Unstructured
	for i, t := range p.Graph.Tasks {
		if t.IsStep() || t.Manifest.IsDelete() || (only != nil && !only(t.Manifest.ID())) {
			continue
		}
		switch a.changes[i].Action {
		case resourceapply.Created, resourceapply.Configured, resourceapply.Unchanged, resourceapply.Skipped:
			obj := t.Manifest.Obj
			if owned[t.Manifest.ID()] && release != "" {
				obj = withReleaseVersion(obj, release)
			}
			waitFor = append(waitFor, obj)
		}
	}
	lastErr := make([]error, len(repeat))
	start := time.Now()
	deadline, _ := ctx.Deadline()
	rep := &WaitReport{}
	opts := resourceapply.WaitOptions{
		Interval:      time.Second,
		StopAtFailure: stopAtFailure,
		Progress: func(w resourceapply.WaitProgress) {
			rep.Last = w
			a.out.emit(Waiting{What: "applied objects", Progress: w, Elapsed: time.Since(start), Deadline: deadline})
		},
	}
	if len(repeat) > 0 {
		opts.BeforePoll = func(ctx context.Context) {
			for i, t := range repeat {
				// No retries of its own: the next poll runs it again.
				res, err := a.mgr.RunStep(ctx, t.Step.(component.Step), resourceapply.StepOptions{})
				if ctx.Err() != nil {
					return
				}
				if rerunNews(res, err, lastErr[i]) {
					a.out.emit(StepRerun{Name: t.Step.Name(), Result: res, Err: err})
				}
				lastErr[i] = err
			}
		}
	}
	werr := a.mgr.Wait(ctx, waitFor, opts)
	rep.Elapsed = time.Since(start)
	if werr == nil {
		return nil, rep
	}
	rep.EndedAtFailure = stopAtFailure && ctx.Err() == nil && len(rep.Last.Pending) > 0 && anyNotReady(werr)
	errs := []error{werr}
	for i, err := range lastErr {
		if err != nil {
			errs = append(errs, &payload.TaskError{Task: repeat[i], Err: err})
		}
	}
	return errs, rep
}

// anyNotReady reports whether err (joined) holds a failure an object
// reported (resourceapply.ReasonNotReady).
func anyNotReady(err error) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if anyNotReady(e) {
				return true
			}
		}
		return false
	}
	return resourceapply.ReasonOf(err) == resourceapply.ReasonNotReady
}

// ownsAny reports whether r owns an object only accepts.
func ownsAny(r component.Repeating, only func(manifest.ID) bool) bool {
	for _, id := range r.Owns() {
		if only(id) {
			return true
		}
	}
	return false
}

// rerunNews reports whether a step run again while waiting is worth
// telling: it wrote, or failed with another error than the last time.
func rerunNews(res resourceapply.StepResult, err, lastErr error) bool {
	if err == nil {
		return res.Writes > 0
	}
	return lastErr == nil || err.Error() != lastErr.Error()
}

// withReleaseVersion returns a copy of a ClusterOperator manifest whose
// status.versions list version where they list the placeholder.
func withReleaseVersion(obj *unstructured.Unstructured, version string) *unstructured.Unstructured {
	versions, ok, _ := unstructured.NestedSlice(obj.Object, "status", "versions")
	if !ok {
		return obj
	}
	out := obj.DeepCopy()
	for _, v := range versions {
		if m, ok := v.(map[string]any); ok && m["version"] == component.VersionPlaceholder {
			m["version"] = version
		}
	}
	if err := unstructured.SetNestedSlice(out.Object, versions, "status", "versions"); err != nil {
		return obj
	}
	return out
}
