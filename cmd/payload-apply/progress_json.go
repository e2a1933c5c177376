package main

import (
	"context"
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
// object a line, for pipelines (docs/cli.md, "apply -o json"); the
// failures grouped by reason and the interrupt report also go to stderr.
type jsonProgress struct {
	mu     sync.Mutex
	enc    *json.Encoder
	errOut io.Writer
	now    func() time.Time
	ctx    context.Context

	total int // tasks: objects and steps
	done  int
}

func newJSONProgress(ctx context.Context, s IOStreams) *jsonProgress {
	return &jsonProgress{enc: json.NewEncoder(s.Out), errOut: s.ErrOut, now: time.Now, ctx: ctx}
}

// eventSchemaVersion is the version of the -o json event schema, in every
// event as "schemaVersion": it changes when a field changes meaning or
// goes away (new fields and events do not change it), and
// docs/apply-events.schema.json describes it.
const eventSchemaVersion = 1

// jsonEvent is one line of the -o json stream. Field names are part of the
// CLI contract (docs/apply-events.schema.json; TestEventSchema keeps the
// two the same).
type jsonEvent struct {
	SchemaVersion int    `json:"schemaVersion"`
	Time          string `json:"time"`
	Event         string `json:"event"`

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
	// Elapsed is the time since the wait started; Deadline when it gives
	// up (RFC 3339).
	Elapsed  string `json:"elapsed,omitempty"`
	Deadline string `json:"deadline,omitempty"`

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
	// ErrorsByReason counts the errors by reason; Skipped counts the
	// objects skipped on purpose by why; Wait is how the wait ended.
	ErrorsByReason map[string]int `json:"errorsByReason,omitempty"`
	Skipped        map[string]int `json:"skipped,omitempty"`
	Wait           *jsonWait      `json:"wait,omitempty"`
	// Order and State are the graph's order and the CVO's state the run
	// stood for; Release the release applied (version, image) and
	// Completed whether the record says it is; RecordWrites counts the
	// writes of the record's status.
	Order        string       `json:"order,omitempty"`
	State        string       `json:"state,omitempty"`
	Release      *jsonRelease `json:"release,omitempty"`
	Completed    *bool        `json:"completed,omitempty"`
	RecordWrites *int         `json:"recordWrites,omitempty"`
	// Plan is an upgrade's plan (the "plan" event, before its tasks).
	Plan *jsonUpgradePlan `json:"plan,omitempty"`
}

// jsonWait is how the wait after the graph ended.
type jsonWait struct {
	// Skipped: not started, objects had failed; EndedAtFailure: ended at
	// an object's failure without waiting for the Pending others.
	Skipped        bool   `json:"skipped,omitempty"`
	EndedAtFailure bool   `json:"endedAtFailure,omitempty"`
	Ready          int    `json:"ready"`
	Total          int    `json:"total"`
	Pending        int    `json:"pending"`
	Elapsed        string `json:"elapsed"`
}

type jsonRelease struct {
	Version string `json:"version"`
	Image   string `json:"image"`
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
	Reason  string `json:"reason,omitempty"`
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
		out = append(out, jsonPending{Object: pe.Object.String(), Message: pe.Message, Reason: pe.Reason})
	}
	return out
}

// missingJSON is the "missing" event of a kind or namespace the plan needs
// that the server lacks: the objects that need it, each with its FILE#DOC.
func missingJSON(what, reason string, g clustersync.MissingGroup) jsonEvent {
	je := jsonEvent{Event: "missing", Message: what, Reason: reason, Total: len(g.Objects)}
	for _, m := range g.Objects {
		je.Pending = append(je.Pending, jsonPending{Object: m.ID().String(), Message: m.Position(), Reason: reason})
	}
	return je
}

// emit writes one event. A stdout whose reader went away takes no more
// (guardedWriter drops them, and the run stops as on an interrupt).
func (p *jsonProgress) emit(e jsonEvent) {
	e.SchemaVersion = eventSchemaVersion
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
		p.emit(jsonEvent{Event: "warning", Message: e.Text, Kind: e.Object.Kind, Namespace: e.Object.Namespace, Name: e.Object.Name})
	case clustersync.Missing:
		for _, g := range e.Kinds {
			p.emit(missingJSON("kind "+g.Name, string(resourceapply.ReasonResourceTypeMissing), g))
		}
		for _, g := range e.Namespaces {
			p.emit(missingJSON("namespace "+g.Name, string(resourceapply.ReasonNamespaceMissing), g))
		}
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
		je := jsonEvent{Event: "wait", Message: e.What, Ready: intp(e.Progress.Ready), Total: e.Progress.Total, Pending: pendingJSON(e.Progress.Pending)}
		if e.Elapsed > 0 {
			je.Elapsed = e.Elapsed.Round(time.Millisecond).String()
		}
		if !e.Deadline.IsZero() {
			je.Deadline = e.Deadline.UTC().Format(time.RFC3339)
		}
		p.emit(je)
	case clustersync.Slow:
		p.emit(jsonEvent{Event: "slow", Total: len(e.Pending), Pending: pendingJSON(e.Pending)})
	case clustersync.UpdateWaiting:
		m := e.Task.Manifest
		je := jsonEvent{Event: "waiting", File: m.File, Doc: intp(m.Doc), APIVersion: m.Obj.GetAPIVersion(), Kind: m.GVK.Kind,
			Namespace: m.Obj.GetNamespace(), Name: m.Obj.GetName(), Action: "Waiting", Message: e.Message}
		if e.Done {
			je.Action = "Ready"
			je.fail(e.Err)
		}
		p.emit(je)
	case clustersync.Interrupting:
		msg := interruptMessage(e, context.Cause(p.ctx))
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

func (p *jsonProgress) summary(r *clustersync.ApplyReport, elapsed time.Duration) {
	reads, writes := readsWrites(r.Requests)
	p.mu.Lock()
	defer p.mu.Unlock()
	paths := pathsOf(p.ctx)
	groups := groupFailures(r.Errors, paths)
	var errs []string
	byReason := map[string]int{}
	for _, g := range groups {
		errs = append(errs, g.lines...)
		byReason[g.reason] = len(g.lines)
	}
	skips := map[string]int{}
	for _, sk := range skipped(r.Objects) {
		skips[sk.why] = sk.n
	}
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
	if len(byReason) > 0 {
		e.ErrorsByReason = byReason
	}
	if len(skips) > 0 {
		e.Skipped = skips
	}
	if w := r.Wait; w != nil {
		e.Wait = &jsonWait{Skipped: w.Skipped, EndedAtFailure: w.EndedAtFailure, Ready: w.Last.Ready, Total: w.Last.Total,
			Pending: len(w.Last.Pending), Elapsed: w.Elapsed.Round(time.Millisecond).String()}
	}
	if c := r.Interrupted; c != nil {
		e.Interrupted, e.Stopped, e.NotStarted = true, intp(c.Stopped), intp(c.NotStarted)
	}
	e.Order, e.State = string(r.Order), r.State
	if r.Record != nil {
		e.Release = &jsonRelease{Version: r.Release.Version, Image: r.Release.Image}
		e.Completed, e.RecordWrites = &r.Completed, intp(r.RecordWrites)
	}
	p.emit(e)
	writeEnd(p.errOut, r, paths)
	printInterrupted(p.errOut, r)
}
