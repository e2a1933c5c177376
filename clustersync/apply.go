package clustersync

import (
	"context"
	"fmt"
	"sync"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/klog/v2"

	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/plan"
)

// ApplyOptions say how Apply applies a plan.
type ApplyOptions struct {
	// Parallelism is the most task graph nodes applied at once, and the
	// most staged objects applied at once; below 1 means 1.
	Parallelism int
	// Order is how the graph's nodes are ordered. Empty: as the CVO by
	// the state the record gives (see Apply); Upgrade always uses
	// payload.OrderUpdate.
	Order payload.Order
	// Attempt seeds payload.OrderReconcile's permutation (the CVO counts
	// its attempts at one payload); a controller increments it.
	Attempt int
	// DryRun sends every write as a server-side dry run: nothing changes,
	// the record included.
	DryRun bool
	// Wait waits, after the graph, until the applied objects are ready
	// (ClusterOperators available with their versions); not in a dry run.
	// The wait ends as soon as the outcome is certain: it does not start
	// when objects failed to apply, and ends at the first object that
	// reports a failure it will not leave (a Job failed), unless
	// WaitOnFailure.
	Wait bool
	// WaitOnFailure waits for every object until ready or Timeout even
	// after failures no waiting can fix (to see what else becomes ready).
	WaitOnFailure bool
	// Timeout bounds the apply and the wait together; zero: no bound but
	// the context's.
	Timeout time.Duration
	// Grace is how long the tasks in flight when ctx ends may take to
	// finish before their requests are canceled; zero: DefaultGrace.
	Grace time.Duration
	// Abort, when it is closed after ctx ended, cancels the tasks in
	// flight at once (a second interrupt, or the end of SIGTERM's
	// shorter grace), and the record's last write then gets 0.3 s.
	// Nil: only Grace ends them.
	Abort <-chan struct{}
	// SlowAfter is how long a task may take before a Slow event names it,
	// and how often Slow comes; zero: DefaultSlowAfter.
	SlowAfter time.Duration
	// Sink receives the progress; nil: Discard.
	Sink Sink
	// Release names the payload in the record and says how it was
	// verified. Without an image the record keeps no history (as the
	// CVO's), so every Apply is an install.
	Release Release
	// NoRecord leaves the cluster's record alone: no ClusterVersion is
	// made or written (for measuring the apply alone).
	NoRecord bool
	// RecordInterval is how often the record's status is brought up to
	// date while the run goes on (only when it changed); zero:
	// DefaultRecordInterval.
	RecordInterval time.Duration
	// KeepReleaseAccepted leaves the record's ReleaseAccepted condition
	// as it stands: a controller applies the release the cluster runs
	// while a request for another one stands rejected (RejectRelease, or
	// an Upgrade's preconditions), as the CVO goes on reconciling and
	// reporting the rejection.
	KeepReleaseAccepted bool
	// SkipChecks turns off the checks made before anything is sent
	// (plan.Plan.Check: what the API server would refuse, for the types
	// known offline). With them, an apply whose plan has such an error
	// writes nothing and reports every error.
	SkipChecks bool
	// RetryTimeout is how long the transient failures of one request
	// (connection refused, 5xx, 429, timeouts) are retried before the
	// object fails as ServerUnavailable or Timeout; zero: the Cluster's
	// (ConnectOptions.RetryTimeout), by default two minutes.
	RetryTimeout time.Duration
}

// Defaults of ApplyOptions.
const (
	// DefaultParallelism is the most nodes applied at once by default.
	DefaultParallelism = 32
	// DefaultGrace is how long tasks in flight may finish after an
	// interrupt.
	DefaultGrace = 10 * time.Second
	// DefaultSlowAfter is how long a task may take before it is named.
	DefaultSlowAfter = 5 * time.Second
	// DefaultRecordInterval is how often the record's status follows the
	// progress.
	DefaultRecordInterval = 5 * time.Second
)

// DefaultApplyOptions returns the options of `payload-apply apply`.
func DefaultApplyOptions() ApplyOptions {
	return ApplyOptions{Parallelism: DefaultParallelism, Grace: DefaultGrace, SlowAfter: DefaultSlowAfter, RecordInterval: DefaultRecordInterval}
}

