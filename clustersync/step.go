package clustersync

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/klog/v2"

	"github.com/payload-apply/payload-apply/lib/component"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/payload"
)

// runStep runs a component's step with the Manager's cluster. In a dry run
// a step is skipped when an object it runs after does not exist yet (the
// dry run only pretended to create it).
func (a *applier) runStep(ctx context.Context, t *payload.Task) error {
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
	// A step retries its transient failures within the run's retry
	// window, as its objects' requests do: a step in flight when the
	// server goes away must not keep the apply alive past the window.
	opts := resourceapply.StepOptions{DryRun: a.opts.DryRun, Retry: a.opts.Retry}
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
func (a *applier) dryRunMissing(t *payload.Task) string {
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
