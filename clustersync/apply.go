package clustersync

import (
	"context"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/payload"
)

// ApplyOptions say how Apply applies a plan.
type ApplyOptions struct {
	// Parallelism is the most task graph nodes applied at once, and the
	// most staged objects applied at once; below 1 means 1.
	Parallelism int
	// Order is how the graph's nodes are ordered (payload.OrderGraph when
	// empty).
	Order payload.Order
	// DryRun sends every write as a server-side dry run: nothing changes.
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
	// flight at once (a second interrupt). Nil: only Grace ends them.
	Abort <-chan struct{}
	// SlowAfter is how long a task may take before a Slow event names it,
	// and how often Slow comes; zero: DefaultSlowAfter.
	SlowAfter time.Duration
	// Sink receives the progress; nil: Discard.
	Sink Sink
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
)

// DefaultApplyOptions returns the options of `payload-apply apply`.
func DefaultApplyOptions() ApplyOptions {
	return ApplyOptions{Parallelism: DefaultParallelism, Order: payload.OrderGraph, Grace: DefaultGrace, SlowAfter: DefaultSlowAfter}
}

// ApplyReport is what an Apply did.
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

// Apply applies the session's plan to its cluster (see ApplyOptions): the
// CustomResourceDefinitions and Namespaces are staged ahead of the graph,
// then the graph runs, then, with Wait, the applied objects are waited on.
// ctx is the interrupt: when it ends, nothing new starts and the tasks in
// flight get opts.Grace; the report says what is left. Apply never returns
// an error of its own: every failure is in the report.
func Apply(ctx context.Context, s *Session, opts ApplyOptions) *ApplyReport {
	start := time.Now()
	if opts.Grace <= 0 {
		opts.Grace = DefaultGrace
	}
	if opts.SlowAfter <= 0 {
		opts.SlowAfter = DefaultSlowAfter
	}
	if opts.Order == "" {
		opts.Order = payload.OrderGraph
	}
	out := newSerial(opts.Sink)
	// run ends on the interrupt (ctx) or the timeout: no task starts after
	// that. work, which the tasks' requests use, ends on the timeout, or
	// Grace after an interrupt, or on Abort: the tasks in flight get the
	// chance to finish.
	run, cancel := ctx, context.CancelFunc(func() {})
	work, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	if opts.Timeout > 0 {
		run, cancel = context.WithTimeout(ctx, opts.Timeout)
		work, cancelWork = context.WithDeadline(context.WithoutCancel(ctx), start.Add(opts.Timeout))
	}
	defer cancel()
	defer cancelWork()
	logger := klog.FromContext(ctx)

	p, mgr := s.Plan, s.Cluster.Manager
	objs := p.Unstructured()
	mgr.ExpectKinds(resourceapply.CRDKinds(objs)...)
	mgr.ExpectNamespaces(resourceapply.Namespaces(objs)...)
	mgr.ExpectObjects(objs...)

	g := p.Graph
	out.emit(Planned{Tasks: len(g.Tasks), Steps: g.StepCount()})
	applyOpts := resourceapply.DefaultApplyOptions()
	applyOpts.DryRun = opts.DryRun
	a := newApplier(mgr, applyOpts, len(g.Tasks), work, out)
	stop := make(chan struct{})
	var bg sync.WaitGroup
	bg.Go(func() { a.graceOnInterrupt(ctx, stop, cancelWork, opts.Grace, opts.Abort) })
	bg.Go(func() { a.reportSlow(stop, opts.SlowAfter) })
	if opts.Order == payload.OrderInstall {
		g = payload.InstallOrder(g)
	}
	states, errs := payload.Run(run, g, a, payload.RunOptions{
		Parallelism: opts.Parallelism,
		Stage:       payload.StageCRDsAndNamespaces,
		Isolated:    isolated,
		Observe:     a.observe,
	})
	close(stop)
	bg.Wait()
	logger.V(1).Info("Graph done", "nodes", payload.Summary(states))

	var waited *WaitReport
	switch {
	case !opts.Wait || opts.DryRun || run.Err() != nil:
	case len(errs) > 0 && !opts.WaitOnFailure:
		waited = &WaitReport{Skipped: true, Failed: len(errs)}
		logger.V(1).Info("Not waiting: objects failed", "failures", len(errs))
	default:
		var werrs []error
		werrs, waited = a.wait(run, p, !opts.WaitOnFailure)
		errs = append(errs, werrs...)
	}

	r := &ApplyReport{Objects: &resourceapply.ChangeSet{}, Steps: &resourceapply.ChangeSet{}, Tasks: len(p.Graph.Tasks),
		StepTasks: p.Graph.StepCount(), Done: a.done(), Nodes: states, Wait: waited}
	for i, t := range p.Graph.Tasks {
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
		c := interruptReport(p.Graph.Tasks, a.changes, a.reasons)
		r.Interrupted = &c
	}
	r.Errors = errs
	r.Requests = s.Cluster.Requests.Counts()
	r.Duration = time.Since(start)
	return r
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
