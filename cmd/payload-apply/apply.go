package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/payload-apply/payload-apply/clustersync"
	"github.com/payload-apply/payload-apply/lib/signature"
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

Signatures: a payload pulled from a registry, and any payload when
--verify-keyring or --verify-cosign-key is given, must be verified before
anything is applied: an atomic signature (the CVO's) of its digest by every
--verify-keyring, found in a --signature-store or the cluster's signature
ConfigMaps, and a cosign signature by every --verify-cosign-key beside the
image in its registry. An unverified payload is refused (exit 1, naming the
digest and the reason) unless --allow-unverified, which goes on with a
warning. See 'payload-apply help verify'.

Exit codes: 0 everything applied (and ready, with --wait); 1 some object
failed or was not ready in time (every failure on its own line on stderr),
or the payload or cluster could not be read; 2 usage error, or the
credentials were refused or lack a permission (forbidden, unauthorized);
130 interrupted by SIGINT or SIGTERM.`,
		flags: func(fs *pflag.FlagSet) runner {
			o := &applyOptions{}
			fs.IntVar(&o.parallelism, "parallelism", clustersync.DefaultParallelism, "task graph nodes applied at once, and staged objects applied at once")
			fs.BoolVar(&o.wait, "wait", false, "wait until the applied objects are ready (ClusterOperators available with their versions)")
			fs.DurationVar(&o.timeout, "timeout", 30*time.Minute, "give up after this long (apply and wait together)")
			fs.StringVar(&o.dryRun, "dry-run", "none", `"server": send every write as a server-side dry run; "none": apply`)
			fs.StringVarP(&o.output, "output", "o", "text", `progress format: "text" on stderr, or "json" events on stdout`)
			fs.StringVar(&o.order, "order", string(payload.OrderGraph), `"graph": run levels in series, as 'payload-apply graph' shows; "install": a node waits only for the nodes it requires, as the CVO installs`)
			o.kube.addFlags(fs)
			o.selection.addFlags(fs)
			o.verify.addFlags(fs)
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
	verify      verifyFlags

	opts plan.Options
	// verification is the payload's signature check, for the record.
	verification signature.Result
}

func (o *applyOptions) Complete(ctx context.Context, args []string, s IOStreams) error {
	var err error
	o.opts, err = o.selection.complete(ctx, args)
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
	// The timeout covers connecting and planning too.
	ctx, cancel := context.WithTimeout(parent, o.timeout)
	defer cancel()
	cfg, err := o.kube.restConfig(ctx, s)
	if err != nil {
		return err
	}
	prog := newProgress(s, o.output == "json")
	sess, err := clustersync.Start(ctx, cfg, clustersync.StartOptions{
		Connect: clustersync.ConnectOptions{Sink: prog, Secrets: secretsOf(ctx)},
		Plan:    o.opts,
	})
	if err != nil {
		return interruptedEarly(parent, failure(err))
	}
	// Connected and planned, nothing written: verify the payload first.
	if o.verification, err = o.verify.check(ctx, s, &o.selection.registry, o.selection.source, cfg); err != nil {
		return interruptedEarly(parent, err)
	}
	logPlan(ctx, sess.Plan)
	printFindings(s, sess.Plan.Findings)

	abort, release := secondSignal(parent)
	defer release()
	r := clustersync.Apply(parent, sess, clustersync.ApplyOptions{
		Parallelism: o.parallelism,
		Order:       payload.Order(o.order),
		DryRun:      o.dryRun == "server",
		Wait:        o.wait,
		Timeout:     o.timeout - time.Since(start),
		Grace:       clustersync.DefaultGrace,
		Abort:       abort,
		Sink:        prog,
	})
	var lines []string
	for _, e := range r.Errors {
		lines = append(lines, errorLines(e)...)
	}
	prog.summary(r, time.Since(start), lines)
	switch {
	case r.Interrupted != nil:
		return &exitError{Code: exitInterrupted, Err: errors.Join(r.Errors...)}
	case len(r.Errors) > 0:
		return failure(r.Errors...)
	}
	return nil
}

// failure joins errs; when one of them says the credentials may not do
// something (forbidden, unauthorized), the exit code is 2: the role or the
// kubeconfig needs fixing, not the payload.
func failure(errs ...error) error {
	err := errors.Join(errs...)
	for _, e := range errs {
		if clustersync.CredentialsError(e) {
			return &exitError{Code: exitUsage, Err: err}
		}
	}
	return err
}

// interruptedEarly returns err, or when the run was interrupted (parent
// ended) before it applied anything, an exit with exitInterrupted saying
// so.
func interruptedEarly(parent context.Context, err error) error {
	if parent.Err() == nil {
		return err
	}
	return &exitError{Code: exitInterrupted, Err: errors.New("interrupted before anything was applied")}
}

// exitInterrupted is the exit code after SIGINT or SIGTERM: 128 plus
// SIGINT's number, as shells report a command Ctrl-C ended.
const exitInterrupted = 130

// secondSignal returns a channel that is closed when SIGINT or SIGTERM
// arrives after parent ended (the first interrupt ends it): the engine then
// stops the objects in flight at once instead of after its grace. release
// stops listening.
func secondSignal(parent context.Context) (abort <-chan struct{}, release func()) {
	abort, _, release = listenSecondSignal(parent)
	return abort, release
}

// listenSecondSignal is secondSignal; listening is closed once it listens
// for the second signal. Until then main's signal context catches signals,
// so none kills the process.
func listenSecondSignal(parent context.Context) (abort, listening <-chan struct{}, release func()) {
	ch, ready := make(chan struct{}), make(chan struct{})
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-stop:
			return
		case <-parent.Done():
		}
		again := make(chan os.Signal, 1)
		signal.Notify(again, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(again)
		close(ready)
		select {
		case <-stop:
		case <-again:
			close(ch)
		}
	}()
	return ch, ready, func() { close(stop); <-done }
}
