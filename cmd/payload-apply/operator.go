package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/payload-apply/payload-apply/clustersync"
	"github.com/payload-apply/payload-apply/operator"
	"github.com/payload-apply/payload-apply/plan"
)

func operatorCommand() *command {
	return &command{
		name:  "operator",
		short: "Keep a cluster at its release as the CVO does (leader-elected replicas); print its manifests; build its image",
		usage: "[manifests | image] [flags] [selection flags]",
		long: `payload-apply operator runs until SIGTERM as the cluster-version operator
does: replicas elect a leader on a coordination.k8s.io Lease, and the
leader keeps the managed cluster at its release.

  - While the cluster's record (ClusterVersion "version") has no release
    completed, it installs the payload as 'apply' does (the record made
    and written, the CVO's flattened install order, every component at
    once). The record names the payload as apply names it (a directory
    or image file by path and digest, a registry release by digest, the
    built-in payload as embedded://payload-apply@DIGEST).
  - Then it reconciles: every --resync (plus up to a fifth, at random) it
    applies the release the cluster runs again, in the CVO's reconcile
    order with two workers: a steady cluster gets no write; an object
    edited or deleted since is written back, and logged as drift. A
    failed pass is retried sooner, backing off as the CVO does. A change
    of the ClusterVersion's spec, seen through a watch, starts a pass at
    once.
  - Upgrade on request: when spec.desiredUpdate names a release the
    cluster has not reached (its image: a payload directory or image file
    PATH@sha256:..., or a registry reference by digest; a version alone
    when status.availableUpdates lists its image), the pass is what
    'payload-apply upgrade' does: the preconditions (see 'payload-apply
    help upgrade'), a new history entry, the CVO's update order and
    waits, the history entry Completed at the end; an update that stops
    goes on at the next pass. spec.desiredUpdate.force overrides every
    precondition and lets an unverified payload through, recorded as
    accepted risks. A rejected request (a precondition blocks it, its
    payload cannot be opened or verified, it cannot be planned) sets
    ReleaseAccepted=False with the reason and the precondition's name and
    changes nothing else; the release the cluster runs is still
    reconciled, and the request is judged again every pass.

Updates: the leader asks the update service of the ClusterVersion's
spec.upstream for spec.channel (as the CVO asks Red Hat's, or the one
'payload-apply update-graph --serve' runs) every --resync, and at once
when the spec changes, and writes status.availableUpdates,
status.conditionalUpdates (each risk judged against the cluster's
Prometheus, --prometheus-url: a risk whose rule matches makes its update
not recommended, one whose rule cannot be evaluated too) and the
RetrievedUpdates condition (an upstream that fails keeps the updates it
gave last). A spec.desiredUpdate naming a version without an image
resolves through them; a not recommended one is refused unless
spec.desiredUpdate.acceptRisks names its risks, recorded in the history.

Clusters: the managed cluster is --kubeconfig (and the other kubeconfig
flags), else $KUBECONFIG, else ~/.kube/config, else the pod's in-cluster
configuration. The Lease lives in --lease-namespace/--lease-name of the
cluster --lease-kubeconfig names, else in-cluster when running in a pod,
else the managed cluster (HyperShift's shape: the Lease in the management
cluster, the objects in the hosted one). Only the leader talks to the
managed cluster. SIGTERM stops the pass in flight (10 s grace), releases
the Lease, so that another replica takes over at once, and exits 0.

Signatures: the operator's payload, and a release the record names, are
verified as 'apply' verifies (--verify-keyring, --signature-store,
--verify-cosign-key, --allow-unverified): an unverified payload of its
own that the policy requires verified is refused, and the operator does
not start; a requested release is rejected (ReleaseAccepted=False,
RetrievePayload) unless the request forces it.

--metrics-bind-address serves /healthz, /readyz and /metrics (Prometheus:
the CVO's cluster_version, cluster_operator_up, cluster_operator_conditions,
... and payload_apply_operator_* for the passes, their writes, requests and
drift); "0" turns it off. Logs are klog lines with timestamps.

  payload-apply operator manifests [--image REF] [--namespace NS] ...
      prints the Namespace, ServiceAccount, ClusterRole and binding (what
      'payload-apply rbac' prints for the selection, plus the record, the
      watches), the Lease's Role and binding, and a Deployment of
      --replicas (2) with probes and resource requests, as YAML (-o json: a
      List). The container's flags are the operator flags given here.
  payload-apply operator image (--output-dir DIR | --output-file FILE)
      builds the operator's image without a container daemon: the static
      binary (--binary, default this one, which must be built with
      CGO_ENABLED=0) as /usr/bin/payload-apply, with --payload's payload
      baked in at / when given (a release image: the manifests then say
      --payload=/). DIR gets an OCI image layout, FILE a docker-archive;
      skopeo reads both (oci:DIR, docker-archive:FILE).

Exit codes: 0 stopped by SIGTERM or SIGINT (the Lease released), or
manifests/image written; 1 the Lease was lost (another replica may lead:
restart), or the payload could not be planned, or the image not written;
2 usage error, or the managed cluster cannot be reached at start or the
credentials are refused.`,
		flags: func(fs *pflag.FlagSet) runner {
			o := &operatorOptions{fs: fs}
			fs.StringVar(&o.leaseKubeconfig, "lease-kubeconfig", "", "kubeconfig of the cluster holding the Lease (default: in-cluster in a pod, else the managed cluster)")
			fs.StringVar(&o.leaseNamespace, "lease-namespace", "", "namespace of the Lease (default: $POD_NAMESPACE, else the pod's namespace, else kube-system)")
			fs.StringVar(&o.leaseName, "lease-name", operator.DefaultLeaseName, "name of the Lease")
			fs.StringVar(&o.identity, "lease-identity", "", "this replica's identity in the Lease (default: $POD_NAME, else HOSTNAME_RANDOM)")
			fs.DurationVar(&o.leaseDuration, "lease-duration", operator.DefaultLeaseDuration, "a Lease not renewed for this long is taken over")
			fs.DurationVar(&o.renewDeadline, "renew-deadline", operator.DefaultRenewDeadline, "the leader stops leading when it cannot renew for this long")
			fs.DurationVar(&o.retryPeriod, "retry-period", operator.DefaultRetryPeriod, "how often replicas try to take or renew the Lease")
			fs.DurationVar(&o.resync, "resync", operator.DefaultResync, "time between passes once the cluster is at its release (plus up to a fifth at random)")
			fs.DurationVar(&o.passTimeout, "pass-timeout", 0, "stop a pass that takes longer (default: twice --resync)")
			fs.IntVar(&o.parallelism, "parallelism", clustersync.DefaultParallelism, "graph nodes applied at once while installing or updating")
			fs.IntVar(&o.reconcileParallelism, "reconcile-parallelism", operator.DefaultReconcileParallelism, "graph nodes applied at once while reconciling (the CVO's 2)")
			fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":9099", `address of /healthz, /readyz and /metrics; "0" turns them off`)
			fs.StringVar(&o.updates.PrometheusURL, "prometheus-url", "", "Prometheus HTTP API the update risks' PromQL rules are evaluated against (OpenShift: the Thanos querier, https://thanos-querier.openshift-monitoring.svc:9091); none: such rules fail to evaluate")
			fs.StringVar(&o.updates.PrometheusCAFile, "prometheus-ca-file", "", "CA certificate (PEM) of --prometheus-url, besides the system's")
			fs.StringVar(&o.updates.PrometheusTokenFile, "prometheus-token-file", "", "file holding the bearer token sent to --prometheus-url (read at each query)")
			o.verify.addFlags(fs)
			o.manifests.addFlags(fs)
			o.image.addFlags(fs)
			o.kube.addFlags(fs)
			o.selection.addFlags(fs)
			return o
		},
	}
}

