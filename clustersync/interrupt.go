package clustersync

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/payload"
)

// graceOnInterrupt waits for an interrupt (interrupted ending), says so,
// and calls cancelWork after grace, or at once when abort is closed. It
// returns when stop is closed.
func (a *applier) graceOnInterrupt(interrupted context.Context, stop <-chan struct{}, cancelWork func(), grace time.Duration, abort <-chan struct{}) {
	select {
	case <-stop:
		return
	case <-interrupted.Done():
	}
	a.mu.Lock()
	n, done := len(a.inFlight), a.finished
	a.mu.Unlock()
	a.out.emit(Interrupting{InFlight: n, Grace: grace, Done: done, Total: len(a.changes)})
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-stop:
	case <-t.C:
		cancelWork()
	case <-abort:
		cancelWork()
	}
}

// InterruptCounts is what an interrupted apply did.
type InterruptCounts struct {
	// Applied objects (created, configured, unchanged, deleted or
	// skipped), Failed ones (for a reason of their own), Stopped ones
	// (canceled in flight) and NotStarted ones, of Total.
	Applied, Failed, Stopped, NotStarted, Total int
	// Summary counts the applied objects by action ("3 created, 1
	// unchanged").
	Summary string
	// StepsRun of Steps finished (whatever their outcome).
	StepsRun, Steps int
}

// String says what was done and what was not: "120 of 604 objects
// applied (118 created, 2 unchanged); 1 failed; 3 stopped in flight; 480
// not started; 0 of 1 steps run".
func (c InterruptCounts) String() string {
	s := fmt.Sprintf("%d of %s applied", c.Applied, Plural(c.Total, "object"))
	if c.Applied > 0 {
		s += " (" + c.Summary + ")"
	}
	for _, n := range []struct {
		n    int
		what string
	}{{c.Failed, "failed"}, {c.Stopped, "stopped in flight"}, {c.NotStarted, "not started"}} {
		if n.n > 0 {
			s += fmt.Sprintf("; %d %s", n.n, n.what)
		}
	}
	if c.Steps > 0 {
		s += fmt.Sprintf("; %d of %s run", c.StepsRun, Plural(c.Steps, "step"))
	}
	return s
}

// Plural prints "1 step", "2 steps".
func Plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// interruptReport counts what an interrupted apply did, from each task's
// change (Action "": not started) and the reason it failed, if it did.
func interruptReport(tasks []*payload.Task, changes []resourceapply.Change, reasons []resourceapply.Reason) InterruptCounts {
	var c InterruptCounts
	done := &resourceapply.ChangeSet{}
	for i, ch := range changes {
		if tasks[i].IsStep() {
			c.Steps++
			if ch.Action != "" {
				c.StepsRun++
			}
			continue
		}
		c.Total++
		switch {
		case ch.Action == "":
			c.NotStarted++
		case ch.Action == resourceapply.Failed && reasons[i] == resourceapply.ReasonCanceled:
			c.Stopped++
		case ch.Action == resourceapply.Failed:
			c.Failed++
		default:
			c.Applied++
			done.Add(ch)
		}
	}
	c.Summary = done.Summary()
	return c
}

// withoutInterrupted drops the errors that only say the interrupt stopped
// something: canceled objects, nodes not run or stopped, and nodes skipped
// because a node they require was stopped (or skipped for that).
func withoutInterrupted(errs []error) []error {
	byInterrupt := func(e error) bool {
		var nr *payload.NotRunError
		return errors.As(e, &nr) || errors.Is(e, context.Canceled) || resourceapply.ReasonOf(e) == resourceapply.ReasonCanceled
	}
	stopped := map[*payload.TaskNode]bool{}
	for _, e := range errs {
		var ne *payload.NodeError
		if errors.As(e, &ne) && byInterrupt(ne.Err) {
			stopped[ne.Node] = true
		}
	}
	for changed := true; changed; {
		changed = false
		for _, e := range errs {
			var se *payload.SkippedError
			if errors.As(e, &se) && stopped[se.Because] && !stopped[se.Node] {
				stopped[se.Node], changed = true, true
			}
		}
	}
	var out []error
	for _, e := range errs {
		var se *payload.SkippedError
		if byInterrupt(e) || (errors.As(e, &se) && stopped[se.Node]) {
			continue
		}
		out = append(out, e)
	}
	return out
}