// ApplyReport is what an Apply (or an Upgrade) did.
type ApplyReport struct {
	// Objects are the objects' outcomes and Steps the steps', in apply
	// order (tasks that never started are not in them).
	Objects, Steps *resourceapply.ChangeSet
	// Tasks counts every task of the plan and StepTasks the steps among
	// them.
	Tasks, StepTasks int
	// Done counts the tasks that finished (applied or failed).
	Done int
	// Errors are every failure, one per object or node, then the wait's.
	// When the apply was interrupted, the errors that only say the
	// interrupt stopped something are left out (Interrupted counts them).
	Errors []error
	// Interrupted is set when ctx ended before the apply did: what was
	// applied, failed, stopped in flight and not started.
	Interrupted *InterruptCounts
	// Requests counts the cluster's requests by verb (lib/requests) at the
	// end of the apply, since the Cluster was made.
	Requests map[string]int64
	// Duration is how long the apply (and wait) took.
	Duration time.Duration
	// Nodes are the graph nodes' end states.
	Nodes []payload.NodeState
	// Order is the order the graph ran in, and State the CVO's state it
	// stands for: "Initializing" (an install), "Updating" or
	// "Reconciling".
	Order payload.Order
	State string
	// Release is the release applied, as the record names it.
	Release configv1.Release
	// Record is the cluster's record as the run left it (nil when it was
	// not written: a dry run, NoRecord), and RecordWrites counts its
	// writes (its status, PUT to the status subresource; an update's
	// spec.desiredUpdate, a PATCH), counted in Requests too.
	Record       *configv1.ClusterVersion
	RecordWrites int
	// Completed says the record's history entry of Release is Completed.
	Completed bool
	// Wait is how the wait ended; nil when there was none to do (no Wait,
	// a dry run, an interrupt or the timeout before it).
	Wait *WaitReport
}

// WaitReport is how the wait after the graph ended.
type WaitReport struct {
	// Skipped is set when the wait did not start: objects had failed to
	// apply, which no waiting fixes (and WaitOnFailure was off); Failed
	// counts them.
	Skipped bool
	Failed  int
	// EndedAtFailure: an object reported a failure it will not leave, and
	// the wait ended there without waiting for Last.Pending.
	EndedAtFailure bool
	// Last is the last poll: how many were ready, what was pending and why.
	Last resourceapply.WaitProgress
	// Elapsed is how long the wait took.
	Elapsed time.Duration
}

// OK reports whether everything was applied (and ready, when waited
// for), without an interrupt.
func (r *ApplyReport) OK() bool { return len(r.Errors) == 0 && r.Interrupted == nil }

// The CVO's states, as ApplyReport.State names them.
const (
	StateInitializing = "Initializing"
	StateUpdating     = "Updating"
	StateReconciling  = "Reconciling"
)

// Apply applies the session's plan to its cluster (see ApplyOptions) and
// keeps the cluster's record (Session.Record, ClusterVersion "version") as
// the CVO does: the record says which release the cluster runs, so Apply
// installs a release (the cluster has none: the CVO's install order, the
// CustomResourceDefinitions and Namespaces staged ahead of the graph),
// finishes an install or an update of the same release that stopped
// (history Partial: the install order, or the update order, with the
// update's waits when an Upgrade started it) or applies again the release the cluster runs (the CVO's reconcile
// order). A plan of another release version is refused with a
// *ReleaseMismatchError: that is an Upgrade. ApplyOptions.Order overrides
// the order. With Wait, the applied objects are waited on at the end.
//
// The record is made when missing (its CustomResourceDefinition from the
// payload), its status written as the apply starts, every
// ApplyOptions.RecordInterval while it changes, and at the end: history
// entry Completed when everything was applied.
//
// ctx is the interrupt: when it ends, nothing new starts and the tasks in
// flight get opts.Grace; the report says what is left. Apply never
// returns an error of its own: every failure is in the report.
func Apply(ctx context.Context, s *Session, opts ApplyOptions) *ApplyReport {
	if !opts.SkipChecks {
		// What is wrong with the payload comes first, whatever the
		// cluster runs: it is wrong on every cluster.
		if r := preflight(ctx, s.Plan, time.Now()); r != nil {
			r.Requests, r.Record = s.Cluster.Requests.Counts(), s.Record
			return r
		}
		opts.SkipChecks = true
	}
	m, err := applyMode(s.Record, s.Plan, opts.Release)
	if err != nil {
		return refused(s, err)
	}
	if opts.Order != "" {
		m.order = opts.Order
	}
	st := runSettings{mode: m, record: s.Record, capsSpec: s.CapabilitiesSpec}
	// The update's waits are an upgrade's: Apply has them when it
	// continues the update an Upgrade started (spec.desiredUpdate names
	// the release), not when it applies another image of the version the
	// cluster runs, which, as an install, waits for no operator.
	if d := desiredUpdate(s.Record); m.state == StateUpdating && d != nil && d.Image != "" && d.Image == opts.Release.Image {
		st.updateWaits = true
	}
	return run(ctx, s.Cluster, s.Plan, opts, st)
}

// refused is the report of a run that did not start.
func refused(s *Session, err error) *ApplyReport {
	r := &ApplyReport{Objects: &resourceapply.ChangeSet{}, Steps: &resourceapply.ChangeSet{}, Errors: []error{err}}
	if g := s.Plan.Graph; g != nil {
		r.Tasks, r.StepTasks = len(g.Tasks), g.StepCount()
	}
	r.Requests = s.Cluster.Requests.Counts()
	r.Record = s.Record
	return r
}

