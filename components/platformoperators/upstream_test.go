package platformoperators

import (
	"os"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The vectors openshift/platform-operators pins in its own tests (main at
// 83d274ee and release-4.12 at c930dc74 agree on all of them):
// internal/util/util_test.go (Test_inspectPlatformOperator,
// TestInspectBundleDeployment), the aggregated ClusterOperator controller's
// test, and the two e2e suites (test/e2e/platform_operators_test.go,
// test/e2e/aggregated_clusteroperator_test.go). Each case gives upstream's
// outcome and ours; where they differ, docsRow names the row of the table in
// docs/platform-operators.md that says why.

// outcome is a condition's status and reason.
type outcome struct {
	Status string
	Reason string
}

func (o outcome) String() string { return o.Status + " " + o.Reason }

// upstreamDocs is the docs page whose table explains every difference.
const upstreamDocs = "../../docs/platform-operators.md"

// checkDocsRow fails the test when the docs' table has no row for behaviour.
func checkDocsRow(t *testing.T, behaviour string) {
	t.Helper()
	data, err := os.ReadFile(upstreamDocs)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\n| "+behaviour+" |") {
		t.Errorf("%s has no table row %q explaining the difference", upstreamDocs, behaviour)
	}
}

// TestUpstreamInspectBundleDeployment: a BundleDeployment's conditions to
// the PlatformOperator's Installed condition (upstream's
// util.InspectBundleDeployment: nil means installed).
func TestUpstreamInspectBundleDeployment(t *testing.T) {
	c := func(typ string, s metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: s, Reason: reason, Message: msg}
	}
	const (
		valid     = BundleConditionHasValidBundle
		installed = BundleConditionInstalled
	)
	cases := []struct {
		name     string
		conds    []metav1.Condition
		upstream outcome
		ours     outcome
		// message: facts our message carries (upstream's carries rukpak's
		// message, or a fixed "waiting" text).
		message []string
		docsRow string
	}{
		// TestInspectBundleDeployment
		{name: "InstallSucceeded",
			conds:    []metav1.Condition{c(valid, "True", "UnpackSuccessful", ""), c(installed, "True", "InstallationSucceeded", "instantiated bundle x")},
			upstream: outcome{"True", ReasonInstallSuccessful}, ours: outcome{"True", ReasonInstallSuccessful},
			message: []string{"BundleDeployment bd"}},
		{name: "InstalledWrongReason",
			conds:    []metav1.Condition{c(valid, "True", "UnpackSuccessful", ""), c(installed, "True", "ErrorGettingClient", "")},
			upstream: outcome{"True", ReasonInstallSuccessful}, ours: outcome{"True", ReasonInstallSuccessful}},
		{name: "InstallFailed",
			conds:    []metav1.Condition{c(valid, "True", "UnpackSuccessful", ""), c(installed, "False", "InstallFailed", "apply: forbidden")},
			upstream: outcome{"False", ReasonInstallFailed}, ours: outcome{"False", ReasonInstallFailed},
			message: []string{"BundleDeployment bd", "Installed=False", "InstallFailed", "apply: forbidden"}},
		{name: "UnpackedButNotInstalled",
			conds:    []metav1.Condition{c(valid, "True", "UnpackSuccessful", ""), c("stub", "False", "InstallFailed", "")},
			upstream: outcome{"False", ReasonInstallPending}, ours: outcome{"False", ReasonInstallPending},
			message: []string{"BundleDeployment bd", "install"}},
		{name: "UnpackedNil",
			conds:    []metav1.Condition{c("stub", "False", "InstallFailed", "")},
			upstream: outcome{"False", ReasonUnpackPending}, ours: outcome{"False", ReasonUnpackPending},
			message: []string{"BundleDeployment bd", "unpack"}},
		{name: "UnpackFailed (HasValidBundle False UnpackPending)",
			conds:    []metav1.Condition{c(valid, "False", "UnpackPending", "waiting for the pod")},
			upstream: outcome{"False", ReasonUnpackPending}, ours: outcome{"False", ReasonUnpackPending},
			message: []string{"BundleDeployment bd", "UnpackPending", "waiting for the pod"}},
		// test/e2e/platform_operators_test.go, "an invalid PO has been
		// created": rukpak cannot convert cincinnati-operator's bundle.
		{name: "e2e: unpack failed",
			conds:    []metav1.Condition{c(valid, "False", "UnpackFailed", "convert registry+v1 bundle to plain+v0 bundle: AllNamespace install mode must be enabled")},
			upstream: outcome{"False", "UnpackFailed"}, ours: outcome{"False", ReasonInstallFailed},
			message: []string{"BundleDeployment bd", "HasValidBundle=False", "UnpackFailed", "AllNamespace install mode must be enabled"},
			docsRow: "rukpak's reason on the PlatformOperator"},
		// Not pinned by a test, but what upstream's code does with rukpak's
		// other reasons: it copies them too.
		{name: "code: unpacking",
			conds:    []metav1.Condition{c(valid, "False", "Unpacking", "pulling")},
			upstream: outcome{"False", "Unpacking"}, ours: outcome{"False", ReasonUnpackPending},
			message: []string{"Unpacking", "pulling"},
			docsRow: "rukpak's reason on the PlatformOperator"},
		{name: "code: install error with another reason",
			conds:    []metav1.Condition{c(valid, "True", "UnpackSuccessful", ""), c(installed, "False", "ErrorGettingClient", "no client")},
			upstream: outcome{"False", "ErrorGettingClient"}, ours: outcome{"False", ReasonInstallFailed},
			message: []string{"Installed=False", "ErrorGettingClient", "no client"},
			docsRow: "rukpak's reason on the PlatformOperator"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := InstalledCondition("bd", tc.conds)
			if o := (outcome{string(got.Status), got.Reason}); o != tc.ours {
				t.Errorf("ours: %s, want %s", o, tc.ours)
			}
			for _, fact := range tc.message {
				if !strings.Contains(got.Message, fact) {
					t.Errorf("message %q does not carry %q", got.Message, fact)
				}
			}
			if tc.upstream != tc.ours {
				if tc.docsRow == "" {
					t.Errorf("upstream %s, ours %s: the case names no docs row", tc.upstream, tc.ours)
				} else {
					checkDocsRow(t, tc.docsRow)
				}
			}
		})
	}
}