type operatorOptions struct {
	selection                                  selectionFlags
	kube                                       kubeFlags
	leaseKubeconfig, leaseNamespace, leaseName string
	identity, metricsAddr                      string
	updates                                    operator.UpdateOptions
	leaseDuration, renewDeadline, retryPeriod  time.Duration
	resync, passTimeout                        time.Duration
	parallelism, reconcileParallelism          int
	verify                                     verifyFlags
	manifests                                  manifestsFlags
	image                                      imageFlags

	// sub is the subcommand ("" runs the operator); fs the flags, which
	// manifests passes on to the container.
	sub  string
	fs   *pflag.FlagSet
	opts plan.Options
}

func (o *operatorOptions) Complete(ctx context.Context, args []string, s IOStreams) error {
	if len(args) > 0 {
		o.sub, args = args[0], args[1:]
		if o.sub != "manifests" && o.sub != "image" {
			return usageErrorf("unknown operator subcommand %q: want manifests or image, or none to run the operator", o.sub)
		}
	}
	var err error
	if o.opts, err = o.selection.complete(ctx, args); err != nil {
		return err
	}
	if o.sub != "" {
		return nil
	}
	if o.leaseNamespace == "" {
		o.leaseNamespace = podNamespace()
	}
	if o.identity == "" {
		o.identity = replicaIdentity()
	}
	// An operator's log is read later: timestamps and sources.
	gofs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(gofs)
	return gofs.Set("skip_headers", "false")
}

func (o *operatorOptions) Validate() error {
	switch o.sub {
	case "manifests":
		return o.manifests.validate()
	case "image":
		return o.image.validate()
	}
	if o.leaseKubeconfig != "" {
		if _, err := os.Stat(o.leaseKubeconfig); err != nil {
			return usageErrorf("--lease-kubeconfig: %v", err)
		}
	}
	if o.metricsAddr != "0" {
		if _, _, err := net.SplitHostPort(o.metricsAddr); err != nil {
			return usageErrorf("--metrics-bind-address %q: want HOST:PORT or :PORT, or 0: %v", o.metricsAddr, err)
		}
	}
	// Timing is refused before the cluster is reached (exit 2).
	t := operator.DefaultOptions()
	t.LeaseDuration, t.RenewDeadline, t.RetryPeriod = o.leaseDuration, o.renewDeadline, o.retryPeriod
	t.Resync, t.PassTimeout = o.resync, o.passTimeout
	t.Parallelism, t.ReconcileParallelism = o.parallelism, o.reconcileParallelism
	if err := t.ValidateTiming(); err != nil {
		return usageErrorf("%v", err)
	}
	return o.kube.validate()
}

