package operator

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/payload-apply/payload-apply/lib/cincinnati"
	"github.com/payload-apply/payload-apply/lib/clustercondition"
	cvstatus "github.com/payload-apply/payload-apply/lib/clusterversion"
	"github.com/payload-apply/payload-apply/lib/requests"
	"github.com/payload-apply/payload-apply/lib/updateservice"
)

// UpdateOptions say how the leader learns which releases the cluster may
// update to: the update service of the record's spec.upstream, asked for
// spec.channel, and the cluster's Prometheus for the risks' rules. The
// zero value works: no Prometheus (a PromQL rule then fails to evaluate,
// and its update is not recommended), the defaults below.
type UpdateOptions struct {
	// PrometheusURL is the Prometheus HTTP API the risks' PromQL rules
	// are asked of (in OpenShift, the Thanos querier); empty: none.
	PrometheusURL string
	// PrometheusCAFile adds a CA to the system's roots for PrometheusURL;
	// PrometheusTokenFile holds a bearer token sent to it (read at each
	// query). Empty: none.
	PrometheusCAFile, PrometheusTokenFile string
	// Interval is the time between two questions to the update service
	// once it answered (the CVO asks every two to four minutes); after a
	// failure it asks again sooner, backing off up to Interval. A change
	// of the record's spec asks at once. Zero: Options.Resync.
	Interval time.Duration
	// RiskPeriod is how long a rule's evaluation is kept; zero: the
	// CVO's hour (clustercondition.DefaultPeriod).
	RiskPeriod time.Duration
	// Arch is the architecture asked for; empty: the operator's own
	// (runtime.GOARCH), or "multi" when the record's release is.
	Arch string
	// Transport sends the update service's requests; nil: Go's default
	// (the environment's proxy, the system's roots).
	Transport http.RoundTripper
}

// updater learns the cluster's updates; one per Operator (its risk
// evaluations outlive a leadership). Only the leader uses it.
type updater struct {
	interval time.Duration
	arch     string
	client   updateservice.Client
	eval     *clustercondition.Evaluator

	mu sync.Mutex
	// known is what the update service said to the question last asked.
	known known
	// next is when to ask again; backoff paces the failures.
	next    time.Time
	backoff wait.Backoff
	// written is the record as the last status write left it, and
	// writtenOver the resourceVersion it was written over: a cache that
	// still shows that one is behind.
	written     *configv1.ClusterVersion
	writtenOver string
}

// known is what the updater knows of one question.
type known struct {
	// key is the question: upstream, channel, arch, id, version.
	key string
	// retrieved is the RetrievedUpdates condition of the last asking.
	retrieved configv1.ClusterOperatorStatusCondition
	// updates and conditional are the last good answer, kept when a later
	// asking fails (the CVO keeps it); fromRecord says there is none yet
	// in this process, and the record's own are kept instead.
	updates     []configv1.Release
	conditional []configv1.ConditionalUpdate
	fromRecord  bool
}

// newUpdater makes the updater of opts.
func newUpdater(opts Options) (*updater, error) {
	u := opts.Updates
	if u.Interval <= 0 {
		u.Interval = opts.Resync
	}
	if u.Arch == "" {
		u.Arch = runtime.GOARCH
	}
	eopts := clustercondition.Options{PrometheusURL: u.PrometheusURL, BearerTokenFile: u.PrometheusTokenFile, Period: u.RiskPeriod,
		RetryFailed: min(clustercondition.DefaultRetryFailed, u.Interval)}
	if u.PrometheusCAFile != "" {
		pem, err := os.ReadFile(u.PrometheusCAFile)
		if err != nil {
			return nil, fmt.Errorf("the Prometheus CA: %w", err)
		}
		roots, err := x509.SystemCertPool()
		if err != nil {
			roots = x509.NewCertPool()
		}
		if !roots.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the Prometheus CA %s: no PEM certificate in it", u.PrometheusCAFile)
		}
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
		eopts.Transport = t
	}
	eval, err := clustercondition.New(eopts)
	if err != nil {
		return nil, err
	}
	return &updater{interval: u.Interval, arch: u.Arch, eval: eval,
		client:  updateservice.Client{Transport: u.Transport, UserAgent: "payload-apply operator"},
		backoff: failureBackoff(u.Interval)}, nil
}

