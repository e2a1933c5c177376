package payload

import (
	"context"
	"fmt"
	"sort"
	"sync"
)

// Applier applies one task's object to a cluster, or runs its step (the
// CVO's ResourceBuilder). Run calls it from several goroutines at once, and
// at most once per task.
type Applier interface {
	Apply(ctx context.Context, task *Task) error
}

// ApplierFunc adapts a function to Applier.
type ApplierFunc func(ctx context.Context, task *Task) error

// Apply calls f.
func (f ApplierFunc) Apply(ctx context.Context, task *Task) error { return f(ctx, task) }

var _ Applier = ApplierFunc(nil)

// TaskError is the failure of one task.
type TaskError struct {
	Task *Task
	Err  error
}

// Error prints "FILE#DOC: error" (a step's File has no #DOC).
func (e *TaskError) Error() string { return e.Task.Position() + ": " + e.Err.Error() }

// Unwrap returns the Applier's error.
func (e *TaskError) Unwrap() error { return e.Err }

// AfterFailedError is why Run did not run a step: an object it runs after
// (Task.After) failed, so the step would not find what it needs.
type AfterFailedError struct {
	// Step is the step's task and Failed the object's.
	Step, Failed *Task
}

// Error prints "step NAME: not run: it runs after Kind/ns/name (FILE#DOC), which failed".
func (e *AfterFailedError) Error() string {
	return fmt.Sprintf("%s: not run: it runs after %s (%s), which failed", e.Step.Describe(), e.Failed.Describe(), e.Failed.Position())
}

// EventType names what an Event reports.
type EventType string

// The events of Run, in the order they come.
const (
	// EventStageStarted: the stage begins; Total is the number of staged
	// tasks.
	EventStageStarted EventType = "StageStarted"
	// EventStageDone: every staged task has been applied or has failed.
	EventStageDone EventType = "StageDone"
	// EventTaskDone: a task was applied (Err nil) or failed.
	EventTaskDone EventType = "TaskDone"
	// EventRunLevelDone: every task of RunLevel has been applied, has
	// failed, or was left behind by its node's failure or skip.
	EventRunLevelDone EventType = "RunLevelDone"
)

// Event reports progress of Run.
type Event struct {
	Type EventType
	// Task is the task of EventTaskDone; Staged says it was applied in the
	// stage.
	Task   *Task
	Staged bool
	// Err is the task's error (EventTaskDone).
	Err error
	// RunLevel is the run level of EventRunLevelDone (NoRunLevel for the
	// files whose names do not parse); Level counts its tasks.
	RunLevel int
	Level    LevelCount
	// Done counts the tasks of the graph finished so far (applied or
	// failed) and Total all tasks; for EventStageStarted and
	// EventStageDone, Total is the number of staged tasks.
	Done, Total int
}

// LevelCount counts the tasks of one run level.
type LevelCount struct {
	// Tasks in the run level; Applied without error; Failed with one;
	// the rest did not run (a node failed before them, or was skipped).
	Tasks, Applied, Failed int
	// Steps counts the tasks that are steps (they are counted in Tasks,
	// Applied and Failed too).
	Steps int
}

// RunOptions say how Run walks the graph.
type RunOptions struct {
	// Parallelism is the most nodes applied at once; values below 1 mean
	// 1.
	Parallelism int
	// Stage picks tasks to apply ahead of the graph, such as
	// StageCRDsAndNamespaces: from the start, in apply order, in a pool of
	// StageParallelism workers of their own, while the graph runs. A node
	// that reaches a staged task waits for it and takes its outcome (a
	// staged task that failed fails its node there); it is never applied
	// twice. Objects that need a staged object (a custom resource its
	// CustomResourceDefinition, an object its namespace) before the graph
	// gets there must be waited for by the Applier. Nil: no stage.
	Stage func(*Task) bool
	// StageParallelism is the most staged tasks applied at once; zero
	// means Parallelism.
	StageParallelism int
	// Isolated reports errors that concern their task alone (an object
	// whose type the cluster does not have, for example): the node
	// carries on with its next task and does not fail on their account,
	// and the error is still returned. Nil: every error stops its node.
	Isolated func(error) bool
	// Observe, when set, receives every Event. Calls are serialized.
	Observe func(Event)
}