// runSettings are what Apply and Upgrade decided before the run.
type runSettings struct {
	mode   mode
	record *configv1.ClusterVersion
	// capsSpec is spec.capabilities of a record made now.
	capsSpec *configv1.ClusterVersionCapabilitiesSpec
	// upgrade holds what an Upgrade adds to the record; nil for Apply.
	upgrade *Upgrade
	// updateWaits: an update's waits (see RunUpgrade) after each object.
	updateWaits bool
	// writer, when set, is the record's writer (Upgrade opened it).
	writer *recordWriter
}

// run applies plan p with opts as st says: the record, the graph, the
// waits.
func run(ctx context.Context, c *Cluster, p *plan.Plan, opts ApplyOptions, st runSettings) *ApplyReport {
	start := time.Now()
	if opts.Grace <= 0 {
		opts.Grace = DefaultGrace
	}
	if opts.SlowAfter <= 0 {
		opts.SlowAfter = DefaultSlowAfter
	}
	if opts.RecordInterval <= 0 {
		opts.RecordInterval = DefaultRecordInterval
	}
	out := newSerial(opts.Sink)
	// run ends on the interrupt (ctx) or the timeout: no task starts after
	// that. work, which the tasks' requests use, ends on the timeout, or
	// Grace after an interrupt, or on Abort: the tasks in flight get the
	// chance to finish.
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	work, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	if opts.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, opts.Timeout)
		work, cancelWork = context.WithDeadline(context.WithoutCancel(ctx), start.Add(opts.Timeout))
	}
	defer cancel()
	defer cancelWork()
	logger := klog.FromContext(ctx)

	mgr := c.Manager
	// A Cluster may apply again (the operator's passes): what the Manager
	// learned in an earlier apply is not trusted.
	mgr.NewRun()
	if !opts.SkipChecks {
		if r := preflight(ctx, p, start); r != nil {
			return r
		}
	}
	objs := p.Unstructured()
	mgr.ExpectKinds(resourceapply.CRDKinds(objs)...)
	mgr.ExpectNamespaces(resourceapply.Namespaces(objs)...)
	mgr.ExpectObjects(objs...)

	g := p.Graph
	if st.mode.order != payload.OrderUpdate {
		g = g.WithOrder(st.mode.order, opts.Attempt)
	}
	r := &ApplyReport{Objects: &resourceapply.ChangeSet{}, Steps: &resourceapply.ChangeSet{}, Tasks: len(g.Tasks),
		StepTasks: g.StepCount(), Order: st.mode.order, State: st.mode.state, Release: st.mode.release(p, opts.Release)}
	applyOpts := resourceapply.DefaultApplyOptions()
	applyOpts.DryRun = opts.DryRun
	applyOpts.Retry = c.RetryOptions()
	if opts.RetryTimeout > 0 {
		applyOpts.Retry.Timeout = opts.RetryTimeout
	}
	// What cannot go in is said at once, before anything is written; a
	// server that fails to answer here fails the objects' requests too,
	// which report it.
	if absent, err := mgr.Absent(work, objs, applyOpts); err == nil && !absent.Empty() {
		out.emit(missingOf(p.Objects, absent))
	}
	a := newApplier(mgr, applyOpts, len(g.Tasks), work, out)
	a.interrupt = runCtx
	// The lists the objects' reads need, read ahead of them; stopped
	// by an interrupt, which stops new work.
	mgr.Prefetch(runCtx, objs, applyOpts)
	if st.mode.state == StateUpdating && st.updateWaits && !opts.DryRun {
		a.update = newUpdateWaits(p)
	}

	var rec *recordProgress
	if !opts.DryRun && !opts.NoRecord {
		var err error
		if rec, err = startRecord(work, c, p, opts, st, a, r.Release); err != nil {
			r.Errors = []error{err}
			r.Requests = c.Requests.Counts()
			r.Duration = time.Since(start)
			return r
		}
		// The record's writes give up when the objects' requests do.
		rec.w.retry = applyOpts.Retry
	}

	out.emit(Planned{Tasks: len(g.Tasks), Steps: g.StepCount()})
	stop := make(chan struct{})
	var bg sync.WaitGroup
	bg.Go(func() { a.graceOnInterrupt(ctx, stop, cancelWork, opts.Grace, opts.Abort) })
	bg.Go(func() { a.reportSlow(stop, opts.SlowAfter) })
	if rec != nil {
		bg.Go(func() { rec.follow(work, stop, opts.RecordInterval) })
	}
	var stage func(*payload.Task) bool
	if st.mode.order == payload.OrderInstall {
		// The engine's stand-in for the CVO's retries at install: see
		// docs/apply.md.
		stage = payload.StageCRDsAndNamespaces
	} else {
		a.crdAfter, a.order = crdAfter(g), st.mode.order
	}
	states, errs := payload.Run(runCtx, g, a, payload.RunOptions{
		Parallelism: opts.Parallelism,
		Stage:       stage,
		Isolated:    isolated,
		Observe:     a.observe,
	})
	close(stop)
	bg.Wait()
	logger.V(1).Info("Graph done", "order", st.mode.order, "nodes", payload.Summary(states))

	if a.update != nil && runCtx.Err() == nil {
		errs = append(errs, a.waitUpdateEnd(runCtx, p, rec)...)
	}
	switch {
	case !opts.Wait || opts.DryRun || runCtx.Err() != nil:
	case len(errs) > 0 && !opts.WaitOnFailure:
		r.Wait = &WaitReport{Skipped: true, Failed: len(errs)}
		logger.V(1).Info("Not waiting: objects failed", "failures", len(errs))
	default:
		var werrs []error
		werrs, r.Wait = a.wait(runCtx, p, !opts.WaitOnFailure)
		errs = append(errs, werrs...)
	}

	r.Done, r.Nodes = a.done(), states
	for i, t := range g.Tasks {
		switch {
		case a.changes[i].Action == "":
		case t.IsStep():
			r.Steps.Add(a.changes[i])
		default:
			r.Objects.Add(a.changes[i])
		}
	}
	if ctx.Err() != nil {
		// What the interrupt stopped is no failure of its own: it is
		// counted, not listed.
		errs = withoutInterrupted(errs)
		c := interruptReport(g.Tasks, a.changes, a.reasons)
		r.Interrupted = &c
	}
	r.Errors = errs
	if rec != nil {
		// The interrupt's work context may be over: the last write gets
		// its own time, little when the run was told to stop at once
		// (Abort: a second interrupt, or SIGTERM's short grace).
		limit := min(30*time.Second, applyOpts.Retry.Timeout)
		if ctx.Err() != nil && closed(opts.Abort) {
			limit = abortedRecordTime
		}
		fctx, fcancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
		if err := rec.finish(fctx, r); err != nil {
			if fctx.Err() != nil && limit == abortedRecordTime {
				err = fmt.Errorf("the record: not brought up to date within %s of the stop: %w (the next run brings it up to date)", limit, err)
			}
			r.Errors = append(r.Errors, err)
		}
		fcancel()
		r.Record, r.RecordWrites = rec.w.record(), rec.w.count()
		r.Completed = rec.completed()
	}
	r.Requests = c.Requests.Counts()
	r.Duration = time.Since(start)
	return r
}