// failureBackoff paces the questions after failures: an eighth of the
// interval (at least a second), doubling up to the interval.
func failureBackoff(interval time.Duration) wait.Backoff {
	return wait.Backoff{Duration: max(interval/8, time.Second), Factor: 2, Jitter: 0.2, Steps: 1 << 30, Cap: interval}
}

// pollUpdates is the leader's loop of updates, until ctx ends: sync, then
// wait for the next question or a change of the record's spec.
func (l *leader) pollUpdates(ctx context.Context, client rest.Interface) {
	for {
		d := l.o.updates.sync(ctx, l.watch, client)
		if !sleep(ctx, d, l.watch.updates) {
			return
		}
	}
}

// sync asks the update service when it is time (or the question changed),
// evaluates the risks of the conditional updates, and writes the record's
// availableUpdates, conditionalUpdates and RetrievedUpdates when they
// changed. It returns the time until the next sync.
func (u *updater) sync(ctx context.Context, w *watcher, client rest.Interface) time.Duration {
	logger := klog.FromContext(ctx)
	cv, err := w.clusterVersion(ctx)
	if err != nil || cv == nil {
		if err != nil && ctx.Err() == nil {
			logger.Info("Cannot read the record for its updates", "err", err)
		}
		return max(u.interval/8, time.Second)
	}
	u.mu.Lock()
	if u.written != nil && cv.ResourceVersion == u.writtenOver {
		cv = u.written.DeepCopy()
	}
	u.mu.Unlock()
	k := u.fetch(ctx, string(cv.Spec.Upstream), u.query(cv))
	if ctx.Err() != nil {
		return 0
	}
	updates, conditional := k.updates, k.conditional
	if k.fromRecord {
		updates, conditional = unconditional(cv.Status), cv.Status.ConditionalUpdates
	}
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	ev := cincinnati.Evaluate(ctx, u.eval, updates, withConditions(conditional, cv.Status.ConditionalUpdates), acceptedRisks(cv), now)
	u.mu.Lock()
	next := time.Until(u.next)
	u.mu.Unlock()
	if err := u.write(ctx, client, cv, ev, k.retrieved, now); err != nil {
		if ctx.Err() == nil {
			logger.Info("Cannot write the record's updates", "err", err)
		}
		return min(next, time.Second)
	}
	return max(next, 0)
}

// query is the question the record asks.
func (u *updater) query(cv *configv1.ClusterVersion) cincinnati.Query {
	arch := u.arch
	if cv.Status.Desired.Architecture == configv1.ClusterVersionArchitectureMulti {
		arch = "multi"
	}
	return cincinnati.Query{Channel: cv.Spec.Channel, Arch: arch, ID: string(cv.Spec.ClusterID), Version: cv.Status.Desired.Version}
}

