package resourceapply

import (
	"fmt"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// Readiness is what an object's status says about it.
type Readiness struct {
	// Ready: the object has reached the state the payload asks for.
	Ready bool
	// Failed: the object reports a failure it will not leave by itself (a
	// Job that failed, a CustomResourceDefinition whose names were
	// rejected); waiting longer does not help.
	Failed bool
	// Message says what is missing or wrong, e.g. "Available=False
	// (Starting): the operator is starting".
	Message string
	// Reason classifies what is missing, to group pending objects: the
	// ClusterOperator reasons (OperatorNotAvailable, ...), NotFound,
	// Deleting, NotEstablished, NamesNotAccepted, JobNotComplete,
	// JobFailed, ReplicaFailure, ProgressDeadlineExceeded, NotAvailable,
	// StatusError, or kstatus's status (InProgress, Failed, ...); "" when
	// ready.
	Reason string
}

// Check returns live's readiness. required is the payload's object (for a
// ClusterOperator, the versions it must report); it may be nil for other
// kinds. The rules, per kind:
//
//   - CustomResourceDefinition: Established=True; NamesAccepted=False fails.
//   - Deployment: ready unless it reports a failure (ReplicaFailure=True,
//     Progressing=False with ProgressDeadlineExceeded, or Available=False
//     with Progressing=False). As the CVO at install time, a bootstrap does
//     not wait for a rollout: the operator's ClusterOperator says when it
//     works.
//   - Job: Complete=True; Failed=True fails.
//   - ClusterOperator: the CVO's rules (see OperatorStatus).
//   - Anything else: kstatus (sigs.k8s.io/cli-utils); Current is ready.
//
// An object being deleted is not ready.
func Check(required, live *unstructured.Unstructured) Readiness {
	if live == nil {
		return Readiness{Message: "not found", Reason: "NotFound"}
	}
	if live.GetDeletionTimestamp() != nil {
		return Readiness{Message: "being deleted", Reason: "Deleting"}
	}
	switch live.GroupVersionKind().GroupKind() {
	case crdGK:
		return crdReadiness(live)
	case deploymentGK:
		return deploymentReadiness(live)
	case jobGK:
		return jobReadiness(live)
	case clusterOperatorGK:
		st, err := operatorStatusOf(required, live)
		if err != nil {
			return Readiness{Message: err.Error(), Reason: "StatusError"}
		}
		return Readiness{Ready: st.Ready, Message: st.Message, Reason: st.Reason}
	}
	res, err := status.Compute(live)
	if err != nil {
		return Readiness{Message: "status: " + err.Error(), Reason: "StatusError"}
	}
	if res.Status == status.CurrentStatus {
		return Readiness{Ready: true}
	}
	msg := string(res.Status)
	if res.Message != "" {
		msg += ": " + res.Message
	}
	return Readiness{Message: msg, Reason: string(res.Status)}
}

// RolloutCheck is Check for an update, when workloads must finish rolling
// out, not only report no failure: a Deployment or DaemonSet is ready when
// kstatus says Current (its controller observed the newest generation and
// every replica is updated and available); a Deployment that reports a
// failure is not, with Check's message. Every other kind as Check.
func RolloutCheck(required, live *unstructured.Unstructured) Readiness {
	if live == nil || live.GetDeletionTimestamp() != nil {
		return Check(required, live)
	}
	switch live.GroupVersionKind().GroupKind() {
	case deploymentGK:
		if r := deploymentReadiness(live); !r.Ready {
			return r
		}
	case daemonSetGK:
	default:
		return Check(required, live)
	}
	res, err := status.Compute(live)
	if err != nil {
		return Readiness{Message: "status: " + err.Error()}
	}
	if res.Status == status.CurrentStatus {
		return Readiness{Ready: true}
	}
	return Readiness{Message: "rolling out: " + res.Message}
}

// condition is a status condition as unstructured objects hold them.
type condition struct {
	Type, Status, Reason, Message string
}

func (c condition) String() string {
	s := c.Type + "=" + c.Status
	if c.Reason != "" {
		s += " (" + c.Reason + ")"
	}
	if c.Message != "" {
		s += ": " + c.Message
	}
	return s
}

func conditions(obj *unstructured.Unstructured) map[string]condition {
	list, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	out := map[string]condition{}
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		c := condition{}
		c.Type, _ = m["type"].(string)
		c.Status, _ = m["status"].(string)
		c.Reason, _ = m["reason"].(string)
		c.Message, _ = m["message"].(string)
		out[c.Type] = c
	}
	return out
}

func crdReadiness(live *unstructured.Unstructured) Readiness {
	conds := conditions(live)
	if c, ok := conds["NamesAccepted"]; ok && c.Status == "False" {
		return Readiness{Failed: true, Message: c.String(), Reason: "NamesNotAccepted"}
	}
	c, ok := conds["Established"]
	switch {
	case !ok:
		return Readiness{Message: "no Established condition yet", Reason: "NotEstablished"}
	case c.Status != "True":
		return Readiness{Message: c.String(), Reason: "NotEstablished"}
	}
	return Readiness{Ready: true}
}

func deploymentReadiness(live *unstructured.Unstructured) Readiness {
	conds := conditions(live)
	if c, ok := conds["ReplicaFailure"]; ok && c.Status == "True" {
		return Readiness{Message: "replica failure: " + c.String(), Reason: "ReplicaFailure"}
	}
	p, hasP := conds["Progressing"]
	if hasP && p.Status == "False" && p.Reason == "ProgressDeadlineExceeded" {
		return Readiness{Message: p.String(), Reason: "ProgressDeadlineExceeded"}
	}
	if a, ok := conds["Available"]; ok && a.Status == "False" && hasP && p.Status == "False" {
		return Readiness{Message: fmt.Sprintf("not available and not progressing: %s; %s", a, p), Reason: "NotAvailable"}
	}
	return Readiness{Ready: true}
}

func jobReadiness(live *unstructured.Unstructured) Readiness {
	conds := conditions(live)
	if c, ok := conds["Failed"]; ok && c.Status == "True" {
		return Readiness{Failed: true, Message: "job failed: " + c.String(), Reason: "JobFailed"}
	}
	if c, ok := conds["Complete"]; ok && c.Status == "True" {
		return Readiness{Ready: true}
	}
	active, _, _ := unstructured.NestedInt64(live.Object, "status", "active")
	succeeded, _, _ := unstructured.NestedInt64(live.Object, "status", "succeeded")
	failed, _, _ := unstructured.NestedInt64(live.Object, "status", "failed")
	return Readiness{Message: fmt.Sprintf("not complete: %d active, %d succeeded, %d failed", active, succeeded, failed), Reason: "JobNotComplete"}
}

// operatorStatusOf converts both objects and applies OperatorStatus.
func operatorStatusOf(required, live *unstructured.Unstructured) (OperatorState, error) {
	var want, got configv1.ClusterOperator
	if required != nil {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(required.Object, &want); err != nil {
			return OperatorState{}, fmt.Errorf("payload ClusterOperator: %w", err)
		}
	} else {
		want.Name = live.GetName()
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(live.Object, &got); err != nil {
		return OperatorState{}, fmt.Errorf("live ClusterOperator: %w", err)
	}
	return OperatorStatus(&want, &got), nil
}

// joinMessages joins non-empty messages with "; ".
func joinMessages(msgs ...string) string {
	var out []string
	for _, m := range msgs {
		if m != "" {
			out = append(out, m)
		}
	}
	return strings.Join(out, "; ")
}
