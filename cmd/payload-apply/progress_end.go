package main

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/payload-apply/payload-apply/clustersync"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/payload"
)

// The end of every apply, on stderr, in both formats: the failures
// grouped by reason (a heading with the count and what the reason means,
// then an "error: " line per failure, so that 'grep ^error:' finds them
// all), what was skipped on purpose and why, how the wait ended; the text
// format then prints the summary line, last.

// failureGroup is the failures of one reason.
type failureGroup struct {
	reason string // resourceapply.Reason, or notRun
	lines  []string
}

// notRun is the group of nodes not run because a node they require failed.
const notRun = "NotRun"

// reasonMeaning says what a failure reason means for the user.
var reasonMeaning = map[string]string{
	string(resourceapply.ReasonResourceTypeMissing): "the server has no API for the kind, and the payload no CustomResourceDefinition for it",
	string(resourceapply.ReasonNamespaceMissing):    "the namespace does not exist, and the payload does not create it",
	string(resourceapply.ReasonInvalid):             "the server rejected the object",
	string(resourceapply.ReasonForbidden):           "the credentials lack a permission ('payload-apply rbac' prints the role apply needs)",
	string(resourceapply.ReasonUnauthorized):        "the server refused the credentials",
	string(resourceapply.ReasonCertificate):         "the server's certificate could not be verified",
	string(resourceapply.ReasonConflict):            "a conflict persisted through the retries",
	string(resourceapply.ReasonUnavailable):         "the server could not be reached or kept failing until the retries gave up",
	string(resourceapply.ReasonTimeout):             "not ready, or no answer, before --timeout",
	string(resourceapply.ReasonNotReady):            "the object reports a failure no waiting fixes",
	string(resourceapply.ReasonCanceled):            "stopped by the interrupt",
	notRun:                                          "not applied: an object they require failed",
}

// groupFailures groups errs by reason, the largest group first; each line
// is one failure with its file mapped back (paths).
func groupFailures(errs []error, paths *pathAliases) []failureGroup {
	byReason := map[string]*failureGroup{}
	var order []string
	for _, e := range errs {
		reason := string(resourceapply.ReasonOf(e))
		var se *payload.SkippedError
		var nr *payload.NotRunError
		if errors.As(e, &se) || errors.As(e, &nr) {
			reason = notRun
		}
		g, ok := byReason[reason]
		if !ok {
			g = &failureGroup{reason: reason}
			byReason[reason] = g
			order = append(order, reason)
		}
		for _, l := range errorLines(e) {
			g.lines = append(g.lines, paths.real(l))
		}
	}
	out := make([]failureGroup, 0, len(order))
	for _, r := range order {
		out = append(out, *byReason[r])
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].lines) > len(out[j].lines) })
	return out
}

// reasonText names a reason in words ("resource type missing").
func reasonText(reason string) string {
	if reason == notRun {
		return "not run"
	}
	return resourceapply.Reason(reason).Text()
}

// writeFailures writes the failures grouped by reason.
func writeFailures(w io.Writer, groups []failureGroup) {
	if len(groups) == 0 {
		return
	}
	var counts []string
	total := 0
	for _, g := range groups {
		counts = append(counts, fmt.Sprintf("%d %s", len(g.lines), reasonText(g.reason)))
		total += len(g.lines)
	}
	fmt.Fprintf(w, "%s by reason: %s\n", clustersync.Plural(total, "failure"), strings.Join(counts, ", "))
	for _, g := range groups {
		head := fmt.Sprintf("%s (%d)", reasonText(g.reason), len(g.lines))
		if m := reasonMeaning[g.reason]; m != "" {
			head += ": " + m
		}
		fmt.Fprintln(w, head)
		for _, l := range g.lines {
			fmt.Fprintf(w, "error: %s\n", l)
		}
	}
}

// skipCount is how many objects were skipped for one reason.
type skipCount struct {
	why string
	n   int
}

// skipped counts the objects skipped on purpose, by why (the change's
// message, the object's own namespace put as "its namespace"), most
// first.
func skipped(cs *resourceapply.ChangeSet) []skipCount {
	counts := map[string]int{}
	var order []string
	for _, c := range cs.Entries {
		if c.Action != resourceapply.Skipped {
			continue
		}
		why := c.Message
		if ns := c.Object.Namespace; ns != "" {
			why = strings.ReplaceAll(why, "namespace "+ns, "its namespace")
		}
		if why == "" {
			why = "no reason given"
		}
		if counts[why] == 0 {
			order = append(order, why)
		}
		counts[why]++
	}
	out := make([]skipCount, len(order))
	for i, why := range order {
		out[i] = skipCount{why, counts[why]}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].n > out[j].n })
	return out
}

