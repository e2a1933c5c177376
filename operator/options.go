package operator

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"k8s.io/client-go/rest"

	"github.com/payload-apply/payload-apply/clustersync"
)

// Options configure an Operator. Cluster, LeaseNamespace, LeaseName and
// Identity are required; DefaultOptions fills in the rest.
type Options struct {
	// Cluster is the client configuration of the cluster the operator
	// keeps at its release. It is copied; its QPS and Burst are kept.
	Cluster *rest.Config
	// Lease is the client configuration of the cluster that holds the
	// Lease (HyperShift: the management cluster). Nil: Cluster.
	Lease *rest.Config
	// LeaseNamespace and LeaseName name the coordination.k8s.io Lease the
	// replicas elect their leader with. The namespace must exist.
	LeaseNamespace, LeaseName string
	// Identity is this replica's holderIdentity in the Lease: unique among
	// the replicas (the pod's name).
	Identity string
	// LeaseDuration is how long the Lease holds without renewal (a
	// replica that finds it older takes it over), RenewDeadline how long
	// the leader keeps trying to renew before it stops leading, and
	// RetryPeriod how often the replicas try (client-go leaderelection).
	// RenewDeadline must be below LeaseDuration: the difference is the
	// time a leader that lost the Lease has to stop writing.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration

	// Start says how to connect (Start.Connect) and what to plan
	// (Start.Plan: the payload of the release installed when the cluster
	// has none, its profile, feature set, components).
	Start clustersync.StartOptions
	// Image names the release of Start.Plan's payload as the cluster's
	// record names releases (ClusterVersion status.desired.image, the
	// history's images): what the operator installs when the cluster has
	// no record, and how it knows its own payload in a record. Required.
	Image string
	// Verification is how the signatures of Start's payload were checked
	// (the caller checks them before New); the record says so. Nil: not
	// checked.
	Verification *clustersync.Verification
	// ResolvePayload opens the payload of a release image the cluster's
	// record names (spec.desiredUpdate.image, status.desired.image, the
	// history's) that is not Image, and checks its signatures: an error
	// refuses the release (a payload that cannot be read, or is not
	// verified when the policy requires it, unless force: the request's
	// spec.desiredUpdate.force, which lets an unverified payload through
	// as an accepted risk, as the CVO's force does). Nil: such a release
	// is refused.
	ResolvePayload func(ctx context.Context, image string, force bool) (*Payload, error)

	// Resync is the time between two passes once the cluster is at its
	// release (the CVO's reconcile interval), plus a random part of up to
	// Jitter times it, so that a fleet's operators do not pass together.
	Resync time.Duration
	Jitter float64
	// PassTimeout stops a pass that takes longer (the CVO gives a sync
	// twice its reconcile interval). Zero: 2 * Resync.
	PassTimeout time.Duration
	// Parallelism is the most graph nodes applied at once while installing
	// or updating; ReconcileParallelism while reconciling (the CVO
	// reconciles with 2 workers, so that repairing drift never loads the
	// API server).
	Parallelism, ReconcileParallelism int
	// Grace is how long the objects in flight may finish when the
	// Operator's context ends (shutdown), before the Lease is released.
	Grace time.Duration

	// Sink receives the engine's events of every pass, besides the
	// Operator's own accounting. Nil: none.
	Sink clustersync.Sink

	// Updates say how the leader learns the cluster's updates from the
	// update service of spec.upstream (updates.go).
	Updates UpdateOptions
}

// Defaults of Options.
const (
	// DefaultResync is the time between passes: the CVO picks its
	// reconcile interval between 2 and 4 minutes.
	DefaultResync = 3 * time.Minute
	// DefaultJitter spreads passes by up to a fifth of Resync.
	DefaultJitter = 0.2
	// DefaultLeaseDuration, DefaultRenewDeadline and DefaultRetryPeriod
	// are OpenShift's leader election conventions, which the CVO uses
	// (library-go LeaderElectionDefaulting): a leader that dies is
	// replaced within about two and a half minutes, and the Lease
	// survives an API server outage of almost two.
	DefaultLeaseDuration = 137 * time.Second
	DefaultRenewDeadline = 107 * time.Second
	DefaultRetryPeriod   = 26 * time.Second
	// DefaultReconcileParallelism is the CVO's reconcile workers.
	DefaultReconcileParallelism = 2
	// DefaultLeaseName names the Lease.
	DefaultLeaseName = "payload-apply-operator"
	// MinResync is the shortest Resync: a pass a second at most, never a
	// loop of requests.
	MinResync = time.Second
)

