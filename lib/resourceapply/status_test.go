package resourceapply

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func co(name string, versions map[string]string, conds ...configv1.ClusterOperatorStatusCondition) *configv1.ClusterOperator {
	c := &configv1.ClusterOperator{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, n := range []string{"operator", "operand"} {
		if v, ok := versions[n]; ok {
			c.Status.Versions = append(c.Status.Versions, configv1.OperandVersion{Name: n, Version: v})
		}
	}
	c.Status.Conditions = conds
	return c
}

func cond(t configv1.ClusterStatusConditionType, s configv1.ConditionStatus, reasonMessage ...string) configv1.ClusterOperatorStatusCondition {
	c := configv1.ClusterOperatorStatusCondition{Type: t, Status: s,
		LastTransitionTime: metav1.Date(2026, 11, 21, 10, 0, 0, 0, metav1.Now().Location())}
	if len(reasonMessage) > 0 {
		c.Reason = reasonMessage[0]
	}
	if len(reasonMessage) > 1 {
		c.Message = reasonMessage[1]
	}
	return c
}

var (
	available   = cond(configv1.OperatorAvailable, configv1.ConditionTrue)
	notDegraded = cond(configv1.OperatorDegraded, configv1.ConditionFalse)
)

func TestOperatorStatus(t *testing.T) {
	want := co("ingress", map[string]string{"operator": "0.0.1-snapshot"})
	cases := []struct {
		name      string
		expected  *configv1.ClusterOperator
		live      *configv1.ClusterOperator
		ready     bool
		reason    string
		message   string
		undone    []string
		available configv1.ConditionStatus
	}{
		{name: "missing", expected: want, reason: OperatorNotFound, message: "does not exist yet"},
		{name: "no status yet", expected: want, live: co("ingress", nil),
			reason: OperatorNotAvailable, message: "Available not reported", undone: []string{"operator to 0.0.1-snapshot"}},
		{name: "available false", expected: want, live: co("ingress", nil, cond(configv1.OperatorAvailable, configv1.ConditionFalse, "Starting", "the operator is starting")),
			reason: OperatorNotAvailable, message: "Available=False (Starting): the operator is starting", undone: []string{"operator to 0.0.1-snapshot"}, available: configv1.ConditionFalse},
		{name: "degraded", expected: want, live: co("ingress", map[string]string{"operator": "0.0.1-snapshot"}, available, cond(configv1.OperatorDegraded, configv1.ConditionTrue, "OperandsFailing", "router pods crash")),
			reason: OperatorDegraded, message: "Degraded=True (OperandsFailing): router pods crash", available: configv1.ConditionTrue},
		{name: "version not reported", expected: want, live: co("ingress", nil, available, notDegraded),
			reason: OperatorUpdating, message: "versions not reported yet: operator to 0.0.1-snapshot", undone: []string{"operator to 0.0.1-snapshot"}, available: configv1.ConditionTrue},
		{name: "other version", expected: want, live: co("ingress", map[string]string{"operator": "4.21.0"}, available, notDegraded),
			reason: OperatorUpdating, message: "versions not reported yet: operator from 4.21.0 to 0.0.1-snapshot", undone: []string{"operator from 4.21.0 to 0.0.1-snapshot"}, available: configv1.ConditionTrue},
		{name: "ready", expected: want, live: co("ingress", map[string]string{"operator": "0.0.1-snapshot", "operand": "x"}, available, notDegraded),
			ready: true, available: configv1.ConditionTrue},
		{name: "ready without a Degraded condition", expected: want, live: co("ingress", map[string]string{"operator": "0.0.1-snapshot"}, available),
			ready: true, available: configv1.ConditionTrue},
		{name: "a manifest without versions asks for none", expected: co("x", nil), live: co("x", nil, available),
			ready: true, available: configv1.ConditionTrue},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := OperatorStatus(tc.expected, tc.live)
			if st.Ready != tc.ready || st.Reason != tc.reason || st.Message != tc.message || st.Available != tc.available {
				t.Errorf("OperatorStatus = ready %v, %q, %q, available %q; want %v, %q, %q, %q",
					st.Ready, st.Reason, st.Message, st.Available, tc.ready, tc.reason, tc.message, tc.available)
			}
			if diff := cmp.Diff(tc.undone, st.Undone); diff != "" {
				t.Errorf("Undone (-want +got):\n%s", diff)
			}
			if tc.live != nil && len(tc.live.Status.Conditions) > 0 && st.Since != "2026-11-21T10:00:00Z" {
				t.Errorf("Since = %q", st.Since)
			}
		})
	}
}