// fetch asks the update service when it is time, or when the question
// changed, and returns what is known of the question. A failure of the
// service (RemoteFailed, ResponseFailed, ResponseInvalid) keeps the last
// answer to the same question (the record's own when this process has
// none) and is asked again after a backoff; any other failure (no
// channel, the version not in it, ...) clears it.
func (u *updater) fetch(ctx context.Context, upstream string, q cincinnati.Query) known {
	logger := klog.FromContext(ctx)
	key := strings.Join([]string{upstream, q.Channel, q.Arch, q.ID, q.Version}, "\x00")
	u.mu.Lock()
	k := u.known
	due := time.Now().After(u.next)
	u.mu.Unlock()
	if k.key == key && !due {
		return k
	}
	var res *cincinnati.Result
	url, err := cincinnati.Check(upstream, q)
	if err == nil {
		var g *cincinnati.Graph
		if g, err = u.client.Fetch(ctx, url); err == nil {
			res, err = g.Updates(q.Version, q.Channel)
		}
	}
	if ctx.Err() != nil {
		return k
	}
	var e *cincinnati.Error
	failed := errors.As(err, &e) && e.Failed()
	next := wait.Jitter(u.interval, 0.2)
	switch {
	case err == nil:
		for _, w := range res.Warnings {
			logger.Info("The update service's graph", "warning", w, "channel", q.Channel)
		}
		logger.V(2).Info("Retrieved updates", "upstream", upstream, "channel", q.Channel, "version", q.Version, "updates", len(res.Updates), "conditional", len(res.Conditional))
		k = known{updates: res.Updates, conditional: res.Conditional}
	case failed:
		logger.Info("Cannot retrieve the cluster's updates", "upstream", upstream, "channel", q.Channel, "reason", e.Reason, "err", e.Message)
		switch {
		case k.key == "":
			k.fromRecord = true
		case k.key != key:
			k = known{}
		}
		u.mu.Lock()
		next = u.backoff.Step()
		u.mu.Unlock()
	default:
		logger.V(2).Info("No updates", "upstream", upstream, "channel", q.Channel, "err", err)
		k = known{}
	}
	k.key, k.retrieved = key, cincinnati.RetrievedCondition(err)
	u.mu.Lock()
	defer u.mu.Unlock()
	if !failed {
		u.backoff = failureBackoff(u.interval)
	}
	u.known, u.next = k, time.Now().Add(next)
	return k
}

// unconditional returns the record's availableUpdates that are not among
// its conditionalUpdates (those are judged again).
func unconditional(st configv1.ClusterVersionStatus) []configv1.Release {
	conditional := map[string]bool{}
	for _, c := range st.ConditionalUpdates {
		conditional[c.Release.Image] = true
	}
	var out []configv1.Release
	for _, r := range st.AvailableUpdates {
		if !conditional[r.Image] {
			out = append(out, r)
		}
	}
	return out
}

// withConditions returns the conditional updates with the conditions the
// record has for the same release, so that a condition that does not
// change keeps its transition time.
func withConditions(updates, recorded []configv1.ConditionalUpdate) []configv1.ConditionalUpdate {
	out := make([]configv1.ConditionalUpdate, len(updates))
	for i, c := range updates {
		out[i] = *c.DeepCopy()
		for _, r := range recorded {
			if r.Release.Image == c.Release.Image {
				out[i].Conditions = append([]metav1.Condition(nil), r.Conditions...)
				break
			}
		}
	}
	return out
}

// acceptedRisks returns the names in spec.desiredUpdate.acceptRisks.
func acceptedRisks(cv *configv1.ClusterVersion) []string {
	var out []string
	if d := cv.Spec.DesiredUpdate; d != nil {
		for _, r := range d.AcceptRisks {
			out = append(out, r.Name)
		}
	}
	return out
}