// DefaultOptions returns the defaults; the caller sets Cluster, the
// Lease's namespace and Identity.
func DefaultOptions() Options {
	return Options{
		LeaseName:            DefaultLeaseName,
		LeaseDuration:        DefaultLeaseDuration,
		RenewDeadline:        DefaultRenewDeadline,
		RetryPeriod:          DefaultRetryPeriod,
		Resync:               DefaultResync,
		Jitter:               DefaultJitter,
		Parallelism:          clustersync.DefaultParallelism,
		ReconcileParallelism: DefaultReconcileParallelism,
		Grace:                clustersync.DefaultGrace,
	}
}

// Validate checks the options: required fields and the timing
// (ValidateTiming).
func (o *Options) Validate() error {
	var errs []error
	if o.Cluster == nil {
		errs = append(errs, errors.New("the managed cluster's client configuration is required"))
	}
	if o.LeaseNamespace == "" || o.LeaseName == "" {
		errs = append(errs, errors.New("the lease's namespace and name are required"))
	}
	if o.Image == "" {
		errs = append(errs, errors.New("the release image of the operator's payload is required"))
	}
	if o.Identity == "" {
		errs = append(errs, errors.New("the replica's identity is required"))
	}
	return errors.Join(append(errs, o.ValidateTiming())...)
}

// ValidateTiming checks what needs no cluster, so that a command can refuse
// it before it connects: positive durations, Resync at least MinResync,
// the order of the leader election's durations, jitter and parallelism.
// Each error names the flag it comes from.
func (o *Options) ValidateTiming() error {
	var errs []error
	for _, d := range []struct {
		name string
		d    time.Duration
	}{{"lease duration (--lease-duration)", o.LeaseDuration}, {"renew deadline (--renew-deadline)", o.RenewDeadline}, {"retry period (--retry-period)", o.RetryPeriod}, {"resync (--resync)", o.Resync}} {
		if d.d <= 0 {
			errs = append(errs, fmt.Errorf("%s %s: want a positive duration", d.name, d.d))
		}
	}
	if o.Resync > 0 && o.Resync < MinResync {
		errs = append(errs, fmt.Errorf("resync (--resync) %s: want at least %s (a pass at most every second; the CVO reconciles every 2 to 4 minutes)", o.Resync, MinResync))
	}
	if o.PassTimeout < 0 {
		errs = append(errs, fmt.Errorf("pass timeout (--pass-timeout) %s: want a positive duration, or 0 for twice the resync", o.PassTimeout))
	}
	if o.RenewDeadline >= o.LeaseDuration && o.LeaseDuration > 0 {
		errs = append(errs, fmt.Errorf("renew deadline (--renew-deadline) %s: want less than the lease duration (--lease-duration) %s", o.RenewDeadline, o.LeaseDuration))
	}
	// client-go's own rule: the leader must get more than one try within
	// the renew deadline.
	if o.RetryPeriod > 0 && float64(o.RenewDeadline) <= 1.2*float64(o.RetryPeriod) {
		errs = append(errs, fmt.Errorf("renew deadline (--renew-deadline) %s: want more than 1.2 times the retry period (--retry-period) %s", o.RenewDeadline, o.RetryPeriod))
	}
	if o.Jitter < 0 {
		errs = append(errs, fmt.Errorf("jitter %g: want 0 or more", o.Jitter))
	}
	if o.Parallelism < 1 || o.ReconcileParallelism < 1 {
		errs = append(errs, fmt.Errorf("parallelism %d and reconcile parallelism %d: want at least 1", o.Parallelism, o.ReconcileParallelism))
	}
	return errors.Join(errs...)
}

// Payload is the payload of a release image, as Options.ResolvePayload
// opens it.
type Payload struct {
	// FS is the payload root (manifests/ and release-manifests/); nil for
	// the operator's own (Options.Start.Plan's).
	FS fs.FS
	// ReleaseImage is the pull spec the payload's templates get
	// ({{.ReleaseImage}}); empty: the payload's default.
	ReleaseImage string
	// Verification is how its signatures were checked; nil: not checked.
	Verification *clustersync.Verification
}
