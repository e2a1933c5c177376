package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/payload-apply/payload-apply/clustersync"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/payload"
)

// jsonProgress writes an apply as a stream of JSON events on stdout, one
// object a line, for pipelines; the interrupt report also goes to stderr.
type jsonProgress struct {
	mu     sync.Mutex
	enc    *json.Encoder
	errOut io.Writer
	now    func() time.Time

	total int // tasks: objects and steps
	done  int
}

func newJSONProgress(s IOStreams) *jsonProgress {
	return &jsonProgress{enc: json.NewEncoder(s.Out), errOut: s.ErrOut, now: time.Now}
}

// jsonEvent is one line of the -o json stream. Field names are part of the
// CLI contract.
type jsonEvent struct {
	Time  string `json:"time"`
	Event string `json:"event"`

	// task
	Index      int    `json:"index,omitempty"`
	File       string `json:"file,omitempty"`
	Doc        *int   `json:"doc,omitempty"`
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name,omitempty"`
	Step       string `json:"step,omitempty"`
	Staged     bool   `json:"staged,omitempty"`
	Action     string `json:"action,omitempty"`
	Message    string `json:"message,omitempty"`
	Reason     string `json:"reason,omitempty"`
	Error      string `json:"error,omitempty"`

	// runLevel
	RunLevel *int `json:"runLevel,omitempty"`
	Tasks    int  `json:"tasks,omitempty"`
	Steps    int  `json:"steps,omitempty"`
	Applied  *int `json:"applied,omitempty"`
	Failed   *int `json:"failed,omitempty"`

	// stage, task, runLevel
	Done  *int `json:"done,omitempty"`
	Total int  `json:"total,omitempty"`

	// wait
	Ready   *int          `json:"ready,omitempty"`
	Pending []jsonPending `json:"pending,omitempty"`

	// summary
	Success *bool `json:"success,omitempty"`
	// Interrupted: SIGINT or SIGTERM stopped the apply; Stopped objects
	// were canceled in flight, NotStarted never started.
	Interrupted bool           `json:"interrupted,omitempty"`
	Stopped     *int           `json:"stopped,omitempty"`
	NotStarted  *int           `json:"notStarted,omitempty"`
	Duration    string         `json:"duration,omitempty"`
	Changes     map[string]int `json:"changes,omitempty"`
	// StepChanges counts the steps' outcomes by action.
	StepChanges map[string]int `json:"stepChanges,omitempty"`
	Requests    *jsonRequests  `json:"requests,omitempty"`
	Errors      []string       `json:"errors,omitempty"`
}

// fail marks e as the event of a failure: the action Failed, err's
// message and its reason. It does nothing when err is nil.
func (e *jsonEvent) fail(err error) {
	if err == nil {
		return
	}
	e.Action = string(resourceapply.Failed)
	e.Error = err.Error()
	e.Reason = string(resourceapply.ReasonOf(err))
}

type jsonPending struct {
	Object  string `json:"object"`
	Message string `json:"message"`
}

type jsonRequests struct {
	Reads  int64            `json:"reads"`
	Writes int64            `json:"writes"`
	ByVerb map[string]int64 `json:"byVerb,omitempty"`
}

func intp(i int) *int { return &i }

func pendingJSON(ps []resourceapply.Pending) []jsonPending {
	var out []jsonPending
	for _, pe := range ps {
		out = append(out, jsonPending{Object: pe.Object.String(), Message: pe.Message})
	}
	return out
}

func (p *jsonProgress) emit(e jsonEvent) {
	e.Time = p.now().UTC().Format(time.RFC3339Nano)
	_ = p.enc.Encode(e)
}

