package clustersync

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"

	"github.com/payload-apply/payload-apply/lib/clusterversion"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/plan"
)

// recordProgress keeps the record's status in step with a run: what the
// run is (base) plus how far it has come (the applier's counts, waits and
// pending deletes).
type recordProgress struct {
	c     *Cluster
	w     *recordWriter
	a     *applier
	total int

	mu     sync.Mutex
	base   clusterversion.Progress
	checks []clusterversion.Check
}

// startRecord opens the record, works out the run's part of its status
// and writes it: the release worked towards, its history entry, the
// capabilities, ReleaseAccepted and the Upgradeable conditions.
func startRecord(ctx context.Context, c *Cluster, p *plan.Plan, opts ApplyOptions, st runSettings, a *applier, release configv1.Release) (*recordProgress, error) {
	w := st.writer
	if w == nil {
		var err error
		if w, err = openRecord(ctx, c, p, st.capsSpec); err != nil {
			return nil, err
		}
	}
	cv := w.record()
	base := clusterversion.Progress{
		Desired:      release,
		Verified:     opts.Release.verified(),
		VersionHash:  versionHash(p),
		Total:        len(p.Graph.Tasks),
		Capabilities: capabilitiesOf(cv, st.capsSpec, p),
		Accepted: &clusterversion.Accepted{Accepted: true, Reason: "PayloadLoaded",
			Message: fmt.Sprintf("Payload loaded version=%q image=%q", release.Version, release.Image)},
	}
	if opts.KeepReleaseAccepted {
		base.Accepted = nil
	}
	risks := opts.Release.risks(clusterversion.VersionName(release))
	if u := st.upgrade; u != nil {
		risks = append([]string{u.Summary.AcceptedRisks}, risks...)
		base.Capabilities = u.Capabilities
	}
	base.AcceptedRisks = joinRisks(risks...)
	if h := cv.Status.History; len(h) > 0 && h[0].Version == release.Version && h[0].Image == release.Image {
		// The same release again: its entry keeps what was accepted to
		// start it, and stays verified; a failure the record reports
		// stands until this run ends (the CVO does not report an earlier
		// state after a failure either).
		base.AcceptedRisks = h[0].AcceptedRisks
		base.Verified = base.Verified || h[0].Verified
		if c := clusterversion.FindCondition(cv.Status.Conditions, clusterversion.Failing); c != nil && c.Status == configv1.ConditionTrue {
			base.Failure = &clusterversion.Failure{Reason: c.Reason, Message: c.Message}
		}
	}
	if st.mode.state == StateReconciling {
		base.Completed, base.Reconciling = true, true
	}
	r := &recordProgress{c: c, w: w, a: a, total: base.Total, base: base}
	var err error
	if r.checks, err = upgradeableChecks(ctx, c, cv); err != nil {
		return nil, err
	}
	if err := w.sync(ctx, r.progress()); err != nil {
		return nil, err
	}
	return r, nil
}

// progress is the record's progress now.
func (r *recordProgress) progress() clusterversion.Progress {
	r.mu.Lock()
	p := r.base
	checks := append([]clusterversion.Check(nil), r.checks...)
	r.mu.Unlock()
	p.Done = r.a.done()
	p.Waiting, p.WaitingReason = r.a.waitingOn()
	if c := clusterversion.DeletesCheck(r.a.pendingDeletes()); c != nil {
		checks = append(checks, *c)
	}
	if !p.Completed && !p.Reconciling {
		checks = append(checks, *clusterversion.UpdateInProgressCheck([]configv1.ClusterOperatorStatusCondition{{Type: configv1.OperatorProgressing, Status: configv1.ConditionTrue}}))
	}
	p.Upgradeable = clusterversion.UpgradeableConditions(checks)
	return p
}

