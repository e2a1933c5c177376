package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"

	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/requests"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/plan"
)

func applyCommand() *command {
	return &command{
		name:  "apply",
		short: "Bootstrap a cluster: apply the payload in order, then wait for it",
		usage: "[--kubeconfig K] [--parallelism N] [--order install|graph] [--wait] [--timeout D] [--dry-run=server] [-o json] [selection flags]",
		long: `Applies the objects the selection includes to the cluster, as the
cluster-version operator does at install time:

1. Stage: every CustomResourceDefinition and Namespace of the plan is applied
   ahead of the graph, from the start, in a pool of its own (up to
   --parallelism at once), and each CustomResourceDefinition is waited on
   until Established. Payloads create custom resources at run levels before
   their CRD (a FeatureGate at 05, its CRD at 10), and objects in namespaces
   that a later run level creates; the CVO copes by retrying every object
   until it goes in, we by staging what other objects need: an object whose
   CRD or namespace the stage creates waits for it (up to two minutes)
   instead of failing. 'graph' and 'render --list' show the graph's own
   order; staged objects keep their place in it (a node that reaches one
   waits for it and takes its outcome; nothing is applied twice).
2. The task graph ('payload-apply graph'), each component's files serially,
   at most --parallelism nodes at once: with --order graph (the default)
   run levels in series, components of a run level in parallel, Jobs as
   barriers. --order install runs it as the CVO runs an install, when
   nothing is running that could mind the order: every component at once, a
   node waiting only for the nodes it requires (its component's earlier run
   level, the node creating a CRD it needs, a Job before it). Either way a
   failed object stops its component's node and the nodes that require it;
   everything else goes on.
   An object whose kind has no API on the server and no CRD in the payload,
   or whose namespace nothing creates, fails at once as
   "resource type missing" or "namespace missing" and stops nothing else.
   Components' steps (what needs the cluster: a status subresource, real
   UIDs) are tasks of the graph too, after the objects they need ('graph'
   shows them): a step runs once, with retries on transient failures, and
   fails as "step NAME: reason: cause"; it is not run when an object it
   needs failed. Its writes are counted like the objects'.
3. With --wait: every object applied is waited on until ready or --timeout:
   ClusterOperators until Available=True, Degraded not True and every version
   their manifest lists is reported with the same value (the reference
   payload lists the placeholder 0.0.1-snapshot: that is what is waited for);
   CustomResourceDefinitions until Established; Jobs until complete;
   Deployments only for failure conditions (a bootstrap does not wait for a
   rollout: the operator's ClusterOperator says when it works); anything else
   by kstatus. Waiting names every object still pending and why. Steps that
   write a status nothing else writes (the platform operators' aggregate
   ClusterOperator, from the BundleDeployments) run again before every poll,
   and their ClusterOperators are waited for at the release version. The
   wait ends when everything is ready, or fails at --timeout naming every
   object not ready (and the last error of a step run again, if any).

Objects are applied with server-side apply (field manager payload-apply,
conflicts forced), one request per object, after reading the live object
(not needed in a namespace this apply created; a kind with several objects
is read by one list, per namespace for ConfigMaps, never for Secrets): an
object already as the payload says is not written, so applying again makes
no writes and changes no resourceVersion. Objects annotated
release.openshift.io/create-only and ClusterOperators are created once and
never updated; objects annotated release.openshift.io/delete are deleted.
Transient failures (connection refused or reset, timeouts, 429, 5xx,
conflicts) are retried with backoff for up to two minutes per request, so an
API server restart is ridden out; an interrupted apply can simply be run
again. Jobs are barriers and are waited on until complete.

--dry-run=server sends every write as a server-side dry run: nothing
changes. Objects in namespaces, or of kinds, that the same apply would
create first are reported as skipped.

Progress goes to stderr: a line per run level ("N of M done (P%)"), every
5 s the objects that have taken longer than that and what each waits for (a
CRD, a namespace, a retry), and with --wait what is not ready yet and why;
a progress bar when stderr is a terminal. With -o json, stdout gets one JSON
object per line instead: "stage", "task" (file, doc, object or step,
action, error, reason), "runLevel", "slow", "wait", "step" (a step run again
while waiting, when it wrote or failed), "warning" and a final "summary"
with the changes of objects and steps and the request counts ("reads",
"writes" and "byVerb": GET, LIST, WATCH, DISCOVERY, POST, PUT, PATCH,
DELETE).

The profile is --profile, else the "profile" key of ConfigMap
openshift-config/cluster-profile when the cluster has it, else the default.

TLS: the API server's certificate is verified against the kubeconfig's
certificate authority; --insecure-skip-tls-verify (or insecure-skip-tls-verify:
true in the kubeconfig's cluster) turns that off, with a warning on stderr.
Nothing printed shows a bearer token, password, client key or the values of
a Secret's data or stringData, at any -v (docs/reliability.md, "Security").
'payload-apply rbac' prints the ClusterRole this needs; a forbidden request
names the verb, resource, API group and namespace the role lacks.

Every request has a deadline (--request-timeout, default 30s), so a
connection that stalls is given up and retried on a new one instead of
hanging the apply.

SIGINT (Ctrl-C) or SIGTERM stops the apply: nothing new is started, the
objects in flight get up to 10 s to finish (a second interrupt cancels them
at once), and the summary says how many objects were applied, failed,
stopped in flight and not started, and how many steps ran ("interrupted:
... run the same command again to finish"); the JSON summary has "interrupted": true. Running the
same command again finishes the job.

Exit codes: 0 everything applied (and ready, with --wait); 1 some object
failed or was not ready in time (every failure on its own line on stderr),
or the payload or cluster could not be read; 2 usage error, or the
credentials were refused or lack a permission (forbidden, unauthorized);
130 interrupted by SIGINT or SIGTERM.`,
		flags: func(fs *pflag.FlagSet) runner {
			o := &applyOptions{}
			fs.IntVar(&o.parallelism, "parallelism", 32, "task graph nodes applied at once, and staged objects applied at once")
			fs.BoolVar(&o.wait, "wait", false, "wait until the applied objects are ready (ClusterOperators available with their versions)")
			fs.DurationVar(&o.timeout, "timeout", 30*time.Minute, "give up after this long (apply and wait together)")
			fs.StringVar(&o.dryRun, "dry-run", "none", `"server": send every write as a server-side dry run; "none": apply`)
			fs.StringVarP(&o.output, "output", "o", "text", `progress format: "text" on stderr, or "json" events on stdout`)
			fs.StringVar(&o.order, "order", string(payload.OrderGraph), `"graph": run levels in series, as 'payload-apply graph' shows; "install": a node waits only for the nodes it requires, as the CVO installs`)
			o.kube.addFlags(fs)
			o.selection.addFlags(fs)
			return o
		},
	}
}

