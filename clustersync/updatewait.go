package clustersync

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/payload-apply/payload-apply/lib/component"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/plan"
)

// The update waits poll quickly at first, then less often.
const (
	updatePollFirst = 200 * time.Millisecond
	updatePollMax   = 5 * time.Second
)

var (
	clusterOperatorGK = schema.GroupKind{Group: "config.openshift.io", Kind: "ClusterOperator"}
	deploymentGK      = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	daemonSetGK       = schema.GroupKind{Group: "apps", Kind: "DaemonSet"}
)

// updateWaits is what an update waits for, beyond applying: each task
// that applies a ClusterOperator waits for it to report the release's
// versions (Available, not Degraded), one that applies a Deployment or a
// DaemonSet for its rollout, before its node goes on (so the next run
// level waits too), as the CVO's update does; ClusterOperators whose
// status a component step writes (component.Repeating) are waited for at
// the end instead, while the step runs again. Deleted objects are
// followed until they are gone.
type updateWaits struct {
	// owned are the objects component steps own.
	owned map[manifest.ID]bool
}

func newUpdateWaits(p *plan.Plan) *updateWaits {
	u := &updateWaits{owned: map[manifest.ID]bool{}}
	for _, t := range p.Graph.Tasks {
		if r, ok := t.Step.(component.Repeating); ok {
			for _, id := range r.Owns() {
				u.owned[id] = true
			}
		}
	}
	return u
}

// deleted is an object a task deleted, followed until it is gone.
type deleted struct {
	task *payload.Task
	gone bool
}

// waitUpdated waits, in an update, for the object task t applied to reach
// the release's state (see updateWaits). It returns nil at once for the
// other kinds.
func (a *applier) waitUpdated(ctx context.Context, t *payload.Task, f *flight) error {
	m := t.Manifest
	var what string
	switch m.GVK.GroupKind() {
	case clusterOperatorGK:
		if a.update.owned[m.ID()] {
			return nil
		}
		what = m.Obj.GetName()
	case deploymentGK:
		what = "deployment " + m.Obj.GetNamespace() + "/" + m.Obj.GetName()
	case daemonSetGK:
		what = "daemonset " + m.Obj.GetNamespace() + "/" + m.Obj.GetName()
	default:
		return nil
	}
	a.setWaiting(t, what)
	defer a.setWaiting(t, "")
	last := "\x00"
	err := a.mgr.Wait(ctx, []*unstructured.Unstructured{m.Obj}, resourceapply.WaitOptions{
		Interval:    updatePollFirst,
		MaxInterval: updatePollMax,
		Readiness:   resourceapply.RolloutCheck,
		Progress: func(w resourceapply.WaitProgress) {
			msg := ""
			if len(w.Pending) > 0 {
				msg = w.Pending[0].Message
			}
			if msg == last {
				return
			}
			last = msg
			a.mu.Lock()
			f.why = "waiting for " + what + ": " + msg
			a.mu.Unlock()
			if msg != "" {
				a.out.emit(UpdateWaiting{Task: t, What: what, Message: msg})
			}
		},
	})
	a.out.emit(UpdateWaiting{Task: t, What: what, Done: true, Err: err})
	return err
}

// setWaiting records (or, with "", clears) what task t waits for.
func (a *applier) setWaiting(t *payload.Task, what string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if what == "" {
		delete(a.waiting, t.Index)
		return
	}
	a.waiting[t.Index] = what
}

// waitingOn returns what the run waits for, sorted, and the CVO's reason
// for it: ClusterOperatorUpdating (one ClusterOperator),
// ClusterOperatorsUpdating (several), WorkloadUpdating when workloads
// roll out too.
func (a *applier) waitingOn() ([]string, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.waiting) == 0 {
		return nil, ""
	}
	var names []string
	workloads := false
	for _, w := range a.waiting {
		names = append(names, w)
		workloads = workloads || strings.Contains(w, " ")
	}
	sort.Strings(names)
	switch {
	case workloads:
		return names, "WorkloadUpdating"
	case len(names) == 1:
		return names, "ClusterOperatorUpdating"
	}
	return names, "ClusterOperatorsUpdating"
}

