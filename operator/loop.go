package operator

import (
	"context"
	"fmt"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/payload-apply/payload-apply/clustersync"
)

// leader is the state of one leadership: the connection to the managed
// cluster, the watches, the plan of the release being applied, and how the
// passes went.
type leader struct {
	o       *Operator
	cluster *clustersync.Cluster
	watch   *watcher

	sess    *clustersync.Session
	release configv1.Release // of sess
	// reached are the images a pass has succeeded for since this
	// leadership began.
	reached map[string]bool
	// failures counts the failed passes in a row.
	failures int
}

// lead is the leader's loop: connect, then pass after pass until work
// ends (shutdown, or the lease lost, which also closes abort). Between
// passes it waits for the next resync, a shorter backoff after a failure,
// or a change of the ClusterVersion's spec.
func (o *Operator) lead(work context.Context, abort <-chan struct{}) {
	logger := klog.FromContext(work)
	l := &leader{o: o, reached: map[string]bool{}}
	if !l.connect(work) {
		return
	}
	next := time.Duration(0)
	for {
		if !sleep(work, next, l.watch.changed) {
			return
		}
		r := l.pass(work, abort)
		if work.Err() != nil {
			return
		}
		next = o.interval(l.failures)
		if r != nil && !r.OK() {
			logger.Info("Retrying", "after", next.Round(time.Second), "failures", l.failures)
		}
	}
}

// connect connects to the managed cluster and makes the watches, retrying
// with backoff; false when work ended first.
func (l *leader) connect(work context.Context) bool {
	logger := klog.FromContext(work)
	o := l.o
	b := wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.2, Steps: 1 << 30, Cap: o.opts.Resync / 4}
	for {
		c, err := clustersync.Connect(work, o.opts.Cluster, o.connectOptions())
		if err == nil {
			o.apiRequests.track("apply", c.Requests)
			wcfg := rest.CopyConfig(o.opts.Cluster)
			// Watches are long-running: the server ends them (the
			// informers ask for 5 to 10 minutes); a client timeout
			// would cut each short.
			wcfg.Timeout = 0
			o.watchRequests.Wrap(wcfg)
			w, werr := newWatcher(wcfg, o.metrics.operatorChanged)
			if werr == nil {
				l.cluster, l.watch = c, w
				o.mu.Lock()
				o.watch = w
				o.mu.Unlock()
				return true
			}
			err = werr
		}
		d := b.Step()
		logger.Info("Cannot connect to the managed cluster", "err", err, "retryAfter", d.Round(time.Millisecond))
		if !sleep(work, d, nil) {
			return false
		}
	}
}

// pass decides what to do, plans the release when it is not the one
// planned, and runs the pass. It returns nil when nothing was applied
// (work ended, or planning failed: then failures is counted).
func (l *leader) pass(work context.Context, abort <-chan struct{}) *PassReport {
	logger := klog.FromContext(work)
	o := l.o
	if err := l.watch.ensure(work); err != nil {
		logger.Info("Cannot watch the cluster's record yet", "err", err)
	}
	cv, err := l.watch.clusterVersion(work)
	if err != nil {
		l.failed(work, "reading the cluster's record", err)
		return nil
	}
	w := decide(cv, current(cv, o.own), func(image string) bool { return l.reached[image] })
	if l.sess == nil || l.release.Image != w.desired.Image {
		sess, err := o.plan(work, l.cluster, w.desired)
		if err != nil {
			l.failed(work, "planning release "+w.desired.Image, err)
			return nil
		}
		l.sess, l.release = sess, w.desired
		if v := releaseVersion(sess); v != "" && l.release.Version == "" {
			l.release.Version = v
		}
	}
	w.desired = l.release
	r := o.pass(work, l.sess, w, l.failures, abort)
	if work.Err() != nil {
		return r
	}
	if r.OK() {
		l.failures = 0
		l.reached[w.desired.Image] = true
	} else {
		l.failures++
	}
	return r
}

// failed counts a pass that could not start and says why.
func (l *leader) failed(ctx context.Context, what string, err error) {
	if ctx.Err() != nil {
		return
	}
	l.failures++
	l.o.metrics.passFailedEarly()
	klog.FromContext(ctx).Info("Pass failed", "step", what, "err", err)
}

// plan builds the session of a release: the operator's own payload, or
// the one Options.ResolvePayload opens for its image.
func (o *Operator) plan(ctx context.Context, c *clustersync.Cluster, rel configv1.Release) (*clustersync.Session, error) {
	opts := o.opts.Start
	opts.Plan.Lean = true
	if rel.Image != o.own.Image {
		if o.opts.ResolvePayload == nil {
			return nil, fmt.Errorf("release image %s: the operator cannot read payloads other than its own", rel.Image)
		}
		p, err := o.opts.ResolvePayload(ctx, rel.Image)
		if err != nil {
			return nil, fmt.Errorf("release image %s: %w", rel.Image, err)
		}
		opts.Plan.Payload, opts.Plan.Loaded, opts.Plan.Parsed = p.FS, nil, nil
		opts.Plan.ReleaseImage = rel.Image
	}
	return clustersync.NewSession(ctx, c, opts)
}

// releaseVersion returns the version of a session's payload.
func releaseVersion(s *clustersync.Session) string {
	if s.Plan.Payload != nil && s.Plan.Payload.Release != nil {
		return s.Plan.Payload.Release.Version
	}
	return ""
}

// interval is the wait before the next pass: Resync with jitter after a
// success; after failures, as the CVO backs off, Resync/16 doubled per
// failure for the first three, then Resync, with the same jitter.
func (o *Operator) interval(failures int) time.Duration {
	d := o.opts.Resync
	if failures > 0 && failures < 4 {
		d = o.opts.Resync / 16
		for range failures {
			d *= 2
		}
	}
	return wait.Jitter(d, o.opts.Jitter)
}

// passTimeout bounds a pass.
func (o *Operator) passTimeout() time.Duration {
	if o.opts.PassTimeout > 0 {
		return o.opts.PassTimeout
	}
	return 2 * o.opts.Resync
}

// sleep waits for d, or a value on wake; false when ctx ended first.
func sleep(ctx context.Context, d time.Duration, wake <-chan struct{}) bool {
	if ctx.Err() != nil {
		return false
	}
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
	case <-wake:
	}
	return true
}