type applyOptions struct {
	selection   selectionFlags
	kube        kubeFlags
	parallelism int
	wait        bool
	timeout     time.Duration
	dryRun      string
	output      string
	order       string

	opts plan.Options
}

func (o *applyOptions) Complete(ctx context.Context, args []string, s IOStreams) error {
	var err error
	o.opts, err = o.selection.complete(args)
	return err
}

func (o *applyOptions) Validate() error {
	switch o.dryRun {
	case "none", "server":
	default:
		return usageErrorf(`--dry-run %q: want "server" or "none"`, o.dryRun)
	}
	switch o.output {
	case "text", "json":
	default:
		return usageErrorf(`--output %q: want "text" or "json"`, o.output)
	}
	switch payload.Order(o.order) {
	case payload.OrderInstall, payload.OrderGraph:
	default:
		return usageErrorf(`--order %q: want "install" or "graph"`, o.order)
	}
	if o.parallelism < 1 {
		return usageErrorf("--parallelism %d: want at least 1", o.parallelism)
	}
	if o.timeout <= 0 {
		return usageErrorf("--timeout %s: want a positive duration", o.timeout)
	}
	return o.kube.validate()
}

// applyGCPercent is the garbage collector's target for apply unless GOGC
// says otherwise: apply holds one payload, and at the command's default of
// 50 a no-op apply of the real payload spends a third of its CPU time
// collecting; at 200 it uses about 35% less CPU for about 40 MiB more
// memory (docs/benchmarks.md, "No-op re-apply").
const applyGCPercent = 200