// noteDeleted follows the object of a delete manifest an update applied
// (deleted now, or being deleted since an earlier run): one read says
// whether it is gone already (no finalizer held it).
func (a *applier) noteDeleted(ctx context.Context, t *payload.Task, change resourceapply.Change) {
	d := &deleted{task: t}
	d.gone = change.Action == resourceapply.Skipped && strings.HasPrefix(change.Message, "already gone") || a.gone(ctx, t.Manifest)
	a.mu.Lock()
	a.deleted = append(a.deleted, d)
	a.mu.Unlock()
}

// gone reads whether m's object is gone (an error reads as not gone).
func (a *applier) gone(ctx context.Context, m *manifest.Manifest) bool {
	live, err := a.mgr.Get(ctx, m.GVK, m.Obj.GetNamespace(), m.Obj.GetName(), resourceapply.RetryOptions{})
	return err == nil && live == nil || resourceapply.IsResourceTypeMissing(err)
}

// pendingDeletes names the deleted objects not gone yet, "kind ns/name"
// as the CVO names them.
func (a *applier) pendingDeletes() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, d := range a.deleted {
		if !d.gone {
			m := d.task.Manifest
			name := m.Obj.GetName()
			if ns := m.Obj.GetNamespace(); ns != "" {
				name = ns + "/" + name
			}
			out = append(out, lowerKind(m.GVK.Kind)+" "+name)
		}
	}
	return out
}

// waitUpdateEnd is the end of an update: the deleted objects are followed
// until they are gone (the record says Upgradeable=False,
// ResourceDeletesInProgress, meanwhile), and the ClusterOperators that
// component steps own are waited for at the release's version while the
// steps run again.
func (a *applier) waitUpdateEnd(ctx context.Context, p *plan.Plan, rec *recordProgress) []error {
	var errs []error
	interval := updatePollFirst
	for {
		pending := a.pendingDeletes()
		if len(pending) == 0 {
			break
		}
		if rec != nil {
			_ = rec.w.sync(ctx, rec.progress())
		}
		a.out.emit(Waiting{What: "deletes", Progress: resourceapply.WaitProgress{Total: len(pending), Pending: pendingOf(pending)}})
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		if ctx.Err() != nil {
			for _, name := range pending {
				errs = append(errs, fmt.Errorf("%s: delete still in progress: %w", name, ctx.Err()))
			}
			return errs
		}
		if interval *= 2; interval > updatePollMax {
			interval = updatePollMax
		}
		a.mu.Lock()
		ds := append([]*deleted(nil), a.deleted...)
		a.mu.Unlock()
		for _, d := range ds {
			if !d.gone && a.gone(ctx, d.task.Manifest) {
				a.mu.Lock()
				d.gone = true
				a.mu.Unlock()
			}
		}
	}
	if len(a.update.owned) > 0 {
		owned := func(id manifest.ID) bool { return a.update.owned[id] }
		werrs, _ := a.waitFor(ctx, p, owned, false)
		errs = append(errs, werrs...)
	}
	return errs
}

func pendingOf(names []string) []resourceapply.Pending {
	out := make([]resourceapply.Pending, len(names))
	for i, n := range names {
		kind, name, _ := strings.Cut(n, " ")
		ns, nm, ok := strings.Cut(name, "/")
		if !ok {
			ns, nm = "", name
		}
		out[i] = resourceapply.Pending{Object: manifest.ID{Kind: kind, Namespace: ns, Name: nm}, Message: "being deleted"}
	}
	return out
}

// lowerKind is a kind as the CVO's messages name it: "deployment".
func lowerKind(kind string) string { return strings.ToLower(kind) }
