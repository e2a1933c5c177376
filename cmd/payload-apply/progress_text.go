package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/payload-apply/payload-apply/clustersync"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/payload"
)

// textProgress prints an apply for people on stderr: a line per run level,
// steps, slow objects, waits, warnings, with a bar that redraws itself when
// stderr is a terminal.
type textProgress struct {
	mu     sync.Mutex
	errOut io.Writer
	tty    bool
	now    func() time.Time

	total    int // tasks: objects and steps
	steps    int // steps among them
	done     int
	level    string // run level being applied, for the bar
	barShown bool
	lastBar  time.Time

	// lastWait is the last wait report printed, to print only changes.
	lastWait     string
	lastWaitTime time.Time
}

func newTextProgress(s IOStreams) *textProgress {
	p := &textProgress{errOut: s.ErrOut, now: time.Now}
	if f, ok := osFile(s.ErrOut); ok && term.IsTerminal(int(f.Fd())) {
		p.tty = true
	}
	return p
}

// line prints a line, clearing and redrawing the bar around it.
func (p *textProgress) line(format string, args ...any) {
	p.clearBar()
	fmt.Fprintf(p.errOut, format+"\n", args...)
	p.drawBar(true)
}

func (p *textProgress) clearBar() {
	if p.tty && p.barShown {
		fmt.Fprint(p.errOut, "\r\033[K")
		p.barShown = false
	}
}

func (p *textProgress) drawBar(force bool) {
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

// Event prints an event of the engine.
func (p *textProgress) Event(e clustersync.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e := e.(type) {
	case clustersync.Planned:
		p.total, p.steps = e.Tasks, e.Steps
	case clustersync.Warning:
		p.line("warning: %s", e.Text)
	case clustersync.StageStarted:
		p.line("stage: %d CustomResourceDefinitions and Namespaces first", e.Total)
	case clustersync.StageDone:
		p.line("stage: done, %d of %d done (%d%%)", p.done, p.total, percent(p.done, p.total))
	case clustersync.TaskDone:
		p.done = e.Done
		if l := e.Task.RunLevel(); l != payload.NoRunLevel && !e.Staged {
			p.level = "run level " + clustersync.LevelName(l)
		}
		if e.Task.IsStep() {
			p.line("%s", stepLine(e.Task.Step.Name(), e.Change, e.Err, ""))
			return
		}
		p.drawBar(false)
	case clustersync.RunLevelDone:
		extra := ""
		if e.Level.Steps > 0 {
			extra += ", " + clustersync.Plural(e.Level.Steps, "step")
		}
		if e.Level.Failed > 0 {
			extra += fmt.Sprintf(", %d failed", e.Level.Failed)
		}
		if n := e.Level.Tasks - e.Level.Applied - e.Level.Failed; n > 0 {
			extra += fmt.Sprintf(", %d not run", n)
		}
		p.line("run level %s: %d objects%s; %d of %d done (%d%%)", clustersync.LevelName(e.RunLevel), e.Level.Tasks-e.Level.Steps, extra, e.Done, e.Total, percent(e.Done, e.Total))
	case clustersync.StepRerun:
		change := resourceapply.Change{Action: e.Result.Action, Message: e.Result.Message(), DryRun: e.Result.DryRun}
		p.line("%s", stepLine(e.Name, change, e.Err, " (run again while waiting)"))
	case clustersync.Waiting:
		p.wait(e)
	case clustersync.Slow:
		p.line("%s", pendingText(fmt.Sprintf("applying: %d objects for more than %s", len(e.Pending), e.After), e.Pending))
	case clustersync.Interrupting:
		p.line("%s", interruptMessage(e))
	}
}

// pendingText is head and then the first maxPendingShown objects, a line
// each.
func pendingText(head string, pending []resourceapply.Pending) string {
	var b strings.Builder
	b.WriteString(head)
	for i, pe := range pending {
		if i == maxPendingShown {
			fmt.Fprintf(&b, "\n  ... and %d more", len(pending)-maxPendingShown)
			break
		}
		fmt.Fprintf(&b, "\n  %s", pe)
	}
	return b.String()
}

// wait prints the state of a wait when it changed, or every 30 s.
func (p *textProgress) wait(e clustersync.Waiting) {
	w := e.Progress
	if len(w.Pending) == 0 {
		p.line("wait: %s: all %d ready", e.What, w.Total)
		return
	}
	text := pendingText(fmt.Sprintf("wait: %s: %d of %d ready; waiting for", e.What, w.Ready, w.Total), w.Pending)
	if text == p.lastWait && p.now().Sub(p.lastWaitTime) < 30*time.Second {
		return
	}
	p.lastWait, p.lastWaitTime = text, p.now()
	p.line("%s", text)
}

func (p *textProgress) summary(r *clustersync.ApplyReport, elapsed time.Duration, _ []string) {
	reads, writes := readsWrites(r.Requests)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearBar()
	changes, steps := r.Objects, r.Steps
	ran, stepSummary := "", ""
	if p.steps > 0 {
		ran = fmt.Sprintf(" and ran %d of %s", len(steps.Entries)-steps.Count(resourceapply.Failed)-steps.Count(resourceapply.Skipped), clustersync.Plural(p.steps, "step"))
		stepSummary = "; steps: " + steps.Summary()
	}
	fmt.Fprintf(p.errOut, "applied %d of %d objects%s in %s: %s%s; %d requests (%d writes)\n",
		len(changes.Entries)-changes.Count(resourceapply.Failed), p.total-p.steps, ran, elapsed.Round(10*time.Millisecond), changes.Summary(), stepSummary, reads+writes, writes)
	printInterrupted(p.errOut, r)
}