// write sets the record's availableUpdates, conditionalUpdates and
// RetrievedUpdates (clusterversion.SetUpdates) and writes them when they
// changed: one merge patch of the status, over the record's
// resourceVersion (a conflict is retried by the next sync).
func (u *updater) write(ctx context.Context, client rest.Interface, cv *configv1.ClusterVersion, ev *cincinnati.Evaluation, retrieved configv1.ClusterOperatorStatusCondition, now metav1.Time) error {
	next := cv.Status.DeepCopy()
	cvstatus.SetUpdates(next, ev.Available, ev.Conditional, retrieved, now)
	if equality.Semantic.DeepEqual(next.AvailableUpdates, cv.Status.AvailableUpdates) &&
		equality.Semantic.DeepEqual(next.ConditionalUpdates, cv.Status.ConditionalUpdates) &&
		equality.Semantic.DeepEqual(next.Conditions, cv.Status.Conditions) {
		return nil
	}
	// A merge patch's null removes a field, and availableUpdates is
	// required: none is an empty list.
	available := next.AvailableUpdates
	if available == nil {
		available = []configv1.Release{}
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": cv.ResourceVersion},
		"status":   map[string]any{"availableUpdates": available, "conditionalUpdates": next.ConditionalUpdates, "conditions": next.Conditions},
	})
	if err != nil {
		return err
	}
	out := &configv1.ClusterVersion{}
	err = client.Patch(types.MergePatchType).Resource("clusterversions").Name(ClusterVersionName).SubResource("status").Body(patch).Do(ctx).Into(out)
	if apierrors.IsConflict(err) {
		return fmt.Errorf("ClusterVersion/%s: the record changed meanwhile: %w", ClusterVersionName, err)
	}
	if err != nil {
		return fmt.Errorf("ClusterVersion/%s: patch status: %w", ClusterVersionName, err)
	}
	klog.FromContext(ctx).Info("Updated the cluster's updates", "available", len(next.AvailableUpdates), "conditional", len(next.ConditionalUpdates),
		"retrieved", retrieved.Status, "reason", retrieved.Reason)
	u.mu.Lock()
	u.written, u.writtenOver = out, cv.ResourceVersion
	u.mu.Unlock()
	return nil
}

// resolve finds the release of a request that names a version without an
// image, as the CVO does from the record: a conditional update of that
// version is judged again now (its risks, the request's acceptRisks) and
// taken when recommended, its accepted risks returned for the history; a
// not recommended one is refused, naming its risks; otherwise an
// available update of that version; otherwise the version is not found.
func (u *updater) resolve(ctx context.Context, cv *configv1.ClusterVersion, req configv1.Update) (configv1.Update, []string, *RejectedError) {
	from := cv.Status.Desired.Version
	for _, c := range cv.Status.ConditionalUpdates {
		if c.Release.Version != req.Version || c.Release.Image == "" {
			continue
		}
		ev := cincinnati.Evaluate(ctx, u.eval, nil, []configv1.ConditionalUpdate{c}, acceptedRisks(cv), metav1.Now())
		v := ev.Verdicts[0]
		if v.Recommended.Status == metav1.ConditionTrue {
			req.Image = c.Release.Image
			var risks []string
			if len(v.Accepted) > 0 {
				risks = append(risks, fmt.Sprintf("The update to %s is exposed to the risks %s, which the cluster's administrators accepted (spec.desiredUpdate.acceptRisks).",
					req.Version, strings.Join(v.Accepted, ", ")))
			}
			return req, risks, nil
		}
		msg := fmt.Sprintf("The update from %s to %s is not recommended:\n\n%s", from, req.Version, v.Recommended.Message)
		switch {
		case len(v.Exposed) > 0:
			msg += fmt.Sprintf("\n\nTo update anyway, accept its risks: spec.desiredUpdate.acceptRisks %s.", strings.Join(v.Exposed, ", "))
		default:
			msg += "\n\nIts risks could not be evaluated; to update anyway, name the release's image in spec.desiredUpdate.image."
		}
		return req, nil, &RejectedError{Reason: v.Recommended.Reason, Message: msg}
	}
	for _, r := range cv.Status.AvailableUpdates {
		if r.Version == req.Version && r.Image != "" {
			req.Image = r.Image
			return req, nil, nil
		}
	}
	return req, nil, &RejectedError{Reason: ReasonVersionNotFound,
		Message: fmt.Sprintf("No image is known for version %s: the record's availableUpdates and conditionalUpdates do not list it; set spec.desiredUpdate.image", clip(req.Version, maxQuoted))}
}

// updatesClient returns a client of cfg for the record's status writes,
// its requests counted by counter.
func updatesClient(cfg *rest.Config, counter *requests.Counter) (rest.Interface, error) {
	cfg = rest.CopyConfig(cfg)
	counter.Wrap(cfg)
	return configClient(cfg)
}
