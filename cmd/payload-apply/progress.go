package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/payload-apply/payload-apply/lib/requests"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/payload"
)

// progress reports an apply: lines on stderr for people (with a bar that
// redraws itself when stderr is a terminal), or a stream of JSON events on
// stdout for pipelines. Its methods are safe for concurrent use.
type progress struct {
	mu     sync.Mutex
	errOut io.Writer
	json   *json.Encoder // nil: text
	tty    bool
	now    func() time.Time

	total    int // tasks: objects and steps
	steps    int // steps among them
	done     int
	level    string // run level being applied, for the bar
	barShown bool
	lastBar  time.Time

	// warned are the server warnings printed already.
	warned map[string]bool

	// lastWait is the last wait report printed, to print only changes.
	lastWait     string
	lastWaitTime time.Time

	// interrupt is set when the apply was interrupted.
	interrupt *interruptCounts
}

func newProgress(s IOStreams, jsonOut bool) *progress {
	p := &progress{errOut: s.ErrOut, now: time.Now, warned: map[string]bool{}}
	if jsonOut {
		p.json = json.NewEncoder(s.Out)
	}
	if f, ok := osFile(s.ErrOut); ok && !jsonOut && term.IsTerminal(int(f.Fd())) {
		p.tty = true
	}
	return p
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

// setTotal sets the number of tasks and how many of them are steps, once
// the plan is known.
func (p *progress) setTotal(total, steps int) {
	p.mu.Lock()
	p.total, p.steps = total, steps
	p.mu.Unlock()
}

// HandleWarningHeader prints each distinct warning of the API server once
// (client-go's rest.WarningHandler).
func (p *progress) HandleWarningHeader(code int, agent string, text string) {
	if code != 299 || text == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.warned[text] {
		return
	}
	p.warned[text] = true
	if p.json != nil {
		p.emit(jsonEvent{Event: "warning", Message: text})
		return
	}
	p.line("warning: %s", text)
}

func (p *progress) emit(e jsonEvent) {
	e.Time = p.now().UTC().Format(time.RFC3339Nano)
	_ = p.json.Encode(e)
}

// line prints a line for people, clearing and redrawing the bar around it.
func (p *progress) line(format string, args ...any) {
	if p.tty && p.barShown {
		fmt.Fprint(p.errOut, "\r\033[K")
		p.barShown = false
	}
	fmt.Fprintf(p.errOut, format+"\n", args...)
	p.drawBar(true)
}

func (p *progress) drawBar(force bool) {
	if !p.tty || p.total == 0 {
		return
	}
	now := p.now()
	if !force && now.Sub(p.lastBar) < 100*time.Millisecond {
		return
	}
	p.lastBar = now
	const width = 30
	filled := width * p.done / p.total
	bar := strings.Repeat("#", filled) + strings.Repeat("-", width-filled)
	fmt.Fprintf(p.errOut, "\r\033[K[%s] %d/%d %d%% %s", bar, p.done, p.total, 100*p.done/p.total, p.level)
	p.barShown = true
}

func percent(done, total int) int {
	if total == 0 {
		return 100
	}
	return 100 * done / total
}

func levelName(level int) string {
	if level == payload.NoRunLevel {
		return "unordered"
	}
	return fmt.Sprintf("%02d", level)
}

// event reports an event of payload.Run; change is the task's outcome for
// EventTaskDone.
func (p *progress) event(e payload.Event, change resourceapply.Change) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e.Type {
	case payload.EventStageStarted:
		if p.json != nil {
			p.emit(jsonEvent{Event: "stage", Message: "started", Total: e.Total})
			return
		}
		p.line("stage: %d CustomResourceDefinitions and Namespaces first", e.Total)
	case payload.EventStageDone:
		if p.json != nil {
			p.emit(jsonEvent{Event: "stage", Message: "done", Total: e.Total, Done: intp(p.done)})
			return
		}
		p.line("stage: done, %d of %d done (%d%%)", p.done, p.total, percent(p.done, p.total))
	case payload.EventTaskDone:
		p.done = e.Done
		if l := e.Task.RunLevel(); l != payload.NoRunLevel && !e.Staged {
			p.level = "run level " + levelName(l)
		}
		if e.Task.IsStep() {
			p.stepDone(e, change)
			return
		}
		if p.json != nil {
			m := e.Task.Manifest
			je := jsonEvent{Event: "task", Index: e.Task.Index, File: m.File, Doc: intp(m.Doc), APIVersion: m.Obj.GetAPIVersion(),
				Kind: m.GVK.Kind, Namespace: m.Obj.GetNamespace(), Name: m.Obj.GetName(), Staged: e.Staged,
				Action: string(change.Action), Message: change.Message, Done: intp(e.Done), Total: e.Total}
			if l, _, ok := payload.ParseFileName(m.OriginalFilename); ok {
				je.RunLevel = intp(l)
			}
			je.fail(e.Err)
			p.emit(je)
			return
		}
		p.drawBar(false)
	case payload.EventRunLevelDone:
		if p.json != nil {
			p.emit(jsonEvent{Event: "runLevel", RunLevel: intp(e.RunLevel), Tasks: e.Level.Tasks, Steps: e.Level.Steps, Applied: intp(e.Level.Applied),
				Failed: intp(e.Level.Failed), Done: intp(e.Done), Total: e.Total})
			return
		}
		extra := ""
		if e.Level.Steps > 0 {
			extra += ", " + plural(e.Level.Steps, "step")
		}
		if e.Level.Failed > 0 {
			extra += fmt.Sprintf(", %d failed", e.Level.Failed)
		}
		if n := e.Level.Tasks - e.Level.Applied - e.Level.Failed; n > 0 {
			extra += fmt.Sprintf(", %d not run", n)
		}
		p.line("run level %s: %d objects%s; %d of %d done (%d%%)", levelName(e.RunLevel), e.Level.Tasks-e.Level.Steps, extra, e.Done, e.Total, percent(e.Done, e.Total))
	}
}