// StageCRDsAndNamespaces picks the CustomResourceDefinitions and Namespaces
// of a graph (except those annotated for deletion), so that custom
// resources and namespaced objects at early run levels find their type and
// namespace even when the payload creates them at a later run level, as
// the CVO's parallel install does.
func StageCRDsAndNamespaces(t *Task) bool {
	m := t.Manifest
	if m == nil || m.IsDelete() {
		return false
	}
	gvk := m.GVK
	return (gvk.Group == "" && gvk.Kind == "Namespace") ||
		(gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition")
}

// Run applies the graph's tasks with a: the staged tasks (see
// RunOptions.Stage) in a pool of their own from the start, and the nodes
// through RunGraph, each node's tasks serially in order. A failed task
// stops its node (unless its error is Isolated), and a failed node stops
// only the nodes that require it. Run returns when every node and every
// staged task has finished.
//
// It returns the node states (indexed like g.Nodes) and every error: a
// *TaskError per isolated failure (in task order), then RunGraph's errors
// (a *NodeError wraps the *TaskError that stopped the node).
func Run(ctx context.Context, g *TaskGraph, a Applier, opts RunOptions) ([]NodeState, []error) {
	par := opts.Parallelism
	if par < 1 {
		par = 1
	}
	stagePar := opts.StageParallelism
	if stagePar < 1 {
		stagePar = par
	}
	r := &runner{g: g, a: a, opts: opts, staged: map[int]*stagedTask{}, levelLeft: map[int]int{}, levels: map[int]*LevelCount{},
		failed: make([]bool, len(g.Tasks)), accounted: make([]bool, len(g.Tasks))}
	for _, n := range g.Nodes {
		for _, t := range n.Tasks {
			level := t.RunLevel()
			r.levelLeft[level]++
			lc := r.levels[level]
			if lc == nil {
				lc = &LevelCount{}
				r.levels[level] = lc
			}
			lc.Tasks++
			if t.IsStep() {
				lc.Steps++
			}
		}
	}
	var stage sync.WaitGroup
	if opts.Stage != nil {
		r.startStage(ctx, stagePar, &stage)
	}
	states, errs := RunGraph(ctx, g, r.node, GraphRunOptions{Parallelism: par, Done: r.nodeDone})
	stage.Wait()
	r.mu.Lock()
	isolated := r.isolated
	r.mu.Unlock()
	sortTaskErrors(isolated)
	out := make([]error, 0, len(isolated)+len(errs))
	for _, e := range isolated {
		out = append(out, e)
	}
	return states, append(out, errs...)
}

// stagedTask is the outcome of a staged task; done is closed when it is
// known.
type stagedTask struct {
	task *Task
	done chan struct{}
	ran  bool
	err  error
}

type runner struct {
	g    *TaskGraph
	a    Applier
	opts RunOptions
	// staged are the staged tasks by Task.Index; the map is not changed
	// once the stage has started.
	staged map[int]*stagedTask

	mu       sync.Mutex
	isolated []*TaskError
	failed   []bool // by Task.Index-1
	done     int
	// accounted marks, by Task.Index-1, the tasks a node has passed (run,
	// taken from the stage, or left behind by a failure or skip):
	// levelLeft counts, per run level, the tasks not accounted yet.
	accounted []bool
	levelLeft map[int]int
	levels    map[int]*LevelCount
	// emitMu serializes Observe.
	emitMu sync.Mutex
}

func (r *runner) emit(e Event) {
	if r.opts.Observe == nil {
		return
	}
	r.emitMu.Lock()
	defer r.emitMu.Unlock()
	r.opts.Observe(e)
}

// finished records a task's outcome and reports it. The count and the
// event are taken under emitMu, so observers see Done increase by one from
// event to event.
func (r *runner) finished(t *Task, err error, staged bool) {
	r.emitMu.Lock()
	defer r.emitMu.Unlock()
	r.mu.Lock()
	r.done++
	lc := r.levels[t.RunLevel()]
	if err != nil {
		r.failed[t.Index-1] = true
		lc.Failed++
	} else {
		lc.Applied++
	}
	done := r.done
	r.mu.Unlock()
	if r.opts.Observe != nil {
		r.opts.Observe(Event{Type: EventTaskDone, Task: t, Staged: staged, Err: err, Done: done, Total: len(r.g.Tasks)})
	}
}

// startStage applies the staged tasks in apply order with at most par at
// once, in the background; wg is done when all have finished.
func (r *runner) startStage(ctx context.Context, par int, wg *sync.WaitGroup) {
	var tasks []*stagedTask
	for _, t := range r.g.Tasks {
		if r.opts.Stage(t) {
			st := &stagedTask{task: t, done: make(chan struct{})}
			tasks = append(tasks, st)
			r.staged[t.Index] = st
		}
	}
	r.emit(Event{Type: EventStageStarted, Total: len(tasks)})
	wg.Add(1)
	go func() {
		defer wg.Done()
		sem := make(chan struct{}, par)
		var workers sync.WaitGroup
		for _, st := range tasks {
			// A free slot must not win over a context that ended: select
			// picks at random among ready cases.
			if ctx.Err() == nil {
				select {
				case sem <- struct{}{}:
				case <-ctx.Done():
				}
			}
			if ctx.Err() != nil {
				// Never started: whoever waits for it sees the context's end.
				st.err = ctx.Err()
				close(st.done)
				continue
			}
			workers.Add(1)
			go func() {
				defer workers.Done()
				defer func() { <-sem }()
				st.err = r.a.Apply(ctx, st.task)
				st.ran = true
				r.finished(st.task, st.err, true)
				close(st.done)
			}()
		}
		workers.Wait()
		r.emit(Event{Type: EventStageDone, Total: len(tasks)})
	}()
}

// node applies one node's tasks in order.
func (r *runner) node(ctx context.Context, n *TaskNode) error {
	for _, t := range n.Tasks {
		var err error
		if st, staged := r.staged[t.Index]; staged {
			select {
			case <-st.done:
			case <-ctx.Done():
				return ctx.Err()
			}
			if !st.ran {
				return st.err
			}
			err = st.err
		} else {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err = r.afterFailed(t); err == nil {
				err = r.a.Apply(ctx, t)
			}
			r.finished(t, err, false)
		}
		r.account(t)
		if err == nil {
			continue
		}
		te := &TaskError{Task: t, Err: err}
		if r.opts.Isolated != nil && r.opts.Isolated(err) {
			r.mu.Lock()
			r.isolated = append(r.isolated, te)
			r.mu.Unlock()
			continue
		}
		return te
	}
	return nil
}

// afterFailed returns an *AfterFailedError when an object that step t runs
// after failed (an isolated failure lets its node go on to the step).
func (r *runner) afterFailed(t *Task) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range t.After {
		if r.failed[a.Index-1] {
			return &AfterFailedError{Step: t, Failed: a}
		}
	}
	return nil
}

// nodeDone accounts for the tasks of a node that finished (or was
// skipped) without reaching them.
func (r *runner) nodeDone(n *TaskNode, _ NodeState) {
	for _, t := range n.Tasks {
		r.account(t)
	}
}

// account marks a task as passed by its node and reports its run level
// when it was the level's last task: every node holding tasks of the level
// has reached or left them (a node may hold several consecutive levels).
func (r *runner) account(t *Task) {
	r.emitMu.Lock()
	defer r.emitMu.Unlock()
	level := t.RunLevel()
	r.mu.Lock()
	if r.accounted[t.Index-1] {
		r.mu.Unlock()
		return
	}
	r.accounted[t.Index-1] = true
	r.levelLeft[level]--
	left := r.levelLeft[level]
	lc := *r.levels[level]
	done := r.done
	r.mu.Unlock()
	if left == 0 && r.opts.Observe != nil {
		r.opts.Observe(Event{Type: EventRunLevelDone, RunLevel: level, Level: lc, Done: done, Total: len(r.g.Tasks)})
	}
}

func sortTaskErrors(errs []*TaskError) {
	sort.Slice(errs, func(i, j int) bool { return errs[i].Task.Index < errs[j].Task.Index })
}