// follow writes the progress every interval until stop is closed; a write
// that fails is logged, and the next one tries again.
func (r *recordProgress) follow(ctx context.Context, stop <-chan struct{}, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	// A write in flight when the run's graph ends is given up (finish
	// writes the end): during an outage it would retry for the whole
	// retry window after the objects gave up.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			if err := r.w.sync(ctx, r.progress()); err != nil && ctx.Err() == nil {
				klog.FromContext(ctx).Info("Warning: the record was not brought up to date", "err", err)
			}
		}
	}
}

// finish writes how the run ended: Completed when everything was applied,
// the failure when something failed; an interrupted run stays where it
// is. The Upgradeable checks are read again.
func (r *recordProgress) finish(ctx context.Context, rep *ApplyReport) error {
	if checks, err := upgradeableChecks(ctx, r.c, r.w.record()); err == nil {
		r.mu.Lock()
		r.checks = checks
		r.mu.Unlock()
	}
	r.mu.Lock()
	switch {
	case rep.OK():
		r.base.Completed, r.base.Reconciling = true, true
		r.base.Failure = nil
	case rep.Interrupted == nil:
		r.base.Failure = failureOf(rep.Errors)
	}
	r.mu.Unlock()
	return r.w.sync(ctx, r.progress())
}

// completed reports whether the record's newest entry is Completed.
func (r *recordProgress) completed() bool {
	cv := r.w.record()
	return len(cv.Status.History) > 0 && cv.Status.History[0].State == configv1.CompletedUpdate
}

// capabilitiesOf returns the capabilities to record: those of the record
// (enabled ones never become disabled), those the plan's selection enables,
// and those of the plan's objects (installed, so enabled); the ones the
// record's spec (else spec) does not ask for are implicitly enabled.
func capabilitiesOf(cv *configv1.ClusterVersion, spec *configv1.ClusterVersionCapabilitiesSpec, p *plan.Plan) clusterversion.Capabilities {
	if cv.Spec.Capabilities != nil {
		spec = cv.Spec.Capabilities
	}
	enabled := clusterversion.FromRecord(spec, cv.Status.Capabilities).Enabled
	if p.Selector != nil && p.Selector.Capabilities != nil {
		enabled = append(enabled, p.Selector.Capabilities.EnabledCapabilities...)
	}
	for _, m := range p.Objects {
		enabled = append(enabled, m.Manifest.GetManifestCapabilities()...)
	}
	return clusterversion.FromRecord(spec, configv1.ClusterVersionCapabilitiesStatus{EnabledCapabilities: enabled, KnownCapabilities: cv.Status.Capabilities.KnownCapabilities})
}

// upgradeableChecks reads what the Upgradeable condition sums up, as the
// CVO's checks: overrides, admin gates not acknowledged, ClusterOperators
// that say Upgradeable=False. (Deletes and an update in progress come
// from the run.)
func upgradeableChecks(ctx context.Context, c *Cluster, cv *configv1.ClusterVersion) ([]clusterversion.Check, error) {
	var checks []clusterversion.Check
	if ch := clusterversion.OverridesCheck(cv.Spec.Overrides); ch != nil {
		checks = append(checks, *ch)
	}
	gates, err := configMapData(ctx, c, "openshift-config-managed", "admin-gates")
	if err != nil {
		return nil, err
	}
	acks, err := configMapData(ctx, c, "openshift-config", "admin-acks")
	if err != nil {
		return nil, err
	}
	if ch := clusterversion.AdminAcksCheck(clusterversion.CurrentVersion(cv.Status.History), gates, acks); ch != nil {
		checks = append(checks, *ch)
	}
	ops, err := operatorsUpgradeable(ctx, c)
	if err != nil {
		return nil, err
	}
	if ch := clusterversion.ClusterOperatorsCheck(ops); ch != nil {
		checks = append(checks, *ch)
	}
	return checks, nil
}

