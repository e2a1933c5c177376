package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/payload-apply/payload-apply/clustersync"
	"github.com/payload-apply/payload-apply/lib/manifest"
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
	// waiting is the last state of the wait, for the bar.
	waiting *clustersync.Waiting

	// warned counts the objects each warning text came with, in order.
	warned     map[string]int
	warnedText []string

	ctx context.Context
}

func newTextProgress(ctx context.Context, s IOStreams) *textProgress {
	p := &textProgress{errOut: s.ErrOut, now: time.Now, warned: map[string]int{}, ctx: ctx}
	if f, ok := osFile(s.ErrOut); ok && term.IsTerminal(int(f.Fd())) {
		p.tty = true
	}
	return p
}

// line prints a line, clearing and redrawing the bar around it.
func (p *textProgress) line(format string, args ...any) {
	p.clearBar()
	fmt.Fprintf(p.errOut, "%s\n", printableLines(fmt.Sprintf(format, args...)))
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
	if w := p.waiting; w != nil && w.Progress.Total > 0 {
		filled := width * w.Progress.Ready / w.Progress.Total
		bar := strings.Repeat("#", filled) + strings.Repeat("-", width-filled)
		left := ""
		if !w.Deadline.IsZero() {
			left = fmt.Sprintf(", %s left", w.Deadline.Sub(now).Round(time.Second))
		}
		fmt.Fprintf(p.errOut, "\r\033[K[%s] waiting %s%s: %d/%d ready", bar, w.Elapsed.Round(time.Second), left, w.Progress.Ready, w.Progress.Total)
		p.barShown = true
		return
	}
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
		p.warn(e)
	case clustersync.Missing:
		p.line("%s", missingText(e))
	case clustersync.StageStarted:
		p.line("stage: %s first (CustomResourceDefinitions and Namespaces)", clustersync.Plural(e.Total, "object"))
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
		p.line("run level %s: %s%s; %d of %d done (%d%%)", clustersync.LevelName(e.RunLevel), clustersync.Plural(e.Level.Tasks-e.Level.Steps, "object"), extra, e.Done, e.Total, percent(e.Done, e.Total))
	case clustersync.StepRerun:
		change := resourceapply.Change{Action: e.Result.Action, Message: e.Result.Message(), DryRun: e.Result.DryRun}
		p.line("%s", stepLine(e.Name, change, e.Err, " (run again while waiting)"))
	case clustersync.Waiting:
		p.wait(e)
	case clustersync.UpdateWaiting:
		switch {
		case !e.Done:
			p.line("waiting on %s: %s", e.What, e.Message)
		case e.Err == nil:
			p.line("%s: ready", e.What)
		}
	case clustersync.Slow:
		p.line("%s", pendingText(fmt.Sprintf("applying: %s for more than %s", clustersync.Plural(len(e.Pending), "object"), e.After), e.Pending))
	case clustersync.Interrupting:
		p.line("%s", interruptMessage(e, context.Cause(p.ctx)))
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

// warn prints a server warning with the object it came with; the same
// text for more objects is counted, and said once at the end.
func (p *textProgress) warn(e clustersync.Warning) {
	n := p.warned[e.Text]
	p.warned[e.Text] = n + 1
	switch {
	case n > 0:
		return
	case e.Object.Kind == "":
		p.line("warning: %s", e.Text)
	default:
		p.warnedText = append(p.warnedText, e.Text)
		p.line("warning: %s: %s", e.Object, e.Text)
	}
}

// wait prints the state of a wait when it changed, or every 30 s: elapsed
// time, when it gives up, and what is pending grouped by reason.
func (p *textProgress) wait(e clustersync.Waiting) {
	w := e.Progress
	p.waiting = &e
	if len(w.Pending) == 0 {
		p.waiting = nil
		p.line("wait: %s: all %d ready after %s", e.What, w.Total, e.Elapsed.Round(time.Second))
		return
	}
	body := fmt.Sprintf("%d of %d ready; waiting for %d:%s", w.Ready, w.Total, len(w.Pending), pendingGroupsText(w.Pending))
	if body == p.lastWait && p.now().Sub(p.lastWaitTime) < 30*time.Second {
		p.drawBar(false)
		return
	}
	p.lastWait, p.lastWaitTime = body, p.now()
	p.line("%s: %s", waitHead(e, p.now()), body)
}

func (p *textProgress) summary(r *clustersync.ApplyReport, elapsed time.Duration) {
	reads, writes := readsWrites(r.Requests)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.waiting = nil
	p.clearBar()
	for _, text := range p.warnedText {
		if n := p.warned[text]; n > 1 {
			fmt.Fprintf(p.errOut, "warning: the same for %s: %s\n", clustersync.Plural(n-1, "more object"), text)
		}
	}
	writeEnd(p.errOut, r, pathsOf(p.ctx))
	// The record's line comes before the summary, which is last.
	printRecordLine(p.errOut, r)
	changes, steps := r.Objects, r.Steps
	ran, stepSummary := "", ""
	if p.steps > 0 {
		ran = fmt.Sprintf(" and ran %d of %s", len(steps.Entries)-steps.Count(resourceapply.Failed)-steps.Count(resourceapply.Skipped), clustersync.Plural(p.steps, "step"))
		stepSummary = "; steps: " + steps.Summary()
	}
	fmt.Fprintf(p.errOut, "applied %d of %s%s in %s: %s%s; %s (%s)\n",
		len(changes.Entries)-changes.Count(resourceapply.Failed), clustersync.Plural(p.total-p.steps, "object"), ran, elapsed.Round(10*time.Millisecond),
		changes.Summary(), stepSummary, clustersync.Plural(int(reads+writes), "request"), clustersync.Plural(int(writes), "write"))
	printInterrupted(p.errOut, r)
}

// missingText says what the plan needs that the server lacks, grouped,
// before anything is written: "missing before anything is written (the
// objects that need it fail): kind X: N objects", the first five of each
// named (every one is named again with its error).
func missingText(e clustersync.Missing) string {
	var b strings.Builder
	b.WriteString("missing before anything is written (the objects that need it fail, the others are applied):")
	group := func(what, why string, g clustersync.MissingGroup) {
		fmt.Fprintf(&b, "\n  %s %s: %s; %s", what, manifest.Printable(g.Name), why, clustersync.Plural(len(g.Objects), "object"))
		for i, m := range g.Objects {
			if i == 5 {
				fmt.Fprintf(&b, "\n    ... and %d more", len(g.Objects)-i)
				break
			}
			fmt.Fprintf(&b, "\n    %s %s", m.Position(), manifest.QuoteName(m.ID().String()))
		}
	}
	for _, g := range e.Kinds {
		group("kind", "the server has no API for it and no CustomResourceDefinition of the plan defines it", g)
	}
	for _, g := range e.Namespaces {
		group("namespace", "does not exist and no Namespace of the plan creates it", g)
	}
	return b.String()
}

// printableLines is manifest.Printable for each line of s: names and
// messages from the input cannot move the cursor or recolour the terminal.
func printableLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = manifest.Printable(l)
	}
	return strings.Join(lines, "\n")
}
