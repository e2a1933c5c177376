package clustersync

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"

	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/payload"
)

// applier applies tasks with a resourceapply.Manager and keeps each task's
// outcome. It is the payload.Applier of Apply.
type applier struct {
	mgr  *resourceapply.Manager
	opts resourceapply.ApplyOptions
	out  *serial

	mu      sync.Mutex
	changes []resourceapply.Change // by Task.Index-1
	// reasons classify the failed tasks' errors, by Task.Index-1.
	reasons []resourceapply.Reason
	// inFlight are the tasks being applied, by Task.Index.
	inFlight map[int]*flight
	// finished counts the tasks finished, as the last TaskDone said.
	finished int
	// work, when set, is the context of the requests instead of the one
	// Apply gets, which ends on an interrupt.
	work context.Context
	// interrupt, when set, ends on the interrupt: the update's waits stop
	// at once (they write nothing).
	interrupt context.Context

	// crdAfter are the tasks whose kind's CustomResourceDefinition
	// comes after them in order (see crdAfter): they do not wait for it.
	crdAfter map[int]*payload.Task
	order    payload.Order

	// update, when set, makes Apply wait as an update does (see
	// updateWaits).
	update *updateWaits
	// waiting are what the tasks in an update wait for, by Task.Index.
	waiting map[int]string
	// deleted are the objects an update deleted.
	deleted []*deleted
}

var _ payload.Applier = (*applier)(nil)

func newApplier(mgr *resourceapply.Manager, opts resourceapply.ApplyOptions, tasks int, work context.Context, out *serial) *applier {
	return &applier{mgr: mgr, opts: opts, out: out, changes: make([]resourceapply.Change, tasks),
		reasons: make([]resourceapply.Reason, tasks), inFlight: map[int]*flight{}, work: work, waiting: map[int]string{}}
}

// flight is a task being applied: since when, and what it waits for.
type flight struct {
	task  *payload.Task
	start time.Time
	why   string
}

// track records t as in flight, doing why, for slow to report, until
// done is called.
func (a *applier) track(t *payload.Task, why string) (f *flight, done func()) {
	f = &flight{task: t, start: time.Now(), why: why}
	a.mu.Lock()
	a.inFlight[t.Index] = f
	a.mu.Unlock()
	return f, func() {
		a.mu.Lock()
		delete(a.inFlight, t.Index)
		a.mu.Unlock()
	}
}

// slow returns the tasks in flight for longer than d, oldest first.
func (a *applier) slow(now time.Time, d time.Duration) []resourceapply.Pending {
	a.mu.Lock()
	var fs []*flight
	for _, f := range a.inFlight {
		if now.Sub(f.start) > d {
			fs = append(fs, f)
		}
	}
	a.mu.Unlock()
	sort.Slice(fs, func(i, j int) bool { return fs[i].start.Before(fs[j].start) })
	out := make([]resourceapply.Pending, len(fs))
	for i, f := range fs {
		id := manifest.ID{Kind: "step", Name: f.task.Describe()}
		if f.task.Manifest != nil {
			id = f.task.Manifest.ID()
		}
		out[i] = resourceapply.Pending{Object: id, Message: fmt.Sprintf("%s (%s)", f.why, now.Sub(f.start).Round(time.Second))}
	}
	return out
}

// reportSlow emits a Slow event every d while tasks take longer than d,
// until stop is closed.
func (a *applier) reportSlow(stop <-chan struct{}, d time.Duration) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			if slow := a.slow(now, d); len(slow) > 0 {
				a.out.emit(Slow{Pending: slow, After: d})
			}
		}
	}
}

