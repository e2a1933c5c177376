package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/payload-apply/payload-apply/clustersync"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/lib/signature"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/plan"
)

func applyCommand() *command {
	return &command{
		name:  "apply",
		short: "Bootstrap a cluster: apply the payload in order, then wait for it",
		usage: "[--kubeconfig K] [--parallelism N] [--order install|update|reconcile] [--wait [--wait-on-failure]] [--timeout D] [--dry-run[=server]] [-o text|json] [selection flags]",
		long:  applyHelp,
		flags: func(fs *pflag.FlagSet) runner {
			o := &applyOptions{}
			fs.IntVar(&o.parallelism, "parallelism", clustersync.DefaultParallelism, "task graph nodes applied at once, and staged objects applied at once")
			fs.BoolVar(&o.wait, "wait", false, "wait until the applied objects are ready (ClusterOperators available with their versions); ends early at a failure no waiting fixes")
			fs.BoolVar(&o.waitOnFailure, "wait-on-failure", false, "with --wait: wait for the rest until ready or --timeout even after failures no waiting fixes")
			fs.DurationVar(&o.timeout, "timeout", 30*time.Minute, "give up after this long (apply and wait together)")
			fs.BoolVar(&o.validate, "validate", true, "check the objects as the API server would (types, schemas of the payload's CRDs, names, labels, annotations) before sending anything, and apply nothing when one fails; --validate=false leaves every check to the server")
			fs.DurationVar(&o.retryTimeout, "retry-timeout", resourceapply.DefaultRetryOptions().Timeout, "how long one request's transient failures (connection refused, 5xx, 429, timeouts) are retried before it fails (an object's, a step's, the record's, reading the cluster's profile)")
			fs.StringVar(&o.dryRun, "dry-run", "none", `"server" (or --dry-run alone): send every write as a server-side dry run; "none": apply`)
			fs.Lookup("dry-run").NoOptDefVal = "server"
			o.output = addOutputFlag(fs, formatText, formatJSON)
			fs.Lookup("output").Usage = `progress format: "text" lines on stderr, or "json" events on stdout (docs/cli.md)`
			fs.StringVar(&o.order, "order", "", `"install", "update" or "reconcile" (the CVO's orders, 'payload-apply graph'); default: the CVO's for what the record says`)
			o.kube.addFlags(fs)
			o.selection.addFlags(fs)
			o.verify.addFlags(fs)
			return o
		},
	}
}

type applyOptions struct {
	selection     selectionFlags
	kube          kubeFlags
	parallelism   int
	wait          bool
	waitOnFailure bool
	timeout       time.Duration
	retryTimeout  time.Duration
	validate      bool
	dryRun        string
	output        *outputFlag
	order         string
	verify        verifyFlags

	opts plan.Options
	// verification is the payload's signature check, for the record.
	verification signature.Result
}

func (o *applyOptions) Complete(ctx context.Context, args []string, s IOStreams) error {
	if len(args) > 0 && o.selection.fs.Changed("dry-run") {
		switch args[0] {
		case "server", "none", "client":
			// --dry-run takes no separate value: "--dry-run server".
			return usageErrorf("unexpected argument %q: give --dry-run its value with '=': --dry-run=%s", args[0], args[0])
		}
	}
	var err error
	o.opts, err = o.selection.complete(ctx, args)
	// One selection (the cluster's profile and capabilities are known
	// before loading): load only what it includes whole (and the
	// ClusterVersion CRD the record needs, clustersync.Start).
	o.opts.Lean = true
	return err
}

