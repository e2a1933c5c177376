package resourceapply

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Condition is one condition of the aggregate status.
type Condition struct {
	// Type is Available, Progressing or Failing.
	Type string `json:"type"`
	// Status is "True" or "False".
	Status string `json:"status"`
	// Reason is a CamelCase word, e.g. ClusterOperatorNotAvailable.
	Reason string `json:"reason,omitempty"`
	// Message says it for people.
	Message string `json:"message,omitempty"`
}

// The aggregate condition types, as ClusterVersion has them.
const (
	ConditionAvailable   = "Available"
	ConditionProgressing = "Progressing"
	ConditionFailing     = "Failing"
)

// ClusterStatus is the aggregate status of a payload's ClusterOperators,
// computed like ClusterVersion's conditions.
type ClusterStatus struct {
	// Version is the payload's release version.
	Version string `json:"version"`
	// Done and Total count ready and expected ClusterOperators.
	Done  int `json:"done"`
	Total int `json:"total"`
	// Conditions are Available, Progressing and Failing, in that order.
	Conditions []Condition `json:"conditions"`
}

// Condition returns the condition of type t (zero when absent).
func (s *ClusterStatus) Condition(t string) Condition {
	for _, c := range s.Conditions {
		if c.Type == t {
			return c
		}
	}
	return Condition{}
}

// Healthy reports Available=True and Failing not True: the install is
// done and nothing is failing.
func (s *ClusterStatus) Healthy() bool {
	return s.Condition(ConditionAvailable).Status == "True" && s.Condition(ConditionFailing).Status != "True"
}

// Aggregate computes the cluster's status from the payload's
// ClusterOperators, the way the CVO computes ClusterVersion's conditions
// at install time:
//
//   - Available=True ("Done applying V") when every ClusterOperator is
//     ready, else False.
//   - Failing=True when any ClusterOperator is missing, not available or
//     degraded; the reason is that of the failures when they share one
//     (plural for several: "Cluster operators a, b are not available"),
//     else MultipleErrors. Versions not reported yet are not a failure.
//   - Progressing=False ("Cluster version is V") when all are ready;
//     otherwise True: "Unable to apply V: ..." when failing, else "Working
//     towards V: N of M done (P% complete)" and who it waits on.
func Aggregate(version string, ops []OperatorState) ClusterStatus {
	s := ClusterStatus{Version: version, Total: len(ops)}
	byReason := map[string][]string{}
	var waiting []string
	for _, op := range ops {
		switch {
		case op.Ready:
			s.Done++
		case op.Reason == OperatorUpdating:
			waiting = append(waiting, op.Name)
		default:
			byReason[op.Reason] = append(byReason[op.Reason], op.Name)
		}
	}
	v := version
	if v == "" {
		v = "the payload"
	}
	available := Condition{Type: ConditionAvailable, Status: "False"}
	if s.Done == s.Total {
		available = Condition{Type: ConditionAvailable, Status: "True", Message: "Done applying " + v}
	}
	failing := Condition{Type: ConditionFailing, Status: "False"}
	if len(byReason) > 0 {
		failing.Status = "True"
		failing.Reason, failing.Message = failureSummary(byReason)
	}
	progressing := Condition{Type: ConditionProgressing, Status: "True"}
	switch {
	case s.Done == s.Total:
		progressing.Status, progressing.Message = "False", "Cluster version is "+v
	case failing.Status == "True":
		progressing.Reason = failing.Reason
		progressing.Message = fmt.Sprintf("Unable to apply %s: %s", v, failing.Message)
	default:
		pct := 0.0
		if s.Total > 0 {
			pct = math.Trunc(100 * float64(s.Done) / float64(s.Total))
		}
		progressing.Message = fmt.Sprintf("Working towards %s: %d of %d done (%.0f%% complete)", v, s.Done, s.Total, pct)
		if len(waiting) > 0 {
			sort.Strings(waiting)
			progressing.Reason = OperatorUpdating
			progressing.Message += ", waiting on " + strings.Join(waiting, ", ")
		}
	}
	s.Conditions = []Condition{available, progressing, failing}
	return s
}

// failureSummary words the failures the CVO way.
func failureSummary(byReason map[string][]string) (reason, message string) {
	phrase := map[string][2]string{
		OperatorNotFound:     {"does not exist", "do not exist"},
		OperatorNotAvailable: {"is not available", "are not available"},
		OperatorDegraded:     {"is degraded", "are degraded"},
	}
	words := func(r string, names []string) string {
		sort.Strings(names)
		p := phrase[r]
		if len(names) == 1 {
			return fmt.Sprintf("Cluster operator %s %s", names[0], p[0])
		}
		return fmt.Sprintf("Cluster operators %s %s", strings.Join(names, ", "), p[1])
	}
	if len(byReason) == 1 {
		for r, names := range byReason {
			if len(names) > 1 {
				// ClusterOperatorNotAvailable -> ClusterOperatorsNotAvailable.
				r = strings.Replace(r, "ClusterOperator", "ClusterOperators", 1)
				return r, words(strings.Replace(r, "ClusterOperators", "ClusterOperator", 1), names)
			}
			return r, words(r, names)
		}
	}
	reasons := make([]string, 0, len(byReason))
	for r := range byReason {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	var lines []string
	for _, r := range reasons {
		lines = append(lines, "* "+words(r, byReason[r]))
	}
	return "MultipleErrors", "Multiple errors are preventing progress:\n" + strings.Join(lines, "\n")
}