func (o *applyOptions) Run(parent context.Context, s IOStreams) error {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(applyGCPercent)
	}
	start := time.Now()
	// ctx ends on SIGINT or SIGTERM (parent) or the timeout: no task starts
	// after that. work, which the tasks' requests use, ends on the
	// timeout, or interruptGrace after an interrupt, or on a second one:
	// the objects in flight get the chance to finish.
	ctx, cancel := context.WithTimeout(parent, o.timeout)
	defer cancel()
	work, cancelWork := context.WithDeadline(context.WithoutCancel(parent), start.Add(o.timeout))
	defer cancelWork()
	logger := klog.FromContext(ctx)

	cfg, err := o.kube.restConfig(ctx, s)
	if err != nil {
		return err
	}
	prog := newProgress(s, o.output == "json")
	cfg.WarningHandler = prog
	var counter requests.Counter
	counter.Wrap(cfg)
	mgr, err := resourceapply.NewManager(cfg, resourceapply.Options{})
	if err != nil {
		return err
	}
	if err := checkServer(cfg, false); err != nil {
		return failure(explainConnection(err))
	}
	if err := resolveClusterProfile(ctx, mgr, &o.opts, o.selection.fs.Changed("profile")); err != nil {
		return interruptedEarly(parent, failure(explainConnection(err)))
	}
	p, err := plan.Build(ctx, o.opts)
	if err != nil {
		return interruptedEarly(parent, err)
	}
	logPlan(ctx, p)
	addPlanSecrets(secretsOf(ctx), p)
	printFindings(s, p.Findings)
	objs := p.Unstructured()
	mgr.ExpectKinds(resourceapply.CRDKinds(objs)...)
	mgr.ExpectNamespaces(resourceapply.Namespaces(objs)...)
	mgr.ExpectObjects(objs...)

	prog.setTotal(len(p.Graph.Tasks), p.Graph.StepCount())
	applyOpts := resourceapply.DefaultApplyOptions()
	applyOpts.DryRun = o.dryRun == "server"
	a := &clusterApplier{mgr: mgr, opts: applyOpts, changes: make([]resourceapply.Change, len(p.Graph.Tasks)),
		reasons: make([]resourceapply.Reason, len(p.Graph.Tasks)), progress: prog, inFlight: map[int]*flight{}, work: work}
	stopGrace := make(chan struct{})
	var grace sync.WaitGroup
	grace.Go(func() { a.graceOnInterrupt(parent, stopGrace, cancelWork, interruptGrace) })
	// Say which objects take long, and what they wait for.
	stopTicker := make(chan struct{})
	var ticker sync.WaitGroup
	ticker.Go(func() {
		t := time.NewTicker(slowReport)
		defer t.Stop()
		for {
			select {
			case <-stopTicker:
				return
			case now := <-t.C:
				if slow := a.slow(now, slowReport); len(slow) > 0 {
					prog.slow(slow)
				}
			}
		}
	})
	graph := p.Graph
	if o.order == string(payload.OrderInstall) {
		graph = payload.InstallOrder(graph)
	}
	states, runErrs := payload.Run(ctx, graph, a, payload.RunOptions{
		Parallelism: o.parallelism,
		Stage:       payload.StageCRDsAndNamespaces,
		Isolated:    isolated,
		Observe: func(e payload.Event) {
			prog.event(e, a.observed(e))
		},
	})
	close(stopTicker)
	ticker.Wait()
	close(stopGrace)
	grace.Wait()
	logger.V(1).Info("Graph done", "nodes", payload.Summary(states))
	errs := runErrs

	if o.wait && !applyOpts.DryRun && ctx.Err() == nil {
		errs = append(errs, a.wait(ctx, p)...)
	}

	changes, stepChanges := &resourceapply.ChangeSet{}, &resourceapply.ChangeSet{}
	for i, t := range p.Graph.Tasks {
		switch {
		case a.changes[i].Action == "":
		case t.IsStep():
			stepChanges.Add(a.changes[i])
		default:
			changes.Add(a.changes[i])
		}
	}
	interrupted := parent.Err() != nil
	if interrupted {
		// What the interrupt stopped is no failure of its own: it is
		// counted, not listed.
		errs = withoutInterrupted(errs)
	}
	var lines []string
	for _, e := range errs {
		lines = append(lines, errorLines(e)...)
	}
	if interrupted {
		prog.setInterrupted(interruptReport(p.Graph.Tasks, a.changes, a.reasons))
	}
	prog.summary(len(errs) == 0 && !interrupted, time.Since(start), changes, stepChanges, counter.Counts(), lines)
	if interrupted {
		return &exitError{Code: exitInterrupted, Err: errors.Join(errs...)}
	}
	if len(errs) > 0 {
		return failure(errs...)
	}
	return nil
}