// Apply applies one object (a Job is then waited on until complete, since
// it is a barrier), or runs one step.
func (a *applier) Apply(ctx context.Context, t *payload.Task) error {
	if a.work != nil {
		// Not ctx: an interrupt stops new tasks, not this one (see
		// graceOnInterrupt).
		ctx = a.work
	}
	if t.IsStep() {
		return a.runStep(ctx, t)
	}
	m := t.Manifest
	f, done := a.track(t, "applying")
	defer done()
	opts := a.opts
	opts.OnWait = func(_ manifest.ID, why string) {
		a.mu.Lock()
		f.why = why
		a.mu.Unlock()
	}
	crd, crdLater := a.crdAfter[t.Index]
	if crdLater {
		opts.TypeWait = 0
	}
	change, err := a.mgr.Apply(ctx, m.Obj, opts)
	if crdLater && err != nil {
		err = crdAfterError(err, t, crd, a.order)
	}
	if err == nil && a.update != nil {
		if m.IsDelete() {
			a.noteDeleted(ctx, t, change)
		} else {
			waitCtx := ctx
			if a.interrupt != nil {
				var cancel context.CancelFunc
				waitCtx, cancel = context.WithCancel(ctx)
				stop := context.AfterFunc(a.interrupt, cancel)
				defer stop()
				defer cancel()
			}
			if err = a.waitUpdated(waitCtx, t, f); err != nil {
				change.Action = resourceapply.Failed
			}
		}
	}
	if err == nil && payload.IsJob(m) && !a.opts.DryRun && change.Action != resourceapply.Deleted {
		what := "job " + m.ID().String()
		err = a.mgr.Wait(ctx, []*unstructured.Unstructured{m.Obj}, resourceapply.WaitOptions{
			Interval: time.Second,
			Progress: func(w resourceapply.WaitProgress) { a.out.emit(Waiting{What: what, Progress: w}) },
		})
		if err != nil {
			change.Action = resourceapply.Failed
		}
	}
	a.mu.Lock()
	a.changes[t.Index-1] = change
	a.reasons[t.Index-1] = resourceapply.ReasonOf(err)
	a.mu.Unlock()
	logger := klog.FromContext(ctx)
	if err != nil {
		logger.V(2).Info("Failed", "object", m.ID().String(), "file", m.Position(), "runLevel", levelOf(t), "reason", resourceapply.ReasonOf(err), "err", err)
	} else {
		logger.V(2).Info(string(change.Action), "object", m.ID().String(), "file", m.Position(), "runLevel", levelOf(t), "message", change.Message)
	}
	return err
}

// observe turns an event of payload.Run into the engine's events.
func (a *applier) observe(e payload.Event) {
	switch e.Type {
	case payload.EventStageStarted:
		a.out.emit(StageStarted{Total: e.Total})
	case payload.EventStageDone:
		a.out.emit(StageDone{Done: a.done(), Total: e.Total})
	case payload.EventTaskDone:
		change := a.observed(e)
		a.mu.Lock()
		a.finished = e.Done
		a.mu.Unlock()
		a.out.emit(TaskDone{Task: e.Task, Change: change, Err: e.Err, Staged: e.Staged, Done: e.Done, Total: e.Total})
	case payload.EventRunLevelDone:
		a.out.emit(RunLevelDone{RunLevel: e.RunLevel, Level: e.Level, Done: e.Done, Total: e.Total})
	}
}

// done returns the number of tasks finished so far.
func (a *applier) done() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.finished
}

// observed returns what the task of an event did. A task that ended with
// an error without being run (a step after an object that failed) is
// recorded as failed, so that the summary counts it.
func (a *applier) observed(e payload.Event) resourceapply.Change {
	if e.Task == nil {
		return resourceapply.Change{}
	}
	change := a.change(e.Task)
	if e.Type == payload.EventTaskDone && e.Err != nil && change.Action == "" {
		change = resourceapply.Change{Action: resourceapply.Failed}
		a.setChange(e.Task, change)
	}
	return change
}

func (a *applier) change(t *payload.Task) resourceapply.Change {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.changes[t.Index-1]
}

func (a *applier) setChange(t *payload.Task, c resourceapply.Change) {
	a.mu.Lock()
	a.changes[t.Index-1] = c
	a.mu.Unlock()
}

// levelOf names a task's run level for logs: "05", "unordered".
func levelOf(t *payload.Task) string {
	return LevelName(t.RunLevel())
}

// LevelName prints a run level as the graph names it: "05", or
// "unordered" for payload.NoRunLevel.
func LevelName(level int) string {
	if level == payload.NoRunLevel {
		return "unordered"
	}
	return fmt.Sprintf("%02d", level)
}
