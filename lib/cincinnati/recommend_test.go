package cincinnati

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// queryMatcher answers PromQL rules from a table: a query maps to a match,
// or is missing (an evaluation failure). It counts its calls.
type queryMatcher struct {
	answers map[string]bool
	calls   int
}

func (m *queryMatcher) Match(_ context.Context, rules []configv1.ClusterCondition) (bool, error) {
	m.calls++
	for _, r := range rules {
		if r.Type == RuleAlways {
			return true, nil
		}
		if a, ok := m.answers[r.PromQL.PromQL]; ok {
			return a, nil
		}
	}
	return false, errors.New("no such series")
}

func conditionalUpdate(version string, risks ...configv1.ConditionalUpdateRisk) configv1.ConditionalUpdate {
	return configv1.ConditionalUpdate{Release: configv1.Release{Version: version, Image: "img:" + version}, Risks: risks}
}

func TestJudge(t *testing.T) {
	m := &queryMatcher{answers: map[string]bool{"yes": true, "no": false}}
	ev := Evaluate(t.Context(), m, nil, []configv1.ConditionalUpdate{
		conditionalUpdate("1.0.1", risk("Yes", promql("yes")), risk("No", promql("no")), risk("Fails", promql("fails")), risk("Yes2", promql("yes")), risk("bad name!", promql("yes"))),
	}, nil, metav1.Now())
	for _, tc := range []struct {
		name     string
		risks    []string
		accepted []string
		status   metav1.ConditionStatus
		reason   string
		message  string
	}{
		{name: "no risk applies", risks: []string{"No"}, status: "True", reason: ReasonNotExposedToRisks, message: "The update is recommended: none of its risks apply to this cluster."},
		{name: "one applies: its name", risks: []string{"No", "Yes"}, status: "False", reason: "Yes", message: "Yes breaks things. https://bugs/Yes"},
		{name: "one applies, not a valid reason", risks: []string{"bad name!"}, status: "False", reason: ReasonExposedToRisks},
		{name: "two apply", risks: []string{"Yes", "Yes2"}, status: "False", reason: ReasonMultipleReasons, message: "Yes breaks things. https://bugs/Yes\n\nYes2 breaks things. https://bugs/Yes2"},
		{name: "fails", risks: []string{"No", "Fails"}, status: "Unknown", reason: ReasonEvaluationFailed,
			message: "Could not tell whether risk Fails applies to this cluster: no such series. Fails breaks things. https://bugs/Fails"},
		{name: "fails and applies", risks: []string{"Fails", "Yes"}, status: "False", reason: ReasonMultipleReasons},
		{name: "accepted", risks: []string{"Yes", "No"}, accepted: []string{"Yes"}, status: "True", reason: ReasonAllExposedRisksAccepted,
			message: "The update is recommended: the risks that apply to this cluster (Yes) are accepted by its administrators."},
		{name: "accepted and another applies", risks: []string{"Yes", "Yes2"}, accepted: []string{"Yes"}, status: "False", reason: "Yes2"},
		{name: "a failed evaluation is not accepted", risks: []string{"Fails"}, accepted: []string{"Fails"}, status: "Unknown", reason: ReasonEvaluationFailed},
		{name: "a risk not evaluated counts as failed", risks: []string{"Unseen"}, status: "Unknown", reason: ReasonEvaluationFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := configv1.ConditionalUpdate{}
			for _, n := range tc.risks {
				u.Risks = append(u.Risks, risk(n))
			}
			acc := map[string]bool{}
			for _, a := range tc.accepted {
				acc[a] = true
			}
			c := Judge(u, ev.Risks, acc).Recommended
			if c.Type != ConditionRecommended || c.Status != tc.status || c.Reason != tc.reason || (tc.message != "" && c.Message != tc.message) {
				t.Errorf("Recommended=%s %s %q, want %s %s %q", c.Status, c.Reason, c.Message, tc.status, tc.reason, tc.message)
			}
		})
	}
}

func TestEvaluate(t *testing.T) {
	m := &queryMatcher{answers: map[string]bool{"yes": true, "no": false}}
	then := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(then.Add(time.Hour))
	older := risk("Shared", promql("no"))
	newest := risk("Shared", promql("yes"))
	kept := conditionalUpdate("1.0.2", risk("Fine", promql("no")))
	kept.Conditions = []metav1.Condition{
		{Type: ConditionRecommended, Status: metav1.ConditionTrue, Reason: "Old", LastTransitionTime: then},
		{Type: "Other", Status: metav1.ConditionTrue, LastTransitionTime: then},
	}
	conditional := []configv1.ConditionalUpdate{
		conditionalUpdate("1.0.3", older),
		kept,
		conditionalUpdate("1.1.0", newest),
	}
	ev := Evaluate(t.Context(), m, []configv1.Release{{Version: "1.0.1", Image: "img:1.0.1"}, {Version: "1.0.4", Image: "img:1.0.4"}}, conditional, nil, now)
	// A risk is evaluated once, as declared by the newest update.
	if m.calls != 2 {
		t.Errorf("%d evaluations, want 2 (one per risk name)", m.calls)
	}
	if e := ev.Risks["Shared"]; !e.Applies || e.Risk.MatchingRules[0].PromQL.PromQL != "yes" {
		t.Errorf("Shared evaluated as %+v, want the 1.1.0 declaration, applying", e)
	}
	var avail []string
	for _, r := range ev.Available {
		avail = append(avail, r.Version)
	}
	if diff := cmp.Diff([]string{"1.0.4", "1.0.2", "1.0.1"}, avail); diff != "" {
		t.Errorf("available (-want +got)\n%s", diff)
	}
	got := ev.Conditional[1].Conditions
	if len(got) != 2 || got[0].Reason != ReasonNotExposedToRisks || !got[0].LastTransitionTime.Equal(&then) || got[1].Type != "Other" {
		t.Errorf("conditions of 1.0.2 %+v, want Recommended kept True (its transition time too, now NotExposedToRisks) and Other kept", got)
	}
	if c := ev.Conditional[2].Conditions[0]; c.Status != metav1.ConditionFalse || !c.LastTransitionTime.Equal(&now) {
		t.Errorf("1.1.0 %+v, want False at now", c)
	}
	if len(conditional[1].Conditions) != 2 || conditional[1].Conditions[0].Reason != "Old" {
		t.Error("Evaluate changed its input")
	}
}
