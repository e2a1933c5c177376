package clusterversion

import (
	"fmt"
	"math"
	"sort"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The condition types of the record besides configv1's Available,
// Progressing and Upgradeable (the CVO's internal names).
const (
	// Failing says the sync is blocked.
	Failing configv1.ClusterStatusConditionType = "Failing"
	// ReleaseAccepted says whether the desired release was loaded and its
	// preconditions passed.
	ReleaseAccepted configv1.ClusterStatusConditionType = "ReleaseAccepted"
	// ImplicitlyEnabledCapabilities names capabilities enabled because
	// objects of the running release need them.
	ImplicitlyEnabledCapabilities configv1.ClusterStatusConditionType = "ImplicitlyEnabledCapabilities"
	// RetrievedUpdates says whether available updates were retrieved
	// from the update service (the operator's, SetUpdates); until it
	// asks, False.
	RetrievedUpdates configv1.ClusterStatusConditionType = configv1.RetrievedUpdates
)

// Failure is why a sync is stuck: a CamelCase Reason (ClusterOperatorNotAvailable,
// MultipleErrors, ...) and a Message for people.
type Failure struct {
	Reason, Message string
}

// Accepted is the verdict on the desired release: its ReleaseAccepted
// condition. Reason is the step that decided (PayloadLoaded when accepted,
// PreconditionChecks when a precondition blocked it).
type Accepted struct {
	Accepted bool
	Reason   string
	Message  string
}

// Progress is how far a sync of the desired release has come: what Update
// turns into the record's status.
type Progress struct {
	// Desired is the release synced to: version and image (the record's
	// desired and the history entry's).
	Desired configv1.Release
	// Verified marks the history entry verified (its signature checked).
	Verified bool
	// AcceptedRisks are the risks accepted to start the update (forced
	// preconditions, an unverified payload), for the history entry.
	AcceptedRisks string
	// Generation is the record's metadata.generation the sync saw.
	Generation int64
	// VersionHash fingerprints the content synced.
	VersionHash string
	// Done and Total count the tasks.
	Done, Total int
	// Waiting names what the sync waits for (ClusterOperators reaching
	// their versions, workloads rolling out) and WaitingReason says why
	// (ClusterOperatorUpdating, ClusterOperatorsUpdating, ...): Progressing
	// then reads "Working towards V: N of M done (P% complete), waiting on
	// A, B".
	Waiting       []string
	WaitingReason string
	// Failure, when set, is why the sync is stuck.
	Failure *Failure
	// Completed says the release has been applied completely (once); the
	// history entry becomes Completed and Available True.
	Completed bool
	// Reconciling says the release is in place and the sync keeps it
	// there: Progressing is False.
	Reconciling bool
	// Capabilities are the cluster's capabilities (Known, Enabled with
	// the implicitly enabled ones, ImplicitlyEnabled).
	Capabilities Capabilities
	// Upgradeable are the Upgradeable conditions (see UpgradeableConditions);
	// nil: none fails, and no Upgradeable condition is kept.
	Upgradeable []configv1.ClusterOperatorStatusCondition
	// Accepted, when set, is the ReleaseAccepted verdict; nil keeps the
	// record's.
	Accepted *Accepted
}

// VersionName is how messages name a release: its version, else its image.
func VersionName(r configv1.Release) string {
	if r.Version != "" {
		return r.Version
	}
	if r.Image != "" {
		return r.Image
	}
	return "<unknown>"
}

// Update sets st to what the CVO would write for p at now (the CVO's
// updateClusterVersionStatus, without the available and conditional
// updates, which SetUpdates writes from the update service): observed generation and version
// hash, the Upgradeable conditions, the history and desired release, the
// capabilities and the conditions ImplicitlyEnabledCapabilities,
// ReleaseAccepted, Available, Failing, Progressing and RetrievedUpdates
// (False until SetUpdates sets it). A
// condition whose status does not change keeps its LastTransitionTime, so
// that Update with the same p changes nothing.
func Update(st *configv1.ClusterVersionStatus, p Progress, now metav1.Time) {
	st.ObservedGeneration = p.Generation
	if p.VersionHash != "" {
		st.VersionHash = p.VersionHash
	}
	SetUpgradeable(&st.Conditions, p.Upgradeable, now)
	mergeHistory(st, p.Desired, p.Verified, p.Completed, p.AcceptedRisks, now)
	st.Capabilities = p.Capabilities.Status()
	setImplicitlyEnabled(&st.Conditions, p.Capabilities.ImplicitlyEnabled, now)
	if a := p.Accepted; a != nil {
		status := configv1.ConditionTrue
		if !a.Accepted {
			status = configv1.ConditionFalse
		}
		SetCondition(&st.Conditions, configv1.ClusterOperatorStatusCondition{Type: ReleaseAccepted, Status: status, Reason: a.Reason, Message: a.Message}, now)
	}

	version := VersionName(p.Desired)
	if p.Completed {
		SetCondition(&st.Conditions, configv1.ClusterOperatorStatusCondition{Type: configv1.OperatorAvailable, Status: configv1.ConditionTrue,
			Message: "Done applying " + version}, now)
	}
	if FindCondition(st.Conditions, configv1.OperatorAvailable) == nil {
		SetCondition(&st.Conditions, configv1.ClusterOperatorStatusCondition{Type: configv1.OperatorAvailable, Status: configv1.ConditionFalse}, now)
	}

	failing := configv1.ClusterOperatorStatusCondition{Type: Failing, Status: configv1.ConditionFalse}
	progressing := configv1.ClusterOperatorStatusCondition{Type: configv1.OperatorProgressing, Status: configv1.ConditionTrue}
	switch f := p.Failure; {
	case f != nil && p.Reconciling:
		failing.Status, failing.Reason, failing.Message = configv1.ConditionTrue, f.Reason, f.Message
		progressing.Status, progressing.Reason = configv1.ConditionFalse, f.Reason
		progressing.Message = fmt.Sprintf("Error while reconciling %s: %s", version, f.Message)
	case f != nil:
		failing.Status, failing.Reason, failing.Message = configv1.ConditionTrue, f.Reason, f.Message
		progressing.Reason = f.Reason
		progressing.Message = fmt.Sprintf("Unable to apply %s: %s", version, f.Message)
	case p.Reconciling:
		progressing.Status, progressing.Message = configv1.ConditionFalse, "Cluster version is "+version
	default:
		progressing.Message = "Working towards " + version
		if p.Done > 0 && p.Total > 0 {
			pct := math.Trunc(100 * float64(p.Done) / float64(p.Total))
			progressing.Message += fmt.Sprintf(": %d of %d done (%.0f%% complete)", p.Done, p.Total, pct)
		}
		if len(p.Waiting) > 0 {
			sep := ", "
			if p.Done == 0 || p.Total == 0 {
				sep = ": "
			}
			progressing.Reason = p.WaitingReason
			progressing.Message += sep + "waiting on " + strings.Join(p.Waiting, ", ")
		}
	}
	SetCondition(&st.Conditions, failing, now)
	SetCondition(&st.Conditions, progressing, now)
	if FindCondition(st.Conditions, RetrievedUpdates) == nil {
		SetCondition(&st.Conditions, configv1.ClusterOperatorStatusCondition{Type: RetrievedUpdates, Status: configv1.ConditionFalse}, now)
	}
}

// setImplicitlyEnabled sets ImplicitlyEnabledCapabilities: True naming the
// capabilities (sorted), else False "AsExpected". The CVO's old condition
// "ImplicitlyEnabled" is removed.
func setImplicitlyEnabled(conds *[]configv1.ClusterOperatorStatusCondition, implicit []configv1.ClusterVersionCapability, now metav1.Time) {
	RemoveCondition(conds, "ImplicitlyEnabled")
	if len(implicit) == 0 {
		SetCondition(conds, configv1.ClusterOperatorStatusCondition{Type: ImplicitlyEnabledCapabilities, Status: configv1.ConditionFalse,
			Reason: "AsExpected", Message: "Capabilities match configured spec"}, now)
		return
	}
	names := make([]string, len(implicit))
	for i, c := range implicit {
		names[i] = string(c)
	}
	sort.Strings(names)
	SetCondition(conds, configv1.ClusterOperatorStatusCondition{Type: ImplicitlyEnabledCapabilities, Status: configv1.ConditionTrue,
		Reason: "CapabilitiesImplicitlyEnabled", Message: "The following capabilities could not be disabled: " + strings.Join(names, ", ")}, now)
}

// FindCondition returns the condition of type t, or nil.
func FindCondition(conds []configv1.ClusterOperatorStatusCondition, t configv1.ClusterStatusConditionType) *configv1.ClusterOperatorStatusCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// SetCondition sets c in conds: a new condition gets now as its
// LastTransitionTime; an existing one keeps its LastTransitionTime unless
// its status changes (the CVO's resourcemerge.SetOperatorStatusCondition).
func SetCondition(conds *[]configv1.ClusterOperatorStatusCondition, c configv1.ClusterOperatorStatusCondition, now metav1.Time) {
	existing := FindCondition(*conds, c.Type)
	if existing == nil {
		c.LastTransitionTime = now
		*conds = append(*conds, c)
		return
	}
	if existing.Status != c.Status {
		existing.Status = c.Status
		existing.LastTransitionTime = now
	}
	existing.Reason, existing.Message = c.Reason, c.Message
}

// RemoveCondition removes the condition of type t.
func RemoveCondition(conds *[]configv1.ClusterOperatorStatusCondition, t configv1.ClusterStatusConditionType) {
	out := (*conds)[:0]
	for _, c := range *conds {
		if c.Type != t {
			out = append(out, c)
		}
	}
	*conds = out
}
