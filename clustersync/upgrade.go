package clustersync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/payload-apply/payload-apply/lib/clusterversion"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/plan"
	"github.com/payload-apply/payload-apply/upgrade"
)

// ForceAll, in UpgradeInput.Force, overrides every precondition.
const ForceAll = "*"

// UpgradeInput says what PlanUpgrade plans.
type UpgradeInput struct {
	// From are the plan options of the release the cluster runs: its
	// payload opened from the record (FromImage names it), and the same
	// selection as To. The profile and the capabilities come from the
	// cluster, as Start takes them.
	From plan.Options
	// To are the plan options of the release to go to.
	To plan.Options
	// Release names To's payload in the record and says how it was
	// verified.
	Release Release
	// Force names the preconditions to override (upgrade.Checks; ForceAll
	// for all): their failures become accepted risks of the history entry.
	Force []string
	// AllowRollback lets a rollback to the cluster's previous version
	// within a z-stream pass.
	AllowRollback bool
}

// Upgrade is an update of a cluster from the release it runs to another,
// planned by PlanUpgrade and run by RunUpgrade.
type Upgrade struct {
	// Cluster and Record are the cluster and its record as read.
	Cluster *Cluster
	Record  *configv1.ClusterVersion
	// From and To are the plans of both releases, and FromRelease and
	// ToRelease the releases as the record names them.
	From, To               *plan.Plan
	FromRelease, ToRelease configv1.Release
	// Type is the kind of update ("" when a version does not parse).
	Type clusterversion.UpdateType
	// Continuing: the record's newest entry is To, Partial: an update that
	// stopped goes on where it stopped (its preconditions were checked
	// when it started; the checks are not run again).
	Continuing bool
	// Done: the cluster runs To already (its entry is Completed).
	Done bool
	// Changes are what To does to the objects (creates, changes, deletes,
	// orphans, moves).
	Changes *upgrade.Changes
	// Takes are what To's deletes of Namespaces and
	// CustomResourceDefinitions take with them (the objects in them, read
	// from the cluster, and what the plans put there); the orphans they
	// take are not in Changes.Orphans.
	Takes []upgrade.Taken
	// Implicit are the capabilities To enables implicitly, and
	// Capabilities the cluster's capabilities with them.
	Implicit     []upgrade.Implicit
	Capabilities clusterversion.Capabilities
	// Upgradeable are the record's Upgradeable conditions as they stand
	// now, and DeletesInProgress the objects still being deleted.
	Upgradeable       []configv1.ClusterOperatorStatusCondition
	DeletesInProgress []string
	// Verdicts are the preconditions' (none when Continuing or Done) and
	// Summary what they mean (forced ones accepted as risks).
	Verdicts []upgrade.Verdict
	Summary  upgrade.Summary

	release Release
}

// Blocked reports whether a precondition that was not forced blocks the
// update.
func (u *Upgrade) Blocked() bool { return !u.Continuing && !u.Done && u.Summary.Blocked }

// ErrNoRecord says a cluster has no record of a release it runs, so
// there is nothing to update from.
var ErrNoRecord = errors.New("the cluster has no record of the release it runs (ClusterVersion version with a history): install a release first")

// PreconditionError says preconditions blocked an update.
type PreconditionError struct {
	Verdicts []upgrade.Verdict
	Summary  upgrade.Summary
}

// Error prints the CVO's summary of the failed preconditions.
func (e *PreconditionError) Error() string {
	return "preconditions block the update: " + e.Summary.Message
}

// FromImage returns the image of the release an update to toImage goes
// from: the release the record works towards (status.desired) or, when
// that is toImage itself (an update that stopped), the history entry
// before it. "" when the record has none.
func FromImage(rec *configv1.ClusterVersion, toImage string) string {
	if rec == nil {
		return ""
	}
	h := rec.Status.History
	if len(h) > 0 && h[0].Image == toImage {
		if len(h) > 1 {
			return h[1].Image
		}
		return h[0].Image
	}
	if rec.Status.Desired.Image != "" {
		return rec.Status.Desired.Image
	}
	if len(h) > 0 {
		return h[0].Image
	}
	return ""
}

