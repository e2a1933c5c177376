package nodetuning

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The condition types of the status, in the order they are written.
const (
	ConditionAvailable   = "Available"
	ConditionUpgradeable = "Upgradeable"
	ConditionProgressing = "Progressing"
	ConditionDegraded    = "Degraded"
)

// ReasonComponentCreationFailed is the Degraded reason when the outputs
// could not be written.
const ReasonComponentCreationFailed = "ComponentCreationFailed"

// availableConditions are the conditions once every output is written.
func availableConditions() []Condition {
	return []Condition{
		{Type: ConditionAvailable, Status: "True"},
		{Type: ConditionUpgradeable, Status: "True"},
		{Type: ConditionProgressing, Status: "False"},
		{Type: ConditionDegraded, Status: "False"},
	}
}

// degradedConditions are the conditions when writing the outputs failed.
func degradedConditions(reason, message string) []Condition {
	return []Condition{
		{Type: ConditionAvailable, Status: "False"},
		{Type: ConditionUpgradeable, Status: "False"},
		{Type: ConditionProgressing, Status: "False"},
		{Type: ConditionDegraded, Status: "True", Reason: reason, Message: message},
	}
}

// withTransitionTimes sets each condition's lastTransitionTime: the previous
// one when the condition had the same status before, else now (to the
// second, as the API serializes it). It does not modify conds.
func withTransitionTimes(conds, previous []Condition, now time.Time) []Condition {
	out := make([]Condition, len(conds))
	stamp := metav1.NewTime(now.UTC().Truncate(time.Second))
	for i, c := range conds {
		c.LastTransitionTime = &stamp
		for _, p := range previous {
			if p.Type == c.Type && p.Status == c.Status && p.LastTransitionTime != nil {
				t := *p.LastTransitionTime
				c.LastTransitionTime = &t
			}
		}
		out[i] = c
	}
	return out
}
