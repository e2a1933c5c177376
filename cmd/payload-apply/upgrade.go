package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/spf13/pflag"

	"github.com/payload-apply/payload-apply/clustersync"
	"github.com/payload-apply/payload-apply/lib/clusterversion"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/plan"
	"github.com/payload-apply/payload-apply/upgrade"
)

func upgradeCommand() *command {
	return &command{
		name:  "upgrade",
		short: "Move a cluster to another release as the CVO updates it, and record it",
		usage: "--to PAYLOAD [--dry-run] [--force[=CHECK,...]] [--allow-rollback] [--from PAYLOAD] [--kubeconfig K] [-o json] [selection flags]",
		long: `Updates the cluster from the release it runs (its record, the
config.openshift.io/v1 ClusterVersion "version", says which) to the release
of --to (a payload directory, OCI image layout, image tarball or registry
reference), as the cluster-version operator (CVO) does.

First the plan, which --dry-run prints and stops at (nothing is written):
what the new release creates, changes and deletes (release.openshift.io/delete),
what the old one has that the new one drops without a delete manifest (left
on the cluster, as the CVO leaves them: "orphans"), objects that move to
another run level, capabilities the new release enables implicitly (an
object the cluster runs now belongs to a capability that is not enabled:
enabled capabilities never become disabled), and the preconditions, as the
CVO names them:

  ClusterVersionUpgradeable  Upgradeable=False on the ClusterVersion (a
      ClusterOperator that says Upgradeable=False, an admin gate of
      openshift-config-managed/admin-gates that openshift-config/admin-acks
      does not acknowledge, deletes still in progress, overrides, an update
      in progress) blocks a minor or major update, not a z-stream one.
  ClusterVersionGiantHop     more than one minor version at once, or a
      higher major version, is refused.
  ClusterVersionRollback     a lower version is refused; the cluster's
      previous version within its z-stream only with --allow-rollback.

--force overrides them all, --force=NAME,... the ones named; what was forced
is recorded in the history entry's acceptedRisks. The release the cluster
runs is opened again from where it was applied (--from names it when it
cannot be: moved, changed, or a registry reference).

Then the update: spec.desiredUpdate is set, the record gets a new history
entry (Partial), and the new release is applied in the CVO's update order
('payload-apply graph'): its own manifests/ first, run levels in series,
components in parallel. An object is only written when it differs. Before a
node goes on, each ClusterOperator it applies must report the new release's
versions (Available, not Degraded), Deployments and DaemonSets must finish
rolling out, CustomResourceDefinitions be Established and Jobs complete;
deleted objects are followed until they are gone (the record says
Upgradeable=False, ResourceDeletesInProgress, meanwhile). The record's
Progressing says "Working towards V: N of M done (P% complete), waiting on
X". A failed node stops what comes after it and leaves the entry Partial.

Interrupted (Ctrl-C, SIGTERM, a crash, an API server restart) or failed, the
same command continues the same update: what was written is not written
again. When everything is applied the entry is Completed.

Signatures are checked as apply checks them (--verify-keyring,
--signature-store, --verify-cosign-key, --allow-unverified; 'payload-apply
help verify'): the history entry says verified, and an unverified payload
let through is recorded among its accepted risks.

Progress and the summary are as apply's (stderr, or -o json events on
stdout, the plan first as a "plan" event); --dry-run prints the plan on
stdout (-o json: one JSON object).

Exit codes: 0 updated (or already there; with --dry-run: the preconditions
pass); 1 a precondition blocks, or some object failed or was not ready in
time; 2 usage error, the release the cluster runs cannot be known, the
cluster cannot be reached, or the credentials lack a permission; 130
interrupted.`,
		flags: func(fs *pflag.FlagSet) runner {
			o := &upgradeOptions{}
			fs.StringVar(&o.to, "to", "", "the payload to update to: a directory, an OCI image layout or an image tarball")
			fs.StringVar(&o.from, "from", "", "the payload the cluster runs, when its record names one that cannot be opened here")
			fs.BoolVar(&o.dryRun, "dry-run", false, "print the plan (changes, orphans, moves, capabilities, preconditions) and write nothing")
			fs.StringSliceVar(&o.force, "force", nil, "override the preconditions (all; or =NAME,... those named) and record them as accepted risks")
			fs.Lookup("force").NoOptDefVal = clustersync.ForceAll
			fs.BoolVar(&o.allowRollback, "allow-rollback", false, "allow a rollback to the cluster's previous version within its z-stream")
			fs.IntVar(&o.parallelism, "parallelism", clustersync.DefaultParallelism, "task graph nodes applied at once")
			fs.DurationVar(&o.timeout, "timeout", 0, "give up after this long; 0: no limit (an update waits for its operators)")
			fs.DurationVar(&o.retryTimeout, "retry-timeout", resourceapply.DefaultRetryOptions().Timeout, "how long one request's transient failures (connection refused, 5xx, 429, timeouts) are retried before it fails (an object's, a step's, the record's, reading the cluster's profile)")
			fs.BoolVar(&o.validate, "validate", true, "check the new release's objects as the API server would before sending anything, and apply nothing when one fails; --validate=false leaves every check to the server")
			o.output = addOutputFlag(fs, formatText, formatJSON)
			fs.Lookup("output").Usage = `"text": progress on stderr (--dry-run: the plan on stdout); "json": events on stdout (--dry-run: the plan as one object)`
			o.kube.addFlags(fs)
			o.verify.addFlags(fs)
			o.selection.addFlags(fs)
			// The payload to go to is --to; the one the cluster runs, the
			// record's (or --from).
			_ = fs.MarkHidden("payload")
			return o
		},
	}
}