// writeSkipped explains the "skipped" count of the summary.
func writeSkipped(w io.Writer, cs *resourceapply.ChangeSet) {
	sk := skipped(cs)
	if len(sk) == 0 {
		return
	}
	total := 0
	var parts []string
	for _, s := range sk {
		total += s.n
		parts = append(parts, fmt.Sprintf("%d %s", s.n, s.why))
	}
	fmt.Fprintf(w, "skipped on purpose (%d): %s\n", total, strings.Join(parts, "; "))
}

// writeWaitEnd says how the wait ended, when there was one.
func writeWaitEnd(w io.Writer, wr *clustersync.WaitReport) {
	switch {
	case wr == nil:
	case wr.Skipped:
		fmt.Fprintf(w, "wait: not started: %s failed to apply, which no waiting fixes (--wait-on-failure waits anyway)\n", clustersync.Plural(wr.Failed, "object"))
	case wr.EndedAtFailure:
		fmt.Fprintf(w, "wait: ended after %s at a failure no waiting fixes: %d of %d ready, %d not waited for (--wait-on-failure waits for them)\n",
			wr.Elapsed.Round(time.Second), wr.Last.Ready, wr.Last.Total, len(wr.Last.Pending))
	case len(wr.Last.Pending) == 0:
		// The progress said so.
	default:
		fmt.Fprintf(w, "wait: gave up after %s: %d of %d ready\n", wr.Elapsed.Round(time.Second), wr.Last.Ready, wr.Last.Total)
	}
}

// writeEnd writes the end block (everything but the summary line).
func writeEnd(w io.Writer, r *clustersync.ApplyReport, paths *pathAliases) {
	writeFailures(w, groupFailures(r.Errors, paths))
	writeSkipped(w, r.Objects)
	writeWaitEnd(w, r.Wait)
}

// pendingReasonText names why objects are pending, for the wait display.
func pendingReasonText(reason string) string {
	switch reason {
	case resourceapply.OperatorNotFound:
		return "ClusterOperator not written by its operator yet"
	case resourceapply.OperatorNotAvailable:
		return "not Available"
	case resourceapply.OperatorDegraded:
		return "Degraded"
	case resourceapply.OperatorUpdating:
		return "versions not reported yet"
	case "NotFound":
		return "not found"
	case "Deleting":
		return "being deleted"
	case "NotEstablished":
		return "CustomResourceDefinition not Established"
	case "JobNotComplete":
		return "Job not complete"
	case "InProgress":
		return "in progress"
	case "ReadError":
		return "could not be read"
	case "":
		return "not ready"
	}
	return reason
}

// pendingGroup is the pending objects of one reason.
type pendingGroup struct {
	reason  string
	objects []resourceapply.Pending
}

// groupPending groups pending objects by reason, the largest group first.
func groupPending(ps []resourceapply.Pending) []pendingGroup {
	idx := map[string]int{}
	var out []pendingGroup
	for _, p := range ps {
		i, ok := idx[p.Reason]
		if !ok {
			i = len(out)
			idx[p.Reason] = i
			out = append(out, pendingGroup{reason: p.Reason})
		}
		out[i].objects = append(out[i].objects, p)
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].objects) > len(out[j].objects) })
	return out
}

// maxGroupNames bounds the objects a pending group names.
const maxGroupNames = 4

// pendingGroupsText prints pending objects by reason, a line per reason:
// one object with its message, or several by name.
func pendingGroupsText(ps []resourceapply.Pending) string {
	var b strings.Builder
	for i, g := range groupPending(ps) {
		if i == maxPendingShown {
			fmt.Fprintf(&b, "\n  ... and %d more reasons", len(groupPending(ps))-maxPendingShown)
			break
		}
		if len(g.objects) == 1 {
			fmt.Fprintf(&b, "\n  1 %s: %s", pendingReasonText(g.reason), g.objects[0])
			continue
		}
		var names []string
		for j, p := range g.objects {
			if j == maxGroupNames {
				names = append(names, fmt.Sprintf("and %d more", len(g.objects)-maxGroupNames))
				break
			}
			names = append(names, p.Object.String())
		}
		fmt.Fprintf(&b, "\n  %d %s: %s", len(g.objects), pendingReasonText(g.reason), strings.Join(names, ", "))
	}
	return b.String()
}

// waitHead is "wait: WHAT: 12s elapsed, gives up in 9m48s (at 14:05:03)".
func waitHead(e clustersync.Waiting, now time.Time) string {
	s := fmt.Sprintf("wait: %s: %s elapsed", e.What, e.Elapsed.Round(time.Second))
	if !e.Deadline.IsZero() {
		s += fmt.Sprintf(", gives up in %s (at %s)", e.Deadline.Sub(now).Round(time.Second), e.Deadline.Local().Format("15:04:05"))
	}
	return s
}