// stepDone reports a step of the graph: a "task" event naming the step,
// or a line for people (steps are few, and what they did is news).
func (p *progress) stepDone(e payload.Event, change resourceapply.Change) {
	t := e.Task
	if p.json != nil {
		je := jsonEvent{Event: "task", Index: t.Index, File: t.StepFile, Step: t.Step.Name(), Action: string(change.Action),
			Message: change.Message, Done: intp(e.Done), Total: e.Total}
		if l := t.RunLevel(); l != payload.NoRunLevel {
			je.RunLevel = intp(l)
		}
		je.fail(e.Err)
		p.emit(je)
		return
	}
	p.line("%s", stepLine(t.Step.Name(), change, e.Err, ""))
}

// stepLine prints "step NAME: configured (1 write)", "step NAME: failed: ERR".
func stepLine(name string, change resourceapply.Change, err error, when string) string {
	if err != nil {
		return fmt.Sprintf("step %s%s: failed: %v", name, when, err)
	}
	return fmt.Sprintf("step %s%s: %s (%s)", name, when, strings.ToLower(string(change.Action)), change.Message)
}

// rerun reports a step run again while waiting: only what changed (a
// write, or an error other than the last one said).
func (p *progress) rerun(name string, res resourceapply.StepResult, err error, lastErr error) {
	if err == nil && res.Writes == 0 {
		return
	}
	if err != nil && lastErr != nil && err.Error() == lastErr.Error() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	change := resourceapply.Change{Action: res.Action, Message: res.Message(), DryRun: res.DryRun}
	if p.json != nil {
		je := jsonEvent{Event: "step", Step: name, Action: string(change.Action), Message: "run again while waiting: " + change.Message}
		if err != nil {
			je.fail(err)
			je.Message = "run again while waiting"
		}
		p.emit(je)
		return
	}
	p.line("%s", stepLine(name, change, err, " (run again while waiting)"))
}

// plural prints "1 step", "2 steps".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// maxPendingShown bounds the objects a wait line names.
const maxPendingShown = 5