func (o *operatorOptions) Run(ctx context.Context, s IOStreams) error {
	switch o.sub {
	case "manifests":
		return o.runManifests(ctx, s)
	case "image":
		return o.runImage(ctx, s)
	}
	logger := klog.FromContext(ctx)
	cfg, err := o.kube.restConfig(ctx, s)
	if err != nil {
		return err
	}
	// A cluster that cannot be reached at start is a configuration to
	// fix (exit 2, as every command; a pod is restarted); once running,
	// the operator rides out outages.
	if _, err := checkReachable(cfg); err != nil {
		return err
	}
	cfg.UserAgent = fmt.Sprintf("payload-apply/%s operator/%s", version(), o.identity)
	leaseCfg, where, err := o.leaseConfig(cfg)
	if err != nil {
		return err
	}
	opts := operator.DefaultOptions()
	opts.Cluster, opts.Lease = cfg, leaseCfg
	opts.LeaseNamespace, opts.LeaseName, opts.Identity = o.leaseNamespace, o.leaseName, o.identity
	opts.LeaseDuration, opts.RenewDeadline, opts.RetryPeriod = o.leaseDuration, o.renewDeadline, o.retryPeriod
	opts.Resync, opts.PassTimeout = o.resync, o.passTimeout
	opts.Parallelism, opts.ReconcileParallelism = o.parallelism, o.reconcileParallelism
	opts.Updates = o.updates
	opts.Start = clustersync.StartOptions{Connect: clustersync.ConnectOptions{Secrets: secretsOf(ctx)}, Plan: o.opts}
	// The operator's own payload is verified before it campaigns; a
	// release the record names, before it is planned.
	own, err := o.verify.check(ctx, s, &o.selection.registry, o.selection.source, cfg)
	if err != nil {
		return err
	}
	opts.Verification = verificationOf(own)
	// The record names the operator's payload as apply names it.
	if opts.Image, err = recordImage(ctx, o.selection.source, o.opts.Payload); err != nil {
		return fmt.Errorf("--payload: %w", err)
	}
	opts.ResolvePayload = func(ctx context.Context, image string, force bool) (*operator.Payload, error) {
		fsys, src, err := openRecorded(ctx, &o.selection.registry, image)
		if err != nil {
			return nil, err
		}
		p, err := o.verify.policy(&o.selection.registry, src, cfg)
		if err != nil {
			return nil, err
		}
		// The request's force lets a payload the policy requires verified
		// through unverified, as an accepted risk (the CVO's force); one no
		// policy asks to verify stays "not checked".
		p.AllowUnverified = p.AllowUnverified || (force && p.Required)
		r, err := p.Verify(ctx, src.subject())
		if err != nil {
			return nil, fmt.Errorf("refusing %w", err)
		}
		out := &operator.Payload{FS: fsys, Verification: verificationOf(r)}
		if src.Kind == sourceRegistry {
			out.ReleaseImage = src.Pinned()
		}
		return out, nil
	}
	op, err := operator.New(ctx, opts)
	if err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			return err
		}
		return &exitError{Code: exitFail, Err: err}
	}
	// The offline plan New made is garbage now: a follower holds none, so
	// give its memory back (a replica that never leads stays small).
	debug.FreeOSMemory()
	rel := op.Release()
	logger.Info("Starting the operator", "version", version(), "release", rel.Version, "image", rel.Image,
		"managedCluster", cfg.Host, "leaseCluster", where, "lease", o.leaseNamespace+"/"+o.leaseName, "identity", o.identity, "resync", o.resync)

	serveDone := make(chan error, 1)
	serveCtx, stopServing := context.WithCancel(context.WithoutCancel(ctx))
	defer stopServing()
	if o.metricsAddr != "0" {
		l, err := net.Listen("tcp", o.metricsAddr)
		if err != nil {
			return &exitError{Code: exitFail, Err: fmt.Errorf("--metrics-bind-address %s: %w", o.metricsAddr, err)}
		}
		logger.Info("Serving /healthz, /readyz and /metrics", "address", l.Addr().String())
		go func() { serveDone <- op.Serve(serveCtx, l) }()
	} else {
		close(serveDone)
	}
	runErr := op.Run(ctx)
	stopServing()
	if err := <-serveDone; err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil {
		return &exitError{Code: exitFail, Err: runErr}
	}
	logger.Info("Stopped", "signal", ctx.Err())
	return nil
}
