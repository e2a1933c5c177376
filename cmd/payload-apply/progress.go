package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
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

	total    int
	done     int
	level    string // run level being applied, for the bar
	barShown bool
	lastBar  time.Time

	// warned are the server warnings printed already.
	warned map[string]bool

	// lastWait is the last wait report printed, to print only changes.
	lastWait     string
	lastWaitTime time.Time
}

func newProgress(s IOStreams, jsonOut bool) *progress {
	p := &progress{errOut: s.ErrOut, now: time.Now, warned: map[string]bool{}}
	if jsonOut {
		p.json = json.NewEncoder(s.Out)
	}
	if f, ok := s.ErrOut.(*os.File); ok && !jsonOut && term.IsTerminal(int(f.Fd())) {
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
	Staged     bool   `json:"staged,omitempty"`
	Action     string `json:"action,omitempty"`
	Message    string `json:"message,omitempty"`
	Reason     string `json:"reason,omitempty"`
	Error      string `json:"error,omitempty"`

	// runLevel
	RunLevel *int `json:"runLevel,omitempty"`
	Tasks    int  `json:"tasks,omitempty"`
	Applied  *int `json:"applied,omitempty"`
	Failed   *int `json:"failed,omitempty"`

	// stage, task, runLevel
	Done  *int `json:"done,omitempty"`
	Total int  `json:"total,omitempty"`

	// wait
	Ready   *int          `json:"ready,omitempty"`
	Pending []jsonPending `json:"pending,omitempty"`

	// summary
	Success  *bool          `json:"success,omitempty"`
	Duration string         `json:"duration,omitempty"`
	Changes  map[string]int `json:"changes,omitempty"`
	Requests *jsonRequests  `json:"requests,omitempty"`
	Errors   []string       `json:"errors,omitempty"`
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

// setTotal sets the number of tasks, once the plan is known.
func (p *progress) setTotal(total int) {
	p.mu.Lock()
	p.total = total
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
		if l, _, ok := payload.ParseFileName(e.Task.Manifest.OriginalFilename); ok && !e.Staged {
			p.level = "run level " + levelName(l)
		}
		if p.json != nil {
			m := e.Task.Manifest
			je := jsonEvent{Event: "task", Index: e.Task.Index, File: m.File, Doc: intp(m.Doc), APIVersion: m.Obj.GetAPIVersion(),
				Kind: m.GVK.Kind, Namespace: m.Obj.GetNamespace(), Name: m.Obj.GetName(), Staged: e.Staged,
				Action: string(change.Action), Message: change.Message, Done: intp(e.Done), Total: e.Total}
			if l, _, ok := payload.ParseFileName(m.OriginalFilename); ok {
				je.RunLevel = intp(l)
			}
			if e.Err != nil {
				je.Action = string(resourceapply.Failed)
				je.Error = e.Err.Error()
				je.Reason = string(resourceapply.ReasonOf(e.Err))
			}
			p.emit(je)
			return
		}
		p.drawBar(false)
	case payload.EventRunLevelDone:
		if p.json != nil {
			p.emit(jsonEvent{Event: "runLevel", RunLevel: intp(e.RunLevel), Tasks: e.Level.Tasks, Applied: intp(e.Level.Applied),
				Failed: intp(e.Level.Failed), Done: intp(e.Done), Total: e.Total})
			return
		}
		extra := ""
		if e.Level.Failed > 0 {
			extra += fmt.Sprintf(", %d failed", e.Level.Failed)
		}
		if n := e.Level.Tasks - e.Level.Applied - e.Level.Failed; n > 0 {
			extra += fmt.Sprintf(", %d not run", n)
		}
		p.line("run level %s: %d objects%s; %d of %d done (%d%%)", levelName(e.RunLevel), e.Level.Tasks, extra, e.Done, e.Total, percent(e.Done, e.Total))
	}
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

// summary reports the end of the apply.
// byVerb holds the request counts by verb (lib/requests).
func (p *progress) summary(ok bool, elapsed time.Duration, changes *resourceapply.ChangeSet, byVerb map[string]int64, errs []string) {
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
	if p.json != nil {
		counts := map[string]int{}
		for _, c := range changes.Entries {
			counts[string(c.Action)]++
		}
		p.emit(jsonEvent{Event: "summary", Success: &ok, Duration: elapsed.Round(time.Millisecond).String(), Changes: counts,
			Done: intp(p.done), Total: p.total, Requests: &jsonRequests{Reads: reads, Writes: writes, ByVerb: byVerb}, Errors: errs})
		return
	}
	if p.tty && p.barShown {
		fmt.Fprint(p.errOut, "\r\033[K")
		p.barShown = false
	}
	fmt.Fprintf(p.errOut, "applied %d of %d objects in %s: %s; %d requests (%d writes)\n",
		len(changes.Entries)-changes.Count(resourceapply.Failed), p.total, elapsed.Round(10*time.Millisecond), changes.Summary(), reads+writes, writes)
}
