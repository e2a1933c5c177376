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

// Rejected reports whether the pass was a requested update that was
// rejected (Err is a *RejectedError): nothing was applied.
func (r *PassReport) Rejected() bool {
	var re *RejectedError
	return r != nil && errors.As(r.Err, &re)
}

// Result names the outcome for metrics: success, failure, interrupted or
// rejected.
func (r *PassReport) Result() string {
	switch {
	case r.Apply != nil && r.Apply.Interrupted != nil:
		return "interrupted"
	case r.Rejected():
		return "rejected"
	case r.Err != nil:
		return "failure"
	}
	return "success"
}

// passInput is what an apply pass applies.
type passInput struct {
	release      configv1.Release
	verification *clustersync.Verification
	// attempt counts the failed passes before; seed the passes of this
	// leadership (the reconcile order's permutation).
	attempt, seed int
	// keepAccepted: a request for another release stands rejected, and
	// the record's ReleaseAccepted says so.
	keepAccepted bool
	abort        <-chan struct{}
}

// applyOptions are the engine's options of a pass. A pass does not wait
// for readiness: ClusterOperators report their own state, which the
// status and the metrics read (an update has the update's own waits).
func (o *Operator) applyOptions(abort <-chan struct{}) clustersync.ApplyOptions {
	opts := clustersync.DefaultApplyOptions()
	opts.Parallelism, opts.Timeout, opts.Grace, opts.Abort = o.opts.Parallelism, o.passTimeout(), o.opts.Grace, abort
	return opts
}

// applyPass applies sess's plan, the release the cluster runs, with
// clustersync.Apply, which keeps the record and chooses the CVO's order
// from it: the install order while the cluster has no release completed,
// the reconcile order (with the CVO's two workers) once it has.
func (o *Operator) applyPass(ctx context.Context, sess *clustersync.Session, cv *configv1.ClusterVersion, in passInput) *PassReport {
	opts := o.applyOptions(in.abort)
	opts.Release = clustersync.Release{Image: in.release.Image, Verification: in.verification}
	opts.Attempt, opts.KeepReleaseAccepted = in.seed, in.keepAccepted
	mode := ModeInstall
	if reconciling(cv, in.release.Image) {
		opts.Parallelism, mode = o.opts.ReconcileParallelism, ModeReconcile
	}
	return o.measure(ctx, sess.Cluster, in.release, mode, in.attempt, func(ctx context.Context, opts clustersync.ApplyOptions) *clustersync.ApplyReport {
		return clustersync.Apply(ctx, sess, opts)
	}, opts)
}

// measure runs a pass (run with opts) and reports what it did: the mode
// the engine ran in (mode when it did not start), its requests and
// writes, the drift a reconcile pass repaired, a rejected request.
func (o *Operator) measure(ctx context.Context, c *clustersync.Cluster, rel configv1.Release, mode Mode, attempt int,
	run func(context.Context, clustersync.ApplyOptions) *clustersync.ApplyReport, opts clustersync.ApplyOptions) *PassReport {
	r := &PassReport{Mode: mode, Release: rel, Attempt: attempt, Start: time.Now()}
	logger := klog.FromContext(ctx).WithValues("version", rel.Version)
	ctx = klog.NewContext(ctx, logger)
	logger.V(1).Info("Pass started", "image", rel.Image, "attempt", attempt)
	opts.Sink = o.progress(rel.Version)

	before := c.Requests.Counts()
	rep := run(ctx, opts)
	r.Apply = rep
	if rep.State != "" {
		r.Mode = modeOf(rep.State)
	}
	if rep.Release.Version != "" {
		r.Release.Version = rep.Release.Version
	}
	r.Requests = diffCounts(before, c.Requests.Counts())
	for verb, n := range r.Requests {
		if requests.IsWrite(verb) {
			r.Writes += n
		}
	}
	if r.Mode == ModeReconcile {
		r.Drift = drift(rep)
	}
	switch {
	case rep.Interrupted != nil:
		r.Err = fmt.Errorf("interrupted: %s", rep.Interrupted)
	case rejection(rep.Errors) != nil:
		r.Err = rejection(rep.Errors)
	case len(rep.Errors) > 0:
		r.Err = errors.Join(rep.Errors...)
	}
	r.Duration = time.Since(r.Start)
	o.record(r)

	logger = logger.WithValues("mode", r.Mode)
	for _, c := range r.Drift {
		logger.Info("Drift repaired", "object", c.Object.String(), "action", c.Action)
	}
	kv := []any{"duration", r.Duration.Round(time.Millisecond), "objects", rep.Objects.Summary(), "writes", r.Writes, "recordWrites", rep.RecordWrites, "requests", r.Requests}
	switch {
	case r.Rejected():
		logger.Info("Update rejected", append(kv, "err", r.Err)...)
	case r.Err != nil:
		logger.Info("Pass failed", append(kv, "errors", len(rep.Errors), "err", firstLine(r.Err))...)
	case len(r.Drift) > 0:
		logger.Info("Pass repaired drift", append(kv, "drift", len(r.Drift))...)
	case r.Mode == ModeUpdate:
		logger.Info("Update done", append(kv, "completed", rep.Completed)...)
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