// failure joins errs; when one of them says the credentials may not do
// something (forbidden, unauthorized), the exit code is 2: the role or the
// kubeconfig needs fixing, not the payload.
func failure(errs ...error) error {
	err := errors.Join(errs...)
	for _, e := range errs {
		if !credentialsError(e) {
			continue
		}
		return &exitError{Code: exitUsage, Err: err}
	}
	return err
}

// credentialsError reports whether err, or any error joined in it, is
// Forbidden or Unauthorized.
func credentialsError(err error) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if credentialsError(e) {
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

// interruptedEarly returns err, or when the apply was interrupted (parent
// ended) before it applied anything, an exit with exitInterrupted saying
// so.
func interruptedEarly(parent context.Context, err error) error {
	if parent.Err() == nil {
		return err
	}
	return &exitError{Code: exitInterrupted, Err: errors.New("interrupted before anything was applied")}
}

// exitInterrupted is apply's exit code after SIGINT or SIGTERM: 128 plus
// SIGINT's number, as shells report a command Ctrl-C ended.
const exitInterrupted = 130

// interruptGrace is how long the objects in flight when apply is
// interrupted may take to finish before their requests are canceled.
const interruptGrace = 10 * time.Second

// graceOnInterrupt waits for an interrupt (interrupted ending), tells the
// user, and calls cancelWork after grace, or at once on a second SIGINT or
// SIGTERM. It returns when stop is closed.
func (a *clusterApplier) graceOnInterrupt(interrupted context.Context, stop <-chan struct{}, cancelWork func(), grace time.Duration) {
	select {
	case <-stop:
		return
	case <-interrupted.Done():
	}
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(again)
	a.mu.Lock()
	n := len(a.inFlight)
	a.mu.Unlock()
	a.progress.interrupting(n, grace)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-stop:
	case <-t.C:
		cancelWork()
	case <-again:
		cancelWork()
	}
}

// interruptCounts is what an interrupted apply did.
type interruptCounts struct {
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
func (c interruptCounts) String() string {
	s := fmt.Sprintf("%d of %d objects applied", c.Applied, c.Total)
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
		s += fmt.Sprintf("; %d of %s run", c.StepsRun, plural(c.Steps, "step"))
	}
	return s
}

