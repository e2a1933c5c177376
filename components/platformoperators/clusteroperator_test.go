package platformoperators

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// poWith is a PlatformOperator whose Installed condition has the given
// status and reason ("" status: no condition).
func poWith(name string, status metav1.ConditionStatus, reason, msg string) PlatformOperator {
	po := PlatformOperator{}
	po.Name = name
	if status != "" {
		po.Status.Conditions = []metav1.Condition{{Type: ConditionInstalled, Status: status, Reason: reason, Message: msg}}
	}
	return po
}

// conditions prints a ClusterOperator's conditions as "Type=Status Reason: message".
func conditions(st configv1.ClusterOperatorStatus) []string {
	var out []string
	for _, c := range st.Conditions {
		out = append(out, string(c.Type)+"="+string(c.Status)+" "+c.Reason+": "+c.Message)
	}
	return out
}

func TestAggregateClusterOperatorStatus(t *testing.T) {
	cases := []struct {
		name string
		pos  []PlatformOperator
		want []string
	}{
		{
			name: "no PlatformOperators",
			want: []string{
				"Available=True AsExpected: no platform operators are present",
				"Progressing=False AsExpected: no platform operators are present",
				"Degraded=False AsExpected: ",
			},
		},
		{
			name: "all installed",
			pos:  []PlatformOperator{poWith("b", "True", ReasonInstallSuccessful, "ok"), poWith("a", "True", ReasonInstallSuccessful, "ok")},
			want: []string{
				"Available=True AsExpected: all 2 platform operators are installed: a, b",
				"Progressing=False AsExpected: all 2 platform operators are installed: a, b",
				"Degraded=False AsExpected: ",
			},
		},
		{
			name: "one pending, one not reconciled yet",
			pos:  []PlatformOperator{poWith("a", "True", ReasonInstallSuccessful, "ok"), poWith("b", "False", ReasonUnpackPending, "unpacking"), poWith("c", "", "", "")},
			want: []string{
				"Available=False PlatformOperatorError: 2 of 3 platform operators are not installed: PlatformOperator b: UnpackPending: unpacking; PlatformOperator c: InstallPending: not reconciled yet",
				"Progressing=True Installing: installing 2 of 3 platform operators: b, c",
				"Degraded=False AsExpected: ",
			},
		},
		{
			name: "one failed, one installing",
			pos:  []PlatformOperator{poWith("a", "False", ReasonSourceFailed, `package "x": not in the catalog`), poWith("b", "False", ReasonInstallPending, "installing")},
			want: []string{
				`Available=False PlatformOperatorError: 2 of 2 platform operators are not installed: PlatformOperator a: SourceFailed: package "x": not in the catalog; PlatformOperator b: InstallPending: installing`,
				"Progressing=True Installing: installing 1 of 2 platform operators: b",
				"Degraded=False AsExpected: ",
			},
		},
		{
			name: "all failed: nothing is moving",
			pos:  []PlatformOperator{poWith("a", "False", ReasonInstallFailed, "boom"), poWith("b", "True", ReasonInstallSuccessful, "ok")},
			want: []string{
				"Available=False PlatformOperatorError: 1 of 2 platform operators are not installed: PlatformOperator a: InstallFailed: boom",
				"Progressing=False PlatformOperatorError: no platform operator is installing: 1 of 2 failed",
				"Degraded=False AsExpected: ",
			},
		},
		{
			name: "Installed Unknown counts as failing",
			pos:  []PlatformOperator{poWith("a", "Unknown", "Weird", "who knows")},
			want: []string{
				"Available=False PlatformOperatorError: 1 of 1 platform operators are not installed: PlatformOperator a: Weird: who knows",
				"Progressing=False PlatformOperatorError: no platform operator is installing: 1 of 1 failed",
				"Degraded=False AsExpected: ",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := AggregateStatus(tc.pos, "4.22.0", ShapeV1Alpha2)
			if diff := cmp.Diff(tc.want, conditions(st)); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]configv1.OperandVersion{{Name: "operator", Version: "4.22.0"}}, st.Versions); diff != "" {
				t.Errorf("versions (-want +got):\n%s", diff)
			}
			wantRelated := []configv1.ObjectReference{
				{Resource: "namespaces", Name: "openshift-platform-operators"},
				{Group: "platform.openshift.io", Resource: "platformoperators"},
				{Group: "core.rukpak.io", Resource: "bundledeployments"},
			}
			if diff := cmp.Diff(wantRelated, st.RelatedObjects); diff != "" {
				t.Errorf("relatedObjects (-want +got):\n%s", diff)
			}
		})
	}
	if v := AggregateStatus(nil, "", ShapeV1Alpha2).Versions; v != nil {
		t.Errorf("unknown release version: versions %v, want none", v)
	}
}

