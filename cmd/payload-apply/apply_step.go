package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"

	"github.com/payload-apply/payload-apply/lib/component"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/plan"
)

// runStep runs a component's step with the Manager's cluster. In a dry run
// a step is skipped when an object it runs after does not exist yet (the
// dry run only pretended to create it).
func (a *clusterApplier) runStep(ctx context.Context, t *payload.Task) error {
	name := t.Step.Name()
	logger := klog.FromContext(ctx)
	step, ok := t.Step.(component.Step)
	if !ok {
		err := fmt.Errorf("step %s: not a component step: nothing can run it", name)
		a.setChange(t, resourceapply.Change{Action: resourceapply.Failed})
		return err
	}
	if a.opts.DryRun {
		if why := a.dryRunMissing(t); why != "" {
			a.setChange(t, resourceapply.Change{Action: resourceapply.Skipped, Message: why, DryRun: true})
			logger.V(2).Info("Skipped", "step", name, "file", t.Position(), "runLevel", levelOf(t), "message", why)
			return nil
		}
	}
	_, done := a.track(t, "running")
	defer done()
	opts := resourceapply.DefaultStepOptions()
	opts.DryRun = a.opts.DryRun
	res, err := a.mgr.RunStep(ctx, step, opts)
	a.setChange(t, resourceapply.Change{Action: res.Action, Message: res.Message(), DryRun: res.DryRun})
	if err != nil {
		logger.V(2).Info("Failed", "step", name, "file", t.Position(), "runLevel", levelOf(t), "reason", resourceapply.ReasonOf(err), "err", err)
		return err
	}
	logger.V(2).Info(string(res.Action), "step", name, "file", t.Position(), "runLevel", levelOf(t), "message", res.Message())
	return nil
}

// dryRunMissing says why a step cannot run in a dry run: an object it runs
// after was only dry-run created, or skipped because its namespace or type
// would have been created first. Empty: the step can run.
func (a *clusterApplier) dryRunMissing(t *payload.Task) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, after := range t.After {
		c := a.changes[after.Index-1]
		if c.Action == resourceapply.Created || (c.Action == resourceapply.Skipped && strings.HasPrefix(c.Message, "dry run")) {
			return fmt.Sprintf("dry run: it runs after %s, which this apply would create", after.Describe())
		}
	}
	return ""
}

func (a *clusterApplier) setChange(t *payload.Task, c resourceapply.Change) {
	a.mu.Lock()
	a.changes[t.Index-1] = c
	a.mu.Unlock()
}

// wait waits for the objects applied (see 'help apply'), running the
// steps that own statuses (component.Repeating) again before every poll.
// A ClusterOperator such a step owns is waited for at the release version
// where its manifest lists component.VersionPlaceholder. It returns the
// wait's errors and, when the wait failed, the last error of each step
// run again.
func (a *clusterApplier) wait(ctx context.Context, p *plan.Plan) []error {
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
		if t.IsStep() || t.Manifest.IsDelete() {
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
	opts := resourceapply.WaitOptions{
		Interval: time.Second,
		Progress: func(w resourceapply.WaitProgress) { a.progress.wait("applied objects", w) },
	}
	if len(repeat) > 0 {
		opts.BeforePoll = func(ctx context.Context) {
			for i, t := range repeat {
				// No retries of its own: the next poll runs it again.
				res, err := a.mgr.RunStep(ctx, t.Step.(component.Step), resourceapply.StepOptions{})
				if ctx.Err() != nil {
					return
				}
				a.progress.rerun(t.Step.Name(), res, err, lastErr[i])
				lastErr[i] = err
			}
		}
	}
	werr := a.mgr.Wait(ctx, waitFor, opts)
	if werr == nil {
		return nil
	}
	errs := []error{werr}
	for i, err := range lastErr {
		if err != nil {
			errs = append(errs, &payload.TaskError{Task: repeat[i], Err: err})
		}
	}
	return errs
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