type upgradeOptions struct {
	selection     selectionFlags
	kube          kubeFlags
	verify        verifyFlags
	to, from      string
	dryRun        bool
	force         []string
	allowRollback bool
	parallelism   int
	timeout       time.Duration
	retryTimeout  time.Duration
	validate      bool
	output        *outputFlag

	opts plan.Options
}

func (o *upgradeOptions) Complete(ctx context.Context, args []string, s IOStreams) error {
	if o.selection.fs.Changed("payload") {
		return usageErrorf("--payload: upgrade takes the payload to go to as --to")
	}
	var err error
	o.opts, err = o.selection.complete(ctx, args)
	return err
}

func (o *upgradeOptions) Validate() error {
	if o.to == "" {
		return usageErrorf("--to: say which payload to update to")
	}
	for _, f := range o.force {
		if f != clustersync.ForceAll && !contains(upgrade.Checks, f) {
			return usageErrorf("--force=%s: no such precondition (%v)", f, upgrade.Checks)
		}
	}
	switch {
	case o.parallelism < 1:
		return usageErrorf("--parallelism %d: want at least 1", o.parallelism)
	case o.timeout < 0:
		return usageErrorf("--timeout %s: want a duration, 0 for none", o.timeout)
	}
	return o.kube.validate()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (o *upgradeOptions) Run(parent context.Context, s IOStreams) error {
	ctx := parent
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(parent, o.timeout)
		defer cancel()
	}
	start := time.Now()
	cfg, err := o.kube.restConfig(ctx, s)
	if err != nil {
		return err
	}
	to, toSrc, err := openPayloadArg(ctx, &o.selection.registry, "--to", o.to)
	if err != nil {
		return err
	}
	toImage, err := recordImage(ctx, toSrc, to)
	if err != nil {
		return fmt.Errorf("--to %s: %w", o.to, err)
	}
	if _, err := checkReachable(cfg); err != nil {
		return interruptedEarly(parent, err)
	}
	jsonOut := o.output.value == formatJSON
	prog := newProgress(parent, s, jsonOut)
	c, err := clustersync.Connect(ctx, cfg, clustersync.ConnectOptions{Strict: true, Sink: prog, Secrets: secretsOf(ctx), RetryTimeout: o.retryTimeout})
	if err != nil {
		return interruptedEarly(parent, clusterFailure(err))
	}
	// Connected, nothing written: verify the payload first.
	verified, err := o.verify.check(ctx, s, &o.selection.registry, toSrc, cfg)
	if err != nil {
		return interruptedEarly(parent, err)
	}
	from, err := o.fromPayload(ctx, c, toImage)
	if err != nil {
		return interruptedEarly(parent, err)
	}
	in := clustersync.UpgradeInput{From: o.opts, To: o.opts, Force: o.force, AllowRollback: o.allowRollback,
		Release: clustersync.Release{Image: toImage, Verification: verificationOf(verified)}}
	in.From.Payload, in.To.Payload = from, to
	u, err := clustersync.PlanUpgrade(ctx, c, in)
	if errors.Is(err, clustersync.ErrNoRecord) {
		return &exitError{Code: exitUsage, Err: err}
	}
	if err != nil {
		return interruptedEarly(parent, clusterFailure(failure(err)))
	}
	logPlan(ctx, u.To)
	printFindings(ctx, s, u.To.Findings)
	if o.dryRun {
		if err := writeUpgradePlan(s, u, jsonOut); err != nil {
			return err
		}
		if u.Blocked() {
			return &exitError{Code: exitFail}
		}
		return nil
	}
	if err := announceUpgrade(s, prog, u, jsonOut); err != nil {
		return err
	}
	abort, release := secondSignal(parent)
	defer release()
	opts := clustersync.DefaultApplyOptions()
	opts.Parallelism, opts.Abort, opts.Sink = o.parallelism, abort, prog
	opts.RetryTimeout, opts.SkipChecks = o.retryTimeout, !o.validate
	if o.timeout > 0 {
		opts.Timeout = o.timeout - time.Since(start)
	}
	r := clustersync.RunUpgrade(parent, u, opts)
	// The failures, grouped by reason, and the summary are printed.
	prog.summary(r, time.Since(start))
	switch {
	case r.Interrupted != nil:
		return &exitError{Code: exitInterrupted}
	case len(r.Errors) > 0:
		return &exitError{Code: failureCode(r.Errors...)}
	}
	return nil
}

// fromPayload opens the payload the cluster runs: --from, else the one its
// record names (clustersync.FromImage).
func (o *upgradeOptions) fromPayload(ctx context.Context, c *clustersync.Cluster, toImage string) (fs.FS, error) {
	if o.from != "" {
		fsys, _, err := openPayloadArg(ctx, &o.selection.registry, "--from", o.from)
		return fsys, err
	}
	rec, err := clustersync.ReadRecord(ctx, c)
	if err != nil {
		return nil, failure(err)
	}
	img := clustersync.FromImage(rec, toImage)
	if img == "" {
		return nil, &exitError{Code: exitUsage, Err: clustersync.ErrNoRecord}
	}
	fsys, _, err := openRecorded(ctx, &o.selection.registry, img)
	if err != nil {
		rel, _ := runningRelease(rec)
		return nil, usageErrorf("the cluster runs %s (%s), but %v: pass --from with its payload", clusterversion.VersionName(rel), img, err)
	}
	return fsys, nil
}