func TestAggregateRelatedObjects(t *testing.T) {
	for _, tc := range []struct {
		shape Shape
		want  []configv1.ObjectReference
	}{
		{ShapeV1Alpha2, []configv1.ObjectReference{
			{Resource: "namespaces", Name: "openshift-platform-operators"},
			{Group: "platform.openshift.io", Resource: "platformoperators"},
			{Group: "core.rukpak.io", Resource: "bundledeployments"},
		}},
		// release-4.12's four: v1alpha1 Bundles hold the unpack state.
		{ShapeV1Alpha1, []configv1.ObjectReference{
			{Resource: "namespaces", Name: "openshift-platform-operators"},
			{Group: "platform.openshift.io", Resource: "platformoperators"},
			{Group: "core.rukpak.io", Resource: "bundledeployments"},
			{Group: "core.rukpak.io", Resource: "bundles"},
		}},
	} {
		t.Run(string(tc.shape), func(t *testing.T) {
			if diff := cmp.Diff(tc.want, AggregateStatus(nil, "4.22.0", tc.shape).RelatedObjects); diff != "" {
				t.Errorf("relatedObjects (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAggregateStatusBounds: with many PlatformOperators failing, and long
// messages, the Available message stays bounded but still counts them all.
func TestAggregateStatusBounds(t *testing.T) {
	var pos []PlatformOperator
	for i := range 25 {
		pos = append(pos, poWith(fmt.Sprintf("po-%02d", i), "False", ReasonInstallFailed, strings.Repeat("x", 5000)))
	}
	pos = append(pos, poWith("pending", "False", ReasonUnpackPending, "unpacking"))
	st := AggregateStatus(pos, "4.22.0", ShapeV1Alpha2)
	avail, prog := st.Conditions[0], st.Conditions[1]
	if !strings.HasPrefix(avail.Message, "26 of 26 platform operators are not installed: PlatformOperator pending: UnpackPending: unpacking; PlatformOperator po-00: InstallFailed: xxx") ||
		!strings.HasSuffix(avail.Message, "; and 16 more (see their Installed conditions)") {
		t.Errorf("Available message: %.300s ... %s", avail.Message, avail.Message[max(0, len(avail.Message)-100):])
	}
	if n := len(avail.Message); n > MaxListedPlatformOperators*(MaxCarriedMessage+100)+200 {
		t.Errorf("Available message is %d bytes", n)
	}
	if prog.Message != "installing 1 of 26 platform operators: pending" {
		t.Errorf("Progressing message %q", prog.Message)
	}
}

func TestCoreClusterOperatorStatus(t *testing.T) {
	dep := func(edit func(d *appsv1.Deployment)) *appsv1.Deployment {
		one := int32(1)
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: ManagerDeployment, Generation: 2},
			Spec:       appsv1.DeploymentSpec{Replicas: &one},
			Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
				Conditions: []appsv1.DeploymentCondition{
					{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
					{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
				}},
		}
		if edit != nil {
			edit(d)
		}
		return d
	}
	const name = "openshift-platform-operators/platform-operators-controller-manager"
	cases := []struct {
		name string
		dep  *appsv1.Deployment
		want []string
	}{
		{"missing", nil, []string{
			"Available=False DeploymentNotFound: Deployment " + name + " does not exist",
			"Progressing=True DeploymentNotFound: Deployment " + name + " does not exist",
			"Degraded=False AsExpected: ",
		}},
		{"running", dep(nil), []string{
			"Available=True AsExpected: the manager is running: 1 of 1 replicas available, 1 updated",
			"Progressing=False AsExpected: Deployment " + name + " is rolled out",
			"Degraded=False AsExpected: ",
		}},
		{"rolling out", dep(func(d *appsv1.Deployment) { d.Generation = 3 }), []string{
			"Available=True AsExpected: the manager is running: 1 of 1 replicas available, 1 updated",
			"Progressing=True Deploying: rolling out Deployment " + name + ": 1 of 1 replicas available, 1 updated",
			"Degraded=False AsExpected: ",
		}},
		{"unavailable", dep(func(d *appsv1.Deployment) {
			d.Status.AvailableReplicas = 0
			d.Status.Conditions[0] = appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable", Message: "Deployment does not have minimum availability."}
		}), []string{
			"Available=False ManagerUnavailable: Deployment " + name + " is not available: 0 of 1 replicas available, 1 updated: Deployment does not have minimum availability.",
			"Progressing=True Deploying: rolling out Deployment " + name + ": 0 of 1 replicas available, 1 updated",
			"Degraded=False AsExpected: ",
		}},
		{"stuck", dep(func(d *appsv1.Deployment) {
			d.Status.Conditions[1] = appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded", Message: "ReplicaSet has timed out progressing."}
		}), []string{
			"Available=True AsExpected: the manager is running: 1 of 1 replicas available, 1 updated",
			"Progressing=False AsExpected: Deployment " + name + " is rolled out",
			"Degraded=True ProgressDeadlineExceeded: Deployment " + name + ": ReplicaSet has timed out progressing.",
		}},
		{"never created (no status)", &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: 1}}, []string{
			"Available=False ManagerUnavailable: Deployment " + name + " is not available: 0 of 1 replicas available, 0 updated",
			"Progressing=True Deploying: rolling out Deployment " + name + ": 0 of 1 replicas available, 0 updated",
			"Degraded=False AsExpected: ",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, conditions(CoreStatus(tc.dep, "4.22.0"))); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMergeClusterOperatorStatus(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	existing := configv1.ClusterOperatorStatus{
		Conditions: []configv1.ClusterOperatorStatusCondition{
			{Type: "Upgradeable", Status: "False", Reason: "TechPreview", LastTransitionTime: t0},
			{Type: "Available", Status: "False", Reason: "PlatformOperatorError", Message: "old", LastTransitionTime: t0},
			{Type: "Degraded", Status: "False", Reason: "AsExpected", LastTransitionTime: t0},
		},
		Versions: []configv1.OperandVersion{{Name: "operator", Version: "0.0.1-snapshot"}},
	}
	desired := AggregateStatus(nil, "4.22.0", ShapeV1Alpha2)
	got := MergeClusterOperatorStatus(existing, desired, now)
	want := []configv1.ClusterOperatorStatusCondition{
		{Type: "Upgradeable", Status: "False", Reason: "TechPreview", LastTransitionTime: t0},
		{Type: "Available", Status: "True", Reason: "AsExpected", Message: "no platform operators are present", LastTransitionTime: metav1.NewTime(now)},
		{Type: "Degraded", Status: "False", Reason: "AsExpected", LastTransitionTime: t0},
		{Type: "Progressing", Status: "False", Reason: "AsExpected", Message: "no platform operators are present", LastTransitionTime: metav1.NewTime(now)},
	}
	if diff := cmp.Diff(want, got.Conditions); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(desired.Versions, got.Versions); diff != "" {
		t.Errorf("versions (-want +got):\n%s", diff)
	}
	again := MergeClusterOperatorStatus(got, desired, now.Add(time.Hour))
	if diff := cmp.Diff(got, again); diff != "" {
		t.Errorf("merging the same status again changed it (-first +second):\n%s", diff)
	}
}
