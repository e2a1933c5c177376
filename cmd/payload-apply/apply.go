package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sort"
	"sync"
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
3. With --wait: every object applied is waited on until ready or --timeout:
   ClusterOperators until Available=True, Degraded not True and every version
   their manifest lists is reported with the same value (the reference
   payload lists the placeholder 0.0.1-snapshot: that is what is waited for);
   CustomResourceDefinitions until Established; Jobs until complete;
   Deployments only for failure conditions (a bootstrap does not wait for a
   rollout: the operator's ClusterOperator says when it works); anything else
   by kstatus. Waiting names every object still pending and why.

Objects are applied with server-side apply (field manager payload-apply,
conflicts forced), one request per object, after reading the live object
(not needed in a namespace this apply created; a kind with several objects
is read by one list, per namespace for ConfigMaps and Secrets): an object
already as the payload says is not written, so applying again makes no
writes and changes no resourceVersion. Objects annotated
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
object per line instead: "stage", "task" (file, doc, object, action, error,
reason), "runLevel", "slow", "wait", "warning" and a final "summary" with
the request counts ("reads", "writes" and "byVerb": GET, LIST, WATCH,
DISCOVERY, POST, PUT, PATCH, DELETE).

The profile is --profile, else the "profile" key of ConfigMap
openshift-config/cluster-profile when the cluster has it, else the default.

Exit codes: 0 everything applied (and ready, with --wait); 1 some object
failed or was not ready in time (every failure on its own line on stderr),
or the payload or cluster could not be read; 2 usage error.`,
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
	if len(args) > 0 {
		return usageErrorf("unexpected arguments: %v", args)
	}
	var err error
	o.opts, err = o.selection.options()
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

func (o *applyOptions) Run(ctx context.Context, s IOStreams) error {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(applyGCPercent)
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	logger := klog.FromContext(ctx)

	cfg, err := o.kube.restConfig()
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
	if err := resolveClusterProfile(ctx, mgr, &o.opts, o.selection.fs.Changed("profile")); err != nil {
		return err
	}
	p, err := plan.BuildContext(ctx, o.opts)
	if err != nil {
		return err
	}
	logPlan(ctx, p)
	printFindings(s, p.Findings)
	objs := make([]*unstructured.Unstructured, len(p.Objects))
	for i, m := range p.Objects {
		objs[i] = m.Obj
	}
	mgr.ExpectKinds(resourceapply.CRDKinds(objs)...)
	mgr.ExpectNamespaces(resourceapply.Namespaces(objs)...)
	mgr.ExpectObjects(objs...)

	prog.setTotal(len(p.Graph.Tasks))
	applyOpts := resourceapply.DefaultApplyOptions()
	applyOpts.DryRun = o.dryRun == "server"
	a := &clusterApplier{mgr: mgr, opts: applyOpts, changes: make([]resourceapply.Change, len(p.Graph.Tasks)), progress: prog,
		inFlight: map[int]*flight{}}
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
			var change resourceapply.Change
			if e.Task != nil {
				change = a.change(e.Task)
			}
			prog.event(e, change)
		},
	})
	close(stopTicker)
	ticker.Wait()
	logger.V(1).Info("Graph done", "nodes", payload.Summary(states))
	errs := runErrs

	if o.wait && !applyOpts.DryRun && ctx.Err() == nil {
		var waitFor []*unstructured.Unstructured
		for i, t := range p.Graph.Tasks {
			if t.Manifest.IsDelete() {
				continue
			}
			switch a.changes[i].Action {
			case resourceapply.Created, resourceapply.Configured, resourceapply.Unchanged, resourceapply.Skipped:
				waitFor = append(waitFor, t.Manifest.Obj)
			}
		}
		werr := mgr.Wait(ctx, waitFor, resourceapply.WaitOptions{
			Interval: time.Second,
			Progress: func(w resourceapply.WaitProgress) { prog.wait("applied objects", w) },
		})
		if werr != nil {
			errs = append(errs, werr)
		}
	}

	changes := &resourceapply.ChangeSet{}
	for i := range p.Graph.Tasks {
		if a.changes[i].Action != "" {
			changes.Add(a.changes[i])
		}
	}
	var lines []string
	for _, e := range errs {
		lines = append(lines, errorLines(e)...)
	}
	prog.summary(len(errs) == 0, time.Since(start), changes, counter.Counts(), lines)
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return nil
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
	// inFlight are the tasks being applied, by Task.Index.
	inFlight map[int]*flight
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
		out[i] = resourceapply.Pending{Object: f.task.Manifest.ID(),
			Message: fmt.Sprintf("%s (%s)", f.why, now.Sub(f.start).Round(time.Second))}
	}
	return out
}

var _ payload.Applier = &clusterApplier{}

// Apply applies one object; a Job is then waited on until complete, since
// it is a barrier.
func (a *clusterApplier) Apply(ctx context.Context, t *payload.Task) error {
	m := t.Manifest
	f := &flight{task: t, start: time.Now(), why: "applying"}
	a.mu.Lock()
	a.inFlight[t.Index] = f
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.inFlight, t.Index)
		a.mu.Unlock()
	}()
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
	a.mu.Unlock()
	logger := klog.FromContext(ctx)
	if err != nil {
		logger.V(2).Info("Failed", "object", m.ID().String(), "file", m.Position(), "runLevel", levelOf(t), "reason", resourceapply.ReasonOf(err), "err", err)
	} else {
		logger.V(2).Info(string(change.Action), "object", m.ID().String(), "file", m.Position(), "runLevel", levelOf(t), "message", change.Message)
	}
	return err
}

func (a *clusterApplier) change(t *payload.Task) resourceapply.Change {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.changes[t.Index-1]
}

func levelOf(t *payload.Task) string {
	if l, _, ok := payload.ParseFileName(t.Manifest.OriginalFilename); ok {
		return levelName(l)
	}
	return "unordered"
}