// PlanUpgrade plans the update of c to in.To, reading the cluster as the
// CVO does before an update: the record (ErrNoRecord without one), the
// profile and capabilities, the ClusterOperators' Upgradeable conditions,
// the admin gates and acknowledgements, the deletes still in progress. It
// builds both plans (To with the capabilities it enables implicitly),
// compares them and runs the preconditions. It writes nothing.
func PlanUpgrade(ctx context.Context, c *Cluster, in UpgradeInput) (*Upgrade, error) {
	rec, err := ReadRecord(ctx, c)
	if err != nil {
		return nil, ExplainConnection(err)
	}
	if rec == nil || len(rec.Status.History) == 0 {
		return nil, ErrNoRecord
	}
	fromOpts, err := clusterPlanOptions(ctx, c, rec, in.From)
	if err != nil {
		return nil, err
	}
	toOpts, err := clusterPlanOptions(ctx, c, rec, in.To)
	if err != nil {
		return nil, err
	}
	from, err := plan.Build(ctx, fromOpts)
	if err != nil {
		return nil, fmt.Errorf("the release the cluster runs: %w", err)
	}
	to, err := plan.Build(ctx, toOpts)
	if err != nil {
		return nil, err
	}
	u := &Upgrade{Cluster: c, Record: rec, From: from, release: in.Release,
		Capabilities: clusterversion.FromRecord(rec.Spec.Capabilities, rec.Status.Capabilities)}
	if u.Implicit = upgrade.ImplicitlyEnabled(from, to, u.Capabilities); len(u.Implicit) > 0 {
		u.Capabilities = u.Capabilities.WithImplicit(upgrade.Capabilities(u.Implicit))
		toOpts.Capabilities, toOpts.BaselineCapabilitySet, toOpts.AdditionalCapabilities = true, string(configv1.ClusterVersionCapabilitySetNone), nil
		for _, e := range u.Capabilities.Enabled {
			toOpts.AdditionalCapabilities = append(toOpts.AdditionalCapabilities, string(e))
		}
		if to, err = plan.Build(ctx, toOpts); err != nil {
			return nil, err
		}
	}
	u.To = to
	u.ToRelease = configv1.Release{Version: planVersion(to), Image: in.Release.Image}
	if u.ToRelease.Version == "" {
		return nil, errors.New("the payload to update to has no release version (release-manifests/release-metadata): an update needs one")
	}
	u.FromRelease = rec.Status.Desired
	if h := rec.Status.History; h[0].Version == u.ToRelease.Version && h[0].Image == u.ToRelease.Image {
		u.Done = h[0].State == configv1.CompletedUpdate
		u.Continuing = !u.Done
		if len(h) > 1 {
			u.FromRelease = configv1.Release{Version: h[1].Version, Image: h[1].Image}
		}
	}
	u.Type, _ = clusterversion.UpdateTypeOf(u.FromRelease.Version, u.ToRelease.Version)
	u.Changes = upgrade.Compare(from.Objects, to.Objects)
	h, err := held(ctx, c, to)
	if err != nil {
		return nil, ExplainConnection(err)
	}
	u.Takes = upgrade.Takes(u.Changes, from.Objects, to.Objects, h)

	checks, err := upgradeableChecks(ctx, c, rec)
	if err != nil {
		return nil, err
	}
	if u.DeletesInProgress, err = deletesInProgress(ctx, c, from); err != nil {
		return nil, err
	}
	if ch := clusterversion.DeletesCheck(u.DeletesInProgress); ch != nil {
		checks = append(checks, *ch)
	}
	if ch := clusterversion.UpdateInProgressCheck(rec.Status.Conditions); ch != nil {
		checks = append(checks, *ch)
	}
	u.Upgradeable = clusterversion.UpgradeableConditions(checks)
	if u.Continuing || u.Done {
		return u, nil
	}
	conds := append([]configv1.ClusterOperatorStatusCondition(nil), rec.Status.Conditions...)
	clusterversion.SetUpgradeable(&conds, u.Upgradeable, metav1.Now())
	u.Verdicts = upgrade.Preconditions(upgrade.Facts{Current: rec.Status.Desired, History: rec.Status.History, Conditions: conds,
		Overrides: rec.Spec.Overrides, Target: u.ToRelease.Version, AllowRollback: in.AllowRollback})
	u.Verdicts = append(u.Verdicts, upgrade.TakesVerdicts(u.Takes)...)
	u.Summary = upgrade.Summarize(u.Verdicts, func(name string) bool {
		// A release that deletes what it applies cannot end well: no force.
		return name != upgrade.CheckDeletesWhatItApplies && (slices.Contains(in.Force, ForceAll) || slices.Contains(in.Force, name))
	})
	return u, nil
}

