package resourceapply

import (
	"fmt"
	"sort"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
)

// Reasons a ClusterOperator is not ready, as the CVO names them.
const (
	OperatorNotFound     = "ClusterOperatorNotFound"
	OperatorNotAvailable = "ClusterOperatorNotAvailable"
	OperatorDegraded     = "ClusterOperatorDegraded"
	OperatorUpdating     = "ClusterOperatorUpdating"
)

// OperatorState is one ClusterOperator measured against what the payload
// expects of it.
type OperatorState struct {
	// Name is the ClusterOperator's name.
	Name string
	// Found is false when the cluster has no such ClusterOperator.
	Found bool
	// Available, Progressing and Degraded are the conditions as the
	// operator reports them ("" when it does not).
	Available, Progressing, Degraded configv1.ConditionStatus
	// Versions are the versions the operator reports, by name.
	Versions map[string]string
	// Undone lists the expected versions not reported yet, "operator to
	// 4.22.0" or "operator from 4.21.0 to 4.22.0", sorted.
	Undone []string
	// Ready: Available=True, Degraded not True, and every expected version
	// reported.
	Ready bool
	// Reason is why it is not ready (OperatorNotFound, OperatorNotAvailable,
	// OperatorDegraded, OperatorUpdating), "" when ready.
	Reason string
	// Message explains Reason with the operator's own condition.
	Message string
	// Since is the last transition of the condition that explains Reason
	// (Available, or Degraded), or of Available when ready; "" when
	// unknown.
	Since string
}

// OperatorStatus applies the CVO's rules to a ClusterOperator: it is ready
// when Available=True, Degraded is not True and it reports every version
// that expected's status.versions lists, with the same value. The versions
// are whatever the payload manifest lists (the reference payload's
// 0.0.1-snapshot placeholder included); a manifest that lists none asks for
// no version. live nil means the ClusterOperator does not exist.
//
// The CVO counts a missing Degraded condition as degraded; here, as the
// install contract says, only Degraded=True is.
func OperatorStatus(expected, live *configv1.ClusterOperator) OperatorState {
	st := OperatorState{Name: expected.Name}
	if live == nil {
		st.Reason = OperatorNotFound
		st.Message = "does not exist yet"
		return st
	}
	st.Found = true
	st.Versions = map[string]string{}
	for _, v := range live.Status.Versions {
		st.Versions[v.Name] = v.Version
	}
	for _, want := range expected.Status.Versions {
		got := st.Versions[want.Name]
		switch {
		case got == want.Version:
		case got == "":
			st.Undone = append(st.Undone, fmt.Sprintf("%s to %s", want.Name, want.Version))
		default:
			st.Undone = append(st.Undone, fmt.Sprintf("%s from %s to %s", want.Name, got, want.Version))
		}
	}
	sort.Strings(st.Undone)
	var available, degraded *configv1.ClusterOperatorStatusCondition
	for i := range live.Status.Conditions {
		c := &live.Status.Conditions[i]
		switch c.Type {
		case configv1.OperatorAvailable:
			st.Available, available = c.Status, c
		case configv1.OperatorProgressing:
			st.Progressing = c.Status
		case configv1.OperatorDegraded:
			st.Degraded, degraded = c.Status, c
		}
	}
	describe := func(c *configv1.ClusterOperatorStatusCondition, t configv1.ClusterStatusConditionType) string {
		if c == nil {
			return string(t) + " not reported"
		}
		s := fmt.Sprintf("%s=%s", c.Type, c.Status)
		if c.Reason != "" {
			s += " (" + c.Reason + ")"
		}
		if c.Message != "" {
			s += ": " + c.Message
		}
		return s
	}
	since := func(c *configv1.ClusterOperatorStatusCondition) string {
		if c == nil || c.LastTransitionTime.IsZero() {
			return ""
		}
		return c.LastTransitionTime.UTC().Format("2006-01-02T15:04:05Z")
	}
	switch {
	case st.Available != configv1.ConditionTrue:
		st.Reason, st.Message, st.Since = OperatorNotAvailable, describe(available, configv1.OperatorAvailable), since(available)
	case st.Degraded == configv1.ConditionTrue:
		st.Reason, st.Message, st.Since = OperatorDegraded, describe(degraded, configv1.OperatorDegraded), since(degraded)
	case len(st.Undone) > 0:
		st.Reason, st.Message, st.Since = OperatorUpdating, "versions not reported yet: "+strings.Join(st.Undone, ", "), since(available)
	default:
		st.Ready, st.Since = true, since(available)
	}
	return st
}