// wait reports the state of a wait; what says what is waited for.
func (p *progress) wait(what string, w resourceapply.WaitProgress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json != nil {
		je := jsonEvent{Event: "wait", Message: what, Ready: intp(w.Ready), Total: w.Total}
		for _, pe := range w.Pending {
			je.Pending = append(je.Pending, jsonPending{Object: pe.Object.String(), Message: pe.Message})
		}
		p.emit(je)
		return
	}
	if len(w.Pending) == 0 {
		p.line("wait: %s: all %d ready", what, w.Total)
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "wait: %s: %d of %d ready; waiting for", what, w.Ready, w.Total)
	for i, pe := range w.Pending {
		if i == maxPendingShown {
			fmt.Fprintf(&b, "\n  ... and %d more", len(w.Pending)-maxPendingShown)
			break
		}
		fmt.Fprintf(&b, "\n  %s", pe)
	}
	text := b.String()
	// Say it again when it changed, or every 30 s as a heartbeat.
	if text == p.lastWait && p.now().Sub(p.lastWaitTime) < 30*time.Second {
		return
	}
	p.lastWait, p.lastWaitTime = text, p.now()
	p.line("%s", text)
}

// slow reports the objects that have been in flight for a while, and what
// each waits for.
func (p *progress) slow(objs []resourceapply.Pending) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json != nil {
		je := jsonEvent{Event: "slow", Total: len(objs)}
		for _, pe := range objs {
			je.Pending = append(je.Pending, jsonPending{Object: pe.Object.String(), Message: pe.Message})
		}
		p.emit(je)
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "applying: %d objects for more than %s", len(objs), slowReport)
	for i, pe := range objs {
		if i == maxPendingShown {
			fmt.Fprintf(&b, "\n  ... and %d more", len(objs)-maxPendingShown)
			break
		}
		fmt.Fprintf(&b, "\n  %s", pe)
	}
	p.line("%s", b.String())
}

// interrupting says that the apply was interrupted and waits for the
// objects in flight.
func (p *progress) interrupting(inFlight int, grace time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	msg := fmt.Sprintf("interrupted: starting nothing new; waiting up to %s for %d objects in flight (interrupt again to stop now)", grace, inFlight)
	if p.json != nil {
		p.emit(jsonEvent{Event: "interrupt", Message: msg, Done: intp(p.done), Total: p.total})
	}
	p.line("%s", msg)
}

// setInterrupted records what an interrupted apply did, for summary.
func (p *progress) setInterrupted(c interruptCounts) {
	p.mu.Lock()
	p.interrupt = &c
	p.mu.Unlock()
}

// summary reports the end of the apply: changes are the objects' outcomes
// and steps the steps' (in the graph). An interrupted apply also says, on
// stderr in either format, what it did and what is left.
//
// byVerb holds the request counts by verb (lib/requests).
func (p *progress) summary(ok bool, elapsed time.Duration, changes, steps *resourceapply.ChangeSet, byVerb map[string]int64, errs []string) {
	var reads, writes int64
	for verb, n := range byVerb {
		if requests.IsWrite(verb) {
			writes += n
		} else {
			reads += n
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.barShown {
		fmt.Fprint(p.errOut, "\r\033[K")
		p.barShown = false
	}
	if p.json != nil {
		count := func(cs *resourceapply.ChangeSet) map[string]int {
			counts := map[string]int{}
			for _, c := range cs.Entries {
				counts[string(c.Action)]++
			}
			return counts
		}
		e := jsonEvent{Event: "summary", Success: &ok, Duration: elapsed.Round(time.Millisecond).String(), Changes: count(changes),
			StepChanges: count(steps), Done: intp(p.done), Total: p.total, Requests: &jsonRequests{Reads: reads, Writes: writes, ByVerb: byVerb}, Errors: errs}
		if p.interrupt != nil {
			e.Interrupted, e.Stopped, e.NotStarted = true, intp(p.interrupt.Stopped), intp(p.interrupt.NotStarted)
		}
		p.emit(e)
	} else {
		ran, stepSummary := "", ""
		if p.steps > 0 {
			ran = fmt.Sprintf(" and ran %d of %s", len(steps.Entries)-steps.Count(resourceapply.Failed)-steps.Count(resourceapply.Skipped), plural(p.steps, "step"))
			stepSummary = "; steps: " + steps.Summary()
		}
		fmt.Fprintf(p.errOut, "applied %d of %d objects%s in %s: %s%s; %d requests (%d writes)\n",
			len(changes.Entries)-changes.Count(resourceapply.Failed), p.total-p.steps, ran, elapsed.Round(10*time.Millisecond), changes.Summary(), stepSummary, reads+writes, writes)
	}
	if c := p.interrupt; c != nil {
		fmt.Fprintf(p.errOut, "interrupted: %s; run the same command again to finish\n", c)
	}
}