// Event writes an event of the engine.
func (p *jsonProgress) Event(e clustersync.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e := e.(type) {
	case clustersync.Planned:
		p.total = e.Tasks
	case clustersync.Warning:
		p.emit(jsonEvent{Event: "warning", Message: e.Text})
	case clustersync.StageStarted:
		p.emit(jsonEvent{Event: "stage", Message: "started", Total: e.Total})
	case clustersync.StageDone:
		p.emit(jsonEvent{Event: "stage", Message: "done", Total: e.Total, Done: intp(p.done)})
	case clustersync.TaskDone:
		p.done = e.Done
		p.emit(taskEvent(e))
	case clustersync.RunLevelDone:
		p.emit(jsonEvent{Event: "runLevel", RunLevel: intp(e.RunLevel), Tasks: e.Level.Tasks, Steps: e.Level.Steps, Applied: intp(e.Level.Applied),
			Failed: intp(e.Level.Failed), Done: intp(e.Done), Total: e.Total})
	case clustersync.StepRerun:
		je := jsonEvent{Event: "step", Step: e.Name, Action: string(e.Result.Action), Message: "run again while waiting: " + e.Result.Message()}
		if e.Err != nil {
			je.fail(e.Err)
			je.Message = "run again while waiting"
		}
		p.emit(je)
	case clustersync.Waiting:
		p.emit(jsonEvent{Event: "wait", Message: e.What, Ready: intp(e.Progress.Ready), Total: e.Progress.Total, Pending: pendingJSON(e.Progress.Pending)})
	case clustersync.Slow:
		p.emit(jsonEvent{Event: "slow", Total: len(e.Pending), Pending: pendingJSON(e.Pending)})
	case clustersync.Interrupting:
		msg := interruptMessage(e)
		p.emit(jsonEvent{Event: "interrupt", Message: msg, Done: intp(p.done), Total: p.total})
		fmt.Fprintln(p.errOut, msg)
	}
}

// taskEvent is the "task" event of an object or a step.
func taskEvent(e clustersync.TaskDone) jsonEvent {
	t := e.Task
	var je jsonEvent
	if t.IsStep() {
		je = jsonEvent{Event: "task", Index: t.Index, File: t.StepFile, Step: t.Step.Name(), Action: string(e.Change.Action),
			Message: e.Change.Message, Done: intp(e.Done), Total: e.Total}
		if l := t.RunLevel(); l != payload.NoRunLevel {
			je.RunLevel = intp(l)
		}
	} else {
		m := t.Manifest
		je = jsonEvent{Event: "task", Index: t.Index, File: m.File, Doc: intp(m.Doc), APIVersion: m.Obj.GetAPIVersion(),
			Kind: m.GVK.Kind, Namespace: m.Obj.GetNamespace(), Name: m.Obj.GetName(), Staged: e.Staged,
			Action: string(e.Change.Action), Message: e.Change.Message, Done: intp(e.Done), Total: e.Total}
		if l, _, ok := payload.ParseFileName(m.OriginalFilename); ok {
			je.RunLevel = intp(l)
		}
	}
	je.fail(e.Err)
	return je
}

func (p *jsonProgress) summary(r *clustersync.ApplyReport, elapsed time.Duration, errs []string) {
	reads, writes := readsWrites(r.Requests)
	p.mu.Lock()
	defer p.mu.Unlock()
	count := func(cs *resourceapply.ChangeSet) map[string]int {
		counts := map[string]int{}
		for _, c := range cs.Entries {
			counts[string(c.Action)]++
		}
		return counts
	}
	ok := r.OK()
	e := jsonEvent{Event: "summary", Success: &ok, Duration: elapsed.Round(time.Millisecond).String(), Changes: count(r.Objects),
		StepChanges: count(r.Steps), Done: intp(p.done), Total: p.total, Requests: &jsonRequests{Reads: reads, Writes: writes, ByVerb: r.Requests}, Errors: errs}
	if c := r.Interrupted; c != nil {
		e.Interrupted, e.Stopped, e.NotStarted = true, intp(c.Stopped), intp(c.NotStarted)
	}
	p.emit(e)
	printInterrupted(p.errOut, r)
}
