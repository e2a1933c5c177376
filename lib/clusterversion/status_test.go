package clusterversion

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"
)

// conds prints conditions as "Type=Status Reason: Message".
func conds(st configv1.ClusterVersionStatus) map[string]string {
	out := map[string]string{}
	for _, c := range st.Conditions {
		s := string(c.Status)
		if c.Reason != "" {
			s += " " + c.Reason
		}
		if c.Message != "" {
			s += ": " + c.Message
		}
		out[string(c.Type)] = s
	}
	return out
}

func TestUpdate(t *testing.T) {
	a := configv1.Release{Version: "4.22.0", Image: "/p/a@sha256:aa"}
	b := configv1.Release{Version: "4.23.0", Image: "/p/b@sha256:bb"}
	caps := Capabilities{Known: []configv1.ClusterVersionCapability{"Console", "Insights"}, Enabled: []configv1.ClusterVersionCapability{"Console"}}
	tests := []struct {
		name  string
		steps []Progress
		want  map[string]string
	}{
		{
			name:  "install starting",
			steps: []Progress{{Desired: a, Total: 600, Capabilities: caps}},
			want: map[string]string{
				"Available": "False", "Failing": "False", "Progressing": "True: Working towards 4.22.0", "RetrievedUpdates": "False",
				"ImplicitlyEnabledCapabilities": "False AsExpected: Capabilities match configured spec",
			},
		},
		{
			name:  "install half way, waiting on an operator",
			steps: []Progress{{Desired: a, Done: 301, Total: 600, Waiting: []string{"etcd"}, WaitingReason: "ClusterOperatorUpdating"}},
			want: map[string]string{
				"Available": "False", "Failing": "False", "RetrievedUpdates": "False",
				"Progressing":                   "True ClusterOperatorUpdating: Working towards 4.22.0: 301 of 600 done (50% complete), waiting on etcd",
				"ImplicitlyEnabledCapabilities": "False AsExpected: Capabilities match configured spec",
			},
		},
		{
			name: "installed, then an update to B fails",
			steps: []Progress{
				{Desired: a, Done: 600, Total: 600, Completed: true, Reconciling: true},
				{Desired: b, Done: 10, Total: 610, Failure: &Failure{Reason: "ClusterOperatorNotAvailable", Message: "Cluster operator etcd is not available"},
					Accepted:    &Accepted{Accepted: true, Reason: "PayloadLoaded", Message: `Payload loaded version="4.23.0"`},
					Upgradeable: UpgradeableConditions([]Check{{Type: UpgradeableUpgradeInProgress, Reason: "UpdateInProgress", Message: "An update is in progress"}})},
			},
			want: map[string]string{
				"Available": "True: Done applying 4.22.0", "RetrievedUpdates": "False",
				"Failing":                       "True ClusterOperatorNotAvailable: Cluster operator etcd is not available",
				"Progressing":                   "True ClusterOperatorNotAvailable: Unable to apply 4.23.0: Cluster operator etcd is not available",
				"ReleaseAccepted":               `True PayloadLoaded: Payload loaded version="4.23.0"`,
				"Upgradeable":                   "False UpdateInProgress: An update is in progress",
				"ImplicitlyEnabledCapabilities": "False AsExpected: Capabilities match configured spec",
			},
		},
		{
			name: "update completed: reconciling B, Upgradeable gone, implicit capabilities named",
			steps: []Progress{
				{Desired: b, Done: 3, Total: 610, Upgradeable: UpgradeableConditions([]Check{{Type: UpgradeableUpgradeInProgress, Reason: "UpdateInProgress", Message: "x"}})},
				{Desired: b, Done: 610, Total: 610, Completed: true, Reconciling: true, Capabilities: caps.WithImplicit([]configv1.ClusterVersionCapability{"Insights"})},
			},
			want: map[string]string{
				"Available": "True: Done applying 4.23.0", "Failing": "False", "Progressing": "False: Cluster version is 4.23.0", "RetrievedUpdates": "False",
				"ImplicitlyEnabledCapabilities": "True CapabilitiesImplicitlyEnabled: The following capabilities could not be disabled: Insights",
			},
		},
		{
			name:  "reconciling with an error",
			steps: []Progress{{Desired: a, Completed: true, Reconciling: true, Failure: &Failure{Reason: "UpdatePayloadFailed", Message: "boom"}}},
			want: map[string]string{
				"Available": "True: Done applying 4.22.0", "RetrievedUpdates": "False",
				"Failing":                       "True UpdatePayloadFailed: boom",
				"Progressing":                   "False UpdatePayloadFailed: Error while reconciling 4.22.0: boom",
				"ImplicitlyEnabledCapabilities": "False AsExpected: Capabilities match configured spec",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var st configv1.ClusterVersionStatus
			for i, p := range tc.steps {
				Update(&st, p, at(i))
			}
			if diff := cmp.Diff(tc.want, conds(st)); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			last := tc.steps[len(tc.steps)-1]
			if !cmp.Equal(st.Desired, last.Desired) {
				t.Errorf("desired %+v, want %+v", st.Desired, last.Desired)
			}
			// The same progress later changes nothing: no write is needed.
			again := *st.DeepCopy()
			Update(&again, last, at(30))
			if diff := cmp.Diff(st, again); diff != "" {
				t.Errorf("the same progress again changed the status (-first +again):\n%s", diff)
			}
		})
	}
}