// TestUpstreamAggregate: PlatformOperators to the aggregate
// ClusterOperator (upstream's util.InspectPlatformOperators and the
// aggregated controller).
func TestUpstreamAggregate(t *testing.T) {
	po := func(name string, conds ...metav1.Condition) PlatformOperator {
		p := PlatformOperator{}
		p.Name = name
		p.Status.Conditions = conds
		return p
	}
	inst := func(s metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: ConditionInstalled, Status: s, Reason: reason, Message: "m"}
	}
	type co struct{ Available, Progressing, Degraded outcome }
	cases := []struct {
		name     string
		pos      []PlatformOperator
		upstream co
		ours     co
		// message: facts our Available message carries (upstream's names
		// each failing PlatformOperator and its reason).
		message []string
		docsRow string
	}{
		// Test_inspectPlatformOperator: HappyPath, and the e2e "installing
		// a series of POs successfully".
		{name: "HappyPath", pos: []PlatformOperator{po("a", inst("True", ReasonInstallSuccessful))},
			upstream: co{outcome{"True", "AsExpected"}, outcome{"False", "AsExpected"}, outcome{"False", ""}},
			ours:     co{outcome{"True", "AsExpected"}, outcome{"False", "AsExpected"}, outcome{"False", "AsExpected"}},
			message:  []string{"1", "installed", "a"},
			docsRow:  "Condition reasons"},
		// NilConditions: not reconciled yet counts as InstallPending.
		{name: "NilConditions", pos: []PlatformOperator{po("a")},
			upstream: co{outcome{"False", "PlatformOperatorError"}, outcome{"True", ""}, outcome{"False", ""}},
			ours:     co{outcome{"False", "PlatformOperatorError"}, outcome{"True", "Installing"}, outcome{"False", "AsExpected"}},
			message:  []string{"1 of 1", "PlatformOperator a", ReasonInstallPending},
			docsRow:  "Condition reasons"},
		{name: "InstallFailed", pos: []PlatformOperator{po("a", inst("False", ReasonInstallFailed))},
			upstream: co{outcome{"False", "PlatformOperatorError"}, outcome{"True", ""}, outcome{"False", ""}},
			ours:     co{outcome{"False", "PlatformOperatorError"}, outcome{"False", "PlatformOperatorError"}, outcome{"False", "AsExpected"}},
			message:  []string{"1 of 1", "PlatformOperator a", ReasonInstallFailed},
			docsRow:  "Progressing when every PlatformOperator not installed has failed"},
		// The e2e "a failing PO has been encountered": a package that is in
		// no catalog.
		{name: "SourceFailed", pos: []PlatformOperator{po("non-existent-operator", inst("False", ReasonSourceFailed))},
			upstream: co{outcome{"False", "PlatformOperatorError"}, outcome{"True", ""}, outcome{"False", ""}},
			ours:     co{outcome{"False", "PlatformOperatorError"}, outcome{"False", "PlatformOperatorError"}, outcome{"False", "AsExpected"}},
			message:  []string{"1 of 1", "PlatformOperator non-existent-operator", ReasonSourceFailed},
			docsRow:  "Progressing when every PlatformOperator not installed has failed"},
		{name: "MissingAppliedCondition", pos: []PlatformOperator{po("a", metav1.Condition{Type: "stub", Status: "True", Reason: ReasonSourceFailed})},
			upstream: co{outcome{"False", "PlatformOperatorError"}, outcome{"True", ""}, outcome{"False", ""}},
			ours:     co{outcome{"False", "PlatformOperatorError"}, outcome{"True", "Installing"}, outcome{"False", "AsExpected"}},
			message:  []string{"1 of 1", "PlatformOperator a", ReasonInstallPending},
			docsRow:  "Condition reasons"},
		// The aggregated controller's test and the e2e "no POs".
		{name: "no PlatformOperators", pos: nil,
			upstream: co{outcome{"True", "AsExpected"}, outcome{"False", "AsExpected"}, outcome{"False", ""}},
			ours:     co{outcome{"True", "AsExpected"}, outcome{"False", "AsExpected"}, outcome{"False", "AsExpected"}},
			message:  []string{"no platform operators"},
			docsRow:  "Condition reasons"},
		// The e2e "mixture of failing and successful POs".
		{name: "mixture", pos: []PlatformOperator{po("cert-manager", inst("True", ReasonInstallSuccessful)), po("non-existent-operator", inst("False", ReasonSourceFailed))},
			upstream: co{outcome{"False", "PlatformOperatorError"}, outcome{"True", ""}, outcome{"False", ""}},
			ours:     co{outcome{"False", "PlatformOperatorError"}, outcome{"False", "PlatformOperatorError"}, outcome{"False", "AsExpected"}},
			message:  []string{"1 of 2", "PlatformOperator non-existent-operator", ReasonSourceFailed},
			docsRow:  "Progressing when every PlatformOperator not installed has failed"},
		{name: "one failed, one unpacking", pos: []PlatformOperator{po("a", inst("False", ReasonSourceFailed)), po("b", inst("False", ReasonUnpackPending))},
			upstream: co{outcome{"False", "PlatformOperatorError"}, outcome{"True", ""}, outcome{"False", ""}},
			ours:     co{outcome{"False", "PlatformOperatorError"}, outcome{"True", "Installing"}, outcome{"False", "AsExpected"}},
			message:  []string{"2 of 2", "PlatformOperator a: SourceFailed", "PlatformOperator b: UnpackPending"},
			docsRow:  "Condition reasons"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := AggregateStatus(tc.pos, "4.22.0", ShapeV1Alpha2)
			find := func(typ configv1.ClusterStatusConditionType) (outcome, string) {
				for _, c := range st.Conditions {
					if c.Type == typ {
						return outcome{string(c.Status), c.Reason}, c.Message
					}
				}
				return outcome{}, ""
			}
			var got co
			var msg string
			got.Available, msg = find(configv1.OperatorAvailable)
			got.Progressing, _ = find(configv1.OperatorProgressing)
			got.Degraded, _ = find(configv1.OperatorDegraded)
			if got != tc.ours {
				t.Errorf("ours: %+v, want %+v", got, tc.ours)
			}
			for _, fact := range tc.message {
				if !strings.Contains(msg, fact) {
					t.Errorf("Available message %q does not carry %q", msg, fact)
				}
			}
			// Both report the release as the "operator" version.
			if len(st.Versions) != 1 || st.Versions[0].Name != "operator" || st.Versions[0].Version == "" {
				t.Errorf("versions %v", st.Versions)
			}
			if tc.upstream != tc.ours {
				if tc.docsRow == "" {
					t.Errorf("upstream %+v, ours %+v: the case names no docs row", tc.upstream, tc.ours)
				} else {
					checkDocsRow(t, tc.docsRow)
				}
			}
			// Upstream's pass/fail (InspectPlatformOperators) is ours.
			upFailing := tc.upstream.Available.Status == "False"
			for _, p := range tc.pos {
				c := meta.FindStatusCondition(p.Status.Conditions, ConditionInstalled)
				if failing := c == nil || c.Status != metav1.ConditionTrue; failing && !upFailing {
					t.Errorf("PlatformOperator %s fails for us, not upstream", p.Name)
				}
			}
		})
	}
}

// TestUpstreamRelatedObjects: upstream main lists 2 related objects,
// release-4.12 4; ours 3 (v1alpha2) and release-4.12's 4 (v1alpha1).
func TestUpstreamRelatedObjects(t *testing.T) {
	for _, tc := range []struct {
		shape          Shape
		upstream, ours int
	}{
		{ShapeV1Alpha2, 2, 3},
		{ShapeV1Alpha1, 4, 4},
	} {
		if got := len(AggregateStatus(nil, "4.22.0", tc.shape).RelatedObjects); got != tc.ours {
			t.Errorf("%s: %d related objects, want %d", tc.shape, got, tc.ours)
		}
		if tc.upstream != tc.ours {
			checkDocsRow(t, "relatedObjects")
		}
	}
}
