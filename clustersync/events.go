package clustersync

import (
	"sync"
	"time"

	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/payload"
)

// Event is one piece of progress: one of the types below. Sinks switch on
// the type and ignore the ones they do not know.
type Event interface{ event() }

// Sink receives a run's events. The engine calls Event from one goroutine
// at a time (calls are serialized), in the order things happen; a slow
// sink slows the run down.
type Sink interface {
	Event(Event)
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(Event)

// Event calls f.
func (f SinkFunc) Event(e Event) { f(e) }

// Discard is a Sink that drops every event.
var Discard Sink = SinkFunc(func(Event) {})

// Planned says how many tasks an apply has, once the plan is known.
type Planned struct {
	// Tasks counts objects and steps; Steps the steps among them.
	Tasks, Steps int
}

// Missing comes before anything is written: what the plan needs that the
// server lacks and no object of the plan creates (resourceapply.Absent),
// each kind nothing serves and each namespace nothing creates, with the
// plan's objects that need it. Those objects fail when the run reaches
// them, each named; the others are applied.
type Missing struct {
	Kinds, Namespaces []MissingGroup
}

// MissingGroup is a kind ("ServiceMonitor.monitoring.coreos.com (v1)") or
// namespace missing and the objects that need it, in apply order.
type MissingGroup struct {
	Name    string
	Objects []*manifest.Manifest
}

func missingOf(objs []*manifest.Manifest, a resourceapply.Absent) Missing {
	groups := func(gs []resourceapply.AbsentGroup) []MissingGroup {
		var out []MissingGroup
		for _, g := range gs {
			mg := MissingGroup{Name: g.Name}
			for _, i := range g.Objects {
				mg.Objects = append(mg.Objects, objs[i])
			}
			out = append(out, mg)
		}
		return out
	}
	return Missing{Kinds: groups(a.Kinds), Namespaces: groups(a.Namespaces)}
}

// StageStarted: the CustomResourceDefinitions and Namespaces are applied
// ahead of the graph; Total counts them.
type StageStarted struct{ Total int }

// StageDone: every staged task has been applied or has failed. Total
// counts the staged tasks, Done the tasks of the whole graph finished so
// far.
type StageDone struct{ Done, Total int }

// TaskDone: an object was applied (Err nil) or failed, or a step ran.
type TaskDone struct {
	Task *payload.Task
	// Change is what the task did (Action Failed when it failed).
	Change resourceapply.Change
	// Err is the task's error, nil on success.
	Err error
	// Staged says the object was applied in the stage.
	Staged bool
	// Done counts the tasks finished so far, of Total.
	Done, Total int
}

// RunLevelDone: every node of a run level has finished.
type RunLevelDone struct {
	// RunLevel is payload.NoRunLevel for the files whose names do not parse.
	RunLevel int
	Level    payload.LevelCount
	// Done counts the tasks finished so far, of Total.
	Done, Total int
}

// Slow names the tasks in flight for longer than After, oldest first, and
// what each waits for. It comes every After while there are any.
type Slow struct {
	Pending []resourceapply.Pending
	After   time.Duration
}

// Waiting is the state of a wait after a poll: What is waited for ("job
// Kind/ns/name", "applied objects"), for how long, and until when.
type Waiting struct {
	What     string
	Progress resourceapply.WaitProgress
	// Elapsed is the time since the wait started; Deadline is when it
	// gives up (zero: no deadline but an interrupt).
	Elapsed  time.Duration
	Deadline time.Time
}

// UpdateWaiting: in an update, a task waits for the object it applied to
// reach the release's state, as the CVO's update does: a ClusterOperator
// its versions (Available, not Degraded), a Deployment or DaemonSet its
// rollout. It comes when the wait starts or what it lacks changes
// (Message), and when it ends (Done; Err nil when the object is ready).
// What names the object as the record's Progressing message does: the
// ClusterOperator's name, "deployment ns/name".
type UpdateWaiting struct {
	Task    *payload.Task
	What    string
	Message string
	Done    bool
	Err     error
}

// StepRerun: a step that owns a status (component.Repeating) ran again
// while the apply waited, and wrote or failed differently from the last
// time (unchanged runs are not reported).
type StepRerun struct {
	Name   string
	Result resourceapply.StepResult
	Err    error
}

// Interrupting: the apply's context ended; nothing new starts, and the
// InFlight tasks get Grace to finish. Done counts the tasks finished so
// far, of Total.
type Interrupting struct {
	InFlight    int
	Grace       time.Duration
	Done, Total int
}

// Warning is a warning of the API server (a deprecated API, a field it
// dropped), each distinct text once per connection and object.
type Warning struct {
	Text string
	// Object is the object of the request the warning came with; zero
	// (Kind "") for a request about no one object.
	Object manifest.ID
}

func (Missing) event()       {}
func (Planned) event()       {}
func (StageStarted) event()  {}
func (StageDone) event()     {}
func (TaskDone) event()      {}
func (RunLevelDone) event()  {}
func (Slow) event()          {}
func (Waiting) event()       {}
func (StepRerun) event()     {}
func (UpdateWaiting) event() {}
func (Interrupting) event()  {}
func (Warning) event()       {}

// serial delivers events to a Sink one at a time.
type serial struct {
	mu   sync.Mutex
	sink Sink
}

func newSerial(s Sink) *serial {
	if s == nil {
		s = Discard
	}
	return &serial{sink: s}
}

func (s *serial) emit(e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sink.Event(e)
}