// deletesInProgress names the objects p annotates for deletion that the
// cluster is still deleting (they have a deletion timestamp).
func deletesInProgress(ctx context.Context, c *Cluster, p *plan.Plan) ([]string, error) {
	var out []string
	for _, m := range p.Objects {
		if !m.IsDelete() {
			continue
		}
		live, err := c.Manager.Get(ctx, m.GVK, m.Obj.GetNamespace(), m.Obj.GetName(), c.RetryOptions())
		switch {
		case resourceapply.IsResourceTypeMissing(err):
		case err != nil:
			return nil, err
		case live != nil && live.GetDeletionTimestamp() != nil:
			name := m.Obj.GetName()
			if ns := m.Obj.GetNamespace(); ns != "" {
				name = ns + "/" + name
			}
			out = append(out, lowerKind(m.GVK.Kind)+" "+name)
		}
	}
	return out, nil
}

// RunUpgrade runs a planned update, as the CVO updates a cluster: when
// preconditions block it, the record says so (ReleaseAccepted=False) and
// the report carries a *PreconditionError; when the cluster runs To
// already, nothing happens. Otherwise the record's spec.desiredUpdate is
// set to To, its status says the update started (a new history entry,
// Partial, with the accepted risks; ReleaseAccepted; Upgradeable=False
// while it is in progress), and To's plan runs in the update order
// (payload.OrderUpdate, no stage) with the update's waits: each
// ClusterOperator reaches To's versions, Deployments and DaemonSets roll
// out, CustomResourceDefinitions are Established and Jobs complete before
// their node goes on, and deleted objects are followed until they are
// gone. A failed node stops what comes after it; the entry stays Partial
// and a run of the same update continues it (Continuing). opts are as for
// Apply (Order and Release are the upgrade's own).
func RunUpgrade(ctx context.Context, u *Upgrade, opts ApplyOptions) *ApplyReport {
	s := &Session{Cluster: u.Cluster, Plan: u.To, Record: u.Record}
	switch {
	case u.Done:
		r := refused(s, nil)
		r.Errors, r.State, r.Order, r.Release, r.Completed = nil, StateReconciling, payload.OrderUpdate, u.ToRelease, true
		return r
	case u.Blocked():
		err := &PreconditionError{Verdicts: u.Verdicts, Summary: u.Summary}
		r := refused(s, err)
		r.Release = u.ToRelease
		if !opts.DryRun && !opts.NoRecord {
			if werr := u.rejected(ctx); werr != nil {
				r.Errors = append(r.Errors, werr)
			}
		}
		return r
	}
	opts.Release = u.release
	st := runSettings{mode: mode{order: payload.OrderUpdate, state: StateUpdating}, record: s.Record, upgrade: u, updateWaits: true}
	if !opts.DryRun && !opts.NoRecord {
		w, err := openRecord(ctx, u.Cluster, u.To, nil)
		if err == nil {
			err = w.setDesiredUpdate(ctx, configv1.Update{Version: u.ToRelease.Version, Image: u.ToRelease.Image, Force: len(u.Summary.AcceptedRisks) > 0})
		}
		if err != nil {
			return refused(s, err)
		}
		st.record, st.writer = w.record(), w
	}
	return run(ctx, u.Cluster, u.To, opts, st)
}

// rejected writes ReleaseAccepted=False, PreconditionChecks, to the record.
func (u *Upgrade) rejected(ctx context.Context) error {
	w, err := openRecord(ctx, u.Cluster, u.To, nil)
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("Preconditions failed for payload loaded version=%q image=%q: %s", u.ToRelease.Version, u.ToRelease.Image, u.Summary.Message)
	return w.setCondition(ctx, configv1.ClusterOperatorStatusCondition{Type: clusterversion.ReleaseAccepted, Status: configv1.ConditionFalse,
		Reason: "PreconditionChecks", Message: msg}, time.Now())
}

// RejectRelease records that the release a request names (spec.desiredUpdate)
// was not accepted, as the CVO reports a payload it cannot retrieve or
// verify: ReleaseAccepted=False with reason and message, written only when
// it changes. Nothing else changes. ErrNoRecord when the cluster has no
// record.
func RejectRelease(ctx context.Context, c *Cluster, reason, message string) error {
	rec, err := ReadRecord(ctx, c)
	if err != nil {
		return err
	}
	if rec == nil {
		return ErrNoRecord
	}
	w, err := openRecord(ctx, c, nil, nil)
	if err != nil {
		return err
	}
	return w.setCondition(ctx, configv1.ClusterOperatorStatusCondition{Type: clusterversion.ReleaseAccepted, Status: configv1.ConditionFalse,
		Reason: reason, Message: message}, time.Now())
}