func TestUpgradeableConditions(t *testing.T) {
	if got := UpgradeableConditions(nil); got != nil {
		t.Errorf("no checks: %v", got)
	}
	co := ClusterOperatorsCheck([]OperatorUpgradeable{
		{Name: "kube-apiserver", Condition: configv1.ClusterOperatorStatusCondition{Status: configv1.ConditionFalse, Reason: "APIRemoved", Message: "v1beta1 goes"}},
		{Name: "etcd", Condition: configv1.ClusterOperatorStatusCondition{Status: configv1.ConditionTrue}},
	})
	one := UpgradeableConditions([]Check{*co})
	want := []configv1.ClusterOperatorStatusCondition{{Type: "Upgradeable", Status: "False", Reason: "APIRemoved",
		Message: "Cluster operator kube-apiserver should not be upgraded between minor or major versions: v1beta1 goes"}}
	if diff := cmp.Diff(want, one); diff != "" {
		t.Errorf("one check (-want +got):\n%s", diff)
	}
	two := UpgradeableConditions([]Check{*co, *DeletesCheck([]string{"deployment ns/b", "configmap ns/a"})})
	var types []string
	for _, c := range two {
		types = append(types, string(c.Type))
	}
	if diff := cmp.Diff([]string{"Upgradeable", "UpgradeableClusterOperators", "UpgradeableDeletesInProgress"}, types); diff != "" {
		t.Errorf("two checks (-want +got):\n%s", diff)
	}
	wantMsg := "Cluster should not be upgraded between minor or major versions for multiple reasons: APIRemoved,ResourceDeletesInProgress\n" +
		"* Cluster operator kube-apiserver should not be upgraded between minor or major versions: v1beta1 goes\n" +
		"* Cluster minor or major version upgrades are not allowed while resource deletions are in progress; resources=configmap ns/a,deployment ns/b"
	if two[0].Reason != "MultipleReasons" || two[0].Message != wantMsg {
		t.Errorf("Upgradeable = %s: %q", two[0].Reason, two[0].Message)
	}
	// Set into a status, then removed when the checks pass.
	var st configv1.ClusterVersionStatus
	SetUpgradeable(&st.Conditions, two, at(0))
	SetUpgradeable(&st.Conditions, nil, at(1))
	if len(st.Conditions) != 0 {
		t.Errorf("conditions left: %v", st.Conditions)
	}
	if ClusterOperatorsCheck(nil) != nil || DeletesCheck(nil) != nil || OverridesCheck([]configv1.ComponentOverride{{Unmanaged: false}}) != nil {
		t.Error("a passing check failed")
	}
	if c := OverridesCheck([]configv1.ComponentOverride{{Unmanaged: true}}); c == nil || c.Reason != "ClusterVersionOverridesSet" {
		t.Errorf("overrides: %+v", c)
	}
	if c := UpdateInProgressCheck([]configv1.ClusterOperatorStatusCondition{{Type: "Progressing", Status: "True"}}); c == nil || c.Reason != "UpdateInProgress" {
		t.Errorf("update in progress: %+v", c)
	}
}