// abortedRecordTime bounds the record's last write after an apply was
// told to stop at once (ApplyOptions.Abort), so that the process can end
// within the time its supervisor gives it.
const abortedRecordTime = 300 * time.Millisecond

// closed reports whether ch is closed (nil: never).
func closed(ch <-chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// isolated reports failures that concern their object alone: its type or
// its namespace does not exist, so nothing in the payload can depend on it.
func isolated(err error) bool {
	switch resourceapply.ReasonOf(err) {
	case resourceapply.ReasonResourceTypeMissing, resourceapply.ReasonNamespaceMissing:
		return true
	}
	return false
}

// CredentialsError reports whether err, or any error joined or wrapped in
// it, says the credentials may not do something (Forbidden,
// Unauthorized): the role or the kubeconfig needs fixing, not the payload.
func CredentialsError(err error) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if CredentialsError(e) {
				return true
			}
		}
		return false
	}
	switch resourceapply.ReasonOf(err) {
	case resourceapply.ReasonForbidden, resourceapply.ReasonUnauthorized:
		return true
	}
	return false
}

// preflight checks the plan's objects as the API server would (plan.Check)
// before anything is sent: with an error, or an interrupt meanwhile, it
// returns the report of an apply that wrote nothing; else nil.
func preflight(ctx context.Context, p *plan.Plan, start time.Time) *ApplyReport {
	findings, err := p.Check(ctx)
	r := &ApplyReport{Objects: &resourceapply.ChangeSet{}, Steps: &resourceapply.ChangeSet{}, Tasks: len(p.Graph.Tasks), StepTasks: p.Graph.StepCount()}
	switch {
	case err != nil || ctx.Err() != nil:
		n := len(p.Graph.Tasks)
		c := interruptReport(p.Graph.Tasks, make([]resourceapply.Change, n), make([]resourceapply.Reason, n))
		r.Interrupted = &c
	default:
		if err := plan.CheckErrors(findings); err != nil {
			r.Errors = err.(interface{ Unwrap() []error }).Unwrap()
		}
	}
	if r.Errors == nil && r.Interrupted == nil {
		return nil
	}
	r.Duration = time.Since(start)
	return r
}