// configMapData returns a ConfigMap's data (never nil for one that
// exists), or nil when there is none.
func configMapData(ctx context.Context, c *Cluster, ns, name string) (map[string]string, error) {
	dc, err := c.dynamic()
	if err != nil {
		return nil, err
	}
	var u *unstructured.Unstructured
	err = resourceapply.Retry(ctx, c.RetryOptions(), func() error {
		var err error
		u, err = dc.Resource(corev1.SchemeGroupVersion.WithResource("configmaps")).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			u, err = nil, nil
		}
		return err
	})
	if err != nil || u == nil {
		return nil, err
	}
	data, _, _ := unstructured.NestedStringMap(u.Object, "data")
	if data == nil {
		data = map[string]string{}
	}
	return data, nil
}

// operatorsUpgradeable lists the cluster's ClusterOperators' Upgradeable
// conditions (none when it does not serve the kind).
func operatorsUpgradeable(ctx context.Context, c *Cluster) ([]clusterversion.OperatorUpgradeable, error) {
	dc, err := c.dynamic()
	if err != nil {
		return nil, err
	}
	var list *unstructured.UnstructuredList
	err = resourceapply.Retry(ctx, c.RetryOptions(), func() error {
		var err error
		list, err = dc.Resource(configv1.GroupVersion.WithResource("clusteroperators")).List(ctx, metav1.ListOptions{})
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			// Not served (yet): no ClusterOperators.
			list, err = &unstructured.UnstructuredList{}, nil
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing ClusterOperators: %w", err)
	}
	var out []clusterversion.OperatorUpgradeable
	for _, item := range list.Items {
		var co configv1.ClusterOperator
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(item.Object, &co); err != nil {
			continue
		}
		for _, cond := range co.Status.Conditions {
			if cond.Type == configv1.OperatorUpgradeable {
				out = append(out, clusterversion.OperatorUpgradeable{Name: co.Name, Condition: cond})
			}
		}
	}
	return out, nil
}

// failureOf words a run's errors as the CVO's Failing condition: one error
// with its reason, several as MultipleErrors (at most ten listed).
func failureOf(errs []error) *clusterversion.Failure {
	if len(errs) == 0 {
		return nil
	}
	if len(errs) == 1 {
		return &clusterversion.Failure{Reason: cvoReason(errs[0]), Message: errs[0].Error()}
	}
	var lines []string
	for i, e := range errs {
		if i == 10 {
			lines = append(lines, fmt.Sprintf("... and %d more", len(errs)-10))
			break
		}
		lines = append(lines, e.Error())
	}
	return &clusterversion.Failure{Reason: "MultipleErrors", Message: "Multiple errors are preventing progress:\n* " + strings.Join(lines, "\n* ")}
}

// cvoReason names a failure as the CVO's task errors do
// (pkg/payload/task.go).
func cvoReason(err error) string {
	var ae *resourceapply.ApplyError
	if errors.As(err, &ae) && ae.Object.Kind == "ClusterOperator" && ae.Verb == "wait" {
		msg := err.Error()
		switch {
		case strings.Contains(msg, "Available="):
			return "ClusterOperatorNotAvailable"
		case strings.Contains(msg, "Degraded="):
			return "ClusterOperatorDegraded"
		}
		return "ClusterOperatorUpdating"
	}
	var pe *PreconditionError
	if errors.As(err, &pe) {
		return "UpgradePreconditionCheckFailed"
	}
	switch resourceapply.ReasonOf(err) {
	case resourceapply.ReasonResourceTypeMissing:
		return "UpdatePayloadResourceTypeMissing"
	case resourceapply.ReasonNamespaceMissing:
		return "UpdatePayloadResourceNotFound"
	case resourceapply.ReasonConflict:
		return "UpdatePayloadResourceConflict"
	case resourceapply.ReasonUnavailable, resourceapply.ReasonTimeout:
		return "UpdatePayloadClusterDown"
	case resourceapply.ReasonInvalid:
		return "UpdatePayloadResourceInvalid"
	case resourceapply.ReasonUnauthorized:
		return "UpdatePayloadClusterUnauthorized"
	case resourceapply.ReasonForbidden:
		return "UpdatePayloadResourceForbidden"
	}
	return "UpdatePayloadFailed"
}
