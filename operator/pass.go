package operator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/klog/v2"

	"github.com/payload-apply/payload-apply/clustersync"
	"github.com/payload-apply/payload-apply/lib/requests"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
)

// PassReport is what one pass did.
type PassReport struct {
	// Mode is the pass's mode and Release the release it applied.
	Mode    Mode
	Release configv1.Release
	// Attempt counts the passes of this release that failed in a row
	// before this one (0: the last one succeeded, or this is the first).
	Attempt int
	// Start is when the pass began, Duration how long it took.
	Start    time.Time
	Duration time.Duration
	// Apply is the engine's report; nil when the pass failed before it
	// applied anything (planning, connecting).
	Apply *clustersync.ApplyReport
	// Requests counts the pass's requests to the managed cluster by verb
	// (lib/requests' names), Writes the POST, PUT, PATCH and DELETE among
	// them: zero for a steady cluster.
	Requests map[string]int64
	Writes   int64
	// Drift is what a reconcile pass had to change: the objects created,
	// configured or deleted (edited or deleted since the last pass) and
	// the steps that wrote. Install and update passes change things by
	// design and report none.
	Drift []resourceapply.Change
	// Err is why the pass failed; nil when everything was applied.
	Err error
}

// OK reports whether the pass applied everything.
func (r *PassReport) OK() bool { return r.Err == nil }

// Result names the outcome for metrics: success, failure or interrupted.
func (r *PassReport) Result() string {
	switch {
	case r.Apply != nil && r.Apply.Interrupted != nil:
		return "interrupted"
	case r.Err != nil:
		return "failure"
	}
	return "success"
}

// pass applies sess's plan in mode w.mode and reports what it did.
// shutdown and abort are as clustersync.ApplyOptions' ctx and Abort.
func (o *Operator) pass(ctx context.Context, sess *clustersync.Session, w work, attempt int, abort <-chan struct{}) *PassReport {
	r := &PassReport{Mode: w.mode, Release: w.desired, Attempt: attempt, Start: time.Now()}
	logger := klog.FromContext(ctx).WithValues("mode", w.mode, "version", w.desired.Version)
	ctx = klog.NewContext(ctx, logger)
	logger.V(1).Info("Pass started", "image", w.desired.Image, "attempt", attempt)

	opts := clustersync.ApplyOptions{
		Parallelism: o.opts.Parallelism,
		Order:       w.mode.order(),
		Timeout:     o.passTimeout(),
		Grace:       o.opts.Grace,
		Abort:       abort,
		Sink:        o.progress(w.desired.Version),
		// A pass does not wait for readiness: ClusterOperators report
		// their own state, which the status and the metrics read.
		Wait: false,
	}
	if w.mode == ModeReconcile {
		opts.Parallelism = o.opts.ReconcileParallelism
	}
	before := sess.Cluster.Requests.Counts()
	rep := clustersync.Apply(ctx, sess, opts)
	r.Apply = rep
	r.Requests = diffCounts(before, sess.Cluster.Requests.Counts())
	for verb, n := range r.Requests {
		if requests.IsWrite(verb) {
			r.Writes += n
		}
	}
	if w.mode == ModeReconcile {
		r.Drift = drift(rep)
	}
	switch {
	case rep.Interrupted != nil:
		r.Err = fmt.Errorf("interrupted: %s", rep.Interrupted)
	case len(rep.Errors) > 0:
		r.Err = errors.Join(rep.Errors...)
	}
	r.Duration = time.Since(r.Start)
	o.record(r)

	for _, c := range r.Drift {
		logger.Info("Drift repaired", "object", c.Object.String(), "action", c.Action)
	}
	kv := []any{"duration", r.Duration.Round(time.Millisecond), "objects", rep.Objects.Summary(), "writes", r.Writes, "requests", r.Requests}
	switch {
	case r.Err != nil:
		logger.Info("Pass failed", append(kv, "errors", len(rep.Errors), "err", firstLine(r.Err))...)
	case len(r.Drift) > 0:
		logger.Info("Pass repaired drift", append(kv, "drift", len(r.Drift))...)
	default:
		logger.Info("Pass done", kv...)
	}
	return r
}

// drift returns what a reconcile pass changed.
func drift(rep *clustersync.ApplyReport) []resourceapply.Change {
	var out []resourceapply.Change
	for _, cs := range []*resourceapply.ChangeSet{rep.Objects, rep.Steps} {
		for _, c := range cs.Entries {
			switch c.Action {
			case resourceapply.Created, resourceapply.Configured, resourceapply.Deleted:
				out = append(out, c)
			}
		}
	}
	return out
}

// diffCounts returns after minus before, verb by verb, without zeros.
func diffCounts(before, after map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for verb, n := range after {
		if d := n - before[verb]; d != 0 {
			out[verb] = d
		}
	}
	return out
}

// firstLine returns the first error of a joined error, and how many more
// there are, for a log line.
func firstLine(err error) string {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		if errs := j.Unwrap(); len(errs) > 1 {
			return fmt.Sprintf("%v (and %d more)", errs[0], len(errs)-1)
		}
	}
	return err.Error()
}

// progress returns the sink of a pass: it keeps the pass's progress for
// cluster_version_payload and forwards every event to Options.Sink.
func (o *Operator) progress(version string) clustersync.Sink {
	return clustersync.SinkFunc(func(e clustersync.Event) {
		switch e := e.(type) {
		case clustersync.Planned:
			o.metrics.payload.set(version, 0, e.Tasks)
		case clustersync.TaskDone:
			o.metrics.payload.set(version, e.Done, e.Total)
		}
		if o.opts.Sink != nil {
			o.opts.Sink.Event(e)
		}
	})
}

// payloadProgress is the progress of the pass in flight, or of the last
// one: how many of the payload's tasks are applied and pending.
type payloadProgress struct {
	mu          sync.Mutex
	version     string
	done, total int
}

func (p *payloadProgress) set(version string, done, total int) {
	p.mu.Lock()
	p.version, p.done, p.total = version, done, total
	p.mu.Unlock()
}

func (p *payloadProgress) get() (version string, done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.version, p.done, p.total
}
