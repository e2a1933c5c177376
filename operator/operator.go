package operator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/klog/v2"

	"github.com/payload-apply/payload-apply/clustersync"
	"github.com/payload-apply/payload-apply/lib/requests"
	"github.com/payload-apply/payload-apply/plan"
)

// ErrLeaseLost is what Run returns when the leader could not renew its
// Lease in time: another replica may lead now, so this one stopped
// writing. The CVO exits then, to be restarted as a candidate.
var ErrLeaseLost = errors.New("operator: the lease was lost: stopped leading")

// Operator keeps one cluster at its release; see the package comment.
// Make it with New and call Run once; Handler is safe to serve at any
// time.
type Operator struct {
	opts Options
	// own is the release of the operator's own payload (Options.Start).
	own configv1.Release

	registry *prometheus.Registry
	metrics  *metrics
	// apiRequests counts the requests of the managed cluster's apply
	// client, watchRequests those of its watches, leaseRequests those of
	// the Lease's client, updateRequests the record's writes of its
	// updates.
	apiRequests                                  *counters
	watchRequests, leaseRequests, updateRequests *requests.Counter
	// updates learns the cluster's updates (updates.go).
	updates *updater
	health  *leaderelection.HealthzAdaptor
	lease   *leaseContact

	mu   sync.Mutex
	last *PassReport
	// watch is the leader's watcher, for the metrics; nil when not
	// leading.
	watch *watcher
}

// New checks opts, plans the operator's own payload offline (so that a
// payload that cannot be read or planned fails here, before any lease is
// taken) and registers the metrics. ctx bounds the planning.
func New(ctx context.Context, opts Options) (*Operator, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("operator: %w", err)
	}
	popts := opts.Start.Plan
	popts.Lean = true
	p, err := plan.Build(ctx, popts)
	if err != nil {
		return nil, fmt.Errorf("operator: the payload: %w", err)
	}
	updates, err := newUpdater(opts)
	if err != nil {
		return nil, fmt.Errorf("operator: updates: %w", err)
	}
	o := &Operator{
		opts:           opts,
		registry:       prometheus.NewRegistry(),
		apiRequests:    &counters{},
		watchRequests:  &requests.Counter{},
		leaseRequests:  &requests.Counter{},
		updateRequests: &requests.Counter{},
		updates:        updates,
		// A leader whose renewals are overdue by more than this is
		// unhealthy: the kubelet restarts it.
		health: leaderelection.NewLeaderHealthzAdaptor(opts.LeaseDuration),
		lease:  &leaseContact{},
	}
	o.own = ownRelease(opts, p)
	o.metrics = newMetrics(o)
	if err := o.metrics.register(o.registry); err != nil {
		return nil, fmt.Errorf("operator: metrics: %w", err)
	}
	o.apiRequests.track("watch", o.watchRequests)
	o.apiRequests.track("lease", o.leaseRequests)
	o.apiRequests.track("updates", o.updateRequests)
	return o, nil
}

// ownRelease names the release of the operator's payload: its version
// and Options.Image.
func ownRelease(opts Options, p *plan.Plan) configv1.Release {
	r := configv1.Release{Image: opts.Image}
	if p.Payload != nil && p.Payload.Release != nil {
		r.Version = p.Payload.Release.Version
	}
	return r
}

// Release returns the release of the operator's own payload.
func (o *Operator) Release() configv1.Release { return o.own }

// LastPass returns the report of the last pass, nil before the first.
func (o *Operator) LastPass() *PassReport {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.last
}

// record keeps a pass's report and counts it in the metrics.
func (o *Operator) record(r *PassReport) {
	o.mu.Lock()
	o.last = r
	o.mu.Unlock()
	o.metrics.pass(r)
}

