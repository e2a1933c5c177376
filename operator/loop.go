package operator

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/payload-apply/payload-apply/clustersync"
	"github.com/payload-apply/payload-apply/plan"
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
	// inputs are what of the record sess was planned with.
	inputs recordInputs
	// payloads are the payloads opened by image (the operator's own is
	// not among them): a release is read and verified once per
	// leadership.
	payloads map[string]*Payload
	// failures counts the failed passes in a row; passes counts them
	// all (it seeds the reconcile order's permutation, as the CVO's
	// attempts do).
	failures, passes int
}

// lead is the leader's loop: connect, then pass after pass until work
// ends (shutdown, or the lease lost, which also closes abort). Between
// passes it waits for the next resync, a shorter backoff after a failure,
// or a change of the ClusterVersion's spec.
func (o *Operator) lead(work context.Context, abort <-chan struct{}) {
	logger := klog.FromContext(work)
	l := &leader{o: o, payloads: map[string]*Payload{}}
	if !l.connect(work) {
		return
	}
	if client, err := updatesClient(o.opts.Cluster, o.updateRequests); err != nil {
		logger.Info("Cannot learn the cluster's updates", "err", err)
	} else {
		var polling sync.WaitGroup
		polling.Go(func() { l.pollUpdates(work, client) })
		defer polling.Wait()
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

// pass reads the cluster's record, decides what to do (decide), and runs
// the pass: the upgrade an admin requested, or an apply of the release
// the cluster runs, planned when it is not the one planned. A request
// that is rejected changes nothing but the record's ReleaseAccepted, and
// the release the cluster runs is applied as before (the CVO goes on
// reconciling). It returns the last report, nil when nothing was applied
// (work ended, or the pass failed before: then failures is counted).
func (l *leader) pass(work context.Context, abort <-chan struct{}) *PassReport {
	logger := klog.FromContext(work)
	o := l.o
	if err := l.watch.ensure(work); err != nil {
		logger.Info("Cannot watch the cluster's record yet", "err", err)
	}
	// Read, not taken from the watch's cache: the last pass wrote it.
	cv, err := clustersync.ReadRecord(work, l.cluster)
	if err != nil {
		l.failed(work, "reading the cluster's record", err)
		return nil
	}
	w := decide(cv, o.own)
	l.passes++
	rejected := false
	if w.update != nil {
		r := l.upgrade(work, cv, *w.update, abort)
		if r == nil || !r.Rejected() {
			l.done(work, r)
			return r
		}
		rejected = true
	}
	// The release the record says the cluster runs was accepted when it
	// was installed or updated to (an unverified one forced then, an
	// accepted risk): it is not judged again.
	pl, err := l.payload(work, w.running.Image, true)
	if err != nil {
		l.failed(work, "opening release "+w.running.Image, err)
		return nil
	}
	if in := inputsOf(cv); l.sess == nil || l.release.Image != w.running.Image || !reflect.DeepEqual(in, l.inputs) {
		if l.sess, err = o.plan(work, l.cluster, pl); err != nil {
			l.failed(work, "planning release "+w.running.Image, err)
			return nil
		}
		l.release, l.inputs = w.running, in
	}
	l.sess.Record = cv
	r := o.applyPass(work, l.sess, cv, passInput{release: w.running, verification: pl.Verification, attempt: l.failures,
		seed: l.passes, keepAccepted: rejected, abort: abort})
	l.done(work, r)
	return r
}

// recordInputs are what of the record a plan depends on: the objects its
// spec.overrides leave unmanaged and the capabilities it enables. When
// they change, the release is planned again.
type recordInputs struct {
	overrides []configv1.ComponentOverride
	enabled   []configv1.ClusterVersionCapability
}

func inputsOf(cv *configv1.ClusterVersion) recordInputs {
	if cv == nil {
		return recordInputs{}
	}
	return recordInputs{overrides: cv.Spec.Overrides, enabled: cv.Status.Capabilities.EnabledCapabilities}
}

// done counts a pass's outcome.
func (l *leader) done(work context.Context, r *PassReport) {
	switch {
	case work.Err() != nil || r == nil:
	case r.OK() || r.Rejected():
		l.failures = 0
	default:
		l.failures++
	}
}

// payload returns the payload of a release image: the operator's own, or
// the one Options.ResolvePayload opens (once per leadership; force lets
// an unverified one through, as an accepted risk).
func (l *leader) payload(ctx context.Context, image string, force bool) (*Payload, error) {
	o := l.o
	if image == o.own.Image {
		return &Payload{Verification: o.opts.Verification}, nil
	}
	// A payload let through by force is kept apart: a request that does
	// not force it has it verified.
	key := image
	if force {
		key += " (forced)"
	}
	if p := l.payloads[key]; p != nil {
		return p, nil
	}
	if o.opts.ResolvePayload == nil {
		return nil, fmt.Errorf("release image %s: the operator cannot read payloads other than its own", image)
	}
	p, err := o.opts.ResolvePayload(ctx, image, force)
	if err != nil {
		return nil, fmt.Errorf("release image %s: %w", image, err)
	}
	l.payloads[key] = p
	return p, nil
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

// planOptions are the plan options of a payload: the operator's own
// (Payload.FS nil), or Start.Plan's with the payload replaced.
func (o *Operator) planOptions(p *Payload) plan.Options {
	opts := o.opts.Start.Plan
	opts.Lean = true
	if p.FS != nil {
		opts.Payload, opts.Loaded, opts.Parsed = p.FS, nil, nil
		opts.ReleaseImage = p.ReleaseImage
	}
	return opts
}

// plan builds the session of a payload for the cluster.
func (o *Operator) plan(ctx context.Context, c *clustersync.Cluster, p *Payload) (*clustersync.Session, error) {
	opts := o.opts.Start
	opts.Plan = o.planOptions(p)
	return clustersync.NewSession(ctx, c, opts)
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
