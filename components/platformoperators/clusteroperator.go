package platformoperators

import (
	"fmt"
	"sort"
	"strings"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterOperator condition reasons the component writes.
const (
	ReasonAsExpected            = "AsExpected"
	ReasonPlatformOperatorError = "PlatformOperatorError"
	ReasonInstalling            = "Installing"
	ReasonDeploymentNotFound    = "DeploymentNotFound"
	ReasonManagerUnavailable    = "ManagerUnavailable"
	ReasonDeploying             = "Deploying"
	ReasonProgressDeadline      = "ProgressDeadlineExceeded"
	ReasonReplicaFailure        = "ReplicaFailure"
)

// OperatorVersionName is the name of the version both ClusterOperators
// report: the release version.
const OperatorVersionName = "operator"

// MaxListedPlatformOperators bounds how many failing PlatformOperators
// the aggregate ClusterOperator's Available message details; the rest are
// counted.
const MaxListedPlatformOperators = 10

// AggregateStatus computes the status of the aggregate ClusterOperator
// platform-operators-aggregated from the PlatformOperators' Installed
// conditions (LastTransitionTime left zero; see MergeClusterOperatorStatus):
//
//   - no PlatformOperators: Available=True, Progressing=False, both AsExpected;
//   - all installed (Installed=True): Available=True, Progressing=False, AsExpected;
//   - any not installed: Available=False PlatformOperatorError, the message
//     saying how many of how many are not installed and naming each (up to
//     MaxListedPlatformOperators, by name) with its reason and message;
//     Progressing=True Installing while any of them is pending
//     (UnpackPending, InstallPending, or no condition yet), naming them, else
//     Progressing=False PlatformOperatorError: every one not installed has
//     failed and nothing is moving (upstream keeps Progressing=True, with no
//     reason; see docs/platform-operators.md);
//   - Degraded=False AsExpected always: a failing platform operator makes
//     the aggregate unavailable, not degraded (as upstream).
//
// Versions hold operator=releaseVersion (none when it is ""); relatedObjects
// are shape.RelatedObjects().
func AggregateStatus(pos []PlatformOperator, releaseVersion string, shape Shape) configv1.ClusterOperatorStatus {
	sorted := append([]PlatformOperator(nil), pos...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	var failing, pending, installed []string
	for _, po := range sorted {
		c := meta.FindStatusCondition(po.Status.Conditions, ConditionInstalled)
		switch {
		case c == nil:
			failing = append(failing, fmt.Sprintf("PlatformOperator %s: %s: not reconciled yet", po.Name, ReasonInstallPending))
			pending = append(pending, po.Name)
		case c.Status == metav1.ConditionTrue:
			installed = append(installed, po.Name)
		default:
			failing = append(failing, fmt.Sprintf("PlatformOperator %s: %s: %s", po.Name, c.Reason, clip(c.Message, MaxCarriedMessage)))
			if c.Reason == ReasonUnpackPending || c.Reason == ReasonInstallPending {
				pending = append(pending, po.Name)
			}
		}
	}
	var available, progressing configv1.ClusterOperatorStatusCondition
	switch {
	case len(sorted) == 0:
		available = coCondition(configv1.OperatorAvailable, configv1.ConditionTrue, ReasonAsExpected, "no platform operators are present")
		progressing = coCondition(configv1.OperatorProgressing, configv1.ConditionFalse, ReasonAsExpected, "no platform operators are present")
	case len(failing) == 0:
		msg := fmt.Sprintf("all %d platform operators are installed: %s", len(installed), listNames(installed))
		available = coCondition(configv1.OperatorAvailable, configv1.ConditionTrue, ReasonAsExpected, msg)
		progressing = coCondition(configv1.OperatorProgressing, configv1.ConditionFalse, ReasonAsExpected, msg)
	default:
		detail := failing
		if len(detail) > MaxListedPlatformOperators {
			detail = append(detail[:MaxListedPlatformOperators:MaxListedPlatformOperators],
				fmt.Sprintf("and %d more (see their Installed conditions)", len(failing)-MaxListedPlatformOperators))
		}
		available = coCondition(configv1.OperatorAvailable, configv1.ConditionFalse, ReasonPlatformOperatorError,
			fmt.Sprintf("%d of %d platform operators are not installed: %s", len(failing), len(sorted), strings.Join(detail, "; ")))
		if len(pending) > 0 {
			progressing = coCondition(configv1.OperatorProgressing, configv1.ConditionTrue, ReasonInstalling,
				fmt.Sprintf("installing %d of %d platform operators: %s", len(pending), len(sorted), listNames(pending)))
		} else {
			progressing = coCondition(configv1.OperatorProgressing, configv1.ConditionFalse, ReasonPlatformOperatorError,
				fmt.Sprintf("no platform operator is installing: %d of %d failed", len(failing), len(sorted)))
		}
	}
	return configv1.ClusterOperatorStatus{
		Conditions: []configv1.ClusterOperatorStatusCondition{
			available,
			progressing,
			coCondition(configv1.OperatorDegraded, configv1.ConditionFalse, ReasonAsExpected, ""),
		},
		Versions:       operatorVersions(releaseVersion),
		RelatedObjects: shape.RelatedObjects(),
	}
}

// listNames joins names with ", ", the first MaxListedPlatformOperators of
// them, then "and N more".
func listNames(names []string) string {
	if len(names) <= MaxListedPlatformOperators {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:MaxListedPlatformOperators], ", ") + fmt.Sprintf(" and %d more", len(names)-MaxListedPlatformOperators)
}

// CoreStatus computes the status of platform-operators-core, the manager's
// own health, from its Deployment (nil when it does not exist):
//
//   - Available: True AsExpected when the Deployment's Available condition
//     is True, else False ManagerUnavailable (DeploymentNotFound when
//     missing);
//   - Progressing: True Deploying while the rollout is not complete
//     (generation not observed, or fewer updated, available or more total
//     replicas than wanted; DeploymentNotFound when missing), else False;
//   - Degraded: True ProgressDeadlineExceeded or ReplicaFailure when the
//     Deployment says so, else False.
//
// Versions hold operator=releaseVersion; relatedObjects the namespace and
// the Deployment.
func CoreStatus(d *appsv1.Deployment, releaseVersion string) configv1.ClusterOperatorStatus {
	name := Namespace + "/" + ManagerDeployment
	st := configv1.ClusterOperatorStatus{
		Versions: operatorVersions(releaseVersion),
		RelatedObjects: []configv1.ObjectReference{
			{Group: "", Resource: "namespaces", Name: Namespace},
			{Group: "apps", Resource: "deployments", Namespace: Namespace, Name: ManagerDeployment},
		},
	}
	if d == nil {
		msg := fmt.Sprintf("Deployment %s does not exist", name)
		st.Conditions = []configv1.ClusterOperatorStatusCondition{
			coCondition(configv1.OperatorAvailable, configv1.ConditionFalse, ReasonDeploymentNotFound, msg),
			coCondition(configv1.OperatorProgressing, configv1.ConditionTrue, ReasonDeploymentNotFound, msg),
			coCondition(configv1.OperatorDegraded, configv1.ConditionFalse, ReasonAsExpected, ""),
		}
		return st
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	replicas := fmt.Sprintf("%d of %d replicas available, %d updated", s.AvailableReplicas, want, s.UpdatedReplicas)

	available := coCondition(configv1.OperatorAvailable, configv1.ConditionFalse, ReasonManagerUnavailable, "Deployment "+name+" is not available: "+replicas)
	if c := deploymentCondition(d, appsv1.DeploymentAvailable); c != nil && c.Status == "True" {
		available = coCondition(configv1.OperatorAvailable, configv1.ConditionTrue, ReasonAsExpected, "the manager is running: "+replicas)
	} else if c != nil && c.Message != "" {
		available.Message += ": " + c.Message
	}

	progressing := coCondition(configv1.OperatorProgressing, configv1.ConditionFalse, ReasonAsExpected, "Deployment "+name+" is rolled out")
	if s.ObservedGeneration < d.Generation || s.UpdatedReplicas < want || s.AvailableReplicas < want || s.Replicas > want {
		progressing = coCondition(configv1.OperatorProgressing, configv1.ConditionTrue, ReasonDeploying, "rolling out Deployment "+name+": "+replicas)
	}

	degraded := coCondition(configv1.OperatorDegraded, configv1.ConditionFalse, ReasonAsExpected, "")
	if c := deploymentCondition(d, appsv1.DeploymentProgressing); c != nil && c.Status == "False" && c.Reason == ReasonProgressDeadline {
		degraded = coCondition(configv1.OperatorDegraded, configv1.ConditionTrue, ReasonProgressDeadline, "Deployment "+name+": "+c.Message)
	} else if c := deploymentCondition(d, appsv1.DeploymentReplicaFailure); c != nil && c.Status == "True" {
		degraded = coCondition(configv1.OperatorDegraded, configv1.ConditionTrue, ReasonReplicaFailure, "Deployment "+name+": "+c.Message)
	}
	st.Conditions = []configv1.ClusterOperatorStatusCondition{available, progressing, degraded}
	return st
}

// MergeClusterOperatorStatus returns existing with desired's conditions,
// versions and related objects: a condition whose status is unchanged keeps
// its LastTransitionTime, a changed or new one gets now; conditions of
// other types and the extension are kept, in their order.
func MergeClusterOperatorStatus(existing, desired configv1.ClusterOperatorStatus, now time.Time) configv1.ClusterOperatorStatus {
	out := *existing.DeepCopy()
	for _, c := range desired.Conditions {
		found := false
		for i := range out.Conditions {
			old := &out.Conditions[i]
			if old.Type != c.Type {
				continue
			}
			found = true
			if old.Status != c.Status || old.LastTransitionTime.IsZero() {
				c.LastTransitionTime = metav1.NewTime(now)
			} else {
				c.LastTransitionTime = old.LastTransitionTime
			}
			*old = c
		}
		if !found {
			c.LastTransitionTime = metav1.NewTime(now)
			out.Conditions = append(out.Conditions, c)
		}
	}
	out.Versions = desired.Versions
	out.RelatedObjects = desired.RelatedObjects
	return out
}

// setCondition sets c in conds like meta.SetStatusCondition, with now as
// the transition time when the status changes.
func setCondition(conds *[]metav1.Condition, c metav1.Condition, now time.Time) {
	if old := meta.FindStatusCondition(*conds, c.Type); old != nil {
		if old.Status != c.Status || old.LastTransitionTime.IsZero() {
			c.LastTransitionTime = metav1.NewTime(now)
		} else {
			c.LastTransitionTime = old.LastTransitionTime
		}
		*old = c
		return
	}
	c.LastTransitionTime = metav1.NewTime(now)
	*conds = append(*conds, c)
}

func coCondition(t configv1.ClusterStatusConditionType, s configv1.ConditionStatus, reason, msg string) configv1.ClusterOperatorStatusCondition {
	return configv1.ClusterOperatorStatusCondition{Type: t, Status: s, Reason: reason, Message: msg}
}

func operatorVersions(v string) []configv1.OperandVersion {
	if v == "" {
		return nil
	}
	return []configv1.OperandVersion{{Name: OperatorVersionName, Version: v}}
}

func deploymentCondition(d *appsv1.Deployment, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == t {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}