// Run runs the replica until ctx ends: it campaigns for the Lease and,
// while it holds it, keeps the cluster at its release. When ctx ends, a
// leader stops its pass (the objects in flight get Options.Grace), then
// releases the Lease, and Run returns nil. Run returns ErrLeaseLost when
// the leader could not renew the Lease, and an error when the Lease's
// client cannot be made.
func (o *Operator) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithValues("identity", o.opts.Identity)
	ctx = klog.NewContext(ctx, logger)
	// The election runs until the leader's work has stopped: client-go
	// releases the Lease as soon as the context it runs in ends, which
	// must not happen while a pass still writes.
	elect, stopElecting := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElecting()
	var dupErr atomic.Pointer[error]
	lock, err := o.newLock(func(err error) {
		if dupErr.CompareAndSwap(nil, &err) {
			logger.Error(err, "Stopping")
			stopElecting()
		}
	})
	if err != nil {
		return err
	}

	var (
		mu      sync.Mutex
		leading bool
		// workDone is closed when the leader's work has returned.
		workDone = make(chan struct{})
		lost     bool
	)
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   o.opts.LeaseDuration,
		RenewDeadline:   o.opts.RenewDeadline,
		RetryPeriod:     o.opts.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            o.opts.LeaseNamespace + "/" + o.opts.LeaseName,
		WatchDog:        o.health,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leadCtx context.Context) {
				mu.Lock()
				leading = true
				mu.Unlock()
				defer close(workDone)
				defer stopElecting()
				logger.Info("Leading: this replica now keeps the cluster at its release", "lease", lock.Describe())
				o.metrics.leader.Set(1)
				o.runLeader(ctx, leadCtx)
			},
			OnStoppedLeading: func() {
				o.metrics.leader.Set(0)
				mu.Lock()
				wasLeading := leading
				lost = wasLeading && ctx.Err() == nil
				mu.Unlock()
				if wasLeading {
					logger.Info("Stopped leading", "lease", lock.Describe(), "lost", ctx.Err() == nil)
				}
			},
			OnNewLeader: func(identity string) {
				if identity != o.opts.Identity {
					logger.Info("Following", "leader", identity, "lease", lock.Describe())
				}
			},
		},
	})
	if err != nil {
		return fmt.Errorf("operator: leader election: %w", err)
	}
	o.health.SetLeaderElection(le)
	// On shutdown a replica that does not lead stops campaigning at once;
	// the leader's work stops, and then the election (runLeader).
	go func() {
		select {
		case <-ctx.Done():
		case <-elect.Done():
			return
		}
		mu.Lock()
		l := leading
		mu.Unlock()
		if !l {
			stopElecting()
		}
	}()
	logger.Info("Campaigning", "lease", lock.Describe(), "leaseDuration", o.opts.LeaseDuration, "renewDeadline", o.opts.RenewDeadline, "retryPeriod", o.opts.RetryPeriod)
	le.Run(elect)

	mu.Lock()
	wasLeading, wasLost := leading, lost
	mu.Unlock()
	if wasLeading {
		// The Lease was lost (or released): the work was told to stop at
		// once; wait for it, bounded.
		select {
		case <-workDone:
		case <-time.After(o.opts.Grace + o.opts.RetryPeriod):
			logger.Info("The leader's work did not stop in time")
		}
	}
	if err := dupErr.Load(); err != nil {
		return *err
	}
	if wasLost {
		return ErrLeaseLost
	}
	return nil
}

// runLeader runs the leader's loop until ctx (shutdown) or leadCtx (the
// Lease lost) ends. On a lost Lease the objects in flight are canceled at
// once; on shutdown they get Options.Grace.
func (o *Operator) runLeader(ctx, leadCtx context.Context) {
	work, cancel := context.WithCancel(leadCtx)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	abort := make(chan struct{})
	stopAbort := context.AfterFunc(leadCtx, func() { close(abort) })
	defer stopAbort()
	o.lead(work, abort)
	o.mu.Lock()
	o.watch = nil
	o.mu.Unlock()
}

// connectOptions are the options the leader connects with.
func (o *Operator) connectOptions() clustersync.ConnectOptions {
	c := o.opts.Start.Connect
	c.Strict = true
	return c
}

// leaseConfig returns the client configuration of the Lease's cluster.
func (o *Operator) leaseConfig() *rest.Config {
	cfg := o.opts.Lease
	if cfg == nil {
		cfg = o.opts.Cluster
	}
	cfg = rest.CopyConfig(cfg)
	// A renewal that hangs must not outlast the renew deadline.
	if cfg.Timeout == 0 || cfg.Timeout > o.opts.RetryPeriod*2 {
		cfg.Timeout = max(o.opts.RetryPeriod*2, time.Second)
	}
	o.leaseRequests.Wrap(cfg)
	return cfg
}