func TestAggregate(t *testing.T) {
	ready := func(n string) OperatorState { return OperatorState{Name: n, Found: true, Ready: true} }
	notReady := func(n, reason string) OperatorState { return OperatorState{Name: n, Found: true, Reason: reason} }
	cases := []struct {
		name string
		ops  []OperatorState
		want []Condition
		ok   bool
	}{
		{name: "all ready", ops: []OperatorState{ready("a"), ready("b")}, ok: true, want: []Condition{
			{Type: "Available", Status: "True", Message: "Done applying 4.22.0"},
			{Type: "Progressing", Status: "False", Message: "Cluster version is 4.22.0"},
			{Type: "Failing", Status: "False"},
		}},
		{name: "one not available", ops: []OperatorState{ready("a"), notReady("ingress", OperatorNotAvailable)}, want: []Condition{
			{Type: "Available", Status: "False"},
			{Type: "Progressing", Status: "True", Reason: OperatorNotAvailable, Message: "Unable to apply 4.22.0: Cluster operator ingress is not available"},
			{Type: "Failing", Status: "True", Reason: OperatorNotAvailable, Message: "Cluster operator ingress is not available"},
		}},
		{name: "two degraded", ops: []OperatorState{notReady("b", OperatorDegraded), notReady("a", OperatorDegraded)}, want: []Condition{
			{Type: "Available", Status: "False"},
			{Type: "Progressing", Status: "True", Reason: "ClusterOperatorsDegraded", Message: "Unable to apply 4.22.0: Cluster operators a, b are degraded"},
			{Type: "Failing", Status: "True", Reason: "ClusterOperatorsDegraded", Message: "Cluster operators a, b are degraded"},
		}},
		{name: "several reasons", ops: []OperatorState{notReady("a", OperatorDegraded), notReady("b", OperatorNotFound), ready("c")}, want: []Condition{
			{Type: "Available", Status: "False"},
			{Type: "Progressing", Status: "True", Reason: "MultipleErrors", Message: "Unable to apply 4.22.0: Multiple errors are preventing progress:\n* Cluster operator a is degraded\n* Cluster operator b does not exist"},
			{Type: "Failing", Status: "True", Reason: "MultipleErrors", Message: "Multiple errors are preventing progress:\n* Cluster operator a is degraded\n* Cluster operator b does not exist"},
		}},
		{name: "versions pending is progress, not failure", ops: []OperatorState{ready("a"), ready("b"), notReady("c", OperatorUpdating)}, want: []Condition{
			{Type: "Available", Status: "False"},
			{Type: "Progressing", Status: "True", Reason: OperatorUpdating, Message: "Working towards 4.22.0: 2 of 3 done (66% complete), waiting on c"},
			{Type: "Failing", Status: "False"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := Aggregate("4.22.0", tc.ops)
			if diff := cmp.Diff(tc.want, s.Conditions); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if s.Healthy() != tc.ok {
				t.Errorf("Healthy = %v", s.Healthy())
			}
		})
	}
}

func TestCheck(t *testing.T) {
	cases := []struct {
		name     string
		required string
		live     string
		want     Readiness
	}{
		{name: "CRD established", live: `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: w}
status: {conditions: [{type: NamesAccepted, status: "True"}, {type: Established, status: "True"}]}`, want: Readiness{Ready: true}},
		{name: "CRD not yet", live: `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: w}`, want: Readiness{Message: "no Established condition yet", Reason: "NotEstablished"}},
		{name: "CRD names rejected", live: `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: w}
status: {conditions: [{type: NamesAccepted, status: "False", reason: NameConflict, message: taken}]}`, want: Readiness{Failed: true, Message: "NamesAccepted=False (NameConflict): taken", Reason: "NamesNotAccepted"}},
		{name: "Deployment without status: no rollout wait", live: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: ns1, generation: 1}`, want: Readiness{Ready: true}},
		{name: "Deployment past its deadline", live: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: ns1}
status: {conditions: [{type: Progressing, status: "False", reason: ProgressDeadlineExceeded, message: slow}]}`, want: Readiness{Message: "Progressing=False (ProgressDeadlineExceeded): slow", Reason: "ProgressDeadlineExceeded"}},
		{name: "Job complete", live: `
apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: ns1}
status: {conditions: [{type: Complete, status: "True"}]}`, want: Readiness{Ready: true}},
		{name: "Job failed", live: `
apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: ns1}
status: {failed: 3, conditions: [{type: Failed, status: "True", reason: BackoffLimitExceeded}]}`, want: Readiness{Failed: true, Message: "job failed: Failed=True (BackoffLimitExceeded)", Reason: "JobFailed"}},
		{name: "Job running", live: `
apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: ns1}
status: {active: 1}`, want: Readiness{Message: "not complete: 1 active, 0 succeeded, 0 failed", Reason: "JobNotComplete"}},
		{name: "Namespace by kstatus", live: `
apiVersion: v1
kind: Namespace
metadata: {name: ns1}
status: {phase: Active}`, want: Readiness{Ready: true}},
		{name: "ConfigMap by kstatus", live: `
apiVersion: v1
kind: ConfigMap
metadata: {name: c, namespace: ns1}`, want: Readiness{Ready: true}},
		{name: "custom resource not ready by kstatus", live: `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, generation: 2}
status: {observedGeneration: 1}`, want: Readiness{Message: "InProgress: Widget generation is 2, but latest observed generation is 1", Reason: "InProgress"}},
		{name: "ClusterOperator available is not enough", required: `
apiVersion: config.openshift.io/v1
kind: ClusterOperator
metadata: {name: ingress}
status: {versions: [{name: operator, version: 0.0.1-snapshot}]}`, live: `
apiVersion: config.openshift.io/v1
kind: ClusterOperator
metadata: {name: ingress}
status: {conditions: [{type: Available, status: "True", lastTransitionTime: "2026-11-21T10:00:00Z"}]}`, want: Readiness{Message: "versions not reported yet: operator to 0.0.1-snapshot", Reason: OperatorUpdating}},
		{name: "ClusterOperator degraded", required: `
apiVersion: config.openshift.io/v1
kind: ClusterOperator
metadata: {name: ingress}`, live: `
apiVersion: config.openshift.io/v1
kind: ClusterOperator
metadata: {name: ingress}
status: {conditions: [{type: Available, status: "True", lastTransitionTime: "2026-11-21T10:00:00Z"}, {type: Degraded, status: "True", reason: X, message: broken, lastTransitionTime: "2026-11-21T10:00:00Z"}]}`, want: Readiness{Message: "Degraded=True (X): broken", Reason: OperatorDegraded}},
		{name: "being deleted", live: `
apiVersion: v1
kind: ConfigMap
metadata: {name: c, namespace: ns1, deletionTimestamp: "2026-11-21T10:00:00Z"}`, want: Readiness{Message: "being deleted", Reason: "Deleting"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var required *unstructured.Unstructured
			if tc.required != "" {
				required = parse(t, tc.required)
			}
			got := Check(required, parse(t, tc.live))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Check (-want +got):\n%s", diff)
			}
		})
	}
	if got := Check(nil, nil); got.Ready || got.Message != "not found" {
		t.Errorf("Check(nil) = %+v", got)
	}
}

func TestChangeSet(t *testing.T) {
	cs := &ChangeSet{}
	cs.Add(Change{Action: Created}, Change{Action: Created}, Change{Action: Unchanged}, Change{Action: Failed})
	if got, want := cs.Summary(), "2 created, 1 unchanged, 1 failed"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	if (&ChangeSet{}).Summary() != "nothing" {
		t.Error("empty summary")
	}
}