// interruptReport counts what an interrupted apply did, from each task's
// change (Action "": not started) and the reason it failed, if it did.
func interruptReport(tasks []*payload.Task, changes []resourceapply.Change, reasons []resourceapply.Reason) interruptCounts {
	var c interruptCounts
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

// slowReport is how long an object may take before progress names it, and
// how often it does.
const slowReport = 5 * time.Second

// isolated reports failures that concern their object alone: its type or
// its namespace does not exist, so nothing in the payload can depend on it.
func isolated(err error) bool {
	switch resourceapply.ReasonOf(err) {
	case resourceapply.ReasonResourceTypeMissing, resourceapply.ReasonNamespaceMissing:
		return true
	}
	return false
}

// resolveClusterProfile sets opts.Profile from the cluster's
// openshift-config/cluster-profile ConfigMap unless --profile was given or
// --cluster-config names a profile.
func resolveClusterProfile(ctx context.Context, mgr *resourceapply.Manager, opts *plan.Options, flagSet bool) error {
	if flagSet || (opts.ClusterConfig != nil && opts.ClusterConfig.Profile != "") {
		return nil
	}
	data, err := clusterProfile(ctx, mgr)
	if err != nil {
		return fmt.Errorf("reading the cluster's profile: %w", err)
	}
	opts.ClusterProfileData = data
	return nil
}

// clusterApplier applies tasks with a resourceapply.Manager and keeps each
// task's outcome.
type clusterApplier struct {
	mgr      *resourceapply.Manager
	opts     resourceapply.ApplyOptions
	progress *progress

	mu      sync.Mutex
	changes []resourceapply.Change // by Task.Index-1
	// reasons classify the failed tasks' errors, by Task.Index-1.
	reasons []resourceapply.Reason
	// inFlight are the tasks being applied, by Task.Index.
	inFlight map[int]*flight
	// work, when set, is the context of the requests instead of the one
	// Apply gets, which ends on an interrupt.
	work context.Context
}

// flight is a task being applied: since when, and what it waits for.
type flight struct {
	task  *payload.Task
	start time.Time
	why   string
}

// slow returns the tasks in flight for longer than d, oldest first.
func (a *clusterApplier) slow(now time.Time, d time.Duration) []resourceapply.Pending {
	a.mu.Lock()
	var fs []*flight
	for _, f := range a.inFlight {
		if now.Sub(f.start) > d {
			fs = append(fs, f)
		}
	}
	a.mu.Unlock()
	sort.Slice(fs, func(i, j int) bool { return fs[i].start.Before(fs[j].start) })
	out := make([]resourceapply.Pending, len(fs))
	for i, f := range fs {
		id := manifest.ID{Kind: "step", Name: f.task.Describe()}
		if f.task.Manifest != nil {
			id = f.task.Manifest.ID()
		}
		out[i] = resourceapply.Pending{Object: id, Message: fmt.Sprintf("%s (%s)", f.why, now.Sub(f.start).Round(time.Second))}
	}
	return out
}

var _ payload.Applier = &clusterApplier{}

// track records t as in flight, doing why, for slow to report, until
// done is called.
func (a *clusterApplier) track(t *payload.Task, why string) (f *flight, done func()) {
	f = &flight{task: t, start: time.Now(), why: why}
	a.mu.Lock()
	a.inFlight[t.Index] = f
	a.mu.Unlock()
	return f, func() {
		a.mu.Lock()
		delete(a.inFlight, t.Index)
		a.mu.Unlock()
	}
}

// Apply applies one object (a Job is then waited on until complete, since
// it is a barrier), or runs one step.
func (a *clusterApplier) Apply(ctx context.Context, t *payload.Task) error {
	if a.work != nil {
		// Not ctx: an interrupt stops new tasks, not this one (see
		// graceOnInterrupt).
		ctx = a.work
	}
	if t.IsStep() {
		return a.runStep(ctx, t)
	}
	m := t.Manifest
	f, done := a.track(t, "applying")
	defer done()
	opts := a.opts
	opts.OnWait = func(_ manifest.ID, why string) {
		a.mu.Lock()
		f.why = why
		a.mu.Unlock()
	}
	change, err := a.mgr.Apply(ctx, m.Obj, opts)
	if err == nil && payload.IsJob(m) && !a.opts.DryRun && change.Action != resourceapply.Deleted {
		err = a.mgr.Wait(ctx, []*unstructured.Unstructured{m.Obj}, resourceapply.WaitOptions{
			Interval: time.Second,
			Progress: func(w resourceapply.WaitProgress) { a.progress.wait("job "+m.ID().String(), w) },
		})
		if err != nil {
			change.Action = resourceapply.Failed
		}
	}
	a.mu.Lock()
	a.changes[t.Index-1] = change
	a.reasons[t.Index-1] = resourceapply.ReasonOf(err)
	a.mu.Unlock()
	logger := klog.FromContext(ctx)
	if err != nil {
		logger.V(2).Info("Failed", "object", m.ID().String(), "file", m.Position(), "runLevel", levelOf(t), "reason", resourceapply.ReasonOf(err), "err", err)
	} else {
		logger.V(2).Info(string(change.Action), "object", m.ID().String(), "file", m.Position(), "runLevel", levelOf(t), "message", change.Message)
	}
	return err
}

// observed returns what the task of an event did. A task that ended with
// an error without being run (a step after an object that failed) is
// recorded as failed, so that the summary counts it.
func (a *clusterApplier) observed(e payload.Event) resourceapply.Change {
	if e.Task == nil {
		return resourceapply.Change{}
	}
	change := a.change(e.Task)
	if e.Type == payload.EventTaskDone && e.Err != nil && change.Action == "" {
		change = resourceapply.Change{Action: resourceapply.Failed}
		a.setChange(e.Task, change)
	}
	return change
}

func (a *clusterApplier) change(t *payload.Task) resourceapply.Change {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.changes[t.Index-1]
}

func levelOf(t *payload.Task) string {
	return levelName(t.RunLevel())
}
