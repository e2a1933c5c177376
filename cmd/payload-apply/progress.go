package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"

	"github.com/payload-apply/payload-apply/clustersync"
	"github.com/payload-apply/payload-apply/lib/requests"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
)

// progress prints an apply's events and its summary: lines for people
// on stderr (textProgress), or JSON events on stdout (jsonProgress). Its
// methods are safe for concurrent use.
type progress interface {
	clustersync.Sink
	// summary reports the end of the apply: on stderr in either format
	// its failures grouped by reason, what was skipped and why, how the
	// wait ended (writeEnd); the text format then its summary line, last,
	// and the JSON format its summary event. An interrupted apply also
	// says, on stderr in either format, what it did and what is left.
	summary(r *clustersync.ApplyReport, elapsed time.Duration)
}

// newProgress returns the printer of apply's -o format. ctx is the run's:
// its path aliases map the files errors name back to the user's, and its
// cause says what interrupted it.
func newProgress(ctx context.Context, s IOStreams, jsonOut bool) progress {
	if jsonOut {
		return newJSONProgress(ctx, s)
	}
	return newTextProgress(ctx, s)
}

func percent(done, total int) int {
	if total == 0 {
		return 100
	}
	return 100 * done / total
}

// maxPendingShown bounds the objects a wait or slow line names.
const maxPendingShown = 5

// readsWrites splits request counts by verb into reads and writes.
func readsWrites(byVerb map[string]int64) (reads, writes int64) {
	for verb, n := range byVerb {
		if requests.IsWrite(verb) {
			writes += n
		} else {
			reads += n
		}
	}
	return reads, writes
}

// printInterrupted says on w what an interrupted apply did, if it was.
func printInterrupted(w io.Writer, r *clustersync.ApplyReport) {
	if c := r.Interrupted; c != nil {
		fmt.Fprintf(w, "interrupted: %s; run the same command again to finish\n", c)
	}
}

// interruptMessage is what an apply says when interrupted; cause is the
// run's context's.
func interruptMessage(e clustersync.Interrupting, cause error) string {
	what, grace := "interrupted", e.Grace
	var se *signalError
	switch {
	case cause == errStdoutClosed:
		what = "stdout closed by its reader: stopping as on an interrupt"
	case errors.As(cause, &se) && se.sig == syscall.SIGTERM:
		// secondSignal stops the objects in flight after termGrace.
		what, grace = "terminated (SIGTERM)", min(grace, termGrace)
	}
	return fmt.Sprintf("%s: starting nothing new; waiting up to %s for %s in flight (interrupt again to stop now)", what, grace, clustersync.Plural(e.InFlight, "object"))
}

// stepLine prints "step NAME: configured (1 write)", "step NAME: failed: ERR".
func stepLine(name string, change resourceapply.Change, err error, when string) string {
	if err != nil {
		return fmt.Sprintf("step %s%s: failed: %v", name, when, err)
	}
	return fmt.Sprintf("step %s%s: %s (%s)", name, when, strings.ToLower(string(change.Action)), change.Message)
}