func TestAdminAcksCheck(t *testing.T) {
	gate := "ack-4.22-kube-1.36-api-removals-in-4.23"
	desc := "Kubernetes 1.36 removes APIs; see https://example.com/removals."
	tests := []struct {
		name       string
		current    string
		gates      map[string]string
		acks       map[string]string
		wantReason string
		wantMsg    string
	}{
		{name: "unacknowledged gate of the current minor", current: "4.22.1", gates: map[string]string{gate: desc}, acks: map[string]string{},
			wantReason: "AdminAckRequired", wantMsg: desc},
		{name: "acknowledged", current: "4.22.1", gates: map[string]string{gate: desc}, acks: map[string]string{gate: "true"}},
		{name: "acknowledged with another value is not", current: "4.22.1", gates: map[string]string{gate: desc}, acks: map[string]string{gate: "yes"},
			wantReason: "AdminAckRequired", wantMsg: desc},
		{name: "a gate of another minor does not apply", current: "4.21.3", gates: map[string]string{gate: desc}, acks: map[string]string{}},
		{name: "empty gate value", current: "4.22.0", gates: map[string]string{gate: ""}, acks: map[string]string{},
			wantReason: "AdminAckConfigMapGateValueError", wantMsg: "admin-gates configmap gate " + gate + " must contain a non-empty value."},
		{name: "bad gate name and an unacknowledged gate", current: "4.22.0", gates: map[string]string{"ack-bad": "x", gate: desc}, acks: map[string]string{},
			wantReason: "MultipleReasons", wantMsg: desc + ` admin-gates configmap gate name ack-bad has invalid format; must comply with "^ack-[4-5][.]([0-9]{1,})-[^-]".`},
		{name: "no gates ConfigMap", current: "4.22.0", acks: map[string]string{}, wantReason: "UnableToAccessAdminGatesConfigMap", wantMsg: "admin-gates configmap not found."},
		{name: "no acks ConfigMap", current: "4.22.0", gates: map[string]string{}, wantReason: "UnableToAccessAdminAcksConfigMap", wantMsg: "admin-acks configmap not found."},
		{name: "nothing installed yet", current: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := AdminAcksCheck(tc.current, tc.gates, tc.acks)
			var reason, msg string
			if c != nil {
				reason, msg = c.Reason, c.Message
			}
			if reason != tc.wantReason || msg != tc.wantMsg {
				t.Errorf("got %q %q, want %q %q", reason, msg, tc.wantReason, tc.wantMsg)
			}
		})
	}
}

func TestFromRecord(t *testing.T) {
	spec := &configv1.ClusterVersionCapabilitiesSpec{BaselineCapabilitySet: configv1.ClusterVersionCapabilitySetNone, AdditionalEnabledCapabilities: []configv1.ClusterVersionCapability{"Console"}}
	c := FromRecord(spec, configv1.ClusterVersionCapabilitiesStatus{EnabledCapabilities: []configv1.ClusterVersionCapability{"Insights", "Console"}})
	if diff := cmp.Diff([]configv1.ClusterVersionCapability{"Console", "Insights"}, c.Enabled); diff != "" {
		t.Errorf("enabled (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]configv1.ClusterVersionCapability{"Insights"}, c.ImplicitlyEnabled); diff != "" {
		t.Errorf("implicitly enabled (-want +got):\n%s", diff)
	}
	if len(c.Known) != len(configv1.KnownClusterVersionCapabilities) {
		t.Errorf("%d known, want every known capability", len(c.Known))
	}
	def := FromRecord(nil, configv1.ClusterVersionCapabilitiesStatus{})
	if len(def.Enabled) != len(configv1.ClusterVersionCapabilitySets[configv1.ClusterVersionCapabilitySetCurrent]) || def.ImplicitlyEnabled != nil {
		t.Errorf("no spec: %d enabled, implicit %v; want vCurrent", len(def.Enabled), def.ImplicitlyEnabled)
	}
}