func (o *applyOptions) Validate() error {
	switch o.dryRun {
	case "none", "server":
	case "client":
		return usageErrorf(`--dry-run "client": want "server" or "none" (without a cluster, 'payload-apply render' and 'diff' show what would be applied)`)
	default:
		return usageErrorf(`--dry-run %q: want "server" or "none"`, o.dryRun)
	}
	if o.waitOnFailure && !o.wait {
		return usageErrorf("--wait-on-failure is for --wait")
	}
	if o.order != "" {
		if _, err := payload.ParseOrder(o.order); err != nil {
			return usageErrorf("--%v", err)
		}
	}
	if o.parallelism < 1 {
		return usageErrorf("--parallelism %d: want at least 1", o.parallelism)
	}
	if o.timeout <= 0 {
		return usageErrorf("--timeout %s: want a positive duration", o.timeout)
	}
	if o.retryTimeout <= 0 {
		return usageErrorf("--retry-timeout %s: want a positive duration", o.retryTimeout)
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
	// Fingerprinting the payload for the plan cache, and its digest for
	// the record, do not need the cluster: they run while the cluster is
	// found and connected to.
	o.opts = plan.StartPreload(ctx, o.opts, true)
	cfg, err := o.kube.restConfig(ctx, s)
	if err != nil {
		return err
	}
	// The record's name for the payload: a directory planned through the
	// plan cache gets it from the cache's memo after planning (nothing
	// read again); any other is made while connecting and planning.
	var image func() (string, error)
	if o.selection.source.Kind != sourceDirectory || o.opts.PlanCache == nil {
		image = startRecordImage(ctx, o.selection.source, o.opts.Payload)
	}
	if _, err := checkReachable(cfg); err != nil {
		return interruptedEarly(parent, err)
	}
	prog := newProgress(parent, s, o.output.value == formatJSON)
	sess, err := clustersync.Start(ctx, cfg, clustersync.StartOptions{
		Connect: clustersync.ConnectOptions{Sink: prog, Secrets: secretsOf(ctx), RetryTimeout: o.retryTimeout},
		Plan:    o.opts,
	})
	if err != nil {
		return interruptedEarly(parent, clusterFailure(err))
	}
	// Connected and planned, nothing written: verify the payload first.
	if o.verification, err = o.verify.check(ctx, s, &o.selection.registry, o.selection.source, cfg); err != nil {
		return interruptedEarly(parent, err)
	}
	logPlan(ctx, sess.Plan)
	printFindings(ctx, s, sess.Plan.Findings)

	if image == nil {
		image = func() (string, error) {
			return recordImageOf(ctx, o.selection.source, o.opts.Payload, sess.Plan)
		}
	}
	img, err := image()
	if err != nil {
		return err
	}
	order, _ := payload.ParseOrder(o.order)
	abort, release := secondSignal(parent)
	defer release()
	r := clustersync.Apply(parent, sess, clustersync.ApplyOptions{
		Release:       clustersync.Release{Image: img, Verification: verificationOf(o.verification)},
		Parallelism:   o.parallelism,
		Order:         order,
		DryRun:        o.dryRun == "server",
		Wait:          o.wait,
		WaitOnFailure: o.waitOnFailure,
		Timeout:       o.timeout - time.Since(start),
		Grace:         clustersync.DefaultGrace,
		Abort:         abort,
		Sink:          prog,
		RetryTimeout:  o.retryTimeout,
		SkipChecks:    !o.validate,
	})
	var mismatch *clustersync.ReleaseMismatchError
	if errors.As(errors.Join(r.Errors...), &mismatch) {
		return &exitError{Code: exitUsage, Err: fmt.Errorf("%w: payload-apply upgrade --to PAYLOAD", mismatch)}
	}
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

// failureCode is the exit code of failures: 2 when one of them says the
// credentials may not do something (forbidden, unauthorized): the role or
// the kubeconfig needs fixing, not the payload; else 1.
func failureCode(errs ...error) int {
	for _, e := range errs {
		if clustersync.CredentialsError(e) {
			return exitUsage
		}
	}
	return exitFail
}

// failure joins errs, with failureCode's exit code.
func failure(errs ...error) error {
	err := errors.Join(errs...)
	if code := failureCode(errs...); code != exitFail {
		return &exitError{Code: code, Err: err}
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
	return &exitError{Code: exitInterrupted, Err: fmt.Errorf("interrupted before anything was applied (while %s); run the same command again", phaseWords(currentPhase(parent)))}
}

// termGrace is how long the objects in flight may finish after SIGTERM
// (SIGINT gives them clustersync.DefaultGrace): the process ends within
// two seconds of it.
const termGrace = time.Second

// secondSignal returns a channel that is closed when SIGINT or SIGTERM
// arrives after parent ended (the first interrupt ends it), or termGrace
// after parent ended for SIGTERM: the engine then stops the objects in
// flight at once instead of after its grace. release stops listening.
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
		// SIGTERM asks a process to end soon (a supervisor stopping
		// it): the objects in flight get termGrace, not the engine's
		// grace for an interactive Ctrl-C.
		var grace <-chan time.Time
		if terminated(parent) {
			t := time.NewTimer(termGrace)
			defer t.Stop()
			grace = t.C
		}
		select {
		case <-stop:
		case <-again:
			close(ch)
		case <-grace:
			close(ch)
		}
	}()
	return ch, ready, func() { close(stop); <-done }
}
